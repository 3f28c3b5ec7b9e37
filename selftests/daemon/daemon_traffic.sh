#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Real packets through the XDP program maglevd manages: what maglevctl
# configures is what the datapath does (lookup and counters agree with the
# packets seen), drain keeps established flows and takes no new ones, a
# deleted backend's flows are re-picked, and SIGKILLing the daemon while
# traffic flows loses no packet and keeps the connection table.
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
# UDP flows idle for 10 min, not 1: the flows made first must still be
# followed at the end, over a minute later on a loaded machine.
write_conf "udp_idle_timeout_ms 600000"
start_daemon || { nok "maglevd starts"; t_done; }
ok "maglevd starts"

VIP=192.0.2.10:5000/udp
ctl vip add $VIP && ctl backend add $VIP 198.51.100.1 && ctl backend add $VIP 198.51.100.2 &&
	ctl backend add $VIP 198.51.100.3
check "VIP with three backends configured" [ "$(ctl -j vip show $VIP | jq .vip.in_table)" -eq 3 ]

# backend_of JSON SPORT: the one backend a flow's packets went to ("" if several).
backend_of() {
	echo "$1" | jq -r --arg p "$2" '.flows[$p] | keys | if length == 1 then .[0] else "" end'
}
SPORTS=$(seq -s, 40000 40019)
out=$(pktio --dst 192.0.2.10 --dport 5000 --sports "$SPORTS" --count 5)
diag "20 flows x 5 packets: $(echo "$out" | jq -c '{sent, seen}')"
check "every packet forwarded (100 sent, 100 seen encapsulated)" \
	[ "$(echo "$out" | jq '.sent == 100 and .seen == 100')" = true ]
check "each flow stayed on one backend" \
	[ "$(echo "$out" | jq '[.flows[] | keys | length] | all(. == 1)')" = true ]
agree=0
for p in $(seq 40000 40019); do
	want=$(backend_of "$out" $p)
	got=$(ctl -j lookup $VIP 203.0.113.2:$p | jq -r 'select(.source=="conn") | .backend')
	[ "$want" = "$got" ] && agree=$((agree + 1))
done
check "maglevctl lookup names the backend the packets went to (20/20, from the connection table)" \
	[ $agree -eq 20 ]
st=$(ctl -j stats $VIP)
check "stats: VIP packets 100, new flows 20" \
	[ "$(echo "$st" | jq '.vips[0].packets == 100 and .vips[0].new_flows == 20')" = true ]
match=1
for b in 198.51.100.1 198.51.100.2 198.51.100.3; do
	seen=$(echo "$out" | jq --arg b "$b" '[.flows[] | .[$b] // 0] | add')
	cnt=$(echo "$st" | jq --arg b "$b" '.vips[0].backends[] | select(.backend == $b) | .packets')
	[ "$seen" = "$cnt" ] || match=0
done
check "stats: per-backend packet counters equal the packets seen per backend" [ $match -eq 1 ]

# --- GUE ----------------------------------------------------------------------------
ctl vip add 192.0.2.12:5001/udp --encap gue --gue-port 6080 && ctl backend add 192.0.2.12:5001/udp 198.51.100.9
g=$(pktio --dst 192.0.2.12 --dport 5001 --sports 40100,40101 --count 3)
check "GUE VIP: every packet forwarded in GUE to its backend" \
	[ "$(echo "$g" | jq '.seen == 6 and ([.flows[] | keys[]] | unique == ["198.51.100.9"])')" = true ]

# --- all-ports VIP ---------------------------------------------------------------------
A=192.0.2.13
ctl vip add "$A:*/udp" && for b in 198.51.100.31 198.51.100.32 198.51.100.33; do
	ctl backend add "$A:*/udp" $b
done
a=$(pktio --dst $A --dport 7000 --sports "$(seq -s, 44000 44009)" --count 2)
check "all-ports VIP: packets to an unlisted port forwarded (20 sent, 20 seen)" \
	[ "$(echo "$a" | jq '.sent == 20 and .seen == 20')" = true ]
agree=0
for p in $(seq 44000 44009); do
	want=$(backend_of "$a" $p)
	got=$(ctl -j lookup $A:7000/udp 203.0.113.2:$p | jq -r 'select(.source=="conn") | .backend')
	[ -n "$want" ] && [ "$want" = "$got" ] && agree=$((agree + 1))
done
check "lookup ADDR:PORT/PROTO on an all-ports VIP names the backend the packets went to (10/10)" \
	[ $agree -eq 10 ]

# --- drain ----------------------------------------------------------------------------
F=40000
B=$(backend_of "$out" $F)
check "backend set --drain" ctl backend set $VIP "$B" --drain
check "drained backend: no slot in the live table, DRAIN in the live backend map" \
	bash -c "[ \$($MAGLEVCTL -j table $VIP | jq --arg b $B '.backends[] | select(.backend==\$b) | .slots') -eq 0 ] && \
		 [ \$($MAGLEVCTL -j backend list $VIP | jq -r --arg b $B '.backends[] | select(.backend==\$b) | .dp_flags | join(\",\")') = DRAIN ]"
d=$(pktio --dst 192.0.2.10 --dport 5000 --sports $F --count 10)
check "established flow on the drained backend keeps it (10/10 packets to $B)" \
	[ "$(echo "$d" | jq --arg b "$B" ".seen == 10 and .flows[\"$F\"][\$b] == 10")" = true ]
n=$(pktio --dst 192.0.2.10 --dport 5000 --sports "$(seq -s, 41000 41049)" --count 1)
check "new flows never go to the drained backend (50 flows)" \
	[ "$(echo "$n" | jq --arg b "$B" '.seen == 50 and ([.flows[] | keys[]] | index($b) == null)')" = true ]
# It still carries flow $F: a plain del is refused (daemon_del_flows.sh); --force
# deletes it, and that flow is re-picked.
check "backend del --force of the drained backend (flow $F still on it)" ctl backend del $VIP "$B" --force
r=$(pktio --dst 192.0.2.10 --dport 5000 --sports $F --count 3)
nb=$(backend_of "$r" $F)
check "a deleted backend's established flow is re-picked to a live backend ($nb)" \
	bash -c "[ -n '$nb' ] && [ '$nb' != '$B' ] && [ $(echo "$r" | jq .seen) -eq 3 ]"
ctl backend add $VIP "$B"

# --- SIGKILL with traffic flowing --------------------------------------------------------
SP=$(seq -s, 42000 42003)
pre=$(pktio --dst 192.0.2.10 --dport 5000 --sports "$SP" --count 1)
clx python3 "$PKTIO" --ifname c0 --src 203.0.113.2 --dst 192.0.2.10 --dport 5000 \
	--sports "$SP" --count 250 --interval 0.01 >"$TDIR/flow.json" &
FLOW=$!
sleep 0.7
prog_before=$(lbx ip -j link show lb0 | jq '.[0].xdp.prog.id')
link_id() { bpftool -j link show pinned "$(ls -d "$PIN"/link_xdp* | head -1)" | jq .id; }
link_before=$(link_id)
old_pid=$DPID
kill9_daemon
check "daemon killed with SIGKILL mid-traffic" bash -c "! kill -0 $old_pid 2>/dev/null"
sleep 0.7
start_daemon || nok "daemon restarts"
wait $FLOW
fl=$(cat "$TDIR/flow.json")
diag "4 flows x 250 packets across kill -9 + restart: $(echo "$fl" | jq -c '{sent, seen}')"
check "no packet lost while the daemon was dead and restarting (1000 sent, 1000 seen)" \
	[ "$(echo "$fl" | jq '.sent == 1000 and .seen == 1000')" = true ]
same=1
for p in $(seq 42000 42003); do
	[ "$(backend_of "$fl" $p)" = "$(backend_of "$pre" $p)" ] || same=0
done
check "every flow kept its backend across the restart" [ $same -eq 1 ]
prog_after=$(lbx ip -j link show lb0 | jq '.[0].xdp.prog.id')
link_after=$(link_id)
diag "XDP program id $prog_before -> $prog_after, pinned link id $link_before -> $link_after"
check "the restarted daemon swapped its program into the same pinned link (new program id, same link)" \
	python3 -c "import sys; p0, p1, l0, l1 = sys.argv[1:]; sys.exit(not (p0.isdigit() and p1.isdigit() and p0 != p1 and l0.isdigit() and l0 == l1))" \
	"$prog_before" "$prog_after" "$link_before" "$link_after"

# Connection table survives: add backends until some established flow's
# table pick moves elsewhere; its packets must still follow the entry.
for i in 4 5 6 7 8 9 10 11; do ctl backend add $VIP 198.51.100.$((10 + i)); done
moved=
for p in $(seq 40001 40019); do
	l=$(ctl -j lookup $VIP 203.0.113.2:$p)
	if [ "$(echo "$l" | jq -r '.source')" = conn ] &&
		[ "$(echo "$l" | jq -r '.conn.backend != .table_backend')" = true ]; then
		moved=$p
		want=$(echo "$l" | jq -r .conn.backend)
		break
	fi
done
check "an established flow whose table slot moved exists after the restart" [ -n "$moved" ]
if [ -n "$moved" ]; then
	m=$(pktio --dst 192.0.2.10 --dport 5000 --sports "$moved" --count 5)
	check "connection table survived the restart: flow $moved still goes to $want, not its new table pick" \
		[ "$(echo "$m" | jq --arg b "$want" ".seen == 5 and .flows[\"$moved\"][\$b] == 5")" = true ]
fi
check "stats after restart continue from before (VIP packets >= 1100)" \
	[ "$(ctl -j stats $VIP | jq '.vips[0].packets')" -ge 1100 ]
# Rates, from a count: the daemon samples the counters at most once a
# second; each sample's rates cover the window since the one before
# (.rates.window_s, the samples numbered .rates.sample), so pps x window_s
# summed over the windows a burst touched is the burst. The sender's own
# pace does not matter (a paced sender fell to 33 packets/s under load).
N=301
rates() { ctl -j stats $VIP | jq -r '"\(.rates.sample) \(.rates.window_s) \(.vips[0].pps)"'; }
wait_sample() { # wait_sample K: until sample K or a later one shows; prints it
	local _ r
	for _ in $(seq 200); do
		r=$(rates)
		[ "${r%% *}" -ge "$1" ] && echo "$r" && return 0
		sleep 0.05
	done
	return 1
}
# Two samples on, a window wholly after the traffic above.
r=$(wait_sample $(($(rates | cut -d' ' -f1) + 2))) || r="none"
check "stats: the packet rate reads 0 in a window after the traffic stopped ($r)" \
	[ "${r##* }" = 0 ]
q=${r%% *}
p0=$(ctl -j stats $VIP | jq '.vips[0].packets')
clx python3 "$PKTIO" --ifname c0 --src 203.0.113.2 --dst 192.0.2.10 --dport 5000 \
	--sports 43000 --count $N --linger 0.2 >"$TDIR/burst.json" &
FLOW=$!
# Sample q was shown before the burst began, so the burst lies in the
# windows after q; each window's reading, once, until the window that was
# open when the sender ended (sd + 1) has been sampled.
declare -A win=()
sd=
end=$((SECONDS + 20))
while [ $SECONDS -le $end ]; do
	read -r n w p <<<"$(rates)"
	[ "$n" -gt "$q" ] && win[$n]="$w $p"
	[ -z "$sd" ] && ! kill -0 $FLOW 2>/dev/null && sd=$n
	[ -n "$sd" ] && [ "$n" -gt "$sd" ] && break
	sleep 0.05
done
wait $FLOW
b=$(cat "$TDIR/burst.json")
read -r sum missed < <(for n in "${!win[@]}"; do echo "$n ${win[$n]}"; done |
	python3 -c "
import sys
w = {int(l.split()[0]): (float(l.split()[1]), float(l.split()[2])) for l in sys.stdin}
last = max(w) if w else $q
print(sum(t * p for t, p in w.values()), [n for n in range($q + 1, last + 1) if n not in w])")
diag "burst of $N packets ($(echo "$b" | jq -c '{sent, seen}')): windows after sample $q:" \
	"$(for n in $(printf '%s\n' "${!win[@]}" | sort -n); do printf ' %s=(%s)' "$n" "${win[$n]}"; done)," \
	"sum of pps x window $sum, windows not read $missed"
check "stats: the burst is counted whole ($N packets more)" \
	[ $(($(ctl -j stats $VIP | jq '.vips[0].packets') - p0)) -eq $N ]
check "stats: every window the burst touched was read ($missed)" [ "$missed" = "[]" ]
check "stats: pps x window over the burst's windows is the burst, $N ($sum)" \
	python3 -c "import sys; sys.exit(0 if round($sum) == $N else 1)"
stop_daemon
t_done
