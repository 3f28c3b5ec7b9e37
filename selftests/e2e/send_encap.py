#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Send one encapsulated UDP datagram the way the balancer would, to check a
# backend's decap path without the balancer: the inner packet goes from a
# client address to a VIP, the outer one to the backend.
#   send_encap.py ipip|gue OUTER_DST INNER_SRC INNER_DST SPORT DPORT TEXT [OUTER_SRC]
# ipip: IPv4 outer -> IPv4 inner (IPIP) or IPv6 outer -> IPv6 inner, by family
# gue:  UDP to OUTER_DST:6080, GUE v0 header, then the inner packet
# OUTER_SRC: a local address to send from (the kernel's choice otherwise)
import socket
import struct
import sys


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def inner_packet(src, dst, sport, dport, payload):
    udp_len = 8 + len(payload)
    if ":" in src:
        s, d = socket.inet_pton(socket.AF_INET6, src), socket.inet_pton(socket.AF_INET6, dst)
        pseudo = s + d + struct.pack("!IxxxB", udp_len, 17)
        udp = struct.pack("!HHHH", sport, dport, udp_len, 0) + payload
        udp = udp[:6] + struct.pack("!H", csum(pseudo + udp) or 0xFFFF) + udp[8:]
        return 41, struct.pack("!IHBB16s16s", 6 << 28, udp_len, 17, 64, s, d) + udp
    s, d = socket.inet_aton(src), socket.inet_aton(dst)
    udp = struct.pack("!HHHH", sport, dport, udp_len, 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, 1, 0x4000, 64, 17, 0, s, d)
    return 4, ip[:10] + struct.pack("!H", csum(ip)) + ip[12:] + udp


def main():
    mode, outer, isrc, idst, sport, dport, text = sys.argv[1:8]
    osrc = sys.argv[8] if len(sys.argv) > 8 else None
    proto, pkt = inner_packet(isrc, idst, int(sport), int(dport), text.encode() + b"\n")
    fam = socket.AF_INET6 if ":" in outer else socket.AF_INET
    if mode == "gue":
        s = socket.socket(fam, socket.SOCK_DGRAM)
        if osrc:
            s.bind((osrc, 0))
        s.sendto(struct.pack("!BBH", 0, proto, 0) + pkt, (outer, 6080))
    else:
        s = socket.socket(fam, socket.SOCK_RAW, proto)
        if osrc:
            s.bind((osrc, 0))
        s.sendto(pkt, (outer, 0))


main()
