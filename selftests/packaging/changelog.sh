#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The version scheme (CHANGELOG.md): every release tag vX.Y.Z reachable from
# HEAD has its "## X.Y.Z" section, the newest section is the newest tag or
# "Unreleased", and scripts/version says the tag on a tagged commit and
# vX.Y.Z-N-gHASH after it (checked in a scratch clone with a tag of its own).
. "$(dirname "$0")/lib.sh"
cd "$ROOT" || exit 1
[ -e .git ] || { echo "1..0 # SKIP not a git checkout (a release tarball)"; exit 4; }
CL=CHANGELOG.md
check "CHANGELOG.md exists and says how versions are numbered" grep -q 'MAJOR.MINOR.PATCH' "$CL"
missing=
for t in $(git tag --merged HEAD -l 'v[0-9]*.[0-9]*.[0-9]*'); do
	grep -q "^## ${t#v} " "$CL" || missing+=" $t"
done
check "every release tag reachable from HEAD has its section${missing:+ (missing:$missing)}" [ -z "$missing" ]
newest_tag=$(git describe --tags --abbrev=0 --match 'v[0-9]*.[0-9]*.[0-9]*' 2>/dev/null)
first=$(sed -n 's/^## \([^ ]*\).*/\1/p' "$CL" | head -n1)
check "the newest section ($first) is Unreleased or the newest tag (${newest_tag:-none})" \
	[ "$first" = Unreleased -o "v$first" = "$newest_tag" ]
T=$(mktemp -d /tmp/maglev-changelog.XXXXXX)
trap 'rm -rf "$T"' EXIT
git clone -q "$ROOT" "$T/c" && git -C "$T/c" -c user.name=t -c user.email=t@example.org tag -a v9.8.7 -m t &&
	v1=$("$T/c/scripts/version") &&
	git -C "$T/c" -c user.name=t -c user.email=t@example.org commit -q --allow-empty -m next &&
	v2=$("$T/c/scripts/version")
check "scripts/version: 'v9.8.7' on the tagged commit ($v1), 'v9.8.7-1-g...' one commit later ($v2)" \
	bash -c "[ '$v1' = v9.8.7 ] && [[ '$v2' =~ ^v9\.8\.7-1-g[0-9a-f]+$ ]]"
t_done
