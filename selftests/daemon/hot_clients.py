#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""UDP clients toward one VIP, one of them heavy (hot flows' end-to-end test).

Runs in the client namespace of a daemon test. --heavy SRC:SPORT sends
--heavy-share of all packets from one flow; each --light source address sends
--light-flows flows (source ports from --base-port) that share the rest
round-robin. Packets go out in rounds of 100, paced to --pps, for --duration
seconds. Prints one JSON object: packets sent in all and by the heavy flow.
"""
import argparse
import json
import socket
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dst", required=True)
    ap.add_argument("--dport", type=int, required=True)
    ap.add_argument("--heavy", required=True)
    ap.add_argument("--heavy-share", type=float, default=0.3)
    ap.add_argument("--light", required=True, help="comma-separated source addresses")
    ap.add_argument("--light-flows", type=int, default=10)
    ap.add_argument("--base-port", type=int, default=41000)
    ap.add_argument("--pps", type=float, default=3000)
    ap.add_argument("--duration", type=float, default=8)
    a = ap.parse_args()

    def sock(src, port):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((src, port))
        return s

    hsrc, hport = a.heavy.rsplit(":", 1)
    heavy = sock(hsrc, int(hport))
    light = [sock(src, a.base_port + i)
             for src in a.light.split(",") for i in range(a.light_flows)]
    nheavy = int(round(100 * a.heavy_share))
    payload = b"x" * 64
    dst = (a.dst, a.dport)
    sent = sent_heavy = 0
    li = 0
    start = time.monotonic()
    while time.monotonic() - start < a.duration:
        # Heavy packets spread through the round, not in one burst.
        for i in range(100):
            if (i * nheavy) // 100 != ((i + 1) * nheavy) // 100:
                heavy.sendto(payload, dst)
                sent_heavy += 1
            else:
                light[li % len(light)].sendto(payload, dst)
                li += 1
            sent += 1
        ahead = start + sent / a.pps - time.monotonic()
        if ahead > 0:
            time.sleep(ahead)
    print(json.dumps({"sent": sent, "heavy": sent_heavy}))


if __name__ == "__main__":
    main()
