#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Packet fuzzing (docs/fuzzing.md, "Packet fuzzing"): build/fuzz/xdp_fuzz runs
# every input through the XDP balancer with BPF_PROG_TEST_RUN and aborts on
# any oracle violation.
#   1. replay every committed input of selftests/fuzz/corpus/xdp (seeds and
#      crash reproducers) once, as a regression test;
#   2. the seeds reach every reason the program can reach under
#      BPF_PROG_TEST_RUN (all but drop_adjust: the test run always leaves
#      headroom for the outer headers; and drop_slow_path: the harness runs
#      with slow_path_limit 0, so the oracle's passes are the packet's own);
#   3. fuzz for MAGLEV_FUZZ_SECONDS (default 60) on a copy of the corpus in
#      build/fuzz/xdp/corpus (kept between runs; `make fuzz-merge` adds what
#      brings new coverage to the committed corpus). A finding leaves its
#      input in build/fuzz/xdp/crash-* and fails the check.
# Executions, exec/s, libFuzzer's cov/ft and the reasons reached are "#" lines.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/build/fuzz/xdp_fuzz
SEEDS=$ROOT/selftests/fuzz/corpus/xdp
WORK=$ROOT/build/fuzz/xdp
SECS=${MAGLEV_FUZZ_SECONDS:-60}
# Reasons no frame can reach through BPF_PROG_TEST_RUN (with the harness's
# unlimited slow path).
UNREACHABLE="drop_adjust drop_slow_path"

echo "TAP version 13"
if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP machine: needs root for BPF_PROG_TEST_RUN"
	exit 4
fi
if [ ! -x "$BIN" ]; then
	echo "1..0 # SKIP $BIN not built (make)"
	exit 4
fi
echo "1..3"

TMP=$(mktemp -d /tmp/xdp_fuzz.XXXXXX)
PID=
cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
mkdir -p "$WORK/corpus"

N=0 FAIL=0
ok() { N=$((N + 1)); echo "ok $N $*"; }
nok() { N=$((N + 1)); FAIL=$((FAIL + 1)); echo "not ok $N $*"; }
# An input may take 10 s and 2 GB at most; no input is longer than FZ_MAX_LEN.
OPTS=(-timeout=10 -rss_limit_mb=2048 -max_len=1600)

# Reasons with a non-zero count in a stats file, and those without.
reached() { awk '$1 != "execs" && $2 > 0 { print $1 }' "$1"; }
missed() {
	awk '$1 != "execs" && $2 == 0 { print $1 }' "$1" | while read -r r; do
		case " $UNREACHABLE " in *" $r "*) ;; *) echo "$r" ;; esac
	done
}
total_reasons() { grep -vc '^execs ' "$1"; }

# 1. Regression replay: each committed file once (libFuzzer stops at the
# first failing one and names it).
files=("$SEEDS"/*)
if (cd "$TMP" && MAGLEV_XDP_FUZZ_STATS="$TMP/replay.stats" \
	timeout 300 "$BIN" "${OPTS[@]}" "${files[@]}") >"$TMP/replay.log" 2>&1; then
	ok "xdp_fuzz: replay of the ${#files[@]} committed inputs"
else
	grep -E 'ORACLE|^  [0-9a-f]{2} |^xdp_fuzz:|Running:|SUMMARY' "$TMP/replay.log" | tail -n 12 | sed 's/^/# /'
	cp "$TMP/replay.log" "$WORK/replay.log"
	echo "# full log: $WORK/replay.log; rerun one input: $BIN FILE"
	nok "xdp_fuzz: replay of the ${#files[@]} committed inputs"
fi

# 2. Reasons the committed corpus reaches (the replay stops early if it fails:
# then the seeds are replayed again without the failing reproducers).
if [ ! -s "$TMP/replay.stats" ]; then
	seeds=("$SEEDS"/seed-*)
	(cd "$TMP" && MAGLEV_XDP_FUZZ_STATS="$TMP/replay.stats" \
		timeout 300 "$BIN" "${OPTS[@]}" "${seeds[@]}") >/dev/null 2>&1
fi
if [ -s "$TMP/replay.stats" ]; then
	got=$(reached "$TMP/replay.stats" | wc -l)
	all=$(total_reasons "$TMP/replay.stats")
	miss=$(missed "$TMP/replay.stats" | tr '\n' ' ')
	echo "# corpus reaches $got/$all reasons (unreachable under test run: $UNREACHABLE)"
	if [ -z "$miss" ]; then
		ok "xdp_fuzz: corpus reaches every reachable reason ($got/$all)"
	else
		echo "# not reached: $miss"
		nok "xdp_fuzz: corpus reaches every reachable reason ($got/$all)"
	fi
else
	nok "xdp_fuzz: corpus reaches every reachable reason (no statistics)"
fi

# 3. Fuzzing on the copy in build/.
cp -n "$SEEDS"/* "$WORK/corpus/" 2>/dev/null
before=$(ls "$WORK" | grep -c '^crash-')
start=$SECONDS
(cd "$TMP" && MAGLEV_XDP_FUZZ_STATS="$TMP/fuzz.stats" exec timeout --kill-after=10 $((SECS + 120)) \
	"$BIN" "${OPTS[@]}" -max_total_time="$SECS" -print_final_stats=1 \
	-artifact_prefix="$WORK/" "$WORK/corpus") >"$TMP/fuzz.log" 2>&1 &
PID=$!
wait "$PID"
rc=$?
PID=
took=$((SECONDS - start))
after=$(ls "$WORK" | grep -c '^crash-')
last=$(grep -E '^#[0-9]+' "$TMP/fuzz.log" | tail -n 1)
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$TMP/fuzz.log")
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$TMP/fuzz.log")
added=$(sed -n 's/^stat::new_units_added: *//p' "$TMP/fuzz.log")
cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
ft=$(echo "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
corp=$(ls "$WORK/corpus" | wc -l)
echo "# fuzzing: ${execs:-0} execs in ${took}s (${rate:-0} exec/s), cov ${cov:-?} ft ${ft:-?}," \
	"${added:-0} new inputs, corpus $corp inputs in $WORK/corpus"
if [ -s "$TMP/fuzz.stats" ]; then
	echo "# fuzzing reached $(reached "$TMP/fuzz.stats" | wc -l)/$(total_reasons "$TMP/fuzz.stats") reasons;" \
		"per reason: $(awk '$1 != "execs" { printf "%s=%s ", $1, $2 }' "$TMP/fuzz.stats")"
fi
if [ "$rc" -eq 0 ] && [ "$after" -eq "$before" ] && [ "${execs:-0}" -gt 0 ]; then
	ok "xdp_fuzz: ${execs} execs in ${SECS}s without an oracle violation"
else
	grep -E 'ORACLE|^  [0-9a-f]{2} |^xdp_fuzz:|SUMMARY|artifact' "$TMP/fuzz.log" | tail -n 12 | sed 's/^/# /'
	cp "$TMP/fuzz.log" "$WORK/fuzz.log"
	echo "# crash files: $(cd "$WORK" && ls -t | grep '^crash-' | head -n 3 | sed "s|^|$WORK/|" | tr '\n' ' ')"
	echo "# full log: $WORK/fuzz.log; replay: $BIN CRASHFILE"
	nok "xdp_fuzz: ${SECS}s of fuzzing without an oracle violation (stopped after ${execs:-0} execs, exit $rc)"
fi
[ "$FAIL" -eq 0 ]
