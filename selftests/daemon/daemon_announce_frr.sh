#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# docs/frr.conf, the FRR alternative to docs/bird.conf: FRR's own parser
# (vtysh --dryrun) accepts it and refuses a broken copy; then FRR (zebra +
# bgpd) runs it, addresses and timers changed, next to maglevd in the
# balancer's namespace, with BIRD as the router in the client's namespace.
# The router's FIB follows maglevd: the VIP's /32 arrives when it is ready,
# leaves on announce off and when the VIP is deleted, and comes back.
. "$(dirname "$0")/lib.sh"

command -v vtysh >/dev/null && [ -x /usr/lib/frr/zebra ] && [ -x /usr/lib/frr/bgpd ] ||
	skip_all "frr not installed (scripts/install-deps)"
command -v bird >/dev/null && command -v birdc >/dev/null ||
	skip_all "bird2 not installed (scripts/install-deps)"

FRR_CONF=$ROOT/docs/frr.conf
check "FRR's parser accepts docs/frr.conf (vtysh --dryrun)" vtysh --dryrun -f "$FRR_CONF"
sed 's/^ip import-table 100$/ip import-table 100 bogus/' "$FRR_CONF" >"$TDIR/broken.conf"
check "and refuses a broken copy (the check can fail)" bash -c "! vtysh --dryrun -f $TDIR/broken.conf >/dev/null 2>&1"

setup_net || skip_all "cannot create namespaces/veth"
# FRR's daemons drop to the frr user: their directory must be theirs to write.
FDIR=$(mktemp -d /tmp/maglevd-frr.XXXXXX)
chmod 0777 "$FDIR"
frr_cleanup() {
	local f
	for f in "$FDIR"/*.pid; do [ -s "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null; done
	if [ "${KEEP_LOG:-0}" = 1 ]; then echo "# FRR and BIRD logs kept in $FDIR"; else rm -rf "$FDIR"; fi
}
trap 'frr_cleanup; cleanup' EXIT

# The router: BIRD in the client's namespace, installing what it learns.
cat >"$FDIR/bird.conf" <<EOF
log "$FDIR/bird.log" all;
router id 203.0.113.2;
protocol device { }
protocol kernel { merge paths on; ipv4 { import none; export all; }; }
protocol bgp lb { local 203.0.113.2 as 65000; neighbor 203.0.113.1 as 65001;
  hold time 3; keepalive time 1; connect retry time 1; ipv4 { import all; export none; }; }
EOF
clx bird -c "$FDIR/bird.conf" -s "$FDIR/bird.sock" -P "$FDIR/bird.pid" || nok "BIRD starts as the router"

# The balancer: docs/frr.conf with this test's addresses and short timers.
sed -e 's/198\.51\.100\.2/203.0.113.1/g' -e 's/198\.51\.100\.1/203.0.113.2/g' \
	-e 's/^\( neighbor 203.0.113.2\) timers 3 9$/\1 timers 1 3\n\1 timers connect 1/' \
	"$FRR_CONF" >"$FDIR/frr.conf"
touch "$FDIR/vtysh.conf"
check "the test's copy parses too" vtysh --dryrun -f "$FDIR/frr.conf"
for d in zebra bgpd; do
	lbx /usr/lib/frr/$d -d -i "$FDIR/$d.pid" -z "$FDIR/zserv.api" --vty_socket "$FDIR" \
		-P 0 --log "file:$FDIR/$d.log" 2>>"$FDIR/$d.err" || nok "FRR's $d starts"
done
for _ in $(seq 50); do [ -S "$FDIR/bgpd.vty" ] && break; sleep 0.1; done
check "FRR takes the configuration (vtysh -b)" \
	lbx vtysh --vty_socket "$FDIR" --config_dir "$FDIR" -b

write_conf "announce_table 100" "announce_protocol 250"
start_daemon || { nok "maglevd starts"; t_done; }
ok "maglevd starts with announce_table 100"

fib() { clx ip route show 192.0.2.40 proto bird 2>/dev/null; }
# wait_fib yes|no SECONDS: until the router has (or has not) the VIP from BGP.
wait_fib() {
	local t0 end
	t0=$(date +%s%N)
	end=$((SECONDS + $2))
	while [ $SECONDS -le $end ]; do
		if fib | grep -q "via 203.0.113.1"; then s=yes; else s=no; fi
		if [ $s = "$1" ]; then
			WAITED=$((($(date +%s%N) - t0) / 1000000))
			return 0
		fi
		sleep 0.05
	done
	return 1
}
for _ in $(seq 100); do
	birdc -s "$FDIR/bird.sock" show protocols | grep -q "Established" && break
	sleep 0.1
done
check "the BGP session between FRR and the router is up" \
	bash -c "birdc -s $FDIR/bird.sock show protocols | grep -q Established"
check "no VIP yet: the router has no route from BGP" wait_fib no 1

V=192.0.2.40:5000/udp
ctl vip add $V --check none
ctl backend add $V 198.51.100.41
check "ready: FRR exports maglevd's route, the router has 192.0.2.40 via the balancer" wait_fib yes 10
diag "on the router $WAITED ms after the backend was added: $(fib)"
ctl announce off >/dev/null
check "announce off: gone from the router's FIB" wait_fib no 5
diag "withdrawn on the router in $WAITED ms"
ctl announce on >/dev/null
check "announce on: back on the router" wait_fib yes 5
diag "announced again in $WAITED ms"
ctl vip del $V
check "VIP deleted: withdrawn from the router" wait_fib no 5
check "and from maglevd's table" bash -c "! ip -n $NS_LB route show table 100 proto 250 2>/dev/null | grep -q 192.0.2.40"
stop_daemon
t_done
