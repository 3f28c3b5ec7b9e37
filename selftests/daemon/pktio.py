#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Send UDP flows toward a VIP and capture what the balancer sends back.

Runs inside the client network namespace of a daemon test. The balancer's
next hop is the client's veth, so every packet it forwards (IPIP or GUE
encapsulated, addressed to a backend) comes back to that veth, where an
AF_PACKET socket sees it. Prints one JSON object: packets sent, packets seen
encapsulated, and per flow (source port) the backends its packets went to,
and how many came in each encapsulation ("ipip", "gue:PORT").

  pktio.py --ifname c0 --src 203.0.113.2 --dst 192.0.2.10 --dport 5000 \
           --sports 40000,40001 --count 10 --interval 0.01
"""
import argparse
import json
import select
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003


def parse_frame(frame, vip, dport):
    """Return (backend, inner sport, "ipip" | "gue:PORT") if frame is an
    encapsulated VIP packet."""
    if len(frame) < 14 + 20:
        return None
    etype = struct.unpack("!H", frame[12:14])[0]
    if etype != 0x0800:
        return None
    outer = frame[14:]
    ihl = (outer[0] & 0x0F) * 4
    proto = outer[9]
    backend = socket.inet_ntoa(outer[16:20])
    inner = outer[ihl:]
    encap = "ipip"
    if proto == 17:  # GUE: UDP + 4-byte GUE header + inner IP
        encap = "gue:%d" % struct.unpack("!H", inner[2:4])[0]
        inner = inner[8 + 4:]
    elif proto != 4:
        return None
    if len(inner) < 28 or inner[0] >> 4 != 4 or inner[9] != 17:
        return None
    if socket.inet_ntoa(inner[16:20]) != vip:
        return None
    iihl = (inner[0] & 0x0F) * 4
    sport, idport = struct.unpack("!HH", inner[iihl:iihl + 4])
    if idport != dport:
        return None
    return backend, sport, encap


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ifname", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--dst", required=True)
    ap.add_argument("--dport", type=int, required=True)
    ap.add_argument("--sports", required=True)
    ap.add_argument("--count", type=int, default=1)
    ap.add_argument("--interval", type=float, default=0.0)
    ap.add_argument("--linger", type=float, default=0.5)
    a = ap.parse_args()
    sports = [int(p) for p in a.sports.split(",")]

    cap = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    cap.bind((a.ifname, 0))
    cap.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    senders = []
    for p in sports:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((a.src, p))
        senders.append((p, s))

    flows = {str(p): {} for p in sports}
    encaps = {}
    sent = seen = 0

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
            if got and str(got[1]) in flows:
                seen += 1
                f = flows[str(got[1])]
                f[got[0]] = f.get(got[0], 0) + 1
                encaps[got[2]] = encaps.get(got[2], 0) + 1

    payload = b"maglev-test"
    for i in range(a.count):
        for p, s in senders:
            s.sendto(payload + struct.pack("!I", i), (a.dst, a.dport))
            sent += 1
        drain(a.interval)
    drain(a.linger)
    json.dump({"sent": sent, "seen": seen, "flows": flows, "encaps": encaps}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
