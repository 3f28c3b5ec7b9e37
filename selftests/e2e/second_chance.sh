#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Second chance end to end: long-lived TCP connections through two balancers
# behind ECMP, then at once the router moves every flow to lb2 (lb1's route
# withdrawn: lb2 has no entry for lb1's flows) and a fourth backend is added
# on both, so some slots change owner. A VIP without second chance loses
# exactly the connections the changed slots predict (lb1's flows whose slot
# now names another backend); the same set-up with --second-chance loses
# none: lb2 carries each such flow's previous owner, the new owner's decap
# finds no socket and sends it on. Then the previous owner itself deleted:
# those flows break as without second chance, and nothing loops (every
# packet sent on is delivered by the next backend: never a second hop).
cd "$(dirname "$0")/../.." || exit 1
. selftests/e2e/lib.sh
e2e_require "$TOPO_TOOLS/longconn" "$TOPO_MAGLEVD" "$TOPO_MAGLEVCTL"

N=100
e2e_plan 6
e2e_lb_up -b 4 -l 2 second_chance_ms 60000
# Strict, as second chance needs (an open decap sends nothing on): the
# balancers' outer sources and the four backends.
bes=()
for i in 1 2 3 4; do bes+=("$(topo_backend4 $i)/32"); done
for i in 1 2 3 4; do
	topo_decap_strict $i "$TOPO_SRC4_PREFIX" "${bes[@]}"
	topo_backend_tx $i
done
P=$TOPO_ECHO_PORT
VA="$TOPO_VIP4:$P/tcp"   # second chance
VB="$TOPO_VIP4_B:$P/tcp" # without
e2e_vip 1 "$VA" --encap gue --second-chance -- "$(topo_backend4 1)" "$(topo_backend4 2)" "$(topo_backend4 3)"
e2e_vip 1 "$VB" --encap gue -- "$(topo_backend4 1)" "$(topo_backend4 2)" "$(topo_backend4 3)"
topo_ctl 1 save >"$TOPO_DIR/lb1.save" && topo_ctl 2 restore "$TOPO_DIR/lb1.save" >/dev/null ||
	topo_die "maglevctl save | restore from lb1 to lb2 failed"
topo_wait_up 2 || topo_die "lb2: backends not up"
topo_route_vip lb1 lb2

# sc_count K NAME: a datapath counter of balancer K.
sc_count() { topo_ctl "$1" -j stats | jq --arg n "$2" '[.. | objects | .[$n]? // empty] | add // 0'; }
decap_count() { # decap_count I IDX: backend I's decap counter IDX, all CPUs
	local p m
	# Map ids are global: find the map through the program on b$1's eth0.
	p=$(ip -j -n "$TOPO_ID-b$1" link show dev eth0 | jq '.[0].xdp.prog.id')
	for m in $(bpftool -j prog show id "$p" | jq '.map_ids[]'); do
		bpftool -j map show id "$m" | jq -e '.name == "maglev_decap_cn"' >/dev/null && break
	done
	bpftool -j map lookup id "$m" key "$2" 0 0 0 |
		jq 'def hex: explode | reduce .[] as $c (0; . * 16 + (if $c >= 97 then $c - 87 else $c - 48 end));
			[.values[] | .value | if type == "array" then (reverse | map(ltrimstr("0x")) | join("") | hex) else . end] | add'
}

topo_bg client lcA "$TOPO_TOOLS/longconn" -d "$TOPO_VIP4" -p "$P" -s "$(topo_srcs4 50)" -n $N -i 200 -T 12 --max-stall 5000
pa=$TOPO_BG_PID
topo_bg client lcB "$TOPO_TOOLS/longconn" -d "$TOPO_VIP4_B" -p "$P" -s "$(topo_srcs4 50)" -n $N -i 200 -T 12 --max-stall 5000
pb=$TOPO_BG_PID
sleep 3

# Each connection's tuple, right before the change (ss in the client
# namespace); which balancer carried it and where is read after the run from
# lb1's connection entries, which stay (TCP entries do not expire).
tuples() { topo_exec client ss -Htn state established dst "$1" | awk '{print $3}' >"$2"; }
tuples "$TOPO_VIP4" "$TOPO_DIR/tupA"
tuples "$TOPO_VIP4_B" "$TOPO_DIR/tupB"

# At once (well within the 200 ms between two packets of a connection): a
# fourth backend on both balancers, then every flow to lb2. In this order
# a moved flow can only reach lb2 once its slot has changed.
adds=()
for k in 1 2; do
	topo_ctl $k backend add "$VA" "$(topo_backend4 4)" >/dev/null &
	adds+=($!)
	topo_ctl $k backend add "$VB" "$(topo_backend4 4)" >/dev/null &
	adds+=($!)
done
wait "${adds[@]}"
# In the tables once its first check has passed on each balancer.
topo_wait_up 1 && topo_wait_up 2 || topo_die "backend 4 not up"
topo_route_vip lb2
sleep 2
sleep 1

wait $pa
wait $pb
aliveA=$(e2e_field "$TOPO_DIR/lcA.out" alive)
aliveB=$(e2e_field "$TOPO_DIR/lcB.out" alive)
brokeA=$((N - aliveA)) brokeB=$((N - aliveB))
# lookup K VIP TUPLES: "entry-backend table-backend" per tuple on balancer K
# (maglevctl straight to the control socket: no namespace switch per call).
lookup() {
	local sa
	while read -r sa; do
		MAGLEV_SOCKET=$TOPO_DIR/lb$1.sock "$TOPO_MAGLEVCTL" -j lookup "$2" "$sa" |
			jq -r '"\(.conn.backend // "-") \(.table_backend // "-")"'
	done <"$3"
}
# Predicted breaks: flows lb1 carried (an entry there) whose slot now names
# another backend than the one they were on.
lookup 1 "$VA" "$TOPO_DIR/tupA" >"$TOPO_DIR/lkA"
lookup 1 "$VB" "$TOPO_DIR/tupB" >"$TOPO_DIR/lkB"
predA=$(awk '$1 != "-" && $1 != $2' "$TOPO_DIR/lkA" | wc -l)
predB=$(awk '$1 != "-" && $1 != $2' "$TOPO_DIR/lkB" | wc -l)
lb1A=$(awk '$1 != "-"' "$TOPO_DIR/lkA" | wc -l)
lb1B=$(awk '$1 != "-"' "$TOPO_DIR/lkB" | wc -l)
echo "# without second chance: $brokeB of $N broken, $predB predicted ($lb1B were on lb1)"
echo "# with second chance:    $brokeA of $N broken, $predA would have without it ($lb1A were on lb1)"

# The prediction is an upper bound read from lb1's entries after the run; a
# run here had one predicted connection survive (7 of 8), so it is checked
# as "none beyond it, at least three quarters of it".
rc=0
[ "$predB" -gt 0 ] && [ "$brokeB" -le "$predB" ] && [ $((brokeB * 4)) -ge $((predB * 3)) ] || rc=1
e2e_result $rc "without second chance: $brokeB of $N connections broken, the changed slots predict $predB" \
	"$(cat "$TOPO_DIR/lcB.out")"
rc=0
[ "$predA" -gt 0 ] && [ "$brokeA" = 0 ] && [ "$(e2e_field "$TOPO_DIR/lcA.out" resets)" = 0 ] || rc=1
e2e_result $rc "with second chance: 0 of $N broken ($predA would have been), zero resets" \
	"$(cat "$TOPO_DIR/lcA.out")"
carried=$(sc_count 2 sc_carried)
redir=0
for i in 1 2 3 4; do redir=$((redir + $(decap_count $i 6))); done
[ "$carried" -gt 0 ] && [ "$redir" -gt 0 ]
e2e_result $? "counted on both sides: lb2 carried $carried packets' previous owner, the backends sent $redir on" \
	"carried $carried redirected $redir"

# Round 2, within the window: ECMP again, new connections to the second-
# chance VIP, then at once backend 1 deleted on both balancers and every
# flow to lb2. Slots that change now name backend 1 as previous owner, which
# is gone: never carried. Its connections break (as they do without second
# chance: their backend is gone); every other survives.
topo_route_vip lb1 lb2
topo_bg client lcC "$TOPO_TOOLS/longconn" -d "$TOPO_VIP4" -p "$P" -s "$(topo_srcs4 50)" -n $N -i 200 -T 8 --max-stall 5000
pc=$TOPO_BG_PID
sleep 3
c0=$(sc_count 2 sc_carried)
adds=()
for k in 1 2; do
	topo_ctl $k backend del "$VA" "$(topo_backend4 1)" --force >/dev/null &
	adds+=($!)
done
wait "${adds[@]}"
topo_route_vip lb2
wait $pc
onb1=$(awk '$1 == "backend" && $2 == "b1" {print $3}' "$TOPO_DIR/lcC.out")
aliveC=$(e2e_field "$TOPO_DIR/lcC.out" alive)
rc=0
[ -n "$onb1" ] && [ "$onb1" -gt 0 ] && [ "$aliveC" = $((N - onb1)) ] || rc=1
e2e_result $rc "previous owner deleted: its $onb1 connections break as without second chance, the other $aliveC of $N survive" \
	"$(cat "$TOPO_DIR/lcC.out")"
carried=$(sc_count 2 sc_carried)
redir=0 once=0
for i in 1 2 3 4; do
	redir=$((redir + $(decap_count $i 6)))
	once=$((once + $(decap_count $i 7)))
done
[ "$redir" -le "$carried" ] && [ "$once" = "$redir" ]
e2e_result $? "nothing loops: $redir packets sent on, each delivered by the next backend ($once), none of $carried carried moved twice" \
	"carried $carried (round 2: $((carried - c0))) redirected $redir delivered-after-one-hop $once"
# Round 2's carried packets name live previous owners only.
rc=0
[ "$(awk '$1 == "backend" && $2 != "b1" && $3 != $5' "$TOPO_DIR/lcC.out" | wc -l)" = 0 ] || rc=1
e2e_result $rc "every connection on a remaining backend survived round 2" "$(cat "$TOPO_DIR/lcC.out")"


