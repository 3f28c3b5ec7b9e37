# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Independent Python transcription of docs/maglev-table.md (SipHash-2-4, the
# canonical backend encoding, quotas, population; the ring and rendezvous
# placements). It reproduces the values pinned in table_test.c and
# placement_test.c: python3 selftests/table/maglev_ref.py
import struct, ipaddress
M64 = (1 << 64) - 1
def rotl(x, b): return ((x << b) | (x >> (64 - b))) & M64
def rnd(v):
    v0, v1, v2, v3 = v
    v0 = (v0 + v1) & M64; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32)
    v2 = (v2 + v3) & M64; v3 = rotl(v3, 16); v3 ^= v2
    v0 = (v0 + v3) & M64; v3 = rotl(v3, 21); v3 ^= v0
    v2 = (v2 + v1) & M64; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32)
    return [v0, v1, v2, v3]
def siphash24(key, msg):
    k0, k1 = struct.unpack('<QQ', key)
    v = [0x736f6d6570736575 ^ k0, 0x646f72616e646f6d ^ k1, 0x6c7967656e657261 ^ k0, 0x7465646279746573 ^ k1]
    n = len(msg); end = n - n % 8
    blocks = [struct.unpack('<Q', msg[i:i+8])[0] for i in range(0, end, 8)]
    last = (n & 0xff) << 56
    for j, b in enumerate(msg[end:]): last |= b << (8 * j)
    for m in blocks + [last]:
        v[3] ^= m; v = rnd(v); v = rnd(v); v[0] ^= m
    v[2] ^= 0xff
    for _ in range(4): v = rnd(v)
    return v[0] ^ v[1] ^ v[2] ^ v[3]
assert siphash24(bytes(range(16)), bytes(range(15))) == 0xa129ca6149be45e5
assert siphash24(bytes(range(16)), b'') == 0x726fdb47dd0e0e31
def canon(addr, port):
    ip = ipaddress.ip_address(addr)
    a = ip.packed + bytes(16 - len(ip.packed))
    return bytes([ip.version, 0]) + struct.pack('>H', port) + bytes(4) + a
def table(seed, backends, m):
    key = struct.pack('<QQ', *seed)
    bes = sorted([(canon(a, p), i, w) for i, (a, p, w) in enumerate(backends) if w > 0])
    W = sum(w for _, _, w in bes)
    q = [m * w // W for _, _, w in bes]
    rem = [m * w % W for _, _, w in bes]
    left = m - sum(q)
    for pos in sorted(range(len(bes)), key=lambda k: (-rem[k], k))[:left]: q[pos] += 1
    off = [siphash24(key, b'maglevh1' + c) % m for c, _, _ in bes]
    skip = [siphash24(key, b'maglevh2' + c) % (m - 1) + 1 for c, _, _ in bes]
    entry = [-1] * m; nxt = [0] * len(bes); cnt = [0] * len(bes); filled = 0
    while filled < m:
        for k in range(len(bes)):
            if cnt[k] == q[k] or filled == m: continue
            while True:
                c = (off[k] + nxt[k] * skip[k]) % m; nxt[k] += 1
                if entry[c] < 0: break
            entry[c] = bes[k][1]; cnt[k] += 1; filled += 1
    return entry
def fnv(t):
    h = 0xcbf29ce484222325
    for x in t:
        for b in struct.pack('<I', x):
            h ^= b; h = (h * 0x100000001b3) & M64
    return h
seed = (0x6d61676c65762d6c, 0x6220736565642031)
bes = [('192.0.2.1', 80, 1), ('192.0.2.2', 80, 2), ('2001:db8::1', 80, 3), ('192.0.2.3', 8080, 1), ('2001:db8::2', 0, 0)]
t = table(seed, bes, 251)
print([t.count(i) for i in range(5)], fnv(t), hex(fnv(t)))
print('first 16:', t[:16])
print('h1/h2 192.0.2.10:80 default seed:', hex(siphash24(struct.pack('<QQ', *seed), b'maglevh1' + canon('192.0.2.10', 80))), hex(siphash24(struct.pack('<QQ', *seed), b'maglevh2' + canon('192.0.2.10', 80))))

# Placements (issue 19), transcribed from docs/maglev-table.md.
def id_hash(seed, tag, c, extra=()):
    return siphash24(struct.pack('<QQ', *seed), tag + c + b''.join(struct.pack('<Q', x) for x in extra))
def ring(seed, backends, m, V):
    bes = sorted([(canon(a, p), i, w) for i, (a, p, w) in enumerate(backends) if w > 0])
    pts = sorted((id_hash(seed, b'maglevrg', c, (i,)), pos) for pos, (c, _, w) in enumerate(bes) for i in range(V * w))
    out = []
    for s in range(m):
        at = (s << 64) // m
        nxt = next((p for p in pts if p[0] >= at), pts[0])
        out.append(bes[nxt[1]][1])
    return out
def tdiv(a, b): return -((-a) // b) if a < 0 else a // b
LG = []
for i in range(256):
    y, v = (256 + i) << 54, 0
    for bit in range(1, 57):
        y = (y * y) >> 62
        if y >= 2 << 62: y >>= 1; v |= 1 << (56 - bit)
    LG.append(v)
RC = [(1 << 71) // (256 + i) for i in range(256)]
def neg_log2_q56(x):
    e = x.bit_length() - 1
    y = x << (63 - e); i = (y >> 55) & 0xff
    t = ((y * RC[i]) >> 63) - (1 << 63)
    t2 = (t * t) >> 63; t3 = (t2 * t) >> 63; t4 = (t3 * t) >> 63; t5 = (t4 * t) >> 63
    ln = t - tdiv(t2, 2) + tdiv(t3, 3) - tdiv(t4, 4) + tdiv(t5, 5)
    l2 = (ln * 0x5c551d94ae0bf85e) >> (63 + 62 - 56)
    l = ((e << 56) + LG[i] + l2) & M64
    return (54 << 56) - l if l < (54 << 56) else 1
def splitmix(z):
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M64
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M64
    return z ^ (z >> 31)
def rendezvous(seed, backends, m):
    bes = sorted([(canon(a, p), i, w) for i, (a, p, w) in enumerate(backends) if w > 0])
    keys = [id_hash(seed, b'maglevrz', c) for c, _, _ in bes]
    out = []
    for s in range(m):
        best = None
        for pos, (c, idx, w) in enumerate(bes):
            l = neg_log2_q56((splitmix((keys[pos] + (s + 1) * 0x9e3779b97f4a7c15) & M64) >> 10) | 1)
            if best is None or best[0] * w > l * best[1]: best = (l, w, idx)
        out.append(best[2])
    return out
t = ring(seed, bes, 251, 4)
print('ring V=4:', [t.count(i) for i in range(5)], hex(fnv(t)))
t = rendezvous(seed, bes, 251)
print('rendezvous:', [t.count(i) for i in range(5)], hex(fnv(t)))
