#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Every option maglevctl's vip add, vip set, backend add and backend set take,
# from one table (ROWS): each row's change is made on a VIP or backend of its
# own and must then show in vip list / backend list, and again after a
# restart. Every option in those commands' --help usage must be in some row
# of its command, so an option added without a row fails here.
#
# TEST_FLEET=1 (daemon_vip_options_fleet.sh): the balancer in fleet mode, so
# every change goes to etcd and what shows is what came back from it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/etcd_lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
fleet_if_asked opt-test
write_conf "$FLEET_CONF"
start_daemon || { nok "maglevd starts"; t_done; }

# VERB|BASE|ARGS|JQ: BASE are the options of the vip add (vip rows) or backend
# add (backend rows) that comes first (vip set, backend set), ARGS the options
# under test, JQ what must then hold of the VIP (vip list) or backend
# (backend list). Backend rows run on a VIP whose TCP check never passes.
ROWS=(
	"vip add||--encap gue|.encap == \"gue\" and .gue_port == 6080"
	"vip add||--encap ipip|.encap == \"ipip\""
	"vip add||--encap gue --gue-port 7000|.gue_port == 7000"
	"vip add||--port-any --check tcp|(.vip | endswith(\":*/tcp\")) and .check.port == 80"
	"vip add||--encap gue --second-chance|.second_chance"
	"vip add||--placement ring --vnodes 50|.placement == \"ring\" and .vnodes == 50"
	"vip add||--placement rendezvous|.placement == \"rendezvous\""
	"vip add||--balance-factor 1.5|.balance_factor == 1.5"
	"vip add||--balance-factor off|.balance_factor == null"
	"vip add||--slow-start 2500|.slow_start_ms == 2500"
	"vip add||--hot-threshold 25|.hot_threshold == \"25\""
	"vip add||--hot-threshold off|.hot_threshold == \"off\""
	"vip add||--check tcp --check-port 8080|.check.type == \"tcp\" and .check.port == 8080"
	"vip add||--check http --check-path /hz --check-status 204|.check.path == \"/hz\" and .check.status == 204"
	"vip add||--check udp --check-payload ping --check-expect pong|.check.payload == \"ping\" and .check.expect == \"pong\""
	"vip add||--check dns --check-dns-name example.org|.check.dns_name == \"example.org\""
	"vip add||--check tcp --check-interval 2000 --check-timeout 500|.check.interval_ms == 2000 and .check.timeout_ms == 500"
	"vip add||--check tcp --rise 3 --fall 4 --on-fail drain|.check.rise == 3 and .check.fall == 4 and .check.on_fail == \"drain\""
	"vip add||--check none|.check.type == \"none\""
	"vip add||--check https --check-host backend.example --check-body ok --check-ca-file /etc/maglev/ca.pem|.check.type == \"https\" and .check.host == \"backend.example\" and .check.body == \"ok\" and .check.ca_file == \"/etc/maglev/ca.pem\""
	"vip add||--check https --check-insecure|.check.tls_verify == \"off\""
	"vip add||--check https --check-tls-verify off|.check.tls_verify == \"off\""
	"vip set|--check https --check-insecure|--check-tls-verify on|.check.tls_verify == \"on\""
	"vip set||--encap gue --gue-port 7001|.encap == \"gue\" and .gue_port == 7001"
	"vip set|--encap gue|--encap ipip|.encap == \"ipip\""
	"vip set|--encap gue|--second-chance|.second_chance"
	"vip set|--encap gue --second-chance|--no-second-chance|.second_chance == false"
	"vip set||--placement ring --vnodes 30|.placement == \"ring\" and .vnodes == 30"
	"vip set||--balance-factor 1.5|.balance_factor == 1.5"
	"vip set|--balance-factor 2|--balance-factor off|.balance_factor == null"
	"vip set||--slow-start 0|.slow_start_ms == 0"
	"vip set|--slow-start 100|--slow-start default|.slow_start_ms == null"
	"vip set||--hot-threshold 30|.hot_threshold == \"30\""
	"vip set|--hot-threshold 30|--hot-threshold default|.hot_threshold == null"
	"vip set||--check http --check-path /ready --on-fail drain|.check.path == \"/ready\" and .check.on_fail == \"drain\""
	"backend add||--weight 3|.weight == 3"
	"backend add||--drain|.drain"
	"backend add||--start-down|.state == \"down\""
	"backend set||--weight 5|.weight == 5"
	"backend set||--drain|.drain"
	"backend set|--drain|--undrain|.drain == false"
)

# The options of a command, from its --help usage lines.
usage_opts() {
	"$MAGLEVCTL" $1 --help | awk 'NR == 1 || (started && /^ /) { started = 1; print; next } { exit }' |
		grep -o -- '--[a-z-]*' | sort -u
}
for verb in "vip add" "vip set" "backend add" "backend set"; do
	missing=
	for o in $(usage_opts "$verb"); do
		found=0
		for row in "${ROWS[@]}"; do
			IFS='|' read -r v _ args _ <<<"$row"
			[ "$v" = "$verb" ] && [[ " $args " == *" $o "* ]] && found=1
		done
		[ $found = 1 ] || missing="$missing $o"
	done
	check "every option of $verb's usage has a row (missing:${missing:- none})" [ -z "$missing" ]
done

jq1() { jqt "$@" >/dev/null; }
BVIP=192.0.2.99:80/tcp
ctl vip add $BVIP --check tcp --check-interval 60000 --check-timeout 1000 ||
	nok "the backend rows' VIP is added"
# subject N: the JSON of row N's VIP or backend.
subject() {
	local verb
	IFS='|' read -r verb _ <<<"${ROWS[$1]}"
	case $verb in
	vip*) ctl -j vip list | jq --arg a "192.0.2.$(($1 + 10)):" '.vips[] | select(.vip | startswith($a))' ;;
	*) ctl -j backend list $BVIP | jq --arg b "198.51.100.$(($1 + 10))" '.backends[] | select(.backend == $b)' ;;
	esac
}
n=${#ROWS[@]}
for i in $(seq 0 $((n - 1))); do
	IFS='|' read -r verb base args want <<<"${ROWS[$i]}"
	vip=192.0.2.$((i + 10)):80/tcp
	be=198.51.100.$((i + 10))
	# shellcheck disable=SC2086 # base and args are words
	case $verb in
	"vip add") out=$(ctl vip add $vip $args 2>&1) ;;
	"vip set") out=$(ctl vip add $vip $base 2>&1 && ctl vip set $vip $args 2>&1) ;;
	"backend add") out=$(ctl backend add $BVIP $be $args 2>&1) ;;
	"backend set") out=$(ctl backend add $BVIP $be $base 2>&1 && ctl backend set $BVIP $be $args 2>&1) ;;
	esac || nok "$verb $args: accepted ($out)"
	subject "$i" >"$TDIR/row$i.json"
	check "$verb $args: $want" jq1 "$want" "$TDIR/row$i.json"
done

stop_daemon
start_daemon || { nok "maglevd restarts"; t_done; }
bad=
for i in $(seq 0 $((n - 1))); do
	IFS='|' read -r verb _ args want <<<"${ROWS[$i]}"
	subject "$i" >"$TDIR/row$i.json"
	jq1 "$want" "$TDIR/row$i.json" || bad="$bad [$verb $args: $(jq -c . "$TDIR/row$i.json")]"
done
check "after a restart every row still holds (not:${bad:- none})" [ -z "$bad" ]
t_done
