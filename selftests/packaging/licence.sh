#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Every source file says its licence in an SPDX line within its first three
# lines, every licence it names has its text in LICENSES/, and the kernel
# module is GPL-2.0-only (LICENSE says which parts are under which).
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
nok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n $*"; }
command -v git >/dev/null && [ -e .git ] || { echo "1..0 # SKIP not a git checkout (a release tarball)"; exit 4; }

files=$(git ls-files '*.c' '*.h' '*.sh' '*.py' '*.bpf.c' | sort -u)
missing=$(for f in $files; do head -n 3 "$f" | grep -q 'SPDX-License-Identifier:' || echo "$f"; done)
[ -z "$missing" ] && ok "each of the $(echo "$files" | wc -l) source files has an SPDX line" ||
	{ nok "source files without an SPDX line in their first three lines"; echo "$missing" | sed 's/^/# /'; }
ids=$(for f in $files; do head -n 3 "$f" | sed -n 's/.*SPDX-License-Identifier: *//p'; done |
	sed 's/\*\/.*//; s/[()]//g; s/ OR / /g; s/ AND / /g' | tr ' ' '\n' | grep . | sort -u)
nolic=$(for id in $ids; do [ -f "LICENSES/$id" ] || echo "$id"; done)
[ -z "$nolic" ] && ok "every licence named ($(echo $ids)) has its text in LICENSES/" ||
	nok "licences named without a text in LICENSES/: $(echo $nolic)"
bad=$(for f in $(git ls-files 'kernel/*.c' 'kernel/*.h'); do
	head -n 3 "$f" | grep -q 'SPDX-License-Identifier: GPL-2.0-only' || echo "$f"; done)
[ -z "$bad" ] && grep -q 'MODULE_LICENSE("GPL")' kernel/*.c && ok "kernel/ is GPL-2.0-only" ||
	nok "kernel/ files not GPL-2.0-only: $bad"
[ -s LICENSE ] && grep -q LICENSES/ LICENSE && ok "LICENSE says where the texts are" || nok "LICENSE"
echo "1..$n"
[ $fail = 0 ]
