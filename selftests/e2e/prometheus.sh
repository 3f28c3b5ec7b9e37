#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The shipped alert rules against a real Prometheus (Debian's prometheus
# package) scraping two balancers of one group (issue 37 part 3) over HTTPS
# with basic auth (their web config, issue 37 part 2): healthy, no
# alert is pending or firing; XDP taken off lb1's interface (a VIP withdrawn
# while its backends are up), MaglevVipWithdrawnWithBackends and
# MaglevXdpNotNative fire for lb1 and not for lb2; a weight changed on lb2
# only (digests that differ), MaglevVipTableDrift and MaglevVipSetDrift fire
# for the group, and clear once the weight is back. Scrapes and evaluations
# every second, and the rules' "for:" holds cut to 2 s, keep it fast: the
# expressions are the shipped ones, unchanged. The Grafana dashboard is read
# too: every series it queries is one a balancer exports or a rule records.
cd "$(dirname "$0")/../.." || exit 1
. selftests/e2e/lib.sh
e2e_require "$TOPO_MAGLEVD" "$TOPO_MAGLEVCTL"
command -v prometheus >/dev/null && command -v promtool >/dev/null ||
	e2e_skip_all "prometheus and promtool missing (scripts/install-deps installs Debian's prometheus)"
RULES=packaging/prometheus/maglev-rules.yml
DASH=packaging/grafana/maglev-dashboard.json

e2e_plan 10
PORT=9180
# The balancers serve their metrics over TLS with basic auth (metrics_web_config,
# exporter-toolkit format), and Prometheus scrapes them so: the format is the
# one Prometheus's own clients speak. The certificate names both balancers.
WEB=$(mktemp -d /tmp/maglev-prom-web.XXXXXX)
trap 'rm -rf "$WEB"' EXIT
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=maglev-e2e \
	-addext "subjectAltName=IP:198.51.100.2,IP:198.51.100.18" \
	-keyout "$WEB/key.pem" -out "$WEB/cert.pem" 2>/dev/null || e2e_skip_all "openssl cannot make a certificate"
HASH=$(python3 -c 'import crypt; print(crypt.crypt("e2e-pass", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1024)))')
printf 'tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\nbasic_auth_users:\n  prom: %s\n' \
	"'$HASH'" >"$WEB/web.yml"
e2e_lb_up -b 2 -l 2 announce_table 100 metrics_listen "0.0.0.0:$PORT" metrics_web_config "$WEB/web.yml"
topo_on_exit "rm -rf '$WEB'"
VIP=$TOPO_VIP4:80/tcp
e2e_vip 1 "$VIP" -- "$(topo_backend4 1)" "$(topo_backend4 2)"
topo_ctl 1 save >"$TOPO_DIR/lb1.save" && topo_ctl 2 restore "$TOPO_DIR/lb1.save" >/dev/null ||
	topo_die "maglevctl save | restore from lb1 to lb2 failed"
topo_wait_up 2 || topo_die "lb2: backends not up"
# The balancers' addresses on their one leg (scripts/topology: 198.51.100.(16K-14)).
LB1=198.51.100.2:$PORT
LB2=198.51.100.18:$PORT

# The shipped rules with every "for:" hold at 2 s; nothing else changed.
sed -E 's/^( +for: )[0-9]+[smh]$/\12s/' "$RULES" >"$TOPO_DIR/rules.yml"
cat >"$TOPO_DIR/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
  evaluation_interval: 1s
rule_files: ['$TOPO_DIR/rules.yml']
scrape_configs:
  - job_name: maglev
    scheme: https
    tls_config: {ca_file: '$WEB/cert.pem'}
    basic_auth: {username: prom, password: e2e-pass}
    static_configs:
      - targets: ['$LB1', '$LB2']
EOF
promtool check config "$TOPO_DIR/prometheus.yml" >/dev/null || topo_die "promtool check config failed"
topo_bg router prometheus prometheus --config.file="$TOPO_DIR/prometheus.yml" \
	--storage.tsdb.path="$TOPO_DIR/tsdb" --web.listen-address=127.0.0.1:9090 --log.level=warn
PROM_PID=$TOPO_BG_PID
topo_on_exit "kill $PROM_PID 2>/dev/null; wait $PROM_PID 2>/dev/null"
api() { topo_exec router curl -sf "http://127.0.0.1:9090/api/v1/$1" "${@:2}"; }
# query EXPR: the result vector as JSON.
query() { api query --data-urlencode "query=$1" | jq -c '.data.result'; }
# firing NAME [INSTANCE]: the alert fires (for INSTANCE when given).
firing() {
	api alerts | jq -e --arg n "$1" --arg i "${2:-}" \
		'[.data.alerts[] | select(.state == "firing" and .labels.alertname == $n and
		  ($i == "" or .labels.instance == $i))] | length > 0' >/dev/null
}
alerts() { api alerts | jq -c '[.data.alerts[] | {a: .labels.alertname, i: .labels.instance, s: .state}]'; }

up_both() { [ "$(query 'sum(up{job="maglev"})' | jq -r '.[0].value[1] // 0')" = 2 ]; }
e2e_until 30 up_both
e2e_result $? "Prometheus scrapes both balancers over HTTPS with basic auth (up 2 in $WAITED ms)" "$(api targets)"
denied=$(topo_exec router curl -s -o /dev/null -w '%{http_code}' --cacert "$WEB/cert.pem" -u prom:wrong \
	"https://$LB1/metrics")
[ "$denied" = 401 ]
e2e_result $? "  the same URL with a wrong password: 401" "got $denied"

# Healthy: once every group has been evaluated on both balancers' series,
# nothing is pending or firing.
recorded() { [ "$(query 'count(maglev:vip_backends_in_table{job="maglev"} == 2)' | jq -r '.[0].value[1] // 0')" = 2 ]; }
e2e_until 30 recorded
t0=$(date +%s.%N)
evaluated_since() {
	api rules | jq -e --argjson t "$t0" '[.data.groups[] | .lastEvaluation | sub("\\.[0-9]+"; "") | fromdateiso8601] | length > 0 and (map(. > $t) | all)' >/dev/null
}
e2e_until 30 evaluated_since
quiet=$(alerts)
[ "$quiet" = "[]" ]
e2e_result $? "healthy group: every rule group evaluated on both, no alert pending or firing" "$quiet"

# Fault 1: lb1's XDP program off its interface: the announce logic withdraws
# the VIP although both backends are in its table.
# (Its pinned link detached, as daemon_announce.sh does: ip cannot remove a link.)
prog=$(topo_exec lb1 ip -j -d link show eth0 | jq '.[0].xdp.prog.id // empty')
lid=$(bpftool -j link show | jq --argjson p "${prog:-0}" '.[] | select(.type == "xdp" and .prog_id == $p) | .id')
[ -n "$lid" ] && bpftool link detach id "$lid" || topo_die "cannot detach lb1's XDP link (prog ${prog:-none})"
e2e_until 40 firing MaglevVipWithdrawnWithBackends "$LB1"
e2e_result $? "XDP off lb1: MaglevVipWithdrawnWithBackends fires for lb1 ($WAITED ms)" "$(alerts)" \
	"$(query 'maglev_vip_announce_reason == 1')"
lbl=$(api alerts | jq -r '.data.alerts[] | select(.labels.alertname == "MaglevVipWithdrawnWithBackends") |
	"\(.labels.instance) \(.labels.address) \(.labels.port) \(.labels.protocol)"' | sort -u)
[ "$lbl" = "$LB1 $TOPO_VIP4 80 tcp" ]
e2e_result $? "  for the VIP's address, port and protocol on lb1 only, not lb2" "$lbl"
e2e_until 20 firing MaglevXdpNotNative "$LB1"
e2e_result $? "XDP off lb1: MaglevXdpNotNative fires for lb1 (mode none)" "$(alerts)"

# Fault 2: digests that differ: a weight changed on lb2 only.
topo_ctl 2 backend set "$VIP" "$(topo_backend4 2)" --weight 3 >/dev/null || topo_die "lb2: backend set failed"
e2e_until 40 firing MaglevVipTableDrift
e2e_result $? "a weight changed on lb2 only: MaglevVipTableDrift fires ($WAITED ms)" "$(alerts)"
e2e_until 20 firing MaglevVipSetDrift
e2e_result $? "  and MaglevVipSetDrift" "$(alerts)"
topo_ctl 2 backend set "$VIP" "$(topo_backend4 2)" --weight 1 >/dev/null || topo_die "lb2: backend set failed"
cleared() { ! firing MaglevVipTableDrift && ! firing MaglevVipSetDrift; }
e2e_until 40 cleared
e2e_result $? "the weight back on lb2: both drift alerts clear ($WAITED ms)" "$(alerts)"

# The dashboard: valid JSON, and every maglev_/maglev:/process_ name its
# queries use is a series Prometheus now holds from the two balancers, or a
# rule's record.
names=$(jq -r '.. | objects | select(has("expr")) | .expr' "$DASH" |
	grep -oE '\b(maglev[_:][a-z0-9_:]+|process_[a-z_]+)' | sort -u)
missing=
for n in $names; do
	# Over the last minute: a scrape that timed out on a loaded machine marks its series stale.
	[ "$(query "count(last_over_time({__name__=\"$n\"}[1m]))" | jq -r '.[0].value[1] // 0')" -gt 0 ] ||
		missing+=" $n"
done
[ -n "$names" ] && [ -z "$missing" ]
e2e_result $? "the dashboard's $(echo "$names" | wc -w) series all exist in Prometheus" "missing:$missing"

e2e_done
