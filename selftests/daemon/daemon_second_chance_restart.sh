#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Second chance across a restart of maglevd: a table change records the
# changed slots' previous owners for second_chance_ms. maglevd killed and
# started again within that window keeps them in the live table, and a
# further change within it keeps the earlier change's previous owners too,
# as without the restart (the soak saw connections reset where a restarted
# maglevd met a burst of etcd changes).
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
write_conf "second_chance_ms 60000"
start_daemon || { nok "maglevd starts"; t_done; }
V=192.0.2.10:80/tcp
ctl vip add $V --encap gue --second-chance --check none
for b in 1 2; do ctl backend add $V 198.51.100.$b; done
prev_slots() { ctl -j table $V | jq '.prev_slots'; }
# owners FILE: the owner of every slot, from a --dump.
owners() { jq -r '.ranges[] | . as $r | range($r.first; $r.last + 1) | $r.backend' "$1"; }

p0=$(prev_slots)
check "backend 2 added: its slots carry backend 1 as previous owner ($p0)" [ "$p0" -gt 0 ]
kill9_daemon
start_daemon || { nok "maglevd starts again"; t_done; }
p1=$(prev_slots)
check "SIGKILL and a restart within the window: the live table still carries them ($p1 of $p0)" \
	[ "$p1" = "$p0" ]
ctl -j table $V --dump >"$TDIR/before.json"
ctl backend add $V 198.51.100.3
ctl -j table $V --dump >"$TDIR/after.json"
changed=$(paste <(owners "$TDIR/before.json") <(owners "$TDIR/after.json") | awk '$1 != $2' | wc -l)
p2=$(jq .prev_slots "$TDIR/after.json")
check "a change after the restart ($changed slots) keeps the earlier change's previous owners too ($p2 slots carry one)" \
	[ "$changed" -gt 0 -a "$p2" -gt "$changed" ]
stop_daemon
t_done
