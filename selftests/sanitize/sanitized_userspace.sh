#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The userspace tests a second time, against maglevd, maglevctl, the e2e
# tools and the C test programs built with AddressSanitizer, UBSan and
# LeakSanitizer into build/san (make BUILD=build/san SANITIZE=1 CC=clang).
# The list is make's SAN_TESTS (selftests/sanitize/sanitize.mk).
#
# clang, not gcc: gcc links UBSan as a runtime of its own (libubsan) that
# ignores log_path and always writes to stderr, so the report of a daemon
# whose stderr goes to a deleted log, or of a maglevctl run with 2>/dev/null,
# would be lost; clang's ASan runtime carries UBSan and writes both (and
# LeakSanitizer's) to the log_path files scanned below.
#
# Each inner program's output is captured, never passed through: its result
# lines come out renumbered as this program's own, named "san: PROG: ...", so
# selftests/run counts every result once. Per program one more result says
# whether any sanitizer reported: the reports go to files (log_path), so also
# those of daemons and tools the scripts start in the background with their
# output sent to a log that is deleted with the test's directory, or to
# /dev/null. A failing program's output is shown as "#" diagnostics.
#
# Environment: MAGLEV_SAN_TIMEOUT, seconds per inner program (default 600);
# MAGLEV_SAN_TESTS, programs to run instead of make's list (e.g.
# "selftests/daemon/daemon_cli.sh build/san/selftests/table/table_test").
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
SAN=build/san
TIMEOUT=${MAGLEV_SAN_TIMEOUT:-600}
REPORT_RE='ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|SUMMARY: UndefinedBehaviorSanitizer'
# This runs inside "make check": the outer make's flags (variables given on
# its command line, jobserver) must not leak into the sanitized build.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
ulimit -c 0

N=0
FAIL=0
result() { # "ok"|"not ok" NAME
	N=$((N + 1))
	[ "$1" = ok ] || FAIL=$((FAIL + 1))
	echo "$1 $N $2"
}
# diag_file FILE [MAX]: a file's lines as "#" diagnostics (at most MAX).
diag_file() {
	head -n "${2:-150}" "$1" | sed -e 's/^#* \{0,1\}/# /'
}

[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP machine: needs root"; exit 4; }
WORK=$(mktemp -d /tmp/maglev-san.XXXXXX) || exit 1
trap 'rm -rf "$WORK"' EXIT
trap 'exit 1' INT TERM

echo "TAP version 13"
# Build. KSRC: the kselftest headers the main build already extracted. The
# lock keeps two concurrent runs from writing build/san at the same time;
# objects of another compiler (make does not track CC) are thrown away.
mkdir -p "$SAN"
MK=(make --no-print-directory BUILD="$SAN" SANITIZE=1 CC=clang KSRC=build/ksrc)
start=$(date +%s)
# shellcheck disable=SC2016 # (expanded by the inner bash)
if flock "$SAN/.build.lock" bash -c '
	[ "$(cat "$1/.cc" 2>/dev/null)" = clang ] || { rm -rf "${1:?}"/* && echo clang >"$1/.cc"; }
	"${@:2}" -j2 sanitize-build' - "$SAN" "${MK[@]}" >"$WORK/build.log" 2>&1; then
	result ok "san: build (make BUILD=$SAN SANITIZE=1 CC=clang, $(($(date +%s) - start)) s)"
else
	result "not ok" "san: build (make BUILD=$SAN SANITIZE=1 CC=clang)"
	tail -n 40 "$WORK/build.log" | diag_file /dev/stdin 40
	echo "1..$N"
	exit 1
fi
read -r -a PROGS < <(echo "${MAGLEV_SAN_TESTS:-$("${MK[@]}" -s print-sanitize-tests)}")

for prog in "${PROGS[@]}"; do
	short=${prog#"$SAN"/}
	base=$(basename "$prog")
	d=$WORK/$base.$N
	mkdir -p "$d/reports"
	out=$d/out
	start=$(date +%s)
	# log_path: reports to $d/reports/san.PID whatever the process did with
	# its stderr (ASan's and UBSan's option: either may name the file). allocator_may_return_null: table_test caps its
	# address space to prove that an allocation fails cleanly; without it
	# ASan would abort instead of returning NULL as libc does.
	MAGLEV_BUILD=$ROOT/$SAN \
		ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:allocator_may_return_null=1:log_path=$d/reports/san" \
		UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$d/reports/san" \
		timeout --kill-after=10 "$TIMEOUT" "$prog" </dev/null >"$out" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))

	p=0 f=0 s=0
	while IFS= read -r line; do
		if [[ $line =~ ^(not\ )?ok\ [0-9]+(\ -)?\ ?(.*)$ ]]; then
			rest=${BASH_REMATCH[3]}
			if [ -n "${BASH_REMATCH[1]}" ]; then
				result "not ok" "san: $short: $rest"
				f=$((f + 1))
			else
				result ok "san: $short: $rest"
				if [[ $rest =~ \#[[:space:]]*[Ss][Kk][Ii][Pp] ]]; then s=$((s + 1)); else p=$((p + 1)); fi
			fi
		fi
	done <"$out"
	bad=$f
	if [ "$rc" -eq 4 ] && [ $((p + f + s)) -eq 0 ]; then
		why=$(sed -n 's/^1\.\.0 *# *SKIP *//p' "$out" | head -n 1)
		result ok "san: $short # SKIP ${why:-skipped}"
	elif [ "$rc" -ne 0 ] && [ "$rc" -ne 4 ] && [ "$f" -eq 0 ]; then
		[ "$rc" -eq 124 ] && why="timed out after ${TIMEOUT}s" || why="exited with status $rc"
		result "not ok" "san: $short: $why"
		bad=1
	fi

	# Sanitizer reports: in the captured output (a program that ignores
	# log_path) and in the report files of every process of the run.
	mapfile -t reports < <(grep -lE "$REPORT_RE" "$out" "$d"/reports/* 2>/dev/null)
	if [ ${#reports[@]} -eq 0 ]; then
		result ok "san: $short: no sanitizer reports (${secs} s)"
	else
		nrep=${#reports[@]}
		result "not ok" "san: $short: sanitizer reports ($nrep processes)"
		# The first three in full (up to their SUMMARY line), then what
		# all of them were about.
		for r in "${reports[@]:0:3}"; do
			echo "# ---- ${r#"$d"/}"
			grep -E -A 40 "$REPORT_RE" "$r" | sed '/^SUMMARY:/q' | diag_file /dev/stdin 50
		done
		echo "# ---- summaries of all $nrep:"
		grep -h -E '^SUMMARY:' "${reports[@]}" | sort | uniq -c | diag_file /dev/stdin 20
	fi
	if [ "$bad" -ne 0 ]; then
		echo "# ---- output of $short (rc $rc)"
		grep -vE '^(not )?ok [0-9]+' "$out" | tail -n 150 | diag_file /dev/stdin
	fi
	rm -rf "$d"
done

echo "1..$N"
[ "$FAIL" -eq 0 ]
