#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The man pages built into build/man/ (docs/man/man.mk): each lints clean
# with mandoc -T lint and groff's warnings (any warning fails), and they
# cannot drift from the programs: every command and option of maglevctl's own
# help has its place in maglevctl(8), every maglevd option in maglevd(8),
# every command and option of maglev-decap --help in maglev-decap(8), and
# the keys config.c accepts are exactly the keys maglevd.conf(5) documents.
. "$(dirname "$0")/lib.sh"
MAN=$BUILD_DIR/man
CTL=$BUILD_DIR/maglevctl
D=$BUILD_DIR/maglevd
DECAP=$BUILD_DIR/maglev-decap
PAGES="maglevd.8 maglevctl.8 maglevd.conf.5 maglev-decap.8"

# terms PAGE: the term lines (.TP) of a page, formatting removed.
terms() { sed -n '/^\.TP/{n;p}' "$1" | sed 's/\\f[BIR]//g; s/\\-/-/g; s/\\&//g'; }
# text PAGE: the page as a reader sees it.
text() { mandoc -T ascii -O width=300 "$1" | col -bx; }
# missing_none WHAT MIN ITEM...: true if there are at least MIN items and
# is_there (set by the caller) holds for each; names each one missing.
missing_none() {
	local what=$1 min=$2 x bad=0 n=0
	shift 2
	for x in "$@"; do
		n=$((n + 1))
		is_there "$x" || { diag "$what missing: $x"; bad=1; }
	done
	[ "$n" -ge "$min" ] || { diag "only $n ${what}s found: the extraction is broken"; bad=1; }
	[ $bad -eq 0 ]
}

for p in $PAGES; do
	if [ ! -s "$MAN/$p" ]; then
		nok "$p built"
		continue
	fi
	out=$(mandoc -T lint -W warning "$MAN/$p" 2>&1)
	rc=$?
	[ -n "$out" ] && echo "$out" | sed 's/^/# /'
	check "$p: mandoc -T lint finds no warning" [ $rc -eq 0 -a -z "$out" ]
	out=$(groff -man -ww -z "$MAN/$p" 2>&1)
	[ -n "$out" ] && echo "$out" | sed 's/^/# /'
	check "$p: groff -ww finds no warning" [ -z "$out" ]
done

# The commands of "maglevctl --help": the words before the arguments (a line
# that only continues the arguments of the line above names no command).
mapfile -t cmds < <("$CTL" --help | sed -n '/^Objects and commands:/,/^$/p' | sed '1d;$d' |
	sed 's/^ *//; s/  .*//' | awk '{ c = ""; for (i = 1; i <= NF && $i ~ /^[a-z]+$/; i++) c = c (c ? " " : "") $i; if (c != "") print c }' |
	sort -u)
is_there() { terms "$MAN/maglevctl.8" | grep -qE "^$1( |$)"; }
check "every command of maglevctl --help has an entry in maglevctl(8)" \
	missing_none "maglevctl command" 15 "${cmds[@]}"

# Every option in the main help and each object's help.
objs=$(printf '%s\n' "${cmds[@]}" | cut -d' ' -f1 | sort -u)
# shellcheck disable=SC2086
mapfile -t opts < <({ "$CTL" --help; for o in $objs; do "$CTL" "$o" --help; done; } 2>&1 |
	grep -oE '(^|[^A-Za-z0-9-])--?[a-z][a-z-]*' | sed 's/^[^-]*//' | sort -u)
page_text=$(text "$MAN/maglevctl.8")
is_there() { grep -qE -- "(^|[^A-Za-z0-9-])$1([^A-Za-z0-9-]|$)" <<<"$page_text"; }
check "every option in maglevctl's help texts is in maglevctl(8)" \
	missing_none "maglevctl option" 20 "${opts[@]}"

mapfile -t dopts < <("$D" --help | grep -oE '^ +-[A-Za-z], --[a-z-]+' | tr ',' '\n' | tr -d ' ')
is_there() { terms "$MAN/maglevd.8" | grep -qE -- "(^|, )$1( |,|$)"; }
check "every option of maglevd --help has an entry in maglevd(8)" \
	missing_none "maglevd option" 10 "${dopts[@]}"

# maglev-decap: the commands and the options of its help, each an entry.
mapfile -t xopts < <("$DECAP" --help | sed -n '/^Commands:/,$p' |
	grep -oE '^  ([a-z]+|-h, --help|--[a-z-]+)' | sed 's/^ *//; s/, /\n/')
is_there() { terms "$MAN/maglev-decap.8" | grep -qE -- "(^|, )$1( |,|$)"; }
check "every command and option of maglev-decap --help has an entry in maglev-decap(8)" \
	missing_none "maglev-decap command or option" 9 "${xopts[@]}"

# The keys config_apply() compares against (the health-check defaults' keys
# are hc_fields.c's .conf), and the keys the page's entries name (each entry
# names one or more keys: "src4_prefix PREFIX, src6_prefix ...").
mapfile -t keys < <({
	grep -oE '(strcmp\(key, |U\()"[a-z0-9_]+"' "$ROOT/userspace/maglevd/core/config.c"
	grep -oE '\.conf = "[a-z0-9_]+"' "$ROOT/userspace/lib/hc_fields.c"
} | grep -oE '[a-z0-9_]+"' | tr -d '"' | sort -u)
mapfile -t documented < <(terms "$MAN/maglevd.conf.5" | sed 's/, /\n/g' |
	awk '$1 ~ /^[a-z][a-z0-9_]*$/ { print $1 }' | sort -u)
is_there() { printf '%s\n' "${documented[@]}" | grep -qx "$1"; }
check "every key maglevd accepts (config.c) has an entry in maglevd.conf(5)" \
	missing_none "config key" 25 "${keys[@]}"
is_there() { printf '%s\n' "${keys[@]}" | grep -qx "$1"; }
check "every key maglevd.conf(5) documents is one maglevd accepts" \
	missing_none "documented key" 25 "${documented[@]}"
t_done
