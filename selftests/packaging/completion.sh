#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# maglevctl's bash completion (userspace/maglevctl/completion.bash), called
# as bash calls it (COMP_LINE, COMP_POINT, COMP_WORDS, COMP_CWORD, then the
# function) and COMPREPLY compared: objects, commands and options (and that
# they cover every command of maglevctl --help), values of --encap/--check,
# files for restore, and the VIPs and backends of a real running daemon,
# found on MAGLEV_SOCKET or on the -s of the line, and nothing, quickly,
# when no daemon answers.
. "$(dirname "$0")/../daemon/lib.sh"
# shellcheck source=../../userspace/maglevctl/completion.bash
. "$ROOT/userspace/maglevctl/completion.bash"
C=$MAGLEVCTL

# comp LINE: the completions of LINE with the cursor at its end, sorted, on
# one line. COMP_WORDS as bash splits it: also at ':' and '='.
comp() {
	COMP_LINE=$1
	COMP_POINT=${#1}
	local s=${1//:/ : }
	read -ra COMP_WORDS <<<"${s//=/ = }"
	[[ $1 =~ [[:space:]]$ ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_maglevctl "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]:-}"
	printf '%s\n' "${COMPREPLY[@]}" | sort | paste -sd' '
}
# expect NAME LINE WANT: one test line.
expect() {
	local got
	got=$(comp "$2")
	[ "$got" = "$3" ] || diag "'$2': got '$got', want '$3'"
	check "$1" [ "$got" = "$3" ]
}

check "complete -F _maglevctl maglevctl is registered" \
	bash -c "[ \"\$(. '$ROOT/userspace/maglevctl/completion.bash'; complete -p maglevctl)\" = 'complete -F _maglevctl maglevctl' ]"
expect "objects" "$C " "announce backend fleet health help lookup reload restore save stats status table top vip"
expect "fleet status options" "$C fleet status -" "--help --settle"
expect "announce values" "$C announce " "off on"
expect "an object from its prefix" "$C b" "backend"
expect "vip commands" "$C vip " "add del list set show"
expect "vip set options" "$C vip set 192.0.2.10:80/tcp --" \
	"--balance-factor --check --check-dns-name --check-expect --check-interval --check-path --check-payload --check-port --check-status --check-timeout --encap --fall --gue-port --help --hot-threshold --no-second-chance --on-fail --placement --rise --second-chance --slow-start --vnodes"
expect "--placement values" "$C vip set 192.0.2.10:80/tcp --placement " "maglev rendezvous ring"
expect "backend command from its prefix" "$C -j backend s" "set"
expect "global options" "$C -" "--expect-revision --help --json --socket --version -V -h -j -s"
expect "vip add options" "$C vip add 192.0.2.10:80/tcp --check-p" "--check-path --check-payload --check-port"
expect "--encap values" "$C vip add 192.0.2.10:80/tcp --encap " "gue ipip"
expect "--check values" "$C vip add 192.0.2.10:80/tcp --check " "dns http none tcp udp"
expect "--on-fail values" "$C vip add 192.0.2.10:80/tcp --on-fail " "drain repick"
expect "backend set options" "$C backend set 192.0.2.10:80/tcp 198.51.100.5 --" "--drain --help --undrain --weight"
expect "stats options, -j before the object" "$C -j stats -" "--help --watch -w"
expect "top options" "$C top -" "--by --help -k"
expect "--by values" "$C top --by " "flow source"
touch "$TDIR/lb-saved.conf"
expect "restore options" "$C restore --" "--allow-empty --dry-run --force --help --no-flush"
expect "restore completes files" "$C restore --no-flush $TDIR/lb-s" "$TDIR/lb-saved.conf"
# Every command maglevctl --help lists is completed (lines that only continue
# the arguments of the line above name none).
miss=""
while read -r obj verb; do
	[[ " $(comp "$C ") " == *" $obj "* ]] || miss="$miss $obj"
	[ -z "$verb" ] || [[ " $(comp "$C $obj ") " == *" $verb "* ]] || miss="$miss $obj-$verb"
done < <("$C" --help | sed -n '/^Objects and commands:/,/^$/p' | sed '1d;$d' |
	sed 's/^ *//; s/  .*//' | awk '$1 ~ /^[a-z]+$/ { print $1, ($2 ~ /^[a-z]+$/ ? $2 : "") }' | sort -u)
[ -n "$miss" ] && diag "not completed:$miss"
check "every command of maglevctl --help is completed" [ -z "$miss" ]

setup_net || skip_all "cannot create namespaces/veth"
write_conf
start_daemon || { nok "maglevd starts"; t_done; }
V4=192.0.2.10:80/tcp
check "adding three VIPs and two backends" bash -c "$C vip add $V4 && $C vip add '[2001:db8::10]:443/tcp' &&
	$C vip add '192.0.2.11:*/udp' && $C backend add $V4 198.51.100.5 && $C backend add $V4 198.51.100.6"
# VIPs with glob characters come back quoted, as the shell must see them.
ALL='192.0.2.10:80/tcp 192.0.2.11:\*/udp \[2001:db8::10\]:443/tcp'
expect "vip del: the daemon's VIPs" "$C vip del " "$ALL"
expect "vip show: VIPs from a prefix" "$C vip show 192.0.2.1" '192.0.2.10:80/tcp 192.0.2.11:\*/udp'
expect "after a ':' only the rest of the VIP (bash splits at ':')" "$C vip show 192.0.2.10:" "80/tcp"
expect "backend del: the VIP's backends" "$C backend del $V4 " "198.51.100.5 198.51.100.6"
expect "backend set: backends from a prefix" "$C backend set $V4 198.51.100.6" "198.51.100.6"
expect "lookup: the VIPs" "$C lookup " "$ALL"
unset MAGLEV_SOCKET
expect "without MAGLEV_SOCKET, the -s of the line" "$C -s $SOCK health 192.0.2.10" "192.0.2.10:80/tcp"
expect "without MAGLEV_SOCKET, the --socket= of the line" "$C --socket=$SOCK table 192.0.2.1" \
	'192.0.2.10:80/tcp 192.0.2.11:\*/udp'
expect "a -s where no daemon listens: no VIPs" "$C -s $TDIR/none.sock vip del " ""
export MAGLEV_SOCKET=$SOCK
stop_daemon
start=$SECONDS
expect "no daemon: no VIPs" "$C vip del " ""
check "no daemon: answered at once" [ $((SECONDS - start)) -le 2 ]
t_done
