#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# make deb (packaging/deb.mk): maglev-lb and maglev-lb-dkms built by
# dpkg-buildpackage from HEAD, unpacked (never installed on this machine)
# and checked: lintian finds no errors, a valid version naming HEAD, every
# file in its Debian place, the shared libraries in Depends, the packaged
# maglevd runs and checks the packaged example, the service is neither enabled nor started, and the
# DKMS source builds the slow-path module against Debian's kernel headers
# (in a DKMS tree of the test's own).
. "$(dirname "$0")/lib.sh"
T=$(mktemp -d /tmp/maglev-deb.XXXXXX)
MOK=/var/lib/dkms/mok.key
had_mok=false
[ -e $MOK ] && had_mok=true
# dkms makes a module-signing key on first use: keep the machine as it was.
cleanup() {
	rm -rf "$T"
	$had_mok || rm -f /var/lib/dkms/mok.key /var/lib/dkms/mok.pub
}
trap cleanup EXIT
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$ROOT" --no-print-directory "$@"; }
HEADVER=$("$ROOT/scripts/version" --head)

if ! mk deb >"$T/log" 2>&1; then
	sed 's/^/# /' "$T/log" | tail -n 40
	nok "make deb"
	t_done
fi
ok "make deb"
DEB=$(ls "$BUILD_DIR"/deb/maglev-lb_*_amd64.deb 2>/dev/null)
DKMS=$(ls "$BUILD_DIR"/deb/maglev-lb-dkms_*_all.deb 2>/dev/null)
check "maglev-lb (amd64) and maglev-lb-dkms (all) built" [ -f "$DEB" -a -f "$DKMS" ]
if command -v lintian >/dev/null; then
	lintian --tag-display-limit 0 --fail-on error "$BUILD_DIR"/deb/*.deb >"$T/lintian" 2>&1
	rc=$?
	grep -E '^[EW]:' "$T/lintian" | sed 's/^/# /'
	check "lintian reports no errors on the built packages" [ $rc = 0 ]
else
	nok "lintian installed (scripts/install-deps)"
fi
V=$(dpkg-deb -f "$DEB" Version)
check "version $V is a valid Debian version naming HEAD ($HEADVER)" \
	bash -c "dpkg --validate-version '$V' && [[ '$V' == *'$HEADVER'* ]] &&
		[ \"\$(dpkg-deb -f '$DKMS' Version)\" = '$V' ]"

dpkg-deb -c "$DEB" | awk '{ print $6 }' | sed 's|^\./||' >"$T/files"
miss=""
for f in usr/sbin/maglevd usr/bin/maglevctl usr/sbin/maglev-decap usr/lib/maglev-lb/maglev_decap.bpf.o \
	usr/lib/systemd/system/maglevd.service usr/lib/systemd/system/maglev-decap@.service \
	usr/lib/systemd/system/maglevd-withdraw.service \
	usr/share/doc/maglev-lb/quickstart.md usr/share/doc/maglev-lb/examples/maglev-decap.env.example \
	usr/share/doc/maglev-lb/examples/sysctl-maglev-backend.conf usr/share/man/man8/maglevd.8.gz \
	usr/share/man/man8/maglevctl.8.gz usr/share/man/man8/maglev-decap.8.gz \
	usr/share/man/man5/maglevd.conf.5.gz \
	usr/share/bash-completion/completions/maglevctl usr/share/doc/maglev-lb/copyright \
	usr/share/doc/maglev-lb/examples/maglevd.conf.example \
	usr/share/doc/maglev-lb/examples/bird.conf usr/share/doc/maglev-lb/examples/frr.conf \
	usr/share/doc/maglev-lb/examples/keepalived.conf \
	usr/share/doc/maglev-lb/examples/etcd-maglev.env.example usr/share/maglev-lb/prometheus/maglev-rules.yml \
	usr/share/maglev-lb/grafana/maglev-dashboard.json; do
	grep -qx "$f" "$T/files" || miss="$miss $f"
done
[ -n "$miss" ] && diag "missing:$miss"
check "maglev-lb holds the programs, unit, man pages, completion, examples, rules and dashboard" [ -z "$miss" ]
check "nothing in /etc or /usr/local" bash -c "! grep -qE '^(etc|usr/local)/.' '$T/files'"
dep=$(dpkg-deb -f "$DEB" Depends)
check "Depends names the shared libraries (libbpf, json-c, libmnl, libsystemd)" \
	bash -c "for l in libbpf1 libjson-c5 libmnl0 libsystemd0; do grep -q \"\$l\" <<<'$dep' || exit 1; done"

dpkg-deb -x "$DEB" "$T/root"
check "the packaged maglevd --version says HEAD's version" \
	[ "$("$T/root/usr/sbin/maglevd" --version)" = "maglevd $HEADVER" ]
check "man maglevctl works from the unpacked package (its NAME line)" \
	bash -c "MANPAGER=cat MANWIDTH=80 man -M '$T/root/usr/share/man' maglevctl 2>/dev/null | grep -q 'maglevctl - '"
EX=$T/root/usr/share/doc/maglev-lb/examples/maglevd.conf.example
check "the packaged maglevd -t accepts the packaged example" \
	with_eth0 sh -c "'$T/root/usr/sbin/maglevd' -t -c '$EX' >/dev/null 2>&1"
check "the packaged unit runs /usr/sbin/maglevd" \
	grep -qx 'ExecStart=/usr/sbin/maglevd -c /etc/maglev/maglevd.conf' \
	"$T/root/usr/lib/systemd/system/maglevd.service"
dpkg-deb -e "$DEB" "$T/ctl"
check "installing does not enable or start maglevd (no configuration yet)" \
	bash -c "! cat '$T/ctl/postinst' 2>/dev/null | grep -qE 'deb-systemd-helper (--quiet )?enable|deb-systemd-invoke.*start'"

dpkg-deb -x "$DKMS" "$T/dk"
SRC=$T/dk/usr/src/maglev-lb-$V
check "maglev-lb-dkms: dkms.conf of version $V, sources and shared headers" \
	bash -c "grep -qx 'PACKAGE_VERSION=\"$V\"' '$SRC/dkms.conf' && [ -f '$SRC/Kbuild' -a -f '$SRC/maglev_main.c' \
		-a -f '$SRC/include/maglev_maps.h' ] && dpkg-deb -f '$DKMS' Depends | grep -q dkms"
KVER=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null | sed -n 's/^linux-image-\([^ ,]*\).*/\1/p')
if [ -z "$KVER" ] || [ ! -d "/lib/modules/$KVER/build" ]; then
	nok "Debian's kernel headers ($KVER) present (scripts/install-deps)"
	t_done
fi
mkdir -p "$T/tree"
if dkms add -m maglev-lb -v "$V" --dkmstree "$T/tree" --sourcetree "$T/dk/usr/src" >"$T/log" 2>&1 &&
	dkms build -m maglev-lb -v "$V" -k "$KVER" --dkmstree "$T/tree" --sourcetree "$T/dk/usr/src" \
		>>"$T/log" 2>&1; then
	ko=$(find "$T/tree" -name maglev_slowpath.ko | head -n1)
	check "dkms builds maglev_slowpath.ko for $KVER from the package's source" \
		bash -c "[ -n '$ko' ] && modinfo -F vermagic '$ko' | grep -q '^$KVER '"
else
	sed 's/^/# /' "$T/log" | tail -n 30
	nok "dkms builds maglev_slowpath.ko for $KVER from the package's source"
fi
t_done
