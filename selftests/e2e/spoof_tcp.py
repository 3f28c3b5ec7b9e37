#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Send spoofed TCP segments for existing IPv4 connections (issue 31).

    spoof_tcp.py FLAGS... < TUPLES

TUPLES: lines "SRC:SPORT DST:DPORT" (ss -Htn's local and peer columns);
for each, one segment per FLAGS word in order (RST, FIN, SYN: the flags of
that name, FIN with ACK), from SRC:SPORT to DST:DPORT, with a random
sequence number: out of the connection's window, so the endpoint that gets
it answers with a challenge ACK (RFC 5961) and keeps the connection; only
where the balancer sends it matters. Prints the number of segments sent.
"""
import random
import socket
import struct
import sys

FLAGS = {"RST": 0x04, "FIN": 0x11, "SYN": 0x02}


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def segment(src, sport, dst, dport, flags):
    seq = random.getrandbits(32)
    ack = random.getrandbits(32) if flags & 0x10 else 0
    hdr = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, 5 << 4, flags, 65535, 0, 0)
    pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, 6, len(hdr))
    return hdr[:16] + struct.pack("!H", csum(pseudo + hdr)) + hdr[18:]


def main():
    words = sys.argv[1:]
    if not words or any(w not in FLAGS for w in words):
        sys.exit("usage: spoof_tcp.py {RST|FIN|SYN}... < tuples")
    sent = 0
    for line in sys.stdin:
        f = line.split()
        if len(f) != 2:
            continue
        (src, sport), (dst, dport) = (x.rsplit(":", 1) for x in f)
        s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
        s.bind((src, 0))
        for w in words:
            s.sendto(segment(src, int(sport), dst, int(dport), FLAGS[w]), (dst, 0))
            sent += 1
        s.close()
    print(sent)


if __name__ == "__main__":
    main()
