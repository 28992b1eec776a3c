"""Deterministic cost: instructions per request under valgrind's callgrind.

Each side runs in single-process mode (-X) under `valgrind --tool=callgrind`.
After a warm-up on one keep-alive connection (caches, lazily built tables,
the first log lines), `callgrind_control -z` zeroes the counters, a fixed
number of requests follow on one keep-alive connection, and
`callgrind_control -d` dumps. Instructions of that dump divided by the
request count is a figure that repeats to a few instructions on a noisy
machine, so differences far below the noise of requests/s show.

Self cost per function comes from our own reading of the dump file (the
cost lines under fn= that do not follow a calls= line), so a function's
change is its own, not its callees'.
"""

import glob
import os
import re
import shutil
import socket
import subprocess
import time

from . import loadgen
from . import stats


class CallgrindError(Exception):
    pass


def available():
    for tool in ("valgrind", "callgrind_control"):
        if shutil.which(tool) is None:
            return False, "%s is not installed (apt-get install valgrind)" % tool
    return True, ""


def keepalive_requests(port, paths, n, timeout=120.0):
    """@n GETs of @paths in turn on one keep-alive connection; their status codes."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    codes = {}
    buf = b""
    try:
        for i in range(n):
            p = paths[i % len(paths)]
            s.sendall(("GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n" % p).encode())
            while True:
                end = buf.find(b"\r\n\r\n")
                if end >= 0:
                    head = buf[:end].decode("latin-1")
                    m = re.search(r"(?im)^content-length:\s*(\d+)", head)
                    clen = int(m.group(1)) if m else 0
                    if len(buf) >= end + 4 + clen:
                        code = int(head.split(" ", 2)[1])
                        codes[code] = codes.get(code, 0) + 1
                        buf = buf[end + 4 + clen:]
                        break
                chunk = s.recv(262144)
                if not chunk:
                    raise CallgrindError("server closed the connection after %d requests" % i)
                buf += chunk
    finally:
        s.close()
    return codes


def control(cmd, pid):
    p = subprocess.run(["callgrind_control", cmd, str(pid)], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=60)
    if p.returncode != 0 or "OK" not in p.stdout:
        raise CallgrindError("callgrind_control %s %d: %s" % (cmd, pid, p.stdout.strip()))


_NAME = re.compile(r"^\((\d+)\)(?: (.*))?$")


def parse_dump(path):
    """(total Ir, {function: self Ir}) of a callgrind dump (Ir the first event)."""
    names = {"fn": {}, "ob": {}}
    fn, ob = "?", "?"
    after_calls = False
    self_cost = {}
    total = None

    def name(kind, text):
        m = _NAME.match(text)
        if not m:
            return text
        table = names["fn" if kind in ("fn", "cfn") else "ob" if kind in ("ob", "cob") else kind]
        if m.group(2) is not None:
            table[m.group(1)] = m.group(2)
        return table.get(m.group(1), "?")

    names["fl"] = {}
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            c = line[0]
            if c.isdigit() or c in "+-*":
                if after_calls:
                    after_calls = False
                    continue
                parts = line.split()
                if len(parts) >= 2:
                    try:
                        v = int(parts[1])
                    except ValueError:
                        continue
                    key = "%s [%s]" % (fn, os.path.basename(ob))
                    self_cost[key] = self_cost.get(key, 0) + v
                continue
            k, _sep, rest = line.partition("=")
            if k == "fn":
                fn = name("fn", rest)
            elif k == "ob":
                ob = name("ob", rest)
            elif k in ("cfn", "cob"):
                name(k, rest)
            elif k in ("fl", "fi", "fe", "cfl", "cfi"):
                name("fl", rest)
            elif k == "calls":
                after_calls = True
            elif line.startswith("summary:") or line.startswith("totals:"):
                try:
                    total = int(line.split()[1])
                except (IndexError, ValueError):
                    pass
    if total is None:
        total = sum(self_cost.values())
    return total, self_cost


def measure(ws, side, paths, requests, warmup, outdir, tag):
    """One callgrind run of @side: {"instructions/req", "functions": {fn: Ir/req}, ...}."""
    pattern = os.path.join(outdir, "callgrind.%s.%%p" % tag)
    srv = ws.start(side, args=["-X"], wrapper=["valgrind", "--tool=callgrind",
                                               "--callgrind-out-file=" + pattern],
                   timeout=120)
    pid = srv.pid
    try:
        if warmup:
            keepalive_requests(srv.port, paths, warmup)
        control("-z", pid)
        t0 = time.monotonic()
        codes = keepalive_requests(srv.port, paths, requests)
        secs = time.monotonic() - t0
        control("-d", pid)
    finally:
        srv.stop()
    dumps = sorted(glob.glob(os.path.join(outdir, "callgrind.%s.%d.*" % (tag, pid))))
    if not dumps:
        raise CallgrindError("no callgrind dump for %s in %s" % (tag, outdir))
    total, funcs = parse_dump(dumps[0])
    return {"instructions/req": total / requests, "instructions": total, "requests": requests,
            "status_codes": codes, "seconds": secs, "dump": dumps[0],
            "functions": {k: v / requests for k, v in funcs.items()}}


def run(ws, sides, urls, requests=2000, warmup=200, rounds=3, outdir=None, progress=None):
    """Every side @rounds times (A B A B ...); the comparison of instructions/request."""
    outdir = outdir or ws.dir
    paths = loadgen.weighted_paths(urls)
    res = {"requests": requests, "warmup": warmup, "rounds": rounds, "sides": {},
           "functions": {}, "comparisons": {}}
    for rnd in range(rounds):
        for side in sides:
            if progress:
                progress.show("callgrind round %d side %s" % (rnd + 1, side.key))
            m = measure(ws, side, paths, requests, warmup, outdir, "%s%d" % (side.key, rnd))
            s = res["sides"].setdefault(side.key, {"instructions/req": [], "runs": []})
            s["instructions/req"].append(m["instructions/req"])
            s["runs"].append(m)
            if progress:
                progress.finished_run()
    base = sides[0].key
    for side in sides[1:]:
        a = res["sides"][base]["instructions/req"]
        b = res["sides"][side.key]["instructions/req"]
        res["comparisons"][side.key] = {"instructions/req": stats.compare(a, b,
                                                                          min_change=0.001)}
        fa = mean_functions(res["sides"][base]["runs"])
        fb = mean_functions(res["sides"][side.key]["runs"])
        rows = []
        for fn in set(fa) | set(fb):
            va, vb = fa.get(fn, 0.0), fb.get(fn, 0.0)
            if abs(vb - va) >= 0.05:
                rows.append({"function": fn, "base": va, "new": vb, "diff": vb - va})
        rows.sort(key=lambda r: -abs(r["diff"]))
        res["functions"][side.key] = rows[:40]
    # The per-function tables stay in the JSON; the runs keep only their totals.
    for s in res["sides"].values():
        for r in s["runs"]:
            r["functions"] = dict(sorted(r["functions"].items(), key=lambda kv: -kv[1])[:60])
    return res


def mean_functions(runs):
    acc = {}
    for r in runs:
        for k, v in r["functions"].items():
            acc[k] = acc.get(k, 0.0) + v
    return {k: v / len(runs) for k, v in acc.items()}
