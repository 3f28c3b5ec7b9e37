#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Flap damping (damping_penalty, damping_suppress, damping_reuse,
# damping_half_life_ms): each change of a backend's check state adds the
# penalty, which decays with the half-life; over the suppress threshold a
# passing backend stays down until the penalty falls below reuse. Shown in
# backend list, the metrics and the log. Two real backends (lib_backends.sh).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_backends.sh"

backends_daemon 2 "damping_penalty 1000" "damping_suppress 2000" "damping_reuse 750" \
	"damping_half_life_ms 2000"
for b in 1 2; do ctl backend add $V 198.51.100.4$b; done
up=0
for b in 1 2; do wait_state $V 198.51.100.4$b up 5 && up=$((up + 1)); done
check "both backends up" [ $up = 2 ]
pen() { ctl -j backend list $V | jq -r --arg b 198.51.100.41 '.backends[] | select(.backend == $b) | .penalty'; }
check "backend list shows a penalty of 0 before any flap ($(pen))" [ "$(pen)" = 0 ]
# Three changes in quick succession: down, up, down.
check_off 1 192.0.2.40
check "flap 1: down" wait_state $V 198.51.100.41 down 3
p1=$(pen)
check_on 1 192.0.2.40
check "flap 2: up again (penalty $p1 then, under suppress 2000)" wait_state $V 198.51.100.41 up 3
check_off 1 192.0.2.40
check "flap 3: down" wait_state $V 198.51.100.41 down 3
p3=$(pen)
sup=$(ctl -j backend list $V | jq -r '.backends[] | select(.backend == "198.51.100.41") | .suppressed')
check "after 3 flaps: penalty $p3 over 2000, suppressed ($sup)" \
	bash -c "[ '$p3' -ge 2000 ] && [ '$sup' = true ]"
check_on 1 192.0.2.40
check "its check passes, but it stays down: suppressed" wait_state $V 198.51.100.41 suppressed 3
check "suppressed: in no table slot" [ "$(slots $V 198.51.100.41)" = 0 ]
# metrics_ok: the exposition shows backend 1 suppressed, with its penalty.
metrics_ok() {
	local m
	m=$(lbx curl -s "http://127.0.0.1:$METRICS_PORT/metrics")
	grep -qF 'maglev_backend_state{address="192.0.2.40",port="8080",protocol="tcp",backend="198.51.100.41",state="suppressed"} 1' <<<"$m" &&
		grep -qE 'maglev_backend_flap_penalty\{address="192.0.2.40",port="8080",protocol="tcp",backend="198.51.100.41"\} [1-9]' <<<"$m"
}
ok_m=no
for _ in $(seq 40); do metrics_ok && ok_m=yes && break; sleep 0.05; done
check "metrics: state suppressed and the penalty" [ $ok_m = yes ]
st=$(ctl -j status | jq -c '.backend_admission | [.suppressed, .max_penalty >= 750]')
check "status counts it suppressed, with the highest penalty ($st)" [ "$st" = "[1,true]" ]
check "status text: the backends line" \
	bash -c "$MAGLEVCTL status | grep -q '^backends held 0 (settle_ms 0), suppressed 1 (damping, highest penalty [0-9]*), ramping 0'"
t0=$SECONDS
# From ~2700 to under 750 at a 2 s half-life: about 4 s.
check "reused once the penalty decays under 750: up" wait_state $V 198.51.100.41 up 10
diag "suppressed for about $((SECONDS - t0)) s after its check passed; penalty now $(pen)"
check "back in its slots" [ "$(slots $V 198.51.100.41)" -gt 0 ]
check "the log says why: suppressed, kept down, reused" \
	bash -c "grep -q 'damping: backend 198.51.100.41 of 192.0.2.40:8080/tcp suppressed: penalty' '$DLOG' && grep -q 'passes its checks but stays down' '$DLOG' && grep -q 'damping: backend 198.51.100.41 of 192.0.2.40:8080/tcp reused' '$DLOG'"
out=$(printf 'damping_penalty 1000\ndamping_suppress 500\ndamping_reuse 750\n' >"$TDIR/bad.conf"; "$MAGLEVD" -t -c "$TDIR/bad.conf" 2>&1)
check "reuse not below suppress is refused naming both ($out)" \
	bash -c "grep -q damping_reuse <<<\"\$1\" && grep -q damping_suppress <<<\"\$1\"" _ "$out"
stop_daemon
t_done
