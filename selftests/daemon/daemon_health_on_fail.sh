#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# on_fail: what a backend that fails its checks keeps. Two real backends
# (namespaces behind the client's, decapsulating with the project's decap
# program, the VIPs on lo, backend-server's line echo on port 8080, a check
# listener per VIP on 8081) and real TCP connections (longconn). Backend 1's
# check listeners are stopped while its service keeps serving:
#   - VIP D (--on-fail drain): its established connections keep exchanging
#     lines with it (its datapath byte count grows while it is down), none is
#     reset or moved; new connections all go to backend 2;
#   - VIP R (the default, repick): its established connections are re-picked
#     to backend 2, which resets them (today's behaviour).
#
#   client ns (c0, forwards) --- be1 ns 198.51.100.41 (decap, VIPs on lo)
#                             \-- be2 ns 198.51.100.42
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_backends.sh"
trap 'backends_cleanup; cleanup' EXIT
setup_net || skip_all "cannot create namespaces/veth"
D=192.0.2.40:8080/tcp
R=192.0.2.41:8080/tcp
backends_up 2 192.0.2.40 192.0.2.41
# Outer sources outside every address here: a fold must not hit one.
write_conf "health_via_encap yes" "src4_prefix 198.51.100.192/27"
start_daemon || { nok "maglevd starts"; t_done; }
ok "maglevd starts"
opts="--check tcp --check-port 8081 --check-interval 200 --check-timeout 150 --rise 1 --fall 2"
# shellcheck disable=SC2086 # opts is words
ctl vip add $D $opts --on-fail drain && ctl vip add $R $opts
for v in $D $R; do ctl backend add $v 198.51.100.41 && ctl backend add $v 198.51.100.42; done
check "vip show reports on_fail drain and repick" \
	bash -c "[ \"\$($MAGLEVCTL -j vip show $D | jq -r .vip.check.on_fail) \$($MAGLEVCTL -j vip show $R | jq -r .vip.check.on_fail)\" = 'drain repick' ]"
check "save carries --on-fail drain for D only" \
	bash -c "$MAGLEVCTL save | grep -- '$D' | grep -q -- '--on-fail drain' && ! $MAGLEVCTL save | grep -- '$R' | grep -q -- '--on-fail'"
up=0
for v in $D $R; do for b in 1 2; do wait_state $v 198.51.100.4$b up 5 && up=$((up + 1)); done; done
check "all four backends up through the encapsulation" [ $up = 4 ]

# 16 connections per VIP: both backends get some (all on one: 2^-15).
clx "$LONGCONN" -d 192.0.2.40 -p 8080 -s 203.0.113.2 -n 16 -i 50 -T 7 >"$TDIR/d.out" 2>&1 &
LD=$!
clx "$LONGCONN" -d 192.0.2.41 -p 8080 -s 203.0.113.2 -n 16 -i 50 -T 7 >"$TDIR/r.out" 2>&1 &
LR=$!
sleep 1
be1_bytes() { ctl -j stats "$1" | jq '.vips[0].backends[] | select(.backend == "198.51.100.41") | .bytes'; }
# Backend 1 fails its checks; its service stays.
kill "$CHK_1_40" "$CHK_1_41"
check "D: backend 1 goes down (its check port refuses)" wait_state $D 198.51.100.41 down 3
check "R: backend 1 goes down" wait_state $R 198.51.100.41 down 3
check "D: the failed backend is DRAIN in the datapath, out of the table" \
	bash -c "[ \"$(flags $D 198.51.100.41)\" = DRAIN ] && [ $(slots $D 198.51.100.41) = 0 ]"
check "R: the failed backend has no flags (its flows are re-picked)" [ -z "$(flags $R 198.51.100.41)" ]
b0=$(be1_bytes $D)
sleep 1
b1=$(be1_bytes $D)
diag "D: bytes to the failed backend 1 s apart: $b0 -> $b1"
check "D: bytes keep going to the failed backend" [ "$b1" -gt "$b0" ]
# New connections while it is down.
clx "$LONGCONN" -d 192.0.2.40 -p 8080 -s 203.0.113.2 -n 16 -i 50 -T 1 >"$TDIR/dn.out" 2>&1
diag "D new: $(tr '\n' ';' <"$TDIR/dn.out")"
check "D: 16 new connections, all up, all on backend 2" \
	bash -c "grep -q '^conns 16 established 16 alive 16 resets 0' '$TDIR/dn.out' && grep -q '^backend be2 16 ' '$TDIR/dn.out' && ! grep -q '^backend be1' '$TDIR/dn.out'"
wait "$LD" "$LR"
diag "D: $(tr '\n' ';' <"$TDIR/d.out")"
diag "R: $(tr '\n' ';' <"$TDIR/r.out")"
be1_conns() { awk '$1 == "backend" && $2 == "be1" {print $3}' "$1"; }
check "both VIPs had established connections on backend 1" \
	bash -c "[ \"\$(awk '\$1 == \"backend\" && \$2 == \"be1\" {print \$3}' $TDIR/d.out)\" -gt 0 ] && [ \"\$(awk '\$1 == \"backend\" && \$2 == \"be1\" {print \$3}' $TDIR/r.out)\" -gt 0 ]"
check "D (drain): every connection alive to the end, none reset, none moved" \
	grep -q '^conns 16 established 16 alive 16 resets 0 closed 0 errors 0 switched 0' "$TDIR/d.out"
check "D: backend 1's connections all still alive" \
	bash -c "[ \"\$(awk '\$1 == \"backend\" && \$2 == \"be1\" {print \$3 \" \" \$5}' $TDIR/d.out | awk '{print (\$1 == \$2)}')\" = 1 ]"
n1=$(be1_conns "$TDIR/r.out")
resets=$(awk '$1 == "conns" {print $8}' "$TDIR/r.out")
check "R (repick, default): backend 1's $n1 connections were re-picked and reset ($resets resets)" \
	[ "${resets:-0}" -ge "${n1:-1}" ]
check "R: backend 2's own connections stayed alive" \
	bash -c "[ \"\$(awk '\$1 == \"backend\" && \$2 == \"be2\" {print (\$3 == \$5)}' $TDIR/r.out)\" = 1 ]"

# vip set switches it; a bad value is refused naming it.
check "vip set --on-fail repick: D's failed backend loses its DRAIN flag" \
	bash -c "$MAGLEVCTL vip set $D --on-fail repick && [ -z \"\$($MAGLEVCTL -j backend list $D | jq -r '.backends[] | select(.backend == \"198.51.100.41\") | .dp_flags | join(\",\")')\" ]"
out=$(ctl vip set $D --on-fail maybe 2>&1)
check "vip set --on-fail maybe is refused naming the option ($out)" \
	bash -c "! $MAGLEVCTL vip set $D --on-fail maybe 2>/dev/null && grep -q check_on_fail <<<'$out'"
# health_on_fail drain as the config default, by reload: R follows it.
write_conf "health_via_encap yes" "src4_prefix 198.51.100.192/27" "health_on_fail drain"
check "reload to health_on_fail drain: R's failed backend becomes DRAIN" \
	bash -c "$MAGLEVCTL reload && [ \"\$($MAGLEVCTL -j backend list $R | jq -r '.backends[] | select(.backend == \"198.51.100.41\") | .dp_flags | join(\",\")')\" = DRAIN ]"
stop_daemon
t_done
