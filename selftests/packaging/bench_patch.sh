#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# make bench builds a stripped copy of the balancer from
# userspace/bench/stripped.patch (stripped_bench.sh): a change to the hot
# path that the patch no longer fits breaks make bench, which the suite does
# not run. So: the patch applies to this tree, and the stripped program
# compiles.
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d /tmp/maglev-bench-patch.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
check "userspace/bench/stripped.patch applies to this tree" \
	"$ROOT/userspace/bench/stripped_tree.sh" "$tmp"
check "the stripped balancer compiles" \
	bash -c "[ $T_FAIL = 0 ] && make -C '$tmp' -s --no-print-directory build/bpf/maglev_xdp.bpf.o >'$tmp/build.log' 2>&1 ||
		 { sed 's/^/# /' '$tmp/build.log' | tail -20; false; }"
t_done
