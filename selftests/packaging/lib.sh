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

# with_eth0 CMD...: CMD in a network namespace of its own that has an eth0
# (a veth), as the example configuration names (maglevd -t checks that its
# interfaces exist). The namespace is removed afterwards.
with_eth0() {
	local ns=mlbpkg$$ rc
	ip netns add "$ns" && ip -n "$ns" link add eth0 type veth peer name eth1 || return 1
	ip netns exec "$ns" "$@"
	rc=$?
	ip netns del "$ns"
	return $rc
}
