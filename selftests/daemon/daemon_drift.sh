#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Drift detection (issue 18): two balancers of one group, here one daemon
# started twice from nothing, given the same seed and the same VIPs and
# backends in another order, show the same table digests in vip show, vip
# list -j, status and the metrics, and save the same bytes; a weight change
# moves only its VIP's digest; another seed moves the fingerprint and every
# digest. The shipped Prometheus rules name series the daemon exports.
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"

V4=192.0.2.30:80/tcp
V6='[2001:db8::30]:443/tcp'
VU=192.0.2.31:53/udp
BES4="198.51.100.1 198.51.100.2 198.51.100.3 2001:db8::4"
RULES=$ROOT/packaging/prometheus/maglev-rules.yml
M=$TDIR/metrics

metrics() { lbx curl -sf "http://127.0.0.1:$METRICS_PORT/metrics"; }
vdigest() { ctl -j vip show "$1" | jq -r '.vip.digest // empty'; }
tdigest() { ctl -j table "$1" | jq -r .digest; }
# mdigest VIP: the digest label of the VIP's info series (empty if none).
mdigest() {
	grep -F "maglev_vip_table_digest_info{$(vipl "$1")," "$M" |
		sed -n 's/.*digest="\([0-9a-f]*\)"} 1$/\1/p'
}
# What one balancer shows, one line per fact, in a file: compared whole.
record() {
	local out=$1 v
	metrics >"$M"
	{
		for v in $V4 "$V6" $VU; do
			echo "show $v $(vdigest "$v")"
			echo "table $v $(tdigest "$v")"
			echo "metric $v $(mdigest "$v")"
		done
		ctl -j vip list | jq -r '.vips | sort_by(.vip)[] | "list " + .vip + " " + (.digest // "")'
		ctl -j status | jq -r '"status " + (.vips_digest // "") + " " + (.seed_fingerprint // "")'
		sed -n 's/^\(maglev_seed_fingerprint_info\|maglev_vips_digest_info\)\(.*\)/\1\2/p' "$M"
	} >"$out"
	ctl save >"$out.save"
}
# same A B: equal records, with every fact present (no empty digest).
same() { ! grep -q ' $' "$1" "$2" && diff "$1" "$2"; }
fresh() {
	stop_daemon
	rm -rf "$PIN" "$STATE"
	start_daemon
}

# --- balancer A: VIPs and backends in one order ------------------------------
write_conf
start_daemon || { nok "maglevd starts"; t_done; }
ok "balancer A starts"
ctl vip add $V4 && ctl vip add "$V6" --placement rendezvous && ctl vip add $VU --placement ring --vnodes 50 ||
	nok "A: vip add"
w=1
for b in $BES4; do
	for v in $V4 "$V6" $VU; do ctl backend add "$v" "$b" --weight $w || nok "A: backend add $v $b"; done
	w=$((w + 1))
done
record "$TDIR/a"
diag "A: $(tr '\n' ' ' <"$TDIR/a")"

check "vip show -j has a 16-digit digest for each VIP" \
	[ "$(grep -c '^show .* [0-9a-f]\{16\}$' "$TDIR/a")" -eq 3 ]
check "vip show's digest is the live table's (maglevctl table)" \
	bash -c "for v in $V4 '$V6' $VU; do [ \"\$($MAGLEVCTL -j vip show \"\$v\" | jq -r .vip.digest)\" = \"\$($MAGLEVCTL -j table \"\$v\" | jq -r .digest)\" ] || exit 1; done"
check "vip show text prints the digest" \
	bash -c "$MAGLEVCTL vip show $V4 | grep -q 'digest $(vdigest $V4)\$'"
check "vip list -j has each VIP's digest" \
	[ "$(grep -c '^list .* [0-9a-f]\{16\}$' "$TDIR/a")" -eq 3 ]
check "status -j has vips_digest and seed_fingerprint" \
	jqt '(.vips_digest | test("^[0-9a-f]{16}$")) and (.seed_fingerprint | test("^[0-9a-f]{16}$"))' \
	<(ctl -j status)
check "status text prints both" \
	bash -c "$MAGLEVCTL status | grep -q '^tables digest [0-9a-f]\{16\} (all VIPs), seed fingerprint [0-9a-f]\{16\}$'"
check "the seed fingerprint does not show the seed" \
	bash -c "! { $MAGLEVCTL -j status; cat $M; } | grep -qi -e 0123456789abcdef -e 89abcdef01234567"
# Pinned: SipHash-2-4 of the domain string under k0 = k1 = 0x0123456789abcdef,
# from an independent implementation (checked against the reference vector).
# Another value would make balancers of two versions disagree.
check "the test seed's fingerprint is a7437cfa820ba39d" \
	[ "$(ctl -j status | jq -r .seed_fingerprint)" = a7437cfa820ba39d ]
check "metrics: maglev_vip_table_digest_info{address,port,protocol,digest} 1 for each VIP, equal to vip show" \
	bash -c "[ \$(grep -c '^maglev_vip_table_digest_info{address=\"[^\"]*\",port=\"[0-9*]*\",protocol=\"[a-z]*\",digest=\"[0-9a-f]\{16\}\"} 1\$' $M) -eq 3 ] &&
		 [ \"$(mdigest $V4)\" = \"$(vdigest $V4)\" ] && [ \"$(mdigest "$V6")\" = \"$(vdigest "$V6")\" ]"
check "metrics: one maglev_seed_fingerprint_info{fingerprint} 1, equal to status" \
	bash -c "[ \$(grep -c '^maglev_seed_fingerprint_info{fingerprint=\"[0-9a-f]\{16\}\"} 1\$' $M) -eq 1 ] &&
		 grep -q \"fingerprint=\\\"\$($MAGLEVCTL -j status | jq -r .seed_fingerprint)\\\"\" $M"
check "metrics: one maglev_vips_digest_info{digest} 1, equal to status" \
	bash -c "[ \$(grep -c '^maglev_vips_digest_info{digest=\"[0-9a-f]\{16\}\"} 1\$' $M) -eq 1 ] &&
		 grep -q \"^maglev_vips_digest_info{digest=\\\"\$($MAGLEVCTL -j status | jq -r .vips_digest)\\\"}\" $M"
check "metrics: the info series have HELP and TYPE gauge" \
	bash -c "for m in maglev_vip_table_digest_info maglev_seed_fingerprint_info maglev_vips_digest_info; do
		grep -q \"^# TYPE \$m gauge\$\" $M && grep -q \"^# HELP \$m \" $M || exit 1; done"
check "digests differ between VIPs" \
	[ "$(vdigest $V4)" != "$(vdigest "$V6")" ]

# --- balancer B: same seed, everything added in the opposite order ------------
fresh || { nok "balancer B starts"; t_done; }
ok "balancer B starts from nothing"
ctl vip add $VU --placement ring --vnodes 50 && ctl vip add "$V6" --placement rendezvous && ctl vip add $V4 ||
	nok "B: vip add"
w=4
for b in $(echo $BES4 | tr ' ' '\n' | tac); do
	for v in $VU "$V6" $V4; do ctl backend add "$v" "$b" --weight $w || nok "B: backend add $v $b"; done
	w=$((w - 1))
done
check "B numbered its VIPs otherwise (ids are local)" \
	[ "$(ctl -j vip show $V4 | jq .vip.id)" != 0 ]
record "$TDIR/b"
check "B shows all 15 facts (3 VIPs x show, table, metric, list; status; 2 series)" \
	[ "$(grep -c ' [0-9a-f]\{16\}\( [0-9a-f]\{16\}\)\?$\|="[0-9a-f]\{16\}"} 1$' "$TDIR/b")" -eq 15 ]
check "B shows the same digests, fingerprint and metrics as A" same "$TDIR/a" "$TDIR/b"
check "save: only the first line (with its timestamp) differs" \
	bash -c "head -1 $TDIR/b.save | grep -q '^# maglevctl save v2, [0-9T:-]*Z\$' && diff <(tail -n +2 $TDIR/a.save) <(tail -n +2 $TDIR/b.save)"
check "save: VIPs in canonical order (IPv4 by address and port, then IPv6)" \
	[ "$(grep '^vip add' "$TDIR/b.save" | cut -d' ' -f3 | tr '\n' ' ')" = "192.0.2.30:80/tcp 192.0.2.31:53/udp [2001:db8::30]:443/tcp " ]
check "save: backends in canonical order" \
	[ "$(grep "^backend add $V4 " "$TDIR/b.save" | cut -d' ' -f4 | tr '\n' ' ')" = "198.51.100.1 198.51.100.2 198.51.100.3 2001:db8::4 " ]
check "save -j: the same canonical order" \
	jqt '[.vips[].vip] == ["192.0.2.30:80/tcp", "192.0.2.31:53/udp", "[2001:db8::30]:443/tcp"] and
	     ([.vips[0].backends[].addr] == ["198.51.100.1", "198.51.100.2", "198.51.100.3", "2001:db8::4"])' \
	<(ctl -j save)

# --- a weight change moves that VIP's digest only ------------------------------
ctl backend set $V4 198.51.100.2 --weight 7 || nok "backend set --weight"
record "$TDIR/w"
check "weight change: that VIP's digest changed (show, table, metric, list)" \
	[ "$(grep -F " $V4 " "$TDIR/w" | grep -vc -F -f <(grep -F " $V4 " "$TDIR/a"))" -eq 4 ]
# but_v4 FILE: the record less the lines that depend on V4's table.
but_v4() { grep -v -F -e " $V4 " -e status -e maglev_vips_digest_info "$1"; }
check "weight change: the other VIPs' digests did not" \
	same <(but_v4 "$TDIR/a") <(but_v4 "$TDIR/w")
check "weight change: the all-VIPs digest changed, the fingerprint did not" \
	bash -c "[ \"\$(grep ^status $TDIR/w | cut -d' ' -f2)\" != \"\$(grep ^status $TDIR/a | cut -d' ' -f2)\" ] &&
		 [ \"\$(grep ^status $TDIR/w | cut -d' ' -f3)\" = \"\$(grep ^status $TDIR/a | cut -d' ' -f3)\" ]"
ctl backend set $V4 198.51.100.2 --weight 2 || nok "backend set --weight back"
record "$TDIR/w2"
check "weight back: the digests of A again" same "$TDIR/a" "$TDIR/w2"

# --- settings that change what leaves besides the table ------------------------
# Encapsulation, GUE port, second chance and balance factor leave the table as
# it is, but balancers that differ in them do not forward alike.
vd() { ctl -j status | jq -r .vips_digest; }
d0=$(vd)
for set in "--encap gue" "--gue-port 7000" "--second-chance" "--balance-factor 1.5"; do
	# shellcheck disable=SC2086 # the option and its value are words
	ctl vip set $V4 $set >/dev/null || nok "vip set $set"
	d1=$(vd)
	check "vip set $V4 $set: the table digest stays, the all-VIPs digest changes" \
		[ "$(vdigest $V4)" = "$(grep "^show $V4 " "$TDIR/a" | awk '{print $NF}')" -a "$d1" != "$d0" ]
	d0=$d1
done
ctl vip set $V4 --balance-factor off --no-second-chance --encap ipip >/dev/null || nok "vip set back"
check "the settings back: the all-VIPs digest of A again" \
	[ "$(vd)" = "$(grep ^status "$TDIR/a" | cut -d' ' -f2)" ]

# --- another seed: another fingerprint, every digest moves ---------------------
sed -i 's/^seed .*/seed fedcba9876543210fedcba9876543210/' "$CONF"
fresh || { nok "balancer C starts"; t_done; }
ctl restore "$TDIR/a.save" >/dev/null || nok "C: restore A's save"
record "$TDIR/c"
check "another seed: another fingerprint (status and metric)" \
	bash -c "[ \"\$(grep ^status $TDIR/c | cut -d' ' -f3)\" != \"\$(grep ^status $TDIR/a | cut -d' ' -f3)\" ] &&
		 ! grep -qxF -f <(grep ^maglev_seed_fingerprint_info $TDIR/a) $TDIR/c"
check "another seed: every VIP's digest changed" \
	[ "$(grep -c -x -F -f <(grep -e '^show' -e '^metric' -e '^list' "$TDIR/a") "$TDIR/c")" -eq 0 ]
check "another seed: the same save (the configuration is the seed's business only)" \
	diff <(tail -n +2 "$TDIR/a.save") <(tail -n +2 "$TDIR/c.save")

# --- the shipped alert rules ---------------------------------------------------
check "packaging/prometheus/maglev-rules.yml is a rule file: groups of named rules with expr" \
	python3 - "$RULES" <<-'PY'
		import sys
		try:
		    import yaml
		except ImportError:
		    sys.exit(0 if open(sys.argv[1]).read().startswith("groups:") else 1)
		doc = yaml.safe_load(open(sys.argv[1]))
		rules = [r for g in doc["groups"] for r in g["rules"]]
		assert doc["groups"][0]["name"] and rules
		assert all(r["expr"] and (r.get("record") or (r["alert"] and r["annotations"]["summary"])) for r in rules)
	PY
check "every maglev_ series the drift rules use is exported" \
	bash -c "names=\$(sed -n '/- name: maglev-lb-drift/,/- name: [^m]*maglev-lb-fleet/p' $RULES | grep -o 'maglev_[a-z_]*' | grep -v '^maglev_fleet_' | sort -u); [ -n \"\$names\" ] &&
		 for n in \$names; do grep -q \"^\$n[{ ]\" $M || { echo \"# \$n missing\"; exit 1; }; done"
check "the rules compare digests and fingerprints by group" \
	bash -c "grep -q 'count by (job, address, port, protocol) (count by (job, address, port, protocol, digest) (maglev_vip_table_digest_info' $RULES &&
		 grep -q 'count by (job) (count by (job, fingerprint) (maglev_seed_fingerprint_info' $RULES"

stop_daemon
t_done
