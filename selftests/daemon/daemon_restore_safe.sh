#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# maglevctl restore of an empty file (nothing but comments, no bytes at all,
# stdin at EOF) is refused and changes nothing, unless --allow-empty asks
# for it; so is a save cut short (without its end line); restore --dry-run has the daemon check the
# whole file, prints the changes as a diff of save lines, applies nothing,
# and is exactly what the real restore then does.
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
write_conf
V1=192.0.2.10:5000/udp
V2=192.0.2.11:80/tcp
start_daemon || { nok "maglevd starts"; t_done; }
ctl vip add $V1 && ctl backend add $V1 198.51.100.1 && ctl backend add $V1 198.51.100.2 &&
	ctl vip add $V2 && ctl backend add $V2 198.51.100.3 --weight 2
ctl save >"$TDIR/good.save"
dp_vips() { bpftool -j map dump pinned "$PIN/maglev_vips" 2>/dev/null | jq length; }
# Save lines only (no comments), sorted.
lines_of() { grep -v '^#' "$1" | sort; }

# refused NAME PATTERN ARGS...: restore ARGS exits 1, says PATTERN, changes nothing.
refused() {
	local name=$1 pat=$2 before out rc
	shift 2
	before=$(snapshot)
	out=$("$MAGLEVCTL" restore "$@" 2>&1)
	rc=$?
	diag "$name: rc $rc: $out"
	check "restore of $name: refused (exit 1) with the reason" \
		bash -c "[ $rc -eq 1 ] && grep -q \"\$2\" <<<\"\$1\"" _ "$out" "$pat"
	check "restore of $name: nothing changed, both VIPs still in the datapath" \
		bash -c "[ \"\$1\" = \"\$2\" ] && [ $(dp_vips) = 2 ]" _ "$before" "$(snapshot)"
}
EMPTY='holds no vip or backend line.*--allow-empty'
: >"$TDIR/empty"
refused "an empty file" "$EMPTY" "$TDIR/empty"
head -n 2 "$TDIR/good.save" >"$TDIR/cut"
refused "a save cut after its comment lines" "$EMPTY" "$TDIR/cut"
before=$(snapshot)
out=$("$MAGLEVCTL" restore </dev/null 2>&1)
rc=$?
check "restore from stdin at EOF: refused (exit 1) and nothing changed ($out)" \
	bash -c "[ $rc -eq 1 ] && [ \"\$1\" = \"\$2\" ]" _ "$before" "$(snapshot)"
# A save cut short: after its first VIP's lines, and in the middle of the
# last backend's line, where what is left still parses (weight 2 would
# silently become 1).
check "set-up: the save ends with its end line" \
	bash -c "tail -n 1 $TDIR/good.save | grep -q '^# end of maglevctl save (2 VIPs, 3 backends)'"
head -n 5 "$TDIR/good.save" >"$TDIR/cut-lines"
head -c "$(grep -bo ' --weight 2$' "$TDIR/good.save" | cut -d: -f1)" "$TDIR/good.save" >"$TDIR/cut-bytes"
check "set-up: the cut file ends in the middle of the last backend line" \
	bash -c "tail -c 30 $TDIR/cut-bytes | grep -q '198.51.100.3$'"
for c in cut-lines cut-bytes; do
	refused "a save cut short ($c)" 'a save without its last line' "$TDIR/$c"
done
{ cat "$TDIR/good.save"; echo "backend add $V1 198.51.100.9"; } >"$TDIR/appended"
out=$("$MAGLEVCTL" restore --dry-run "$TDIR/appended" 2>/dev/null)
check "a line added after the end line is the operator's own: accepted (dry run lists it)" \
	bash -c "grep -qx '+backend add $V1 198.51.100.9 --weight 1' <<<\"\$1\"" _ "$out"
# A save of an older maglevctl (no end line, its own header) is still taken.
{
	echo "# maglevctl save, 2026-01-01T00:00:00Z"
	grep -v '^#' "$TDIR/good.save"
} >"$TDIR/old.save"
check "restore of a save by an older maglevctl (no end line) is accepted" \
	bash -c "$MAGLEVCTL restore $TDIR/old.save && [ \"\$1\" = \"\$($MAGLEVCTL save | grep -v '^#')\" ]" _ "$(grep -v '^#' "$TDIR/good.save")"
check "restore --no-flush of an empty file adds nothing and is accepted" \
	bash -c "$MAGLEVCTL restore --no-flush $TDIR/empty && [ \"\$1\" = \"\$($MAGLEVCTL save | grep -v '^#')\" ]" _ "$(grep -v '^#' "$TDIR/good.save")"

# --- --dry-run ------------------------------------------------------------------------
# The new file: 198.51.100.2 gone from V1, V2's backend at weight 5, a new V3.
grep -v '198.51.100.2 ' "$TDIR/good.save" | sed 's/198.51.100.3 --weight 2/198.51.100.3 --weight 5/' |
	sed '/^# end of maglevctl save/i vip add 192.0.2.12:80/tcp\nbackend add 192.0.2.12:80/tcp 198.51.100.7 --weight 1' >"$TDIR/new.save"
before=$(snapshot)
out=$("$MAGLEVCTL" restore --dry-run "$TDIR/new.save" 2>"$TDIR/dry.err")
rc=$?
diag "dry run: $(tr '\n' '|' <<<"$out") $(cat "$TDIR/dry.err")"
want=$(printf '%s\n' "-backend add $V1 198.51.100.2 --weight 1" "-backend add $V2 198.51.100.3 --weight 2" \
	"+backend add $V2 198.51.100.3 --weight 5" "+vip add 192.0.2.12:80/tcp" \
	"+backend add 192.0.2.12:80/tcp 198.51.100.7 --weight 1" | sort)
check "restore --dry-run: exit 0, and the diff lists exactly the removed and added lines" \
	bash -c "[ $rc -eq 0 ] && [ \"\$(grep -E '^[-+][a-z]' <<<\"\$1\" | sort)\" = \"\$2\" ]" _ "$out" "$want"
check "restore --dry-run applied nothing" [ "$(snapshot)" = "$before" ]
check "restore --dry-run says it applied nothing" grep -q 'nothing applied' "$TDIR/dry.err"
out=$("$MAGLEVCTL" restore --dry-run "$TDIR/good.save" 2>/dev/null)
rc=$?
check "restore --dry-run of the running configuration's own save: exit 0, no change listed" \
	bash -c "[ $rc -eq 0 ] && grep -q '^--- running' <<<\"\$1\" && [ -z \"\$(grep -E '^[-+][a-z]' <<<\"\$1\")\" ]" _ "$out"
printf 'vip add 192.0.2.13:80/tcp\nbackend add 192.0.2.99:80/tcp 198.51.100.8\n' >"$TDIR/bad.save"
out=$("$MAGLEVCTL" restore --dry-run "$TDIR/bad.save" 2>&1)
rc=$?
check "restore --dry-run of a file the daemon refuses: exit 1 naming the line ($out)" \
	bash -c "[ $rc -eq 1 ] && grep -q 'bad.save:2: no VIP 192.0.2.99:80/tcp' <<<\"\$1\"" _ "$out"
check "and nothing applied" [ "$(snapshot)" = "$before" ]
check "restore -j --dry-run: JSON with the removed and added lines" \
	bash -c "$MAGLEVCTL -j restore --dry-run $TDIR/new.save 2>/dev/null | jqt '.ok and .dry_run and (.removed | length == 2) and (.added | length == 3)' >/dev/null"

# The real restore does what the dry run said.
cp "$TDIR/good.save" "$TDIR/before.save"
ctl restore "$TDIR/new.save"
ctl save >"$TDIR/after.save"
got=$( (comm -23 <(lines_of "$TDIR/before.save") <(lines_of "$TDIR/after.save") | sed 's/^/-/'
	comm -13 <(lines_of "$TDIR/before.save") <(lines_of "$TDIR/after.save") | sed 's/^/+/') | sort)
check "the real restore changed exactly what the dry run listed" [ "$got" = "$want" ]

# --- --allow-empty ----------------------------------------------------------------------
check "restore --allow-empty of an empty file deletes every VIP, in the datapath too" \
	bash -c "$MAGLEVCTL restore --allow-empty $TDIR/empty && $MAGLEVCTL -j vip list | jqt '.vips | length == 0' >/dev/null && [ \"\$(bpftool -j map dump pinned $PIN/maglev_vips | jq length)\" = 0 ]"
stop_daemon
t_done
