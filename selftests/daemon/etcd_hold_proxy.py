#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""A TCP relay in front of etcd's client URL for the fleet tests.

Usage: etcd_hold_proxy.py HOLD_FILE UPSTREAM_ADDR LISTEN_ADDR (port 2379 both)

Every connection is relayed to UPSTREAM_ADDR:2379, except that while
HOLD_FILE exists a request to one of the paths it lists (one a line; an empty
file: /v3/kv/txn) is passed on to etcd and its answer withheld: etcd commits
the txn, the client hears nothing and times out. Each request held appends a
line to HOLD_FILE.seen. And while HOLD_FILE.garble exists, the next watch
message that carries events reaches the client with its first byte replaced
by '#' (no longer JSON); the file is removed then, and the message appended
to HOLD_FILE.garbled. maglevd's etcd client makes one connection a request,
so the first bytes of a connection are its request.
"""
import os
import socket
import sys
import threading
import time

HOLD, UP, ME = sys.argv[1], sys.argv[2], sys.argv[3]


def garble(d):
    """d, with the first watch message carrying events garbled if asked."""
    i = d.find(b'{"result":')
    if i < 0 or b'"events"' not in d[i:] or not os.path.exists(HOLD + ".garble"):
        return d
    os.unlink(HOLD + ".garble")
    with open(HOLD + ".garbled", "ab") as f:
        f.write(d[i:] + b"\n")
    return d[:i] + b"#" + d[i + 1:]


def pipe(a, b, watch=False):
    """Relay a to b; a watch's answers (watch) may be garbled."""
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(garble(d) if watch else d)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def read_request(c):
    """The request's head and as much of its body as has come."""
    data = b""
    while b"\r\n\r\n" not in data:
        d = c.recv(65536)
        if not d:
            break
        data += d
    return data


def hold(c, u, data):
    head, _, body = data.partition(b"\r\n\r\n")
    want = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            want = int(line.split(b":")[1])
    while len(body) < want:
        d = c.recv(65536)
        if not d:
            break
        body += d
        u.sendall(d)
    u.recv(65536)  # etcd answered: the txn is done
    with open(HOLD + ".seen", "a") as f:
        f.write("held\n")
    time.sleep(8)
    c.close()
    u.close()


def held_paths():
    """The paths HOLD_FILE lists, or None when it does not exist."""
    try:
        with open(HOLD) as f:
            paths = [l.strip() for l in f if l.strip()]
    except OSError:
        return None
    return paths or ["/v3/kv/txn"]


def serve(c):
    data = read_request(c)
    u = socket.create_connection((UP, 2379))
    u.sendall(data)
    paths = held_paths()
    if paths and any(data.startswith(b"POST " + p.encode() + b" ") for p in paths):
        hold(c, u, data)
        return
    watch = data.startswith(b"POST /v3/watch ")
    threading.Thread(target=pipe, args=(u, c, watch), daemon=True).start()
    pipe(c, u)


def main():
    s = socket.create_server((ME, 2379), reuse_port=True)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()


main()
