#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Spread: 3,000 HTTP flows from 64 client addresses through the balancer
# reach three equal backends a third each (±10%); with weights 1:2:3 the
# shares are 1/6, 2/6, 3/6 (±10%). Counted by the client from the backend
# name in every answer.
cd "$(dirname "$0")/../.." || exit 1
. selftests/e2e/lib.sh
e2e_require "$TOPO_TOOLS/flow-client" "$TOPO_MAGLEVD" "$TOPO_MAGLEVCTL"

e2e_plan 2
e2e_lb_up -b 3
vip=$TOPO_VIP4:80/tcp
e2e_vip 1 "$vip" -- "$(topo_backend4 1)" "$(topo_backend4 2)" "$(topo_backend4 3)"
out=$TOPO_DIR/spread

e2e_flows "$out.eq" -d "$TOPO_VIP4" -p 80 -s "$(topo_srcs4)" -n 3000
rc=0
[ "$(e2e_failed "$out.eq")" = 0 ] || rc=1
for b in b1 b2 b3; do e2e_share_ok "$out.eq" $b 1 3 || rc=1; done
e2e_result $rc "equal weights: 3000 flows, each backend within ±10% of 1/3 ($(topo_shares "$out.eq"))" "$(cat "$out.eq")"

for i in 1 2 3; do
	topo_ctl 1 backend set "$vip" "$(topo_backend4 $i)" --weight $i >/dev/null ||
		topo_die "maglevctl backend set --weight $i failed"
done
e2e_flows "$out.w" -d "$TOPO_VIP4" -p 80 -s "$(topo_srcs4)" -n 3000 -b 30000
rc=0
[ "$(e2e_failed "$out.w")" = 0 ] || rc=1
for i in 1 2 3; do e2e_share_ok "$out.w" b$i $i 6 || rc=1; done
e2e_result $rc "weights 1:2:3: 3000 flows, shares within ±10% of 1/6, 2/6, 3/6 ($(topo_shares "$out.w"))" "$(cat "$out.w")"
e2e_done
