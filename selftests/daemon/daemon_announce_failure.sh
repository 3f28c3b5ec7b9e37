#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Routes must not outlive a maglevd that systemd gave up on (issue 32 item
# 10). There is no systemd here: the test plays its part from the shipped
# units. docs/maglevd.service restarts maglevd on failure up to
# StartLimitBurst times and then names OnFailure=maglevd-withdraw.service,
# whose ExecStart the test runs (paths rewritten to the build and the test's
# config). A crash loop: maglevd killed -9 StartLimitBurst times, restarted
# after each crash but the last; the route stays across each crash (the
# pinned program forwards), and is withdrawn once the OnFailure unit ran. The
# withdraw command refuses while a maglevd answers.
. "$(dirname "$0")/lib.sh"

TABLE=148
PROTO=237
UNIT=$ROOT/docs/maglevd.service
WUNIT=$ROOT/docs/maglevd-withdraw.service
setup_net || skip_all "cannot create namespaces/veth"
write_conf "announce_table $TABLE" "announce_protocol $PROTO" "announce_min_backends 1"
has_route() { lbx ip route show table $TABLE proto $PROTO | grep -q "^blackhole 192.0.2.60 *$"; }

onfail=$(sed -n 's/^OnFailure=//p' "$UNIT")
burst=$(sed -n 's/^StartLimitBurst=//p' "$UNIT")
check "maglevd.service: OnFailure=$onfail, StartLimitBurst=$burst" \
	[ "$onfail" = maglevd-withdraw.service -a -n "$burst" -a -f "$ROOT/docs/$onfail" ]
# The OnFailure unit's command, on this build and config, in the balancer's namespace.
cmd=$(sed -n 's/^ExecStart=//p' "$WUNIT" 2>/dev/null | sed -e "s|^/usr/local/sbin/maglevd|$MAGLEVD|" -e "s|/etc/maglev/maglevd.conf|$CONF|")
diag "OnFailure runs: $cmd"
withdraw() { eval "nsenter --net=/run/netns/$NS_LB $cmd"; }

start_daemon || { nok "maglevd starts"; t_done; }
ctl vip add 192.0.2.60:80/tcp --check none >/dev/null
ctl backend add 192.0.2.60:80/tcp 198.51.100.61 >/dev/null
check "the VIP is announced" poll_until 5 has_route
out=$(withdraw 2>&1)
rc=$?
check "the withdraw command refuses while maglevd answers (rc $rc: $out)" \
	bash -c "[ $rc = 1 ] && grep -q 'a maglevd answers on' <<<'$out'"
check "... and the route stays" has_route

# The crash loop: each crash but the last is restarted.
kept=0
for i in $(seq "${burst:-5}"); do
	kill9_daemon
	has_route && kept=$((kept + 1))
	[ "$i" = "${burst:-5}" ] && break
	start_daemon || nok "restart $i"
done
check "$kept of ${burst:-5} crashes left the route (the pinned program forwards)" [ "$kept" = "${burst:-5}" ]
out=$(withdraw 2>&1)
rc=$?
diag "$out"
check "start limit reached: the OnFailure unit's command exits 0 ($rc)" [ "$rc" = 0 ]
no_route() { ! has_route; }
check "... and the route is withdrawn" no_route
check "... it says so" grep -q "withdrew 1 route from table $TABLE" <<<"$out"
t_done
