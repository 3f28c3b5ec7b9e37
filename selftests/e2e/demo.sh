#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# make demo's walkthrough (scripts/demo) run whole, and what it prints checked
# against what docs/demo.md promises: the flows of a removed backend move and
# no other; a drained backend keeps its connections; a second balancer joins
# over BGP with the same table digest and the same backends; a balancer
# leaves under open connections and none breaks; a backend added while a
# balancer leaves breaks no connection with second chance, and some without.
cd "$(dirname "$0")/../.." || exit 1
. selftests/e2e/lib.sh
e2e_require "$TOPO_TOOLS/flow-client" "$TOPO_TOOLS/longconn" "$TOPO_MAGLEVD" "$TOPO_MAGLEVCTL"
command -v bird >/dev/null || e2e_skip_all "bird2 not installed (scripts/install-deps)"
e2e_plan 9
out=$(mktemp)
trap 'rm -f "$out"' EXIT
scripts/demo >"$out" 2>&1
rc=$?
e2e_result $rc "scripts/demo runs to the end (exit $rc)" "$(tail -20 "$out")"
grep -q "^    b3's [0-9]* flows moved to b1 and b2; of the others, 0 moved\.$" "$out"
e2e_result $? "step 5: only the removed backend's flows move" "$(grep -A8 '^5\.' "$out")"
grep -q "b3 added back: 3000 of 3000 flows are on the same backend as in step 4" "$out"
e2e_result $? "step 5: b3 added back, every flow on its step-4 backend again" "$(grep -A12 '^5\.' "$out")"
grep -q "the 30 connections ended on schedule: 30 of 30 up to the end, 0 resets" "$out"
e2e_result $? "step 6: the drained backend's connections all end on schedule" "$(grep -A12 '^6\.' "$out")"
grep -Eq "table digest: lb1 ([0-9a-f]+), lb2 \1: same tables" "$out"
e2e_result $? "step 7: the second balancer holds the same tables (digest)" "$(grep -A12 '^7\.' "$out")"
grep -q "same backend as through lb1 alone in step 4: 3000 of 3000" "$out"
e2e_result $? "step 7: through ECMP over two balancers every flow reaches the same backend" \
	"$(grep -A12 '^7\.' "$out")"
sed -n '/^8\./,/^9\./p' "$out" | grep -q "60 of 60 connections up to the end, 0 broken"
e2e_result $? "step 8: a balancer leaves under 60 connections, none breaks" "$(grep -A8 '^8\.' "$out")"
grep -q "with second chance: *60 of 60 connections up to the end, 0 broken" "$out"
e2e_result $? "step 9: with second chance every connection is kept" "$(grep -A8 '^9\.' "$out")"
grep -Eq "without second chance: *[0-9]+ of 60 connections up to the end, [1-9][0-9]* broken" "$out"
e2e_result $? "step 9: without second chance some break (the demo shows what breaks)" \
	"$(grep -A8 '^9\.' "$out")"
e2e_done
