#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Faults (issue 7): SIGKILL maglevd at a random moment while one client
# drives changes at it through maglevctl (vip add/del, backend add/del/weight/
# drain, single commands and "restore" batches, a quarter of them invalid and
# to be refused whole), restart it, and check each iteration against a model
# of the changes:
#  - the state file is complete and is the state after some prefix of the
#    changes: everything acknowledged more than the window docs/operations.md
#    ("After a crash") allows before the kill is in it, nothing refused ever
#    is; the file read over and over during the batch (what a crash at that
#    moment would leave) is never torn and always such a state;
#  - the restarted daemon loaded exactly that file, and the pinned maps, read
#    directly with bpf(2) and not through maglevd (VIP map, VIP cache, VIP
#    address filter, backend map, every table), equal it, also when the
#    datapath was ahead of the file at the kill. Every fifth iteration makes
#    that certain: the state writes are blocked (a directory where the
#    temporary file goes), so the file keeps the state before the batch while
#    the datapath takes all of it, and the filter is left one count short as a
#    kill between maglevd's VIP map write and its filter write leaves it;
#  - forwarding never stopped: a UDP stream to a VIP no change touches runs
#    through the whole loop, and every packet arrives, those sent while maglevd
#    was dead or restarting included, each flow on one backend.
# CRASH_SEED=N replays a run's kill delays and change generator (the seed is
# printed; how many changes land before a kill depends on timing),
# CRASH_ITERS=N sets the number of kills (default 20), CRASH_WINDOW_MS the
# window (default 1000, the bound docs/operations.md gives). The helpers
# (model, bpf(2) map reader, stream) are the Python after the end of this
# script.
. "$(dirname "$0")/lib.sh"

SEED=${CRASH_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
ITERS=${CRASH_ITERS:-20}
WINDOW_MS=${CRASH_WINDOW_MS:-1000}
HELPER=$TDIR/crash.py
sed -n "/^: <<'CRASH_PY'\$/,/^CRASH_PY\$/{//!p}" "$0" >"$HELPER"
echo "# seed $SEED (CRASH_SEED=$SEED replays the kill delays and change generator), $ITERS kills"

setup_net || skip_all "cannot create namespaces/veth"
write_conf
start_daemon || { nok "maglevd starts"; t_done; }
STABLE=192.0.2.10:5000/udp
ctl vip add $STABLE && for b in 198.51.100.1 198.51.100.2 198.51.100.3; do
	ctl backend add $STABLE $b >/dev/null
done && ctl vip add 192.0.2.20:80/tcp && ctl backend add 192.0.2.20:80/tcp 198.51.100.10 &&
	ctl backend add 192.0.2.20:80/tcp 198.51.100.11 --weight 2 ||
	{ nok "initial configuration"; t_done; }
dump() { python3 "$HELPER" dpdump --pin "$PIN"; }
sleep 0.2
dump >"$TDIR/dp-start.json"
sid=$(jq --arg v $STABLE '.vips[] | select(.vip == $v) | .id' "$STATE")
DIGEST=$(jq -r --arg i "$sid" '.tables[$i].digest' "$TDIR/dp-start.json")
check "stable VIP $STABLE has a live table" [ "$DIGEST" != null ]

# The stream: 8 flows, 200 packets/s, until the loop is over (at most 240 s).
clx python3 "$HELPER" stream --ifname c0 --src 203.0.113.2 --dst 192.0.2.10 --dport 5000 \
	--sports "$(seq -s, 46000 46007)" --rate 200 --max-seconds 240 --max-packets 48000 \
	--stop "$TDIR/stop" --out "$TDIR/stream.json" &
STREAM=$!
EXTRA_PIDS=$STREAM
sleep 1
: >"$TDIR/windows"
ctl -j save >"$TDIR/saved-0.json"
for it in $(seq "$ITERS"); do
	fault=$((it % 5 == 0 ? 1 : 0))
	[ $fault = 1 ] && mkdir "$STATE.tmp"
	python3 "$HELPER" batch --seed "$SEED" --iter "$it" --pid "$DPID" --ctl "$MAGLEVCTL" --state "$STATE" \
		--s0 "$TDIR/saved-$((it - 1)).json" --out "$TDIR/ops-$it.json"
	# Killed: gone, or a zombie until the wait below reaps it ("kill -0"
	# succeeds on a zombie, and a process under SIGKILL may take a moment).
	for _ in $(seq 50); do
		st=$(sed 's/.*) //' "/proc/$DPID/stat" 2>/dev/null | cut -d' ' -f1)
		[ -z "$st" ] || [ "$st" = Z ] && break
		sleep 0.1
	done
	if [ -n "$st" ] && [ "$st" != Z ]; then
		nok "iter $it: the change driver killed maglevd"
		kill9_daemon
		break
	fi
	wait "$DPID" 2>/dev/null
	DPID=
	cp "$STATE" "$TDIR/after-$it.json"
	check "iter $it: state file after SIGKILL at $(jq '.delay * 1000 | round' "$TDIR/ops-$it.json") ms is a complete state file" \
		jqt '.version == 1 and (.vips | type == "array")' "$TDIR/after-$it.json"
	dump >"$TDIR/dp-pre-$it.json"
	if [ $fault = 1 ]; then
		rmdir "$STATE.tmp"
		v=$(python3 "$HELPER" inject --pin "$PIN")
		[ -n "$v" ] && diag "iter $it: VIP address filter left one count short for $v"
	fi
	if ! start_daemon; then
		nok "iter $it: maglevd restarts from the state file"
		break
	fi
	echo "$(jq .t_kill "$TDIR/ops-$it.json") $EPOCHREALTIME" >>"$TDIR/windows"
	ctl -j save >"$TDIR/saved-$it.json"
	dump >"$TDIR/dp-post-$it.json"
	while IFS=$'\t' read -r verdict name; do
		case $verdict in
		ok) ok "$name" ;;
		"not ok") nok "$name" ;;
		*) echo "$verdict" ;;
		esac
	done < <(python3 "$HELPER" check --iter "$it" --fault $fault --window-ms "$WINDOW_MS" \
		--ops "$TDIR/ops-$it.json" --s0 "$TDIR/saved-$((it - 1)).json" \
		--after "$TDIR/after-$it.json" --saved "$TDIR/saved-$it.json" \
		--dp-pre "$TDIR/dp-pre-$it.json" --dp-post "$TDIR/dp-post-$it.json" \
		--summary "$TDIR/summary" --stable-digest "$DIGEST")
done
touch "$TDIR/stop"
wait $STREAM
EXTRA_PIDS=
jq -s '{iterations: length, changes: (map(.ops) | add), acked: (map(.acked) | add),
	acked_in_file: (map(.found) | add), refused: (map(.refused) | add),
	restores: (map(.restores) | add), datapath_ahead_at_kill: (map(select(.ahead)) | length),
	state_file_reads: (map(.reads) | add),
	oldest_missing_ms: (map(select(.fault == 0) | .age_ms) | max | round)}' "$TDIR/summary" |
	jq -r 'to_entries | map("\(.key) \(.value)") | "# figures: " + join(", ")'
tr=$(python3 "$HELPER" traffic --stream "$TDIR/stream.json" --windows "$TDIR/windows")
diag "stream: $(echo "$tr" | jq -c 'del(.flows)')"
check "stream ran through the loop and across every kill ($(echo "$tr" | jq .kills) kills)" \
	[ "$(echo "$tr" | jq ".sent > 1000 and .sent_down > 0 and .kills == $ITERS")" = true ]
check "no packet of the stable VIP's stream lost ($(echo "$tr" | jq -r '"\(.received)/\(.sent)"') received)" \
	[ "$(echo "$tr" | jq '.lost == 0 and .dups == 0')" = true ]
check "every packet sent while maglevd was dead or restarting arrived ($(echo "$tr" |
	jq -r '"\(.received_down)/\(.sent_down) in \(.down_s) s"'))" \
	[ "$(echo "$tr" | jq '.sent_down == .received_down')" = true ]
check "each of the 8 flows stayed on one backend" \
	[ "$(echo "$tr" | jq '.flows | length == 8 and all(.[]; length == 1)')" = true ]
stop_daemon
t_done
exit
# The helpers, which the sed at the top extracts (a quoted here-document:
# bash never runs it, bash -n and shellcheck skip it).
: <<'CRASH_PY'
#!/usr/bin/env python3
"""Helpers of daemon_crash.sh: the change driver with its model, the pinned
map reader, the per-iteration checks and the UDP stream."""
import copy
import ctypes
import hashlib
import json
import mmap
import os
import random
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

STABLE = "192.0.2.10:5000/udp"
STABLE_BES = ["198.51.100.1", "198.51.100.2", "198.51.100.3"]
CHURN = {
    "192.0.2.20:80/tcp": [],
    "192.0.2.21:53/udp": ["--encap", "gue", "--gue-port", "6080"],
    "192.0.2.22:443/tcp": [],
    "192.0.2.23:8080/udp": [],
}
POOL = ["198.51.100.%d" % i for i in range(10, 42)]
TRANSPORT = re.compile(r"not running|cannot connect|sending to maglevd|no answer from maglevd|"
                       r"reading from maglevd|garbled answer|closed the connection")
TABLE_SIZE = 65537
F_UP, F_DRAIN = 1, 2


# --- the model ------------------------------------------------------------------------

def norm(doc):
    """State file or dump JSON -> {vip: {encap, gue_port, backends: {addr: [w, drain]}}}."""
    out = {}
    for v in doc["vips"]:
        enc = v.get("encap", "ipip")
        out[v["vip"]] = {
            "encap": enc,
            "gue_port": v.get("gue_port") if enc == "gue" else None,
            "backends": {b["addr"]: [b.get("weight", 1), bool(b.get("drain", False))]
                         for b in v.get("backends", [])},
        }
    return out


def opt(t, name, default=None):
    return t[t.index(name) + 1] if name in t else default


def apply_line(st, t):
    """Apply one vip/backend command (tokens) to st in place; False if the daemon must refuse it."""
    obj, verb, v = t[0], t[1], t[2]
    if obj == "vip":
        if verb == "add":
            if v in st:
                return False
            enc = opt(t, "--encap", "ipip")
            st[v] = {"encap": enc, "gue_port": int(opt(t, "--gue-port")) if enc == "gue" else None,
                     "backends": {}}
        elif verb == "del":
            if v not in st:
                return False
            del st[v]
        return True
    b = t[3]
    if v not in st:
        return False
    bes = st[v]["backends"]
    if verb == "add":
        if b in bes:
            return False
        bes[b] = [int(opt(t, "--weight", 1)), False]
    elif verb == "del":
        if b not in bes:
            return False
        del bes[b]
    elif verb == "set":
        if b not in bes:
            return False
        if "--weight" in t:
            bes[b][0] = int(opt(t, "--weight"))
        if "--drain" in t:
            bes[b][1] = True
        if "--undrain" in t:
            bes[b][1] = False
    return True


def apply_op(st, op):
    """The state after op, or None if the daemon must refuse it (all or nothing)."""
    n = copy.deepcopy(st)
    if op["kind"] == "restore" and op["flush"]:
        n = {}
    for t in op["lines"]:
        if not apply_line(n, t):
            return None
    return n


def vip_add_line(v):
    return ["vip", "add", v] + CHURN.get(v, [])


def valid_line(rng, st):
    """A random change the daemon must accept, on a churn VIP."""
    have = [v for v in CHURN if v in st]
    if not have or rng.random() < 0.12:
        miss = [v for v in CHURN if v not in st]
        if miss and (not have or rng.random() < 0.6):
            return vip_add_line(rng.choice(miss))
        return ["vip", "del", rng.choice(have)]
    v = rng.choice(have)
    bes = st[v]["backends"]
    free = [b for b in POOL if b not in bes]
    r = rng.random()
    if not bes or (r < 0.35 and free):
        return ["backend", "add", v, rng.choice(free), "--weight", str(rng.randint(1, 4))]
    b = rng.choice(sorted(bes))
    if r < 0.55:
        return ["backend", "del", v, b]
    if r < 0.8:
        return ["backend", "set", v, b, "--weight", str(rng.choice([0, 1, 2, 3, 5]))]
    return ["backend", "set", v, b, "--undrain" if bes[b][1] else "--drain"]


def invalid_line(rng, st):
    """A change the daemon must refuse."""
    have = [v for v in CHURN if v in st]
    miss = [v for v in CHURN if v not in st]
    cands = [["vip", "add", STABLE], ["backend", "add", STABLE, STABLE_BES[0]],
             ["backend", "del", STABLE, "198.51.100.250"]]
    for v in have:
        bes = st[v]["backends"]
        cands.append(vip_add_line(v))
        cands.append(["backend", "del", v, "198.51.100.251"])
        cands.append(["backend", "set", v, "198.51.100.252", "--weight", "2"])
        if bes:
            cands.append(["backend", "add", v, sorted(bes)[0]])
    for v in miss:
        cands.append(["vip", "del", v])
        cands.append(["backend", "add", v, "198.51.100.99"])
    return rng.choice(cands)


def stable_lines():
    return [["vip", "add", STABLE]] + [["backend", "add", STABLE, b, "--weight", "1"]
                                       for b in STABLE_BES]


def gen_op(rng, st):
    r = rng.random()
    if r < 0.50:
        return {"kind": "cmd", "lines": [valid_line(rng, st)]}
    if r < 0.64:
        tmp, lines = copy.deepcopy(st), []
        for _ in range(rng.randint(2, 5)):
            t = valid_line(rng, tmp)
            apply_line(tmp, t)
            lines.append(t)
        return {"kind": "restore", "flush": False, "lines": lines}
    if r < 0.72:
        tmp, lines = {}, stable_lines()
        for v in CHURN:
            if rng.random() < 0.6:
                lines.append(vip_add_line(v))
                for b in rng.sample(POOL, rng.randint(0, 5)):
                    lines.append(["backend", "add", v, b, "--weight", str(rng.randint(0, 4))])
        return {"kind": "restore", "flush": True, "lines": lines}
    if r < 0.86:
        return {"kind": "cmd", "lines": [invalid_line(rng, st)]}
    # A batch whose first lines are valid and change something, then a bad
    # one: the daemon must apply none of it.
    flush = rng.random() < 0.4
    tmp = {} if flush else copy.deepcopy(st)
    lines = stable_lines() if flush else []
    for t in lines:
        apply_line(tmp, t)
    for _ in range(rng.randint(1, 4)):
        t = valid_line(rng, tmp)
        apply_line(tmp, t)
        lines.append(t)
    lines.append(invalid_line(rng, tmp))
    return {"kind": "restore", "flush": flush, "lines": lines}


def run_op(ctl, op, path):
    if op["kind"] == "cmd":
        argv = [ctl] + op["lines"][0]
    else:
        with open(path, "w") as f:
            f.write("# daemon_crash.sh batch\n")
            for t in op["lines"]:
                f.write(" ".join(t) + "\n")
        argv = [ctl, "restore"] + ([] if op["flush"] else ["--no-flush"]) + [path]
    t0 = time.time()
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    t1 = time.time()
    msg = p.stderr.strip()
    # maglevctl(8) EXIT STATUS: 3 no daemon (nothing sent), 4 sent but no
    # answer. Both are what a kill causes; the model treats them alike.
    if p.returncode == 0:
        res = "acked"
    elif p.returncode in (3, 4) and TRANSPORT.search(msg):
        res = "unknown"
    elif p.returncode == 1:
        res = "rejected"
    else:
        res = "usage"
    return {"t0": t0, "t1": t1, "result": res, "msg": msg}


def cmd_batch(a):
    """Run changes from one client while the daemon gets SIGKILL at a random delay."""
    rng = random.Random("%s-%s" % (a.seed, a.iter))
    with open(a.s0) as f:
        st = norm(json.load(f))
    delay = rng.uniform(a.min_delay, a.max_delay)
    killed = {}

    def kill():
        killed["t"] = time.time()
        os.kill(a.pid, signal.SIGKILL)

    # What a crash at any moment would leave: the file, read over and over
    # while the changes go on.
    seen, torn = {}, [0, 0]

    def sample():
        while "t" not in killed:
            try:
                with open(a.state) as f:
                    text = f.read()
                torn[0] += 1
                seen.setdefault(json.dumps(norm(json.loads(text)), sort_keys=True), 0)
            except (ValueError, KeyError, TypeError, OSError) as e:
                torn[1] += 1
                torn.append("%s: %r" % (e, text[:80]))
            time.sleep(0.002)

    sampler = threading.Thread(target=sample)
    sampler.start()
    ops = []
    timer = threading.Timer(delay, kill)
    t_start = time.time()
    timer.start()
    n = 0
    while "t" not in killed and n < a.max_ops:
        op = gen_op(rng, st)
        op["expect"] = apply_op(st, op) is not None
        op.update(run_op(a.ctl, op, "%s.restore-%d" % (a.out, n)))
        if op["expect"] and op["result"] == "acked":
            st = apply_op(st, op)
        elif op["expect"] and op["result"] == "unknown":
            st = apply_op(st, op)  # the model goes on as if; only the last op can be in flight
        ops.append(op)
        n += 1
    timer.join()
    sampler.join()
    json.dump({"delay": delay, "t_start": t_start, "t_kill": killed["t"], "ops": ops,
               "reads": torn[0] + torn[1], "torn": torn[1], "torn_what": torn[2:7],
               "read_states": sorted(seen)}, open(a.out, "w"))


# --- pinned maps ------------------------------------------------------------------------

libc = ctypes.CDLL(None, use_errno=True)
SYS_BPF = 321
BPF_MAP_LOOKUP_ELEM, BPF_MAP_UPDATE_ELEM, BPF_MAP_GET_NEXT_KEY, BPF_OBJ_GET = 1, 2, 4, 7
BPF_MAP_GET_FD_BY_ID, BPF_MAP_LOOKUP_BATCH = 14, 24


def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(attr, 128)
    r = libc.syscall(SYS_BPF, cmd, buf, 128)
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r, buf


def obj_get(path):
    p = ctypes.create_string_buffer(path.encode())
    return bpf(BPF_OBJ_GET, struct.pack("QII", ctypes.addressof(p), 0, 0))[0]


def lookup(fd, key, vsize):
    k = ctypes.create_string_buffer(key, len(key))
    v = ctypes.create_string_buffer(vsize)
    try:
        bpf(BPF_MAP_LOOKUP_ELEM, struct.pack("IIQQQ", fd, 0, ctypes.addressof(k),
                                             ctypes.addressof(v), 0))
    except OSError:
        return None
    return v.raw


def update(fd, key, val):
    k = ctypes.create_string_buffer(key, len(key))
    v = ctypes.create_string_buffer(val, len(val))
    bpf(BPF_MAP_UPDATE_ELEM, struct.pack("IIQQQ", fd, 0, ctypes.addressof(k),
                                         ctypes.addressof(v), 0))


def hash_items(fd, ksize, vsize):
    out, prev = [], None
    nxt = ctypes.create_string_buffer(ksize)
    while True:
        if prev is None:
            pk = 0
        else:
            pb = ctypes.create_string_buffer(prev, ksize)
            pk = ctypes.addressof(pb)
        try:
            bpf(BPF_MAP_GET_NEXT_KEY, struct.pack("IIQQ", fd, 0, pk, ctypes.addressof(nxt)))
        except OSError:
            return out
        prev = nxt.raw
        v = lookup(fd, prev, vsize)
        if v is not None:
            out.append((prev, v))


def array_values(fd, n, vsize):
    """All values of an n-entry array map (one batch call, or one lookup each)."""
    keys = ctypes.create_string_buffer(4 * n)
    vals = ctypes.create_string_buffer(vsize * n)
    outb = ctypes.create_string_buffer(4)
    attr = struct.pack("QQQQIIQQ", 0, ctypes.addressof(outb), ctypes.addressof(keys),
                       ctypes.addressof(vals), n, fd, 0, 0)
    buf = ctypes.create_string_buffer(attr, 128)
    r = libc.syscall(SYS_BPF, BPF_MAP_LOOKUP_BATCH, buf, 128)
    got = struct.unpack_from("I", buf.raw, 32)[0]
    if (r == 0 or ctypes.get_errno() == 2) and got == n:
        raw = vals.raw
        return [raw[i * vsize:(i + 1) * vsize] for i in range(n)]
    return [lookup(fd, struct.pack("I", i), vsize) for i in range(n)]


def fmt_vip(k):
    a = k[0:16]
    port = struct.unpack("!H", k[16:18])[0]
    proto = {6: "tcp", 17: "udp"}.get(k[18], str(k[18]))
    if k[19] == 2:
        addr = socket.inet_ntop(socket.AF_INET, a[:4])
    else:
        addr = "[%s]" % socket.inet_ntop(socket.AF_INET6, a)
    return "%s:%s/%s" % (addr, port if port else "*", proto)


def fmt_addr(a, fam):
    if fam == 2:
        return socket.inet_ntop(socket.AF_INET, a[:4])
    return socket.inet_ntop(socket.AF_INET6, a)


def filter_slot(k):
    w = struct.unpack("4I", k[0:16])
    x = w[0] ^ w[1] ^ w[2] ^ w[3] ^ k[19]
    return ((x * 0x9E3779B1) & 0xFFFFFFFF) >> 16


def dpdump(pin):
    """What the datapath holds, read from the pinned maps (not through maglevd)."""
    out = {"vips": {}, "vaddrs_want": {}, "vaddrs": {}, "backends": {}, "tables": {},
           "cache": {}}
    fd = obj_get(pin + "/maglev_vips")
    for k, v in hash_items(fd, 20, 8):
        vid, enc, _, gp = struct.unpack("IBBH", v)
        out["vips"][fmt_vip(k)] = {"id": vid, "encap": "gue" if enc == 1 else "ipip",
                                   "gue_port": socket.ntohs(gp) if enc == 1 else None}
        slot = filter_slot(k)
        c = out["vaddrs_want"].setdefault(str(slot), [0, 0, 0, 0])
        port = struct.unpack("!H", k[16:18])[0]
        c[(0 if k[18] == 6 else 1) + (0 if port else 2)] += 1
    os.close(fd)
    fd = obj_get(pin + "/maglev_vipcache")
    for v in array_values(fd, 4096, 32):
        if struct.unpack_from("I", v, 28)[0]:
            vid, enc, _, gp = struct.unpack_from("IBBH", v, 20)
            out["cache"][fmt_vip(v[:20])] = {"id": vid, "encap": "gue" if enc == 1 else "ipip",
                                             "gue_port": socket.ntohs(gp) if enc == 1 else None}
    os.close(fd)
    fd = obj_get(pin + "/maglev_vaddrs")
    for i, v in enumerate(array_values(fd, 65536, 8)):
        t = list(struct.unpack("HHBBH", v)[:4])
        if any(t):
            out["vaddrs"][str(i)] = t
    os.close(fd)
    fd = obj_get(pin + "/maglev_backends")
    for i, v in enumerate(array_values(fd, 65536, 24)):
        fam, flags, _, gen = struct.unpack_from("BBHI", v, 16)
        if flags:
            out["backends"][str(i)] = {"addr": fmt_addr(v[:16], fam), "flags": flags, "gen": gen}
    os.close(fd)
    outer = obj_get(pin + "/maglev_tables")
    size = (TABLE_SIZE * 4 + mmap.PAGESIZE - 1) // mmap.PAGESIZE * mmap.PAGESIZE
    for vid in range(512):
        v = lookup(outer, struct.pack("I", vid), 4)
        if v is None:
            continue
        mid = struct.unpack("I", v)[0]
        ifd = bpf(BPF_MAP_GET_FD_BY_ID, struct.pack("III", mid, 0, 0))[0]
        m = mmap.mmap(ifd, size, mmap.MAP_SHARED, mmap.PROT_READ)
        raw = m[:TABLE_SIZE * 4]
        m.close()
        os.close(ifd)
        counts = {}
        for x in struct.unpack("%dI" % TABLE_SIZE, raw):
            counts[x] = counts.get(x, 0) + 1
        out["tables"][str(vid)] = {"slots": {str(k): c for k, c in counts.items()},
                                   "digest": hashlib.sha1(raw).hexdigest()}
    os.close(outer)
    return out


def cmd_inject(a):
    """Leave the VIP address filter one count short for a VIP other than the
    stable one, as a kill between maglevd's VIP map write and its filter write
    does; print that VIP."""
    fd = obj_get(a.pin + "/maglev_vips")
    keys = [k for k, _ in hash_items(fd, 20, 8)]
    os.close(fd)
    avoid = [filter_slot(k) for k in keys if fmt_vip(k) == STABLE]
    keys = [k for k in keys if filter_slot(k) not in avoid]
    if not keys:
        return
    k = keys[0]
    slot = struct.pack("I", filter_slot(k))
    fd = obj_get(a.pin + "/maglev_vaddrs")
    c = list(struct.unpack("HHBBH", lookup(fd, slot, 8)))
    port = struct.unpack("!H", k[16:18])[0]
    c[(0 if k[18] == 6 else 1) + (0 if port else 2)] -= 1
    update(fd, slot, struct.pack("HHBBH", *c))
    os.close(fd)
    print(fmt_vip(k))


def cmd_dpdump(a):
    json.dump(dpdump(a.pin), sys.stdout)


# --- checks -----------------------------------------------------------------------------

def dp_disagreements(state_doc, dp):
    """Where the datapath differs from the state file (empty list: they agree)."""
    bad = []
    want_vips = {v["vip"]: v for v in state_doc["vips"]}
    if set(dp["vips"]) != set(want_vips):
        bad.append("VIP map %s, state %s" % (sorted(dp["vips"]), sorted(want_vips)))
    if dp["vaddrs"] != dp["vaddrs_want"]:
        bad.append("VIP address filter %s, VIP map says %s" % (dp["vaddrs"], dp["vaddrs_want"]))
    for name, c in dp["cache"].items():
        if dp["vips"].get(name) != c:
            bad.append("VIP cache holds %s -> %s, VIP map %s" % (name, c, dp["vips"].get(name)))
    want_be, want_tables = {}, {}
    for name, v in want_vips.items():
        d = dp["vips"].get(name)
        enc = v.get("encap", "ipip")
        if d and (d["id"] != v["id"] or d["encap"] != enc or
                  (enc == "gue" and d["gue_port"] != v.get("gue_port"))):
            bad.append("VIP %s: datapath %s, state id %s encap %s" % (name, d, v["id"], enc))
        up = {}
        for b in v["backends"]:
            f = F_DRAIN if b["drain"] or not b["weight"] else F_UP
            want_be[str(b["idx"])] = {"addr": b["addr"], "flags": f, "gen": b["gen"]}
            if f == F_UP:
                up[str(b["idx"])] = b["weight"]
        want_tables[str(v["id"])] = (name, up)
    for i in sorted(set(want_be) | set(dp["backends"]), key=int):
        if want_be.get(i) != dp["backends"].get(i):
            bad.append("backend index %s: datapath %s, state %s" %
                       (i, dp["backends"].get(i), want_be.get(i)))
    if set(dp["tables"]) != set(want_tables):
        bad.append("tables for VIP ids %s, state has ids %s" %
                   (sorted(dp["tables"], key=int), sorted(want_tables, key=int)))
    for vid, (name, up) in want_tables.items():
        t = dp["tables"].get(vid)
        if not t:
            continue
        slots = {k: c for k, c in t["slots"].items() if k != "0" or not up}
        if not up:
            if set(slots) != {"0"}:
                bad.append("VIP %s: no backend takes new flows, table names %s" %
                           (name, sorted(slots)))
            continue
        if set(slots) != set(up):
            bad.append("VIP %s: table names indices %s, state's usable backends %s" %
                       (name, sorted(slots, key=int), sorted(up, key=int)))
            continue
        tw = sum(up.values())
        for i, w in up.items():
            ideal = TABLE_SIZE * w / tw
            if abs(slots[i] - ideal) > max(0.03 * ideal, 16):
                bad.append("VIP %s: backend index %s has %d slots, weight %d of %d gives %.0f" %
                           (name, i, slots[i], w, tw, ideal))
    return bad


def cmd_check(a):
    """One iteration's verdicts as 'ok|not ok<TAB>name' lines and '#' diagnostics."""
    log = json.load(open(a.ops))
    it = a.iter
    res = []

    def verdict(good, name, diags=()):
        print("%s\t%s" % ("ok" if good else "not ok", name))
        if not good:
            for d in list(diags)[:12]:
                print("# " + d)
        res.append(good)

    with open(a.s0) as f:
        s = [norm(json.load(f))]
    ops, t_kill, w = log["ops"], log["t_kill"], a.window_ms / 1000.0
    odd = ["op %d (%s): expected %s, got %s: %s" % (i, op["kind"], "ok" if op["expect"] else
                                                      "refusal", op["result"], op["msg"])
           for i, op in enumerate(ops)
           if op["result"] == "usage" or (op["result"] == "acked" and not op["expect"]) or
           (op["result"] == "rejected" and op["expect"])]
    for op in ops:
        n = apply_op(s[-1], op) if op["expect"] else None
        s.append(n if n is not None else s[-1])
    acked = [i for i, op in enumerate(ops) if op["result"] == "acked" and op["expect"]]
    refused = sum(op["result"] == "rejected" for op in ops)
    verdict(not odd, "iter %d: maglevd answered each of %d changes as the model predicts "
            "(%d acknowledged, %d refused, %d in flight at the kill)" %
            (it, len(ops), len(acked), refused, sum(op["result"] == "unknown" for op in ops)), odd)

    try:
        doc = json.load(open(a.after))
        file_ok = doc.get("version") == 1 and isinstance(doc.get("vips"), list)
        got = norm(doc)
        if not file_ok:
            raise ValueError("not a version 1 state file")
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        got, doc = None, None
        print("# state file after the kill: %s" % e)
    # Which prefix of the changes the file holds.
    match = [j for j in range(len(s)) if got is not None and s[j] == got]
    if a.fault:
        need, why = 0, "state writes blocked: the file keeps the state before the batch"
        good = 0 in match
    else:
        old = [i for i in acked if ops[i]["t1"] <= t_kill - w]
        need = old[-1] + 1 if old else 0
        good = bool(match) and max(match) >= need
        why = "holds every change acknowledged more than %d ms before the kill" % a.window_ms
    found = (0 if a.fault else max(match)) if match else -1
    missing = [i for i in acked if i >= found] if match else acked
    age = max([(t_kill - ops[i]["t1"]) * 1000 for i in missing], default=0)
    diags = ["no prefix of the changes gives the file's state" if not match else
             "file = state after change %d, needed >= %d" % (found, need),
             "missing acknowledged changes: %s (oldest acknowledged %.1f ms before the kill)" %
             (missing, age)]
    if not match and got is not None:
        diags.append("file: %s" % json.dumps(got, sort_keys=True))
        diags.append("expected (after change %d): %s" % (need, json.dumps(s[need], sort_keys=True)))
    print("# iter %d: %d of %d acknowledged changes in the file%s" %
          (it, len([i for i in acked if i < found]), len(acked),
           "; the oldest one missing was acknowledged %.1f ms before the kill" % max(age, 0)
           if missing else ""))
    verdict(good, "iter %d: state file is an acknowledged state (%s; %d of %d acknowledged "
            "changes in it)" % (it, why, len([i for i in acked if i < found]), len(acked)), diags)
    # Every state the file held while the changes went on (what a crash at
    # that moment would have left) was complete and a prefix state.
    strays = [r for r in log["read_states"] if json.loads(r) not in (s[:1] if a.fault else s)]
    verdict(not log["torn"] and not strays,
            "iter %d: the state file read %d times during the batch: always complete, always "
            "an acknowledged state (%d distinct)" % (it, log["reads"], len(log["read_states"])),
            ["%d torn reads: %s" % (log["torn"], log["torn_what"])] +
            ["not a prefix state: %s" % r for r in strays])
    # The restarted daemon serves exactly the file, and the datapath equals it.
    saved = norm(json.load(open(a.saved)))
    verdict(got is not None and saved == got,
            "iter %d: restarted maglevd loaded exactly the state file" % it,
            ["daemon: %s" % json.dumps(saved, sort_keys=True)])
    pre, post = json.load(open(a.dp_pre)), json.load(open(a.dp_post))
    bad = dp_disagreements(doc, post) if doc else ["no state file"]
    ahead = bool(doc) and bool(dp_disagreements(doc, pre))
    verdict(not bad, "iter %d: pinned maps (VIPs, VIP cache, address filter, backends, tables) equal the state file "
            "after the restart (datapath was %s it at the kill)" %
            (it, "ahead of" if ahead else "equal to"), bad)
    sid = [str(v["id"]) for v in (doc or {}).get("vips", []) if v["vip"] == STABLE]
    live = post["tables"].get(sid[0]) if sid else None
    verdict(live is not None and live["digest"] == a.stable_digest,
            "iter %d: the stable VIP's live table is the one it had before the loop" % it)
    summary = {"acked": len(acked), "found": len([i for i in acked if i < found]),
               "refused": refused, "ahead": ahead, "age_ms": age, "ops": len(ops),
               "restores": sum(op["kind"] == "restore" for op in ops), "fault": a.fault,
               "reads": log["reads"]}
    with open(a.summary, "a") as f:
        f.write(json.dumps(summary) + "\n")
    sys.exit(0 if all(res) else 1)


# --- traffic --------------------------------------------------------------------------

def cmd_stream(a):
    """UDP flows to the stable VIP at a fixed rate until the stop file appears;
    every encapsulated packet seen coming back is matched by sequence number."""
    sports = [int(p) for p in a.sports.split(",")]
    cap = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    cap.bind((a.ifname, 0))
    cap.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 23)
    socks = []
    for p in sports:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((a.src, p))
        socks.append(s)
    t_send, recv, dups, flows = [], set(), 0, {}
    done = threading.Event()
    vip = socket.inet_aton(a.dst)

    def sender():
        t_end = time.time() + a.max_seconds
        nxt = time.time()
        seq = 0
        while not os.path.exists(a.stop) and time.time() < t_end and seq < a.max_packets:
            s = socks[seq % len(socks)]
            t_send.append(time.time())
            s.sendto(b"MGCR" + struct.pack("!I", seq), (a.dst, a.dport))
            seq += 1
            nxt += 1.0 / a.rate
            d = nxt - time.time()
            if d > 0:
                time.sleep(d)
        done.set()

    th = threading.Thread(target=sender)
    th.start()
    linger_end = None
    while True:
        if done.is_set() and linger_end is None:
            linger_end = time.time() + 1.0
        if linger_end is not None and time.time() > linger_end:
            break
        r, _, _ = select.select([cap], [], [], 0.1)
        if not r:
            continue
        frame, addr = cap.recvfrom(65535)
        if addr[2] == socket.PACKET_OUTGOING or len(frame) < 14 + 20 + 20 + 8 + 8:
            continue
        if frame[12:14] != b"\x08\x00" or frame[14 + 9] != 4:
            continue
        ihl = (frame[14] & 15) * 4
        inner = frame[14 + ihl:]
        if inner[9] != 17 or inner[16:20] != vip:
            continue
        iihl = (inner[0] & 15) * 4
        sport = struct.unpack("!H", inner[iihl:iihl + 2])[0]
        pl = inner[iihl + 8:iihl + 16]
        if pl[:4] != b"MGCR":
            continue
        seq = struct.unpack("!I", pl[4:8])[0]
        if seq in recv:
            dups += 1
        recv.add(seq)
        be = socket.inet_ntoa(frame[14 + 16:14 + 20])
        f = flows.setdefault(str(sport), {})
        f[be] = f.get(be, 0) + 1
    th.join()
    json.dump({"t_send": t_send, "recv": sorted(recv), "dups": dups, "flows": flows},
              open(a.out, "w"))


def cmd_traffic(a):
    """Totals of the stream: all, and those sent while maglevd was dead or restarting."""
    r = json.load(open(a.stream))
    wins = [tuple(map(float, l.split())) for l in open(a.windows) if l.strip()]
    recv = set(r["recv"])
    sent = len(r["t_send"])
    lost = [i for i in range(sent) if i not in recv]
    in_win = [i for i, t in enumerate(r["t_send"]) if any(k <= t <= u for k, u in wins)]
    lost_win = [i for i in in_win if i not in recv]
    down = sum(u - k for k, u in wins)
    print(json.dumps({"sent": sent, "received": sent - len(lost), "lost": len(lost),
                      "dups": r["dups"], "sent_down": len(in_win),
                      "received_down": len(in_win) - len(lost_win), "down_s": round(down, 2),
                      "kills": len(wins), "flows": r["flows"],
                      "first_lost": lost[:10]}))


def main():
    import argparse
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("batch")
    b.add_argument("--seed", required=True)
    b.add_argument("--iter", type=int, required=True)
    b.add_argument("--pid", type=int, required=True)
    b.add_argument("--s0", required=True)
    b.add_argument("--out", required=True)
    b.add_argument("--state", required=True)
    b.add_argument("--ctl", required=True)
    b.add_argument("--min-delay", type=float, default=0.02)
    b.add_argument("--max-delay", type=float, default=0.4)
    b.add_argument("--max-ops", type=int, default=400)
    for name in ("dpdump", "inject"):
        d = sub.add_parser(name)
        d.add_argument("--pin", required=True)
    c = sub.add_parser("check")
    for k in ("ops", "s0", "after", "saved", "dp-pre", "dp-post", "summary", "stable-digest"):
        c.add_argument("--" + k, required=True)
    c.add_argument("--iter", type=int, required=True)
    c.add_argument("--window-ms", type=int, required=True)
    c.add_argument("--fault", type=int, default=0)
    s = sub.add_parser("stream")
    for k in ("ifname", "src", "dst", "sports", "stop", "out"):
        s.add_argument("--" + k, required=True)
    s.add_argument("--dport", type=int, required=True)
    s.add_argument("--rate", type=float, default=200)
    s.add_argument("--max-seconds", type=float, default=200)
    s.add_argument("--max-packets", type=int, default=50000)
    t = sub.add_parser("traffic")
    t.add_argument("--stream", required=True)
    t.add_argument("--windows", required=True)
    a = ap.parse_args()
    {"batch": cmd_batch, "dpdump": cmd_dpdump, "inject": cmd_inject, "check": cmd_check, "stream": cmd_stream,
     "traffic": cmd_traffic}[a.cmd](a)


if __name__ == "__main__":
    main()
CRASH_PY
