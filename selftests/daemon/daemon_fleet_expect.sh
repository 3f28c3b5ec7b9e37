#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Fleet writes under --expect-revision, and writes retried after a lost
# answer (issue 32 item 6). One balancer, a 3-member etcd, and in front of
# its first member a proxy (the balancer's first endpoint) that can be told
# to pass a txn on to etcd but never answer it, so the balancer's etcd client
# gives up after 5 s and tries the same txn again on its next endpoint,
# another member.
#  - a VIP deleted after revision R: a change expecting R is refused (etcd
#    compares only keys that exist: the delete alone would go unseen);
#  - a txn that committed although its answer was lost: the retry reports it
#    written, with the revision it made, and writes nothing again (with and
#    without --expect-revision);
#  - a change that writes nothing, with --expect-revision: answered at once
#    (ok if the revision is current, refused if not), no 10 s wait.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/etcd_lib.sh"

etcd_require
setup_net || skip_all "cannot create namespaces/veth"
etcd_for_lb expect-test || { nok "etcd starts"; t_done; }
# The proxy (etcd_hold_proxy.py): a txn's answer withheld while $HOLD exists.
hold_proxy || skip_all "cannot start the proxy in front of etcd"

# The proxy, then the other members (a retry goes to a member that did not
# take the first try).
write_conf "fleet_etcd http://$PX:2379,${EP#*,}" "fleet_prefix /maglev-test/" "fleet_node b1"
start_daemon || { nok "maglevd starts"; t_done; }
V=192.0.2.10:80/tcp
X=192.0.2.11:80/tcp
jq1() { jqt "$@" >/dev/null; }
# crev ARGS...: maglevctl -j ARGS; echoes the revision it made.
crev() { ctl -j "$@" | jq -r .revision; }
applied() { ctl -j status | jq .fleet.revision; }
# keyrev VIP: the revision that last wrote VIP's key in etcd; keyver VIP:
# how many times it was written.
keyrev() { ectl get -w json "/maglev-test/vips/$1" | jq '.kvs[0].mod_revision'; }
keyver() { ectl get -w json "/maglev-test/vips/$1" | jq '.kvs[0].version'; }

crev vip add $V --check none >/dev/null
R=$(crev vip add $X --check none)
check "two VIPs written through etcd (revision $R)" [ "$(applied)" = "$R" ]

# --- a delete after the expected revision ----------------------------------------
ctl save >"$TDIR/both.save"
R2=$(crev vip del $X)
check "$X deleted (revision $R2)" [ "${R2:-0}" -gt "$R" ]
out=$(ctl --expect-revision "$R" restore "$TDIR/both.save" 2>&1)
rc=$?
# stale: the last command (rc, out) was refused as written after the expected revision.
stale() { [ $rc = 1 ] && echo "$out" | grep -q 'changed after the expected revision'; }
check "restore expecting revision $R, after the delete at $R2: refused ($rc: $out)" stale
x_gone() {
	[ -z "$(ectl get --print-value-only /maglev-test/vips/$X)" ] &&
		[ "$(ctl -j vip list | jq '.vips | length')" = 1 ]
}
check "... $X stays deleted, in etcd and on the balancer" x_gone

# --- a change that writes nothing, with --expect-revision --------------------------
R=$(applied)
# Once this balancer's status put moved etcd's store revision past the
# applied one (the revision an empty txn answers with).
store_ahead() { [ "$(ectl get -w json / | jq -r .header.revision)" -gt "$R" ]; }
for _ in $(seq 50); do store_ahead && break; sleep 0.1; done
check "etcd's store revision is past the applied one $R" store_ahead
t0=$(date +%s%N)
out=$(ctl -j --expect-revision "$R" vip set $V --placement maglev 2>&1)
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
check "a no-op expecting the current revision $R: ok at once ($rc in $ms ms: ${out//$'\n'/ })" \
	[ $rc = 0 -a $ms -lt 3000 ]
out=$(ctl --expect-revision $((R - 1)) vip set $V --placement maglev 2>&1)
rc=$?
check "a no-op expecting an older revision: refused ($rc: $out)" stale
check "... and nothing was written" [ "$(applied)" = "$R" ]

# --- a txn whose answer is lost, tried again -------------------------------------
# (A restart each time: the etcd client starts on its first endpoint, the proxy.)
for expect in no yes; do
	stop_daemon
	start_daemon || nok "maglevd restarts"
	R=$(applied)
	ver=$(keyver $V)
	args=()
	[ $expect = yes ] && args=(--expect-revision "$R")
	rm -f "$HOLD.seen"
	touch "$HOLD"
	out=$(ctl -j "${args[@]}" backend add $V 198.51.100.$((R % 200 + 1)) 2>&1)
	rc=$?
	rm -f "$HOLD"
	got=$(echo "$out" | jq -r '.revision // empty' 2>/dev/null)
	check "expect-revision $expect: the proxy held the txn's answer" [ -s "$HOLD.seen" ]
	check "... the change answers ok with the revision it made ($rc: ${out//$'\n'/ })" \
		[ $rc = 0 -a "$got" = "$(keyrev $V)" ]
	check "... written once (the key's version $ver, now $(keyver $V))" \
		[ "$(keyver $V)" = $((ver + 1)) ]
done
t_done
