# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
# Shared by the end-to-end tests: the topology library plus TAP output and
# the assertions on what the real clients reported.
# MAGLEV_BUILD: the build dir under test (selftests/sanitize uses build/san).
[ -n "${MAGLEV_BUILD:-}" ] && TOPO_BUILD=${TOPO_BUILD:-$MAGLEV_BUILD}
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/topology"

E2E_N=0
E2E_FAILED=0

e2e_plan() {
	echo "TAP version 13"
	echo "1..$1"
}

e2e_skip_all() {
	echo "1..0 # SKIP $*"
	exit 4
}

# e2e_result RC NAME [DIAGNOSTIC...]: one TAP line; diagnostics on failure.
e2e_result() {
	local rc=$1 name=$2
	shift 2
	E2E_N=$((E2E_N + 1))
	if [ "$rc" = 0 ]; then
		echo "ok $E2E_N $name"
	else
		E2E_FAILED=$((E2E_FAILED + 1))
		echo "not ok $E2E_N $name"
		local l
		for l in "$@"; do echo "# $l"; done
	fi
}

e2e_done() {
	[ "$E2E_FAILED" = 0 ] && exit 0
	exit 1
}

# Skip the whole test unless every program exists (tests are registered in
# make check only once they do; this keeps a manual run honest).
e2e_require() {
	local p
	for p in "$@"; do
		[ -x "$p" ] || e2e_skip_all "$p not built"
	done
}

e2e_now_ms() { echo $(($(date +%s%N) / 1000000)); }

# e2e_until SECONDS CMD...: poll CMD every 50 ms for SECONDS at most; the
# time it took in WAITED (ms; -1 when it never succeeded).
e2e_until() {
	local t0 end
	t0=$(e2e_now_ms)
	end=$((t0 + $1 * 1000))
	shift
	while [ "$(e2e_now_ms)" -le $end ]; do
		if "$@"; then
			WAITED=$(($(e2e_now_ms) - t0))
			return 0
		fi
		sleep 0.05
	done
	WAITED=-1
	return 1
}

# e2e_count FILE BACKEND: flows flow-client saw answered by BACKEND.
e2e_count() { awk -v b="$2" '$1 == "backend" && $2 == b {n = $3} END {print n + 0}' "$1"; }
e2e_failed() { awk '$1 == "flows" {print $6}' "$1"; }
e2e_ok_flows() { awk '$1 == "flows" {print $4}' "$1"; }

# e2e_share_ok FILE BACKEND NUM DEN: BACKEND's share of the answered flows
# is within ±10% (relative) of NUM/DEN.
e2e_share_ok() {
	awk -v b="$2" -v num="$3" -v den="$4" '
		$1 == "flows" {ok = $4}
		$1 == "backend" && $2 == b {n = $3}
		END {want = num / den; got = ok ? n / ok : 0
		     exit !(ok > 0 && got >= want * 0.9 && got <= want * 1.1)}' "$1"
}

# e2e_field FILE KEY: the value after KEY on longconn's final report line.
e2e_field() {
	awk -v k="$2" '$1 == "conns" {for (i = 1; i < NF; i++) if ($i == k) v = $(i + 1)} END {print v}' "$1"
}

# e2e_lb_up [-b BACKENDS] [-l LBS] [KEY VALUE]...: the whole system: the
# topology, backend-server and the decap program on every backend, maglevd
# on every balancer (extra maglevd config lines as KEY VALUE pairs), the VIP
# ranges routed to the balancer(s).
e2e_lb_up() {
	local nb=3 nl=1 i
	while [ $# -gt 0 ]; do
		case $1 in
		-b) nb=$2; shift 2 ;;
		-l) nl=$2; shift 2 ;;
		*) break ;;
		esac
	done
	topo_init
	topo_up -b "$nb" -l "$nl"
	topo_servers_start
	for ((i = 1; i <= nb; i++)); do topo_decap_attach "$i"; done
	for ((i = 1; i <= nl; i++)); do
		topo_lb_config "$i" "$@"
		topo_lb_start "$i"
	done
	if [ "$nl" = 2 ]; then topo_route_vip lb1 lb2; else topo_route_vip lb1; fi
}

# e2e_vip K VIP [VIP options] -- BACKEND[:WEIGHT]...: a VIP and its backends
# on balancer K through maglevctl; fails the whole test if rejected.
e2e_vip() {
	local k=$1 vip=$2 b w
	shift 2
	local opts=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	topo_ctl "$k" vip add "$vip" "${opts[@]}" >/dev/null || topo_die "maglevctl vip add $vip ${opts[*]} failed"
	for b in "$@"; do
		w=1
		case $b in *@*) w=${b#*@}; b=${b%@*} ;; esac
		topo_ctl "$k" backend add "$vip" "$b" --weight "$w" >/dev/null ||
			topo_die "maglevctl backend add $vip $b failed"
	done
	topo_wait_up "$k" || topo_die "lb$k: backends of $vip not up"
}

# flow-client from the client namespace: e2e_flows OUT ARGS...
e2e_flows() {
	local out=$1
	shift
	topo_exec client "$TOPO_TOOLS/flow-client" "$@" >"$out"
}
