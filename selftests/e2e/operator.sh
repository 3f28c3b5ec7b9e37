#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The operator's view agrees with what clients saw: `maglevctl lookup` names
# the backend each client flow reached (connection table and Maglev slot), and
# predicts the backend of flows not sent yet (the daemon's hash and table are
# the datapath's); `maglevctl stats` counts one new flow per connection and
# splits packets between backends as the clients' flows were split.
cd "$(dirname "$0")/../.." || exit 1
. selftests/e2e/lib.sh
e2e_require "$TOPO_TOOLS/flow-client" "$TOPO_MAGLEVD" "$TOPO_MAGLEVCTL"
command -v jq >/dev/null || e2e_skip_all "jq not installed"

e2e_plan 3
e2e_lb_up -b 3
vip=$TOPO_VIP4:80/tcp
e2e_vip 1 "$vip" -- "$(topo_backend4 1)" "$(topo_backend4 2)" "$(topo_backend4 3)"
out=$TOPO_DIR/op
name_of() { # backend address -> bI
	local i
	for i in 1 2 3; do [ "$1" = "$(topo_backend4 $i)" ] && echo "b$i"; done
}
# lookup SRC SPORT: "SOURCE NAME" from maglevctl -j lookup.
lookup() {
	local r
	r=$(topo_ctl 1 -j lookup "$vip" "$1:$2" | jq -r '"\(.source) \(.backend)"')
	echo "${r% *} $(name_of "${r#* }")"
}
stat() { # stat FIELD [BACKEND]: a counter of the VIP (or of one backend) from maglevctl -j stats
	topo_ctl 1 -j stats | jq --arg v "$vip" --arg b "${2:-}" --arg f "$1" \
		'[.vips[] | select(.vip == $v) | if $b == "" then . else (.backends[] | select(.backend == $b)) end | .[$f]] | add // 0'
}

n0=$(stat new_flows)
declare -A p0 f0
for i in 1 2 3; do
	p0[$i]=$(stat packets "$(topo_backend4 $i)")
	f0[$i]=$(stat new_flows "$(topo_backend4 $i)")
done
e2e_flows "$out.seen" -d "$TOPO_VIP4" -p 80 -s "$(topo_srcs4)" -n 3000 -m "$out.map"
bad=0
while read -r src sport name; do
	[ "$(lookup "$src" "$sport")" = "conn $name" ] || bad=$((bad + 1))
done < <(awk 'NR % 60 == 1' "$out.map")
[ "$bad" = 0 ] && [ "$(e2e_failed "$out.seen")" = 0 ]
e2e_result $? "lookup of 50 client flows: the connection entry names the backend the client saw ($bad differ)"

# Predict, then send: 50 flows from a source port never used before.
bad=0
: >"$out.pred"
for ((k = 0; k < 50; k++)); do
	src=203.0.113.$((100 + k)) sport=50000
	read -r source name < <(lookup "$src" "$sport")
	[ "$source" = table ] || bad=$((bad + 1))
	echo "$src $sport $name" >>"$out.pred"
done
e2e_flows "$out.new" -d "$TOPO_VIP4" -p 80 -s "$(topo_srcs4 50)" -n 50 -b 50000 -m "$out.newmap"
diff=$(paste -d' ' "$out.pred" "$out.newmap" | awk '$3 != $6' | wc -l)
[ "$bad" = 0 ] && [ "$diff" = 0 ]
e2e_result $? "lookup predicts the backend of 50 new flows before they are sent ($diff mispredicted, $bad not from the table)" \
	"$(paste -d' ' "$out.pred" "$out.newmap" | awk '$3 != $6' | head -5)"

n1=$(stat new_flows)
rc=0
dn=$((n1 - n0))
# 3,050 connections: one new flow each (a retransmitted SYN may add a few).
[ "$dn" -ge 3050 ] && [ "$dn" -le 3080 ] || rc=1
shares=""
total=0
declare -A d
for i in 1 2 3; do
	d[$i]=$(($(stat packets "$(topo_backend4 $i)") - p0[$i]))
	total=$((total + d[$i]))
done
for i in 1 2 3; do
	c=$(e2e_count "$out.seen" b$i)
	# packet share within ±10% of the client-seen flow share
	[ $((d[$i] * 3000 * 10)) -ge $((c * total * 9)) ] && [ $((d[$i] * 3000 * 10)) -le $((c * total * 11)) ] || rc=1
	# the backend's new-flow counter equals the flows its clients saw (+ a few retransmitted SYNs)
	nf=$(($(stat new_flows "$(topo_backend4 $i)") - f0[$i]))
	c50=$(e2e_count "$out.new" b$i)
	[ "$nf" -ge $((c + c50)) ] && [ "$nf" -le $((c + c50 + 10)) ] || rc=1
	shares+="b$i: $c+$c50 flows, $nf new flows counted, ${d[$i]} packets; "
done
e2e_result $rc "stats: $dn new flows for 3050 connections; per-backend packets follow the clients' split" "$shares"
e2e_done
