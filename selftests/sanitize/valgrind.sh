#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# valgrind memcheck over the binaries as shipped (build/, no sanitizers):
# maglevctl for help, usage errors, a missing daemon, and commands against a
# live daemon (text and -j output); and maglevd itself, run in the daemon
# tests' namespaces (selftests/daemon/lib.sh), asked a few things, then
# stopped with SIGTERM. A case fails on any memcheck error (invalid access,
# uninitialised value, bad free) and on definitely or indirectly lost memory
# (valgrind's exit status $VG_ERR); blocks still reachable or possibly lost at
# exit are not errors (libraries keep caches until exit, a thread's stack is
# "possibly lost" while the thread runs) and are not shown. valgrind.supp
# holds the documented suppressions (gaps in valgrind's model of bpf(2)).
unset MAGLEV_BUILD # the unsanitized build/: valgrind and ASan do not mix
. "$(dirname "$0")/../daemon/lib.sh"

command -v valgrind >/dev/null || skip_all "valgrind not installed (make deps)"
for b in "$MAGLEVD" "$MAGLEVCTL"; do
	ldd "$b" | grep -q libasan && skip_all "$b is built with SANITIZE=1: valgrind cannot run it"
done

VG_ERR=99
# shellcheck disable=SC2054 # (commas inside options)
VG=(valgrind -q --leak-check=full --show-leak-kinds=definite,indirect
	--errors-for-leak-kinds=definite,indirect --error-exitcode="$VG_ERR"
	--suppressions="$ROOT/selftests/sanitize/valgrind.supp" --child-silent-after-fork=yes)
N_VG=0

# vg_case NAME WANT_RC CMD...: one maglevctl run under valgrind; passes when
# memcheck found nothing (valgrind's own warnings, e.g. about a bpf command it
# does not know, are shown, not counted) and the command exited with WANT_RC.
# Its stdout is left in $TDIR/out for further checks.
vg_case() {
	local name=$1 want=$2 rc log
	shift 2
	N_VG=$((N_VG + 1))
	log=$TDIR/vg.$N_VG.log
	"${VG[@]}" --log-file="$log" "$@" >"$TDIR/out" 2>"$TDIR/err"
	rc=$?
	if [ "$rc" -eq "$want" ] && ! grep -qE '^==[0-9]+== ' "$log"; then
		ok "valgrind: $name"
		sed 's/^/# /' "$log"
		return 0
	fi
	nok "valgrind: $name (exit $rc, want $want)"
	sed 's/^/# /' "$log" "$TDIR/err" | head -n 80
	return 1
}

# --- maglevctl without a daemon ------------------------------------------------
vg_case "maglevctl --help" 0 "$MAGLEVCTL" --help
check "maglevctl --help prints the usage" grep -q '^Usage: maglevctl' "$TDIR/out"
vg_case "maglevctl backend add --help" 0 "$MAGLEVCTL" backend add --help
vg_case "maglevctl with an unknown object (usage error)" 2 "$MAGLEVCTL" frobnicate
vg_case "maglevctl vip add without a VIP (usage error)" 2 "$MAGLEVCTL" vip add
vg_case "maglevctl vip add with an unknown option (usage error)" 2 \
	"$MAGLEVCTL" vip add 192.0.2.10:80/tcp --weight 3
vg_case "maglevctl -j vip list without a daemon" 3 "$MAGLEVCTL" -j vip list
check "the error says no daemon listens" grep -q 'not running' "$TDIR/err"

# --- maglevd under valgrind ----------------------------------------------------
setup_net || skip_all "cannot create namespaces/veth"
write_conf
VGD_LOG=$TDIR/vg.maglevd.log
nsenter --net="/run/netns/$NS_LB" "${VG[@]}" --log-file="$VGD_LOG" \
	"$MAGLEVD" -c "$CONF" >>"$DLOG" 2>&1 &
DPID=$!
# Up to 60 s: under valgrind the datapath load and the first tables are slow.
for _ in $(seq 600); do
	ctl status >/dev/null 2>&1 && break
	kill -0 "$DPID" 2>/dev/null || break
	sleep 0.1
done
if ! ctl status >/dev/null 2>&1; then
	nok "maglevd starts under valgrind"
	sed 's/^/# /' "$DLOG" "$VGD_LOG" | head -n 80
	t_done
fi
ok "maglevd starts under valgrind"

# --- maglevctl against the live daemon --------------------------------------
V=192.0.2.10:80/tcp
vg_case "maglevctl vip add" 0 "$MAGLEVCTL" vip add "$V"
for b in 198.51.100.1 198.51.100.2 198.51.100.3; do
	vg_case "maglevctl backend add $b" 0 "$MAGLEVCTL" backend add "$V" "$b" --weight 2
done
vg_case "maglevctl backend set --drain" 0 "$MAGLEVCTL" backend set "$V" 198.51.100.3 --drain
vg_case "maglevctl vip list" 0 "$MAGLEVCTL" vip list
check "vip list names the VIP" grep -qF "$V" "$TDIR/out"
vg_case "maglevctl -j vip list" 0 "$MAGLEVCTL" -j vip list
check "-j vip list is JSON with the VIP" jqt '[.vips[].vip] == ["'"$V"'"]' "$TDIR/out"
vg_case "maglevctl -j backend list" 0 "$MAGLEVCTL" -j backend list "$V"
check "-j backend list: three backends" jqt '.backends | length == 3' "$TDIR/out"
vg_case "maglevctl -j table" 0 "$MAGLEVCTL" -j table "$V"
check "-j table: the two undrained backends share the slots" \
	jqt '[.backends[] | select(.slots > 0)] | length == 2' "$TDIR/out"
vg_case "maglevctl stats" 0 "$MAGLEVCTL" stats
vg_case "maglevctl -j health" 0 "$MAGLEVCTL" -j health
vg_case "maglevctl lookup" 0 "$MAGLEVCTL" lookup "$V" 203.0.113.2:40000
vg_case "maglevctl save" 0 "$MAGLEVCTL" save
cp "$TDIR/out" "$TDIR/saved"
vg_case "maglevctl restore of the saved configuration" 0 "$MAGLEVCTL" restore "$TDIR/saved"
printf 'vip add 192.0.2.99:80/tcp\nbackend add 192.0.2.99:80/tcp not-an-address\n' >"$TDIR/bad"
vg_case "maglevctl restore of a malformed file (rejected)" 1 "$MAGLEVCTL" restore "$TDIR/bad"
vg_case "maglevctl backend add to a missing VIP (rejected)" 1 \
	"$MAGLEVCTL" backend add 192.0.2.77:80/tcp 198.51.100.9
check "metrics answer" lbx curl -sf -o "$TDIR/metrics" "http://127.0.0.1:$METRICS_PORT/metrics"
vg_case "maglevctl vip del" 0 "$MAGLEVCTL" vip del "$V"

# --- maglevd stops on SIGTERM ----------------------------------------------
kill -TERM "$DPID"
wait "$DPID"
rc=$?
DPID=
if [ "$rc" -eq 0 ] && ! grep -qE '^==[0-9]+== ' "$VGD_LOG"; then
	ok "valgrind: maglevd run and SIGTERM exit: no errors, nothing lost"
	sed 's/^/# /' "$VGD_LOG"
else
	nok "valgrind: maglevd run and SIGTERM exit (exit $rc)"
	sed 's/^/# /' "$VGD_LOG" | head -n 150
fi
t_done
