#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Lose a balancer's connection table, as a crash of the host's memory would:
zero the pinned maglev_conns map (an mmap-able array of buckets, see
include/maglev_conn.h) under the running program. Prints how many flows it
held. Usage: conn_flush.py PIN_DIR/maglev_conns"""
import ctypes
import mmap
import os
import sys

BPF_OBJ_GET = 7
BPF_OBJ_GET_INFO_BY_FD = 15
NR_BPF = 321  # x86_64
WAYS = 4      # MAGLEV_CONN_WAYS: the bucket starts with WAYS u32 tags, 0 = empty

libc = ctypes.CDLL(None, use_errno=True)


class ObjGet(ctypes.Structure):
    _fields_ = [("pathname", ctypes.c_uint64), ("bpf_fd", ctypes.c_uint32),
                ("file_flags", ctypes.c_uint32)]


class InfoByFd(ctypes.Structure):
    _fields_ = [("bpf_fd", ctypes.c_uint32), ("info_len", ctypes.c_uint32),
                ("info", ctypes.c_uint64)]


def bpf(cmd, attr):
    r = libc.syscall(NR_BPF, cmd, ctypes.byref(attr), ctypes.sizeof(attr))
    if r < 0:
        e = ctypes.get_errno()
        sys.exit(f"conn_flush: bpf({cmd}) on {sys.argv[1]}: {os.strerror(e)}")
    return r


path = ctypes.create_string_buffer(sys.argv[1].encode())
fd = bpf(BPF_OBJ_GET, ObjGet(ctypes.addressof(path), 0, 0))
info = (ctypes.c_uint32 * 64)()
bpf(BPF_OBJ_GET_INFO_BY_FD, InfoByFd(fd, ctypes.sizeof(info), ctypes.addressof(info)))
value_size, max_entries = info[3], info[4]  # type, id, key_size, value_size, max_entries
length = value_size * max_entries
page = mmap.PAGESIZE
m = mmap.mmap(fd, (length + page - 1) // page * page, mmap.MAP_SHARED,
              mmap.PROT_READ | mmap.PROT_WRITE)
words = memoryview(m).cast("I")
step = value_size // 4
flows = sum(1 for b in range(0, max_entries * step, step) for w in range(WAYS) if words[b + w])
for b in range(0, max_entries * step, step):
    for w in range(WAYS):
        words[b + w] = 0
words.release()
m.close()
print(flows)
