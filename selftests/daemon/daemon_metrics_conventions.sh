#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The metrics follow Prometheus's conventions (issue 38 item 6): one prefix
# (maglev_, and the standard process_*); a VIP is labelled address, port and
# protocol, never one vip="a:p/proto" string; no label value repeats its
# metric's name; a state metric has every state, 0 or 1, so series do not
# come and go; the process metrics tell the truth about the daemon; and
# promtool's own linter (Debian's prometheus package) finds nothing.
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
write_conf
T0=$(date +%s.%N)
start_daemon || { nok "maglevd starts"; t_done; }
T1=$(date +%s.%N)
ok "maglevd starts"

V4=192.0.2.10:80/tcp
VU=192.0.2.11:53/udp
VA="192.0.2.12:*/tcp"
ctl vip add $V4 >/dev/null && ctl backend add $V4 198.51.100.1 >/dev/null &&
	ctl backend add $V4 198.51.100.2 --weight 0 >/dev/null &&
	ctl backend add $V4 198.51.100.3 >/dev/null && ctl backend set $V4 198.51.100.3 --drain >/dev/null &&
	ctl vip add $VU >/dev/null && ctl backend add $VU 198.51.100.4 >/dev/null &&
	ctl vip add "$VA" >/dev/null && ctl backend add "$VA" 198.51.100.5 >/dev/null ||
	nok "VIPs and backends added"

M=$TDIR/metrics.txt
lbx curl -sf "http://127.0.0.1:$METRICS_PORT/metrics" >"$M" || nok "scrape"
series() { grep -v '^#' "$M"; }

check "one prefix: every series is maglev_* or process_*" \
	bash -c "[ -s $M ] && ! grep -v '^#' $M | grep -qvE '^(maglev|process)_'"
check "no maglevd_ series, HELP or TYPE" bash -c "! grep -q 'maglevd_' $M"
check "no vip= label anywhere" bash -c "! grep -q '[{,]vip=' $M"
# Every per-VIP series: address, port, protocol, in that order, first.
check "every VIP series labels address, port and protocol" \
	bash -c "n=\$(grep -cE '^maglev_vip_[a-z_]*\{' $M); [ \$n -gt 10 ] &&
		 [ \$(grep -cE '^maglev_vip_[a-z_]*\{address=\"[0-9.]+\",port=\"([0-9]+|\*)\",protocol=\"(tcp|udp)\"[,}]' $M) -eq \$n ]"
for v in $V4 $VU "$VA"; do
	check "maglev_vip_packets_total{$(vipl "$v")}" grep -qxF "maglev_vip_packets_total{$(vipl "$v")} 0" "$M"
done
check "the port of an all-ports VIP is \"*\"" \
	grep -qx 'maglev_vip_backends_in_table{address="192.0.2.12",port="\*",protocol="tcp"} 1' "$M"

# A label value must not say again what the metric's name says: its first
# word (up to "_") is none of the name's words (conn_events_total{event="conn_hit"}).
repeats() {
	series | sed -nE 's/^([a-z_]+)\{(.*)\} .*/\1 \2/p' | while read -r name labels; do
		for w in $(echo "$labels" | grep -oE '="[a-z]+_' | tr -d '="_'); do
			case "_${name#maglev_}_" in *"_${w}_"*) echo "$name {$labels}" ;; esac
		done
	done
}
rep=$(repeats)
[ -n "$rep" ] && diag "repeated: $rep"
check "no label value repeats its metric's name" [ -z "$rep" ]
check "maglev_conn_events_total{event=\"hit\"}" grep -q '^maglev_conn_events_total{event="hit"} [0-9]' "$M"

# State metrics: every state of every backend, exactly one of them 1.
for b in 1 2 3; do
	l="$(vipl $V4),backend=\"198.51.100.$b\""
	# up, ramping, quiesced, drain, held, suppressed, down (model/be_state.h)
	check "backend 198.51.100.$b: 7 states, one of them 1" \
		bash -c "[ \$(grep -cF 'maglev_backend_state{$l,state=' $M) -eq 7 ] &&
			 [ \$(grep -F 'maglev_backend_state{$l,state=' $M | grep -c ' 1\$') -eq 1 ]"
done
check "the states: .1 up, .2 quiesced, .3 drain, each 1" \
	bash -c "grep -qx 'maglev_backend_state{$(vipl $V4),backend=\"198.51.100.1\",state=\"up\"} 1' $M &&
		 grep -qx 'maglev_backend_state{$(vipl $V4),backend=\"198.51.100.2\",state=\"quiesced\"} 1' $M &&
		 grep -qx 'maglev_backend_state{$(vipl $V4),backend=\"198.51.100.3\",state=\"drain\"} 1' $M &&
		 grep -qx 'maglev_backend_state{$(vipl $V4),backend=\"198.51.100.3\",state=\"down\"} 0' $M"
check "the XDP mode: 5 modes for lb0, native 1, the others 0" \
	bash -c "[ \$(grep -c '^maglev_interface_xdp{interface=\"lb0\",mode=\"[a-z]*\"} 0\$' $M) -eq 4 ] &&
		 grep -qx 'maglev_interface_xdp{interface=\"lb0\",mode=\"native\"} 1' $M"

# The process metrics, against what the kernel says of the daemon.
val() { sed -n "s/^$1 //p" "$M"; }
fds=$(ls /proc/"$DPID"/fd | wc -l)
check "process_open_fds $(val process_open_fds) within 2 of /proc's $fds" \
	awk -v a="$(val process_open_fds)" -v b="$fds" 'BEGIN { d = a - b; exit !(a != "" && d <= 2 && d >= -2) }'
check "process_max_fds is the soft RLIMIT_NOFILE" \
	[ "$(val process_max_fds)" = "$(prlimit --pid "$DPID" --nofile -o SOFT --noheadings | tr -d ' ')" ]
check "process_start_time_seconds between before and after the start ($T0 .. $T1)" \
	awk -v s="$(val process_start_time_seconds)" -v a="$T0" -v b="$T1" 'BEGIN { exit !(s != "" && s >= a - 1 && s <= b + 1) }'
rss=$(awk '/^VmRSS:/ { print $2 * 1024 }' /proc/"$DPID"/status)
check "process_resident_memory_bytes within 20% of VmRSS ($rss)" \
	awk -v a="$(val process_resident_memory_bytes)" -v b="$rss" 'BEGIN { exit !(a != "" && a > 0.8 * b && a < 1.2 * b) }'
check "process_virtual_memory_bytes >= resident" \
	awk -v v="$(val process_virtual_memory_bytes)" -v r="$(val process_resident_memory_bytes)" 'BEGIN { exit !(v != "" && v + 0 >= r + 0) }'
check "process_cpu_seconds_total a counter, 0 < it < wall time since the start" \
	bash -c "grep -qx '# TYPE process_cpu_seconds_total counter' $M &&
		 awk -v c=\"$(val process_cpu_seconds_total)\" -v t=\"$(echo "$(date +%s.%N) - $T0" | bc)\" 'BEGIN { exit !(c != \"\" && c > 0 && c < t) }'"

if command -v promtool >/dev/null; then
	check "promtool check metrics: no lint problem" bash -c "promtool check metrics <$M"
else
	nok "promtool check metrics: promtool missing (scripts/install-deps installs prometheus)"
fi

stop_daemon
t_done
