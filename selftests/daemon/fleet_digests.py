#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The balancers' tables digests at fixed instants (daemon_fleet_settle.sh).

sample OUT STOP PERIOD_MS MAX_S SOCK...: every PERIOD_MS (until the file STOP
exists, MAX_S at most) connect to every control socket, then send each its
status request, then read the answers: the daemons answer within a
millisecond of each other, so a sample is what every balancer held at one
instant. One line a sample: "t_ms read_ms d1 d2 ..." ("-": no answer, e.g.
while a balancer restarts).

judge FILE GAP_MS GRACE_MS [FROM_MS [TO_MS]]: every sample taken in
[FROM_MS, TO_MS) must have one digest among the balancers that answer, but in
a change: a sample at most GAP_MS after the first one in which they differed
(a table swap in flight, an instant's processing; the tables' steps on a
balancer's own clock are apart for tens of ms). A balancer's answers count
again GRACE_MS after it was back (a restart reads etcd first). Prints the
figures; exit 1 if any sample failed.
"""
import json
import os
import socket
import sys
import time


def digest(raw):
    try:
        o = json.loads(raw)
    except ValueError:
        return "-"
    if isinstance(o.get("result"), dict):
        o = o["result"]
    return o.get("vips_digest") or "-"


def sample(out, stop, period_ms, max_s, socks):
    end = time.time() + max_s
    period = period_ms / 1000.0
    with open(out, "w") as f:
        while time.time() < end and not os.path.exists(stop):
            t0 = time.time()
            conns = []
            for p in socks:
                s = socket.socket(socket.AF_UNIX)
                s.settimeout(2)
                try:
                    s.connect(p)
                except OSError:
                    s.close()
                    s = None
                conns.append(s)
            ts = time.time()
            for s in conns:
                if s:
                    try:
                        s.sendall(b'{"cmd":"status"}\n')
                    except OSError:
                        pass
            ds = []
            for s in conns:
                if not s:
                    ds.append("-")
                    continue
                buf = b""
                try:
                    while not buf.endswith(b"\n"):
                        b = s.recv(65536)
                        if not b:
                            break
                        buf += b
                except OSError:
                    pass
                s.close()
                ds.append(digest(buf.decode(errors="replace")))
            f.write("%.1f %.1f %s\n" % (ts * 1000, (time.time() - ts) * 1000, " ".join(ds)))
            f.flush()
            left = t0 + period - time.time()
            if left > 0:
                time.sleep(left)


def judge(path, gap_ms, grace_ms, lo, hi):
    rows = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 4:
                rows.append((float(p[0]), p[2:]))
    n = len(rows[0][1]) if rows else 0
    gone = [False] * n  # not answering
    back = [float("-inf")] * n  # when it answered again
    first_diff = None
    total = compared = one = in_change = failed = 0
    width = 0.0
    seen = []
    full = 0  # samples that compared every balancer
    bad = []
    for t, ds in rows:
        for i in range(n):
            if ds[i] == "-":
                gone[i] = True
            elif gone[i]:
                gone[i] = False
                back[i] = t
        if t < lo or t >= hi:
            continue
        total += 1
        live = [ds[i] for i in range(n) if ds[i] != "-" and t - back[i] >= grace_ms]
        if len(live) < 2:
            continue
        compared += 1
        if len(live) == n:
            full += 1
            for d in live:
                if d not in seen:
                    seen.append(d)
        if len(set(live)) == 1:
            one += 1
            first_diff = None
            continue
        if first_diff is None:
            first_diff = t
        width = max(width, t - first_diff)
        if t - first_diff <= gap_ms:
            in_change += 1
        else:
            failed += 1
            if len(bad) < 3:
                bad.append("%.0f:%s" % (t, ",".join(d[:8] for d in ds)))
    print("samples %d, compared %d (all %d balancers in %d): one digest in %d, "
          "in a change (<= %d ms) %d, differing %d; longest difference %.0f ms; "
          "digests seen %d%s"
          % (total, compared, n, full, one, gap_ms, in_change, failed, width, len(seen),
             ("; first differing: " + " ".join(bad)) if bad else ""))
    return 1 if failed else 0


def main():
    if len(sys.argv) >= 6 and sys.argv[1] == "sample":
        sample(sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]), sys.argv[6:])
        return 0
    if len(sys.argv) >= 5 and sys.argv[1] == "judge":
        lo = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
        hi = float(sys.argv[6]) if len(sys.argv) > 6 else float("inf")
        return judge(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), lo, hi)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
