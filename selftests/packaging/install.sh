#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# make install into a scratch DESTDIR (packaging/install.mk): every file in
# its place with its mode and nothing else, the installed maglevd and
# maglevctl run and say the tree's version, the installed maglevd checks the
# installed example config, the unit names the installed binary for both
# the default PREFIX and PREFIX=/usr, uninstall removes it all, and a make
# dist tarball carries its version without .git.
. "$(dirname "$0")/lib.sh"
T=$(mktemp -d /tmp/maglev-install.XXXXXX)
trap 'rm -rf "$T"' EXIT
# A make of its own: not the jobserver of a make check that runs this test.
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$ROOT" --no-print-directory "$@"; }
VER=$("$ROOT/scripts/version")

if ! mk install DESTDIR="$T/d" >"$T/log" 2>&1; then
	sed 's/^/# /' "$T/log"
	nok "make install DESTDIR=..."
	t_done
fi
ok "make install DESTDIR=..."
P=$T/d/usr/local
expected="755 sbin/maglevd
755 bin/maglevctl
755 sbin/maglev-decap
644 lib/maglev-lb/maglev_decap.bpf.o
644 lib/systemd/system/maglevd.service
644 lib/systemd/system/maglev-decap@.service
644 lib/systemd/system/maglevd-withdraw.service
644 share/man/man8/maglevd.8
644 share/man/man8/maglevctl.8
644 share/man/man8/maglev-decap.8
644 share/man/man5/maglevd.conf.5
644 share/bash-completion/completions/maglevctl
644 share/doc/maglev-lb/operations.md
644 share/doc/maglev-lb/quickstart.md
644 share/doc/maglev-lb/examples/maglev-decap.env.example
644 share/doc/maglev-lb/examples/sysctl-maglev-backend.conf
644 share/doc/maglev-lb/examples/maglevd.conf.example
644 share/doc/maglev-lb/examples/bird.conf
644 share/doc/maglev-lb/examples/frr.conf
644 share/doc/maglev-lb/examples/keepalived.conf
644 share/doc/maglev-lb/examples/etcd-maglev.env.example
644 share/maglev-lb/prometheus/maglev-rules.yml
644 share/maglev-lb/grafana/maglev-dashboard.json"
while read -r mode f; do
	check "installed $f, mode $mode" [ -f "$P/$f" -a "$(stat -c %a "$P/$f" 2>/dev/null)" = "$mode" ]
done <<<"$expected"
extra=$(cd "$T/d" && find . -type f | sed 's|^\./usr/local/||' | grep -vxF -f <(cut -d' ' -f2 <<<"$expected"))
[ -n "$extra" ] && diag "unexpected: $extra"
check "nothing else installed, nothing outside PREFIX (no /etc)" [ -z "$extra" ]

check "installed maglevd --version says the tree's version ($VER)" \
	[ "$("$P/sbin/maglevd" --version)" = "maglevd $VER" ]
check "installed maglevctl --version says the tree's version" \
	[ "$("$P/bin/maglevctl" --version)" = "maglevctl $VER" ]
EX=$P/share/doc/maglev-lb/examples/maglevd.conf.example
out=$(with_eth0 "$P/sbin/maglevd" -t -c "$EX" 2>&1)
check "installed maglevd -t accepts the installed example config, warning of its default seed" \
	[ $? -eq 0 -a "$(tail -n1 <<<"$out")" = "maglevd: $EX: configuration OK (with the warning above)" \
		-a -n "$(grep -F 'warning:' <<<"$out" | grep -F 'no seed')" ]
{ cat "$EX"; echo "health_rise 0"; } >"$T/bad.conf"
out=$("$P/sbin/maglevd" -t -c "$T/bad.conf" 2>&1)
check "installed maglevd -t refuses a bad value, naming it" \
	[ $? -eq 1 -a -n "$(grep -F health_rise <<<"$out")" ]
check "installed decap object is a BPF ELF" \
	bash -c "readelf -h '$P/lib/maglev-lb/maglev_decap.bpf.o' | grep -q 'Machine:.*BPF'"
check "man finds maglevd.conf(5) and maglevctl(8) in the installed tree" \
	[ "$(man -M "$P/share/man" -w 5 maglevd.conf)" = "$P/share/man/man5/maglevd.conf.5" -a \
	"$(man -M "$P/share/man" -w 8 maglevctl)" = "$P/share/man/man8/maglevctl.8" ]

# bash-completion's loader looks in XDG_DATA_DIRS: the file is where it looks.
check "bash-completion loads the installed maglevctl completion" \
	env XDG_DATA_DIRS="$P/share" bash -c '. /usr/share/bash-completion/bash_completion &&
		__load_completion maglevctl && [ "$(complete -p maglevctl)" = "complete -F _maglevctl maglevctl" ]'

# exec_paths UNIT: the programs the unit runs.
exec_paths() { sed -n 's/^Exec[A-Za-z]*=\([^ ]*\).*/\1/p' "$1" | sort -u | tr '\n' ' '; }
check "the unit runs the installed maglevd and maglevctl (PREFIX=/usr/local)" \
	[ "$(exec_paths "$P/lib/systemd/system/maglevd.service")" = "/usr/local/bin/maglevctl /usr/local/sbin/maglevd " ]
check "the withdraw unit (maglevd.service's OnFailure=) runs the installed maglevd" \
	[ "$(exec_paths "$P/lib/systemd/system/maglevd-withdraw.service")" = "/usr/local/sbin/maglevd " ]
check "the decap template unit runs the installed maglev-decap" \
	[ "$(exec_paths "$P/lib/systemd/system/maglev-decap@.service")" = "/usr/local/sbin/maglev-decap " ]
if command -v systemd-analyze >/dev/null; then
	out=$(cd "$P/lib/systemd/system" && systemd-analyze verify --man=no ./maglev-decap@eth0.service 2>&1 |
		grep -v "EnvironmentFile\|decap-eth0.env\|Failed to prepare\|sys-subsystem-net-devices\|No such file")
	check "systemd-analyze verify finds nothing wrong in maglev-decap@eth0.service" [ -z "$out" ]
	[ -n "$out" ] && diag "$out"
fi

if mk install PREFIX=/usr DESTDIR="$T/deb" >"$T/log" 2>&1; then
	U=$T/deb/usr/lib/systemd/system/maglevd.service
	check "PREFIX=/usr: maglevd in /usr/sbin, maglevctl in /usr/bin" \
		[ -x "$T/deb/usr/sbin/maglevd" -a -x "$T/deb/usr/bin/maglevctl" -a ! -e "$T/deb/usr/local" ]
	check "PREFIX=/usr: the unit runs /usr/sbin/maglevd, /usr/bin/maglevctl and names no /usr/local path" \
		[ "$(exec_paths "$U")" = "/usr/bin/maglevctl /usr/sbin/maglevd " -a -z "$(grep -v "^#" "$U" | grep /usr/local)" ]
	U=$T/deb/usr/lib/systemd/system/maglev-decap@.service
	check "PREFIX=/usr: the decap unit runs /usr/sbin/maglev-decap and names no /usr/local path" \
		[ "$(exec_paths "$U")" = "/usr/sbin/maglev-decap " -a -z "$(grep -v "^#" "$U" | grep /usr/local)" ]
else
	sed 's/^/# /' "$T/log"
	nok "make install PREFIX=/usr DESTDIR=..."
fi

mk uninstall DESTDIR="$T/d" >"$T/log" 2>&1
left=$(find "$T/d" -type f)
[ -n "$left" ] && diag "left: $left"
check "make uninstall removes every installed file" [ -z "$left" ]

# A release tarball has no .git: scripts/version reads its VERSION file.
tarball=$(mk dist 2>"$T/log" | tail -n1)
if [ -f "$ROOT/$tarball" ] && tar -xzf "$ROOT/$tarball" -C "$T"; then
	rm -f "$ROOT/$tarball"
	HEADVER=$("$ROOT/scripts/version" --head)
	X=$T/maglev-lb-$HEADVER
	check "make dist: the tarball's scripts/version says HEAD's version ($HEADVER) without .git" \
		[ ! -e "$X/.git" -a "$("$X/scripts/version")" = "$HEADVER" ]
	rm "$X/VERSION"
	check "without .git or VERSION the version is 'unknown'" [ "$("$X/scripts/version")" = unknown ]
else
	sed 's/^/# /' "$T/log"
	nok "make dist writes a tarball"
fi
t_done
