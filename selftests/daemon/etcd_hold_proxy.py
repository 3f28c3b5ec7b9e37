#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""A TCP relay in front of etcd's client URL for the fleet tests.

Usage: etcd_hold_proxy.py HOLD_FILE UPSTREAM_ADDR LISTEN_ADDR (port 2379 both)

Every connection is relayed to UPSTREAM_ADDR:2379, except that while
HOLD_FILE exists a request to /v3/kv/txn is passed on to etcd and its answer
withheld: etcd commits the txn, the client hears nothing and times out. Each
txn held appends a line to HOLD_FILE.seen. maglevd's etcd client makes one
connection a request, so the first bytes of a connection are its request.
"""
import os
import socket
import sys
import threading
import time

HOLD, UP, ME = sys.argv[1], sys.argv[2], sys.argv[3]


def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
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


def serve(c):
    data = read_request(c)
    u = socket.create_connection((UP, 2379))
    u.sendall(data)
    if data.startswith(b"POST /v3/kv/txn ") and os.path.exists(HOLD):
        hold(c, u, data)
        return
    threading.Thread(target=pipe, args=(u, c), daemon=True).start()
    pipe(c, u)


def main():
    s = socket.create_server((ME, 2379), reuse_port=True)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()


main()
