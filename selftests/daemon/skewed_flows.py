#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""UDP flows whose lifetime depends on the backend they land on.

Runs inside the client namespace of a daemon test (see pktio.py for how the
balancer's output comes back to the client veth). New flows start in small
batches, --pace seconds apart, so the balancer's over-cap marks (refreshed
every ~100 ms) can follow. A flow that lands on --sticky is long-lived: it
sends a keep-alive every --keepalive seconds until the end. Any other flow
sends its one packet and is left to expire (--idle, the balancer's
udp_idle_timeout). So the sticky backend accumulates flows, which is what
bounded loads are for.

Live flows per backend are counted from what came back (the backend each
flow's packets went to): the long flows, plus the short ones sent within
--idle. Sampled after every batch once --warmup has passed; the JSON on
stdout has the last sample, the worst max-over-cap seen (cap =
ceil(--factor * mean)), the flows started, packets sent and seen, and the
flows whose packets went to more than one backend (an established flow must
never move).
"""
import argparse
import json
import math
import os
import select
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pktio import ETH_P_ALL, parse_frame  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ifname", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--dst", required=True)
    ap.add_argument("--dport", type=int, required=True)
    ap.add_argument("--sticky", required=True)
    ap.add_argument("--backends", type=int, required=True)
    ap.add_argument("--base-port", type=int, required=True)
    ap.add_argument("--duration", type=float, default=4.0)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--pace", type=float, default=0.1)
    ap.add_argument("--keepalive", type=float, default=0.3)
    ap.add_argument("--idle", type=float, default=1.0)
    ap.add_argument("--warmup", type=float, default=1.5)
    ap.add_argument("--factor", type=float, default=1.25)
    a = ap.parse_args()

    cap = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    cap.bind((a.ifname, 0))
    cap.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)

    backend = {}  # sport -> first backend seen
    moved = set()
    socks = {}  # sport -> socket (kept open: a flow is its 5-tuple)
    last_sent = {}  # short flows: sport -> when their one packet went
    long_flows = set()
    sent = seen = 0
    worst = None
    last = None

    def drain(timeout):
        nonlocal seen
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return
            r, _, _ = select.select([cap], [], [], left)
            if not r:
                return
            frame, addr = cap.recvfrom(65535)
            if addr[2] == socket.PACKET_OUTGOING:
                continue
            got = parse_frame(frame, a.dst, a.dport)
            if not got or got[1] not in socks:
                continue
            seen += 1
            be, sport = got[0], got[1]
            if sport not in backend:
                backend[sport] = be
                if be == a.sticky:
                    long_flows.add(sport)
            elif backend[sport] != be:
                moved.add(sport)

    def send(sport, i):
        nonlocal sent
        socks[sport].sendto(b"maglev-skew" + struct.pack("!I", i), (a.dst, a.dport))
        sent += 1

    def live(now):
        per = {}
        for p, be in backend.items():
            if p in long_flows or now - last_sent[p] < a.idle:
                per[be] = per.get(be, 0) + 1
        return per

    t0 = time.monotonic()
    next_port = a.base_port
    last_ka = t0
    i = 0
    while time.monotonic() - t0 < a.duration:
        for _ in range(a.batch):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((a.src, next_port))
            socks[next_port] = s
            last_sent[next_port] = time.monotonic()
            send(next_port, 0)
            next_port += 1
        now = time.monotonic()
        if now - last_ka >= a.keepalive:
            last_ka = now
            i += 1
            for p in sorted(long_flows):
                send(p, i)
        drain(a.pace)
        now = time.monotonic()
        if now - t0 >= a.warmup:
            per = live(now)
            vals = list(per.values())
            mean = sum(vals) / a.backends if a.backends else 0
            mx = max(vals) if vals else 0
            excess = mx - math.ceil(a.factor * mean)
            last = {"max": mx, "mean": round(mean, 2), "per_backend": per}
            if worst is None or excess > worst["excess"]:
                worst = {"excess": excess, "max": mx, "mean": round(mean, 2),
                         "t": round(now - t0, 2)}
    drain(0.2)
    json.dump({"flows": len(socks), "long": len(long_flows), "sent": sent, "seen": seen,
               "unseen_flows": len(socks) - len(backend), "moved": len(moved),
               "last": last, "worst": worst}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
