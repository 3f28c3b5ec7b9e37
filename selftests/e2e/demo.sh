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
# expect STEP REGEX NAME: one result, the output of step STEP (up to the
# next step) holding a line that matches the extended regex REGEX.
expect() {
	local sect
	sect=$(sed -n "/^$1\./,/^$(($1 + 1))\./p" "$out")
	grep -Eq "$2" <<<"$sect"
	e2e_result $? "step $1: $3" "$sect"
}
expect 5 "^    b3's [0-9]* flows moved to b1 and b2; of the others, 0 moved\.$" \
	"only the removed backend's flows move"
expect 5 "b3 added back: 3000 of 3000 flows are on the same backend as in step 4" \
	"b3 added back, every flow on its step-4 backend again"
expect 6 "the 30 connections ended on schedule: 30 of 30 up to the end, 0 resets" \
	"the drained backend's connections all end on schedule"
expect 7 "table digest: lb1 ([0-9a-f]+), lb2 \1: same tables" \
	"the second balancer holds the same tables (digest)"
expect 7 "same backend as through lb1 alone in step 4: 3000 of 3000" \
	"through ECMP over two balancers every flow reaches the same backend"
expect 8 "60 of 60 connections up to the end, 0 broken" \
	"a balancer leaves under 60 connections, none breaks"
expect 9 "with second chance: *60 of 60 connections up to the end, 0 broken" \
	"with second chance every connection is kept"
expect 9 "without second chance: *[0-9]+ of 60 connections up to the end, [1-9][0-9]* broken" \
	"without second chance some break (the demo shows what breaks)"
e2e_done
