#!/usr/bin/env python3
"""perf/idle_memory.py: memory per idle keep-alive connection.

Against a server already running on 127.0.0.1:PORT, whose processes are the
session led by SID (start it with setsid, as perf/peers.sh does): sums the
PSS of every process of the session (/proc/<pid>/smaps_rollup), opens N
connections that each make one keep-alive request and then stay idle, sums
the PSS again, and prints the difference per connection. Then it checks that
a new client is still served at once, and that the idle connections are
still open. Standard library only; bounded in time (--deadline).

Usage: perf/idle_memory.py --port PORT --sid SID [--conns 10000] [--path /4k.bin]
       [--settle 2] [--deadline 120] [--json FILE]

Prints one line of key=value pairs (and the same as JSON with --json):
  conns, pss_before_kib, pss_after_kib, kib_per_conn, new_client_ms, closed,
  processes, threads
"""

import argparse
import json
import os
import resource
import selectors
import socket
import sys
import time


def session_pids(sid):
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # fields[0] is the state, [3] the session id
        if fields[0] != "Z" and int(fields[3]) == sid:
            pids.append(int(name))
    return sorted(pids)


def pss_kib(pids):
    total = 0
    for pid in pids:
        try:
            with open("/proc/%d/smaps_rollup" % pid) as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            pass
    return total


def threads(pids):
    n = 0
    for pid in pids:
        try:
            n += len(os.listdir("/proc/%d/task" % pid))
        except OSError:
            pass
    return n


def raise_nofile(need):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= need:
        return
    if hard != resource.RLIM_INFINITY and hard < need:
        sys.exit("idle_memory: RLIMIT_NOFILE hard limit %d is below the %d needed" % (hard, need))
    resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))


def request(path):
    return ("GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n" % path).encode()


def response_done(data):
    """True once @data holds one whole response with a Content-Length body."""
    end = data.find(b"\r\n\r\n")
    if end < 0:
        return False
    length = 0
    for line in data[:end].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    return len(data) >= end + 4 + length


def open_idle(port, n, path, deadline, batch=500):
    """Opens @n connections; each gets one response and stays open."""
    socks = []
    sel = selectors.DefaultSelector()
    req = request(path)
    for start in range(0, n, batch):
        group = []
        for _ in range(min(batch, n - start)):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.settimeout(max(1.0, deadline - time.monotonic()))
            s.connect(("127.0.0.1", port))
            s.sendall(req)
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ, bytearray())
            group.append(s)
        left = len(group)
        while left:
            if time.monotonic() > deadline:
                sys.exit("idle_memory: %d responses missing at the deadline" % left)
            for key, _ in sel.select(1.0):
                chunk = key.fileobj.recv(65536)
                if not chunk:
                    sys.exit("idle_memory: the server closed a connection before answering")
                key.data.extend(chunk)
                if response_done(key.data):
                    if not key.data.startswith(b"HTTP/1.1 200"):
                        sys.exit("idle_memory: %r" % bytes(key.data[:60]))
                    sel.unregister(key.fileobj)
                    left -= 1
        socks.extend(group)
    sel.close()
    return socks


def count_closed(socks):
    closed = 0
    for s in socks:
        try:
            if s.recv(1, socket.MSG_PEEK) == b"":
                closed += 1
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    return closed


def new_client_ms(port, path):
    t0 = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(request(path))
        data = bytearray()
        while not response_done(data):
            chunk = s.recv(65536)
            if not chunk:
                break
            data.extend(chunk)
    if not data.startswith(b"HTTP/1.1 200"):
        sys.exit("idle_memory: new client got %r" % bytes(data[:60]))
    return (time.monotonic() - t0) * 1000


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--sid", type=int, required=True, help="session id of the server")
    ap.add_argument("--conns", type=int, default=10000)
    ap.add_argument("--path", default="/4k.bin")
    ap.add_argument("--settle", type=float, default=2.0, help="seconds to wait before measuring")
    ap.add_argument("--deadline", type=float, default=120.0)
    ap.add_argument("--json")
    args = ap.parse_args()
    deadline = time.monotonic() + args.deadline
    raise_nofile(args.conns + 64)

    new_client_ms(args.port, args.path)        # the server's first request is not idle cost
    time.sleep(args.settle)
    before = pss_kib(session_pids(args.sid))
    socks = open_idle(args.port, args.conns, args.path, deadline)
    time.sleep(args.settle)
    pids = session_pids(args.sid)
    after = pss_kib(pids)
    ms = new_client_ms(args.port, args.path)
    closed = count_closed(socks)
    out = {
        "conns": args.conns,
        "pss_before_kib": before,
        "pss_after_kib": after,
        "kib_per_conn": round((after - before) / args.conns, 3),
        "new_client_ms": round(ms, 2),
        "closed": closed,
        "processes": len(pids),
        "threads": threads(pids),
    }
    for s in socks:
        s.close()
    print(" ".join("%s=%s" % kv for kv in out.items()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
    return 0 if closed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
