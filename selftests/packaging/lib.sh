# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
# KTAP helpers of the packaging tests (man pages, install, completion): they
# need no namespace or daemon, so not selftests/daemon/lib.sh.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD_DIR=$ROOT/build
T_N=0 T_FAIL=0
ok() { T_N=$((T_N + 1)); echo "ok $T_N $*"; }
nok() { T_N=$((T_N + 1)); T_FAIL=$((T_FAIL + 1)); echo "not ok $T_N $*"; }
diag() { echo "# $*"; }
# check NAME CMD...: one test line from a command's status.
check() { local name=$1; shift; if "$@"; then ok "$name"; else nok "$name"; fi; }
t_done() { echo "1..$T_N"; [ "$T_FAIL" -eq 0 ]; exit $?; }
