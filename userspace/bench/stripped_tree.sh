#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The stripped balancer's sources in DIR: a copy of this tree (not of
# build/), outside any git work tree so that git apply patches it as plain
# files, with userspace/bench/stripped.patch applied. Used by
# stripped_bench.sh and selftests/packaging/bench_patch.sh.
# Usage: userspace/bench/stripped_tree.sh DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tar -C "$root" --exclude=./build --exclude=./.git -cf - . | tar -C "$1" -xf -
if ! (cd "$1" && git apply "$root/userspace/bench/stripped.patch"); then
	echo "stripped.patch no longer applies to these sources: refresh it" >&2
	exit 1
fi
