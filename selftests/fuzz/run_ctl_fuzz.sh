#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Control-input fuzzing (docs/fuzzing.md): for each libFuzzer target built by
# selftests/fuzz/ctl_fuzz.mk (request, config, state), replay the committed
# corpus (seeds and every crash reproducer found so far) as a regression
# test, then fuzz for an equal share of MAGLEV_FUZZ_SECONDS (default 60 in
# total). New inputs collect in build/fuzz/ctl-corpus/TARGET, crash files in
# build/fuzz/ctl-crash-TARGET-*; executions and coverage go out as "#" lines.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/build/fuzz
CORPUS=$ROOT/selftests/fuzz/corpus
DICT=$ROOT/selftests/fuzz/ctl_fuzz.dict
TARGETS="request config state"
TOTAL=${MAGLEV_FUZZ_SECONDS:-60}
SHARE=$((TOTAL / 3))
[ "$SHARE" -ge 1 ] || SHARE=1

for t in $TARGETS; do
	[ -x "$BIN/ctl_fuzz_$t" ] || { echo "1..0 # SKIP $BIN/ctl_fuzz_$t not built (make)"; exit 4; }
done

N=0 FAIL=0
ok() { N=$((N + 1)); echo "ok $N $*"; }
nok() { N=$((N + 1)); FAIL=$((FAIL + 1)); echo "not ok $N $*"; }
LOG=$(mktemp /tmp/ctl_fuzz.XXXXXX)
trap 'rm -f "$LOG"' EXIT

# Options of every run: an input may take 10 s and 2 GB at most.
OPTS=(-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048)

echo "1..$((2 * $(echo $TARGETS | wc -w)))"
for t in $TARGETS; do
	bin=$BIN/ctl_fuzz_$t
	# Replay: every committed input once, each as its own run.
	files=("$CORPUS/$t"/*)
	if timeout 120 "$bin" "${OPTS[@]}" -artifact_prefix="$BIN/ctl-crash-$t-" "${files[@]}" >"$LOG" 2>&1; then
		ok "ctl_fuzz_$t: replay of the ${#files[@]} committed inputs"
	else
		grep -E 'ERROR|SUMMARY|oracle|Running' "$LOG" | tail -n 8 | sed 's/^/# /'
		nok "ctl_fuzz_$t: replay of the ${#files[@]} committed inputs"
	fi

	work=$BIN/ctl-corpus/$t
	mkdir -p "$work"
	before=$(ls "$BIN" | grep -c "^ctl-crash-$t-")
	timeout $((SHARE + 60)) "$bin" "${OPTS[@]}" -max_total_time="$SHARE" -max_len=8192 \
		-dict="$DICT" -print_final_stats=1 -artifact_prefix="$BIN/ctl-crash-$t-" \
		"$work" "$CORPUS/$t" >"$LOG" 2>&1
	rc=$?
	after=$(ls "$BIN" | grep -c "^ctl-crash-$t-")
	last=$(grep -E '^#[0-9]+' "$LOG" | tail -n 1)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$LOG")
	cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
	corp=$(echo "$last" | sed -n 's/.*corp: \([0-9]*\).*/\1/p')
	echo "# ctl_fuzz_$t: ${execs:-0} execs in ${SHARE}s, cov ${cov:-?} ft ${ft:-?}, corpus ${corp:-?} inputs"
	if [ "$rc" -eq 0 ] && [ "$after" -eq "$before" ] && [ -n "$execs" ] && [ "$execs" -gt 0 ]; then
		ok "ctl_fuzz_$t: ${SHARE}s of fuzzing, no finding"
	else
		grep -E 'ERROR|SUMMARY|oracle|artifact' "$LOG" | tail -n 8 | sed 's/^/# /'
		echo "# crash files: $(ls "$BIN" | grep "^ctl-crash-$t-" | tr '\n' ' ')"
		nok "ctl_fuzz_$t: ${SHARE}s of fuzzing, no finding (exit $rc)"
	fi
done
[ "$FAIL" -eq 0 ]
