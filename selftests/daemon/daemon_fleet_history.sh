#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# etcd history under a flapping backend (issue 32 item 8). A 3-member etcd
# run with docs/etcd-maglev.env.example (auto-compaction; its one-hour
# retention shortened to 5 s and its quota to 8 MiB, so that the test sees
# both within its run), one balancer with health_scope fleet:
#  - a VIP of 2000 backends, all up: the status value stays small (only down
#    verdicts are named; every backend "up" made it grow with the backends);
#  - a backend flapping for 15 s (its listener killed and started again every
#    0.25 s, checks every 100 ms, rise 1 fall 1): at most one status put a
#    second; none while nothing changes;
#  - etcd raised no alarm (NOSPACE) and still takes a maglevctl change.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/etcd_lib.sh"

etcd_require
EXAMPLE=$ROOT/docs/etcd-maglev.env.example
setup_net || skip_all "cannot create namespaces/veth"
if [ -f "$EXAMPLE" ]; then
	set -a
	# shellcheck disable=SC1090
	. "$EXAMPLE"
	set +a
	ok "the etcd example sets auto-compaction ($ETCD_AUTO_COMPACTION_MODE, $ETCD_AUTO_COMPACTION_RETENTION)"
else
	nok "the etcd example $EXAMPLE exists"
fi
export ETCD_AUTO_COMPACTION_RETENTION=5s ETCD_QUOTA_BACKEND_BYTES=$((8 << 20))
etcd_for_lb history-test || { nok "etcd starts"; t_done; }
write_conf "$FLEET_CONF" "health_scope fleet" "health_via_encap no"
start_daemon || { nok "maglevd starts"; t_done; }
KEY=/maglev-test/nodes/b1
V=[2001:db8::70]:80/tcp
F=192.0.2.71:80/tcp
BE=198.51.100.71
python3 -c "
import json
v='$V'
r=[{'cmd':'vip.add','vip':v,'check':'none'}]
r+=[{'cmd':'backend.add','vip':v,'backend':'2001:db8:1::%x' % (i + 1),'weight':1} for i in range(2000)]
print(json.dumps(r))" >"$TDIR/vip.json"
R=$(ectl put -w json "/maglev-test/vips/$V" <"$TDIR/vip.json" | jq -r .header.revision)
applied() { [ "$(ctl -j status | jq .fleet.revision)" = "$R" ]; }
check "a VIP of 2000 backends applied (revision $R)" poll_until 20 applied
size() { ectl get --print-value-only $KEY | wc -c; }
published() { ectl get --print-value-only $KEY | jq -e ".revision == $R" >/dev/null 2>&1; }
poll_until 10 published || nok "the status names revision $R"
check "... the status value stays small with 2000 up backends ($(size) bytes < 4096)" [ "$(size)" -lt 4096 ]
fv() { ctl -j status | jq -r "[.fleet.health[] | select(.vip == \"$V\") | .fleet] | unique | join(\",\")"; }
check "... and the fleet's verdict of them is up ($(fv))" [ "$(fv)" = up ]

lbx ip addr add $BE/32 dev lo
listen_tcp "$NS_LB" $BE 80 || nok "a listener on $BE"
ctl vip add $F --check tcp --check-interval 100 --check-timeout 80 --rise 1 --fall 1 >/dev/null
ctl backend add $F $BE >/dev/null
ver() { ectl get -w json $KEY | jq -r '.kvs[0].version'; }
local_up() { [ "$(field $F $BE .local_verdict)" = up ]; }
poll_until 5 local_up || nok "$BE up"
v0=$(ver)
changes0=$(grep -c "backend $BE of $F is" "$DLOG")
t0=$SECONDS
while [ $((SECONDS - t0)) -lt 15 ]; do
	kill "$LPID" 2>/dev/null
	sleep 0.25
	listen_tcp "$NS_LB" $BE 80
	sleep 0.25
done
v1=$(ver)
flips=$(($(grep -c "backend $BE of $F is" "$DLOG") - changes0))
diag "15 s of flapping: $flips verdict changes, $((v1 - v0)) status puts"
check "the backend flapped ($flips verdict changes >= 15)" [ "$flips" -ge 15 ]
check "... at most one status put a second ($((v1 - v0)) in 15 s)" [ $((v1 - v0)) -le 17 ]
hist=$(((v1 - v0) * $(size)))
check "... the history they add is small ($((v1 - v0)) puts of $(size) bytes: $hist < 65536)" [ $hist -lt 65536 ]
poll_until 5 local_up || nok "$BE up again"
# Settled (the last change put, a second at most later): then nothing
# changes and nothing is put (3 s watched).
stable() {
	local v
	v=$(ver)
	sleep 1.2
	[ "$(ver)" = "$v" ]
}
poll_until 10 stable || nok "the status settles"
v2=$(ver)
sleep_end=$((SECONDS + 3))
while [ $SECONDS -lt $sleep_end ]; do [ "$(ver)" = "$v2" ] || break; sleep 0.2; done
check "... and none while nothing changes (version $v2, then $(ver))" [ "$(ver)" = "$v2" ]
alarms=$(ectl alarm list 2>&1)
check "etcd raised no alarm (${alarms:-none})" [ -z "$alarms" ]
ectl endpoint status -w table 2>/dev/null | sed 's/^/# /'
check "... and still takes a maglevctl change" ctl vip add 192.0.2.72:80/tcp --check none
t_done
