#!/usr/bin/env python3
"""perf/hostile.py: does a normal client get through idle, slow and hostile ones?

Starts build/httpd on the shipped conf/httpd.conf (the MPM of --mpm, on a
free loopback port, access log on) and, one after another:

  slowloris   slowhttptest -H: --conns connections that send their head a
              few bytes at a time and never finish it;
  slowread    slowhttptest -X: --conns connections that ask for a page and
              read the answer a few bytes at a time through a tiny window;
  idle        --idle connections that each make one keep-alive request and
              then stay idle (KeepAliveTimeout ends them).

During each attack (and for --recover seconds after it) a normal client asks
for /index.html every 100 ms on a new connection, with a 3 s limit. Prints,
per phase: how many of its requests were answered, the p50, p99 and max
latency, the failures, and how many connections the attack held at its peak.

Needs slowhttptest (Debian's package; ./setup.sh installs it). Every phase is
bounded (--seconds). Exit status 0 when every probe of every phase was
answered, 1 otherwise, 2 when it could not run.

Usage: perf/hostile.py [--mpm event] [--conns 1000] [--idle 19000] [--seconds 60]
                       [--phases slowloris,slowread,idle] [--json FILE]
"""

import argparse
import json
import os
import resource
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import soak  # noqa: E402  (server start-up and config writing)


class Prober(threading.Thread):
    """A normal client: one request every 100 ms on a fresh connection."""

    def __init__(self, port, path="/index.html", every=0.1, limit=3.0):
        super().__init__(daemon=True)
        self.port, self.path, self.every, self.limit = port, path, every, limit
        self.stop_at = None
        self.lat = []
        self.failures = []
        self.halt = threading.Event()

    def one(self):
        t0 = time.monotonic()
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=self.limit) as s:
                s.settimeout(self.limit)
                s.sendall(("GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
                           % self.path).encode())
                data = b""
                while True:
                    left = self.limit - (time.monotonic() - t0)
                    if left <= 0:
                        raise socket.timeout("no full answer in %.0f s" % self.limit)
                    s.settimeout(left)
                    b = s.recv(65536)
                    if not b:
                        break
                    data += b
            if not data.startswith(b"HTTP/1.1 200"):
                raise OSError("answer %r" % data[:40])
            self.lat.append(time.monotonic() - t0)
        except OSError as e:
            self.failures.append("%s" % e)

    def run(self):
        while not self.halt.is_set():
            t0 = time.monotonic()
            self.one()
            time.sleep(max(0.0, self.every - (time.monotonic() - t0)))

    def summary(self):
        lat = sorted(self.lat)
        n = len(lat) + len(self.failures)

        def pct(p):
            return lat[min(len(lat) - 1, int(p * len(lat)))] * 1000 if lat else float("nan")
        return {"probes": n, "answered": len(lat), "failed": len(self.failures),
                "p50_ms": round(pct(0.50), 1), "p99_ms": round(pct(0.99), 1),
                "max_ms": round(lat[-1] * 1000, 1) if lat else None,
                "failures": sorted(set(self.failures))[:5]}


def server_conns(port):
    """Established TCP connections to our port (from /proc/net/tcp*)."""
    n = 0
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as f:
                next(f)
                for line in f:
                    parts = line.split()
                    local, state = parts[1], parts[3]
                    if state == "01" and int(local.rsplit(":", 1)[1], 16) == port:
                        n += 1
        except OSError:
            pass
    return n


def run_phase(name, port, seconds, recover, attack, args):
    prober = Prober(port)
    peak = 0
    proc = attack()
    prober.start()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.5)
        peak = max(peak, server_conns(port))
        if isinstance(proc, subprocess.Popen) and proc.poll() is not None:
            break
    during = prober.summary()
    if isinstance(proc, subprocess.Popen):
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    elif proc is not None:
        proc()  # closes the idle connections
    # recovery: new probes only
    prober.lat, prober.failures = [], []
    time.sleep(recover)
    after = prober.summary()
    prober.halt.set()
    prober.join(5)
    return {"phase": name, "peak_conns": peak, "during": during, "after": after}


def slowhttptest(args, port, mode):
    if mode == "slowloris":
        extra = ["-H", "-i", "5", "-x", "16", "-u", "http://127.0.0.1:%d/" % port]
    else:
        extra = ["-X", "-w", "16", "-y", "32", "-n", "5", "-z", "16",
                 "-u", "http://127.0.0.1:%d/manual/logs.html" % port]
    cmd = ["slowhttptest", "-c", str(args.conns), "-r", str(min(args.conns, 500)),
           "-l", str(args.seconds), "-p", "3"] + extra
    return lambda: subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    start_new_session=True)


def idle_opener(port, n):
    """Opens n connections, one keep-alive request each, then leaves them idle."""
    def start():
        sel = selectors.DefaultSelector()
        socks = []
        req = b"GET /index.html HTTP/1.1\r\nHost: localhost\r\n\r\n"
        for i in range(n):
            try:
                s = socket.socket()
                s.setblocking(False)
                s.connect_ex(("127.0.0.1", port))
                socks.append(s)
                sel.register(s, selectors.EVENT_WRITE)
            except OSError:
                break
            if len(socks) % 500 == 0:
                pump(sel, req, 0.05)
        pump(sel, req, 2.0)

        def close():
            for s in socks:
                try:
                    s.close()
                except OSError:
                    pass
        return close

    def pump(sel, req, wait):
        end = time.monotonic() + wait
        while time.monotonic() < end:
            for key, ev in sel.select(0.05):
                s = key.fileobj
                try:
                    if ev & selectors.EVENT_WRITE:
                        s.send(req)
                        sel.modify(s, selectors.EVENT_READ)
                    else:
                        if not s.recv(65536):
                            sel.unregister(s)
                except OSError:
                    sel.unregister(s)
    holder = {}

    def attack():
        holder["close"] = start()
        return holder["close"]
    return attack


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mpm", default="event", choices=["prefork", "worker", "event"])
    ap.add_argument("--conns", type=int, default=1000)
    ap.add_argument("--idle", type=int, default=19000)
    ap.add_argument("--seconds", type=int, default=60, help="length of each attack (60)")
    ap.add_argument("--recover", type=int, default=45,
                    help="seconds of probing after each attack (45)")
    ap.add_argument("--phases", default="slowloris,slowread,idle")
    ap.add_argument("--httpd", default=os.path.join(REPO, "build", "httpd"))
    ap.add_argument("--json")
    args = ap.parse_args()
    phases = args.phases.split(",")
    if any(p in ("slowloris", "slowread") for p in phases) and not shutil.which("slowhttptest"):
        print("hostile: slowhttptest is not installed (./setup.sh installs it)", file=sys.stderr)
        return 2
    if not os.access(args.httpd, os.X_OK):
        print("hostile: %s is not built" % args.httpd, file=sys.stderr)
        return 2
    need = max(args.idle, args.conns) + 1000
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(need, hard), hard))

    root = tempfile.mkdtemp(prefix="hdhostile-")
    port = soak.free_port()
    conf = soak.write_conf(root, port, args.mpm)
    server = soak.start_server(args.httpd, conf, args.mpm)
    results = []
    ok = True
    try:
        if not soak.wait_for(lambda: soak.accepts(port), 10):
            print("hostile: the server did not start", file=sys.stderr)
            return 2
        time.sleep(1)
        for name in phases:
            if name == "idle":
                attack = idle_opener(port, args.idle)
            else:
                attack = slowhttptest(args, port, name)
            r = run_phase(name, port, args.seconds, args.recover, attack, args)
            results.append(r)
            d, a = r["during"], r["after"]
            print("%-10s peak %6d conns | during: %4d/%-4d answered, p50 %7.1f ms, p99 %7.1f ms, "
                  "max %7s ms | after: %4d/%-4d, p99 %7.1f ms %s"
                  % (name, r["peak_conns"], d["answered"], d["probes"], d["p50_ms"],
                     d["p99_ms"], d["max_ms"], a["answered"], a["probes"], a["p99_ms"],
                     d["failures"] or ""), flush=True)
            ok = ok and d["failed"] == 0 and a["failed"] == 0
    finally:
        soak.stop_server(server)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"mpm": args.mpm, "phases": results}, f, indent=1)
        shutil.rmtree(root, ignore_errors=True)
    print("hostile: %s" % ("every probe answered" if ok else "SOME PROBES FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
