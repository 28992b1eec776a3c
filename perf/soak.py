#!/usr/bin/env python3
"""perf/soak.py: a long run under steady load, with graceful restarts.

Starts build/httpd (or --httpd) on the shipped conf/httpd.conf, as a user
runs it (access log on, the MPM of --mpm), on a free loopback port; finds
its maximum rate with a short closed-loop run of hd_loadgen; then loads it
at --load (80%) of that rate for --duration (10 minutes), half the requests
on keep-alive connections and half on a new connection each, over a mix of
manual pages and the front page; sends a graceful restart (USR1) every
--restart-every seconds. It prints, per process, private RSS (RssAnon: the
shared scoreboard's pages are no leak) and open descriptors
(and how many are client sockets and served files, which the open-file cache
keeps) at the same moment after the first and after the last restart, and
the growth of what must not grow: the master's RSS and descriptors, the
children's mean RSS, and their other descriptors; the errors the load
generators saw; and the access log's lines against the requests completed.

The two sets of figures are taken at the same moment after a restart (the
third, after the master's memory has settled, and the last), so the children
are of the same age. Exit status 0 when the run is clean (no error, log lines
equal to requests, the master's private RSS and descriptors and the
children's other descriptors grown by under --max-growth percent, the
busiest child's private RSS by under --child-tolerance; the children's mean
is reported), 1 when it is not, 2 when it could not run. Standard library only; every wait is bounded.

Usage: perf/soak.py [--mpm event] [--duration 600] [--load 0.8] [--restart-every 60]
                    [--httpd build/httpd] [--loadgen build/perf/hd_loadgen] [--json FILE]
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(pred, timeout, step=0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


def accepts(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


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
        if fields[0] != "Z" and int(fields[3]) == sid:
            pids.append(int(name))
    return sorted(pids)


HTDOCS = os.path.join(REPO, "htdocs") + "/"


def proc_figures(pid):
    """Private RSS KiB (RssAnon) and descriptors by kind of one process, or None if
    it is gone: sockets
    (clients come and go with the load), served files (the open-file cache keeps
    them by design), and the rest (logs, pipes, epoll sets, /proc files), which
    must not pile up."""
    try:
        rss = 0
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                # private memory: the shared scoreboard's pages count in VmRSS as a
                # process touches more of it, which is no leak
                if line.startswith("RssAnon:"):
                    rss = int(line.split()[1])
        fds = sockets = served = 0
        for fd in os.listdir("/proc/%d/fd" % pid):
            fds += 1
            try:
                target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
            except OSError:
                continue
            sockets += target.startswith("socket:")
            served += target.startswith(HTDOCS)
        return rss, fds, sockets, served
    except OSError:
        return None


def snapshot(sid, master):
    rows = []
    for pid in session_pids(sid):
        fig = proc_figures(pid)
        if fig is not None:
            rows.append({"pid": pid, "role": "master" if pid == master else "child",
                         "rss_kib": fig[0], "fds": fig[1], "sockets": fig[2],
                         "served_files": fig[3]})
    return rows


def leak_figures(rows):
    """What must not grow: the master's RSS and descriptors, the children's mean
    RSS, and their mean count of descriptors other than sockets and served files."""
    master = [r for r in rows if r["role"] == "master"]
    kids = [r for r in rows if r["role"] == "child"]
    return {
        "master_rss_kib": master[0]["rss_kib"] if master else 0,
        "master_fds": master[0]["fds"] if master else 0,
        "child_mean_rss_kib": sum(r["rss_kib"] for r in kids) / len(kids) if kids else 0,
        "child_max_rss_kib": max((r["rss_kib"] for r in kids), default=0),
        "other_fds_per_child": (sum(r["fds"] - r["sockets"] - r["served_files"] for r in kids)
                                / len(kids) if kids else 0),
        "children": len(kids),
    }


def write_conf(root, port, mpm):
    with open(os.path.join(REPO, "conf", "httpd.conf")) as f:
        text = f.read()
    out = []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("Listen "):
            line = "Listen 127.0.0.1:%d" % port
        elif s.startswith("PidFile "):
            line = 'PidFile "%s/logs/httpd.pid"' % root
        elif s.startswith("ErrorLog "):
            line = 'ErrorLog "%s/logs/error_log"' % root
        elif s.startswith("CustomLog ") and "logs/access_log" in s:
            line = line.replace('"logs/access_log"', '"%s/logs/access_log"' % root)
        out.append(line)
    path = os.path.join(root, "conf", "httpd.conf")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.makedirs(os.path.join(root, "logs"), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    return path


MPM_DEFINES = {"prefork": [], "worker": ["-D", "MPM_WORKER"], "event": ["-D", "MPM_EVENT"]}


def start_server(httpd, conf, mpm):
    """The server in the foreground, in a session of its own (stopped by PID)."""
    return subprocess.Popen([httpd, "-d", REPO, "-f", conf, "-D", "FOREGROUND"] + MPM_DEFINES[mpm],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def stop_server(server):
    """TERM, then KILL after 10 s."""
    if server.poll() is None:
        os.kill(server.pid, signal.SIGTERM)
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            os.kill(server.pid, signal.SIGKILL)
            server.wait()


def url_file(root):
    paths = ["/index.html"]
    manual = os.path.join(REPO, "htdocs", "manual")
    for name in sorted(os.listdir(manual)):
        if name.endswith(".html"):
            paths.append("/manual/" + name)
    path = os.path.join(root, "urls.txt")
    with open(path, "w") as f:
        for p in paths:
            f.write("%s\n" % p)
    return path


def loadgen(args, port, urls, seconds, rate=None, keepalive=True, out=None):
    cmd = [args.loadgen, "-c", "16", "-d", "%ds" % seconds, "-u", urls, "-q", "-T", "10s"]
    if rate is not None:
        cmd += ["-R", "%d" % rate]
    if not keepalive:
        cmd.append("--no-keepalive")
    if out is not None:
        cmd += ["--json", out]
    cmd.append("http://127.0.0.1:%d/" % port)
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def finish(proc, timeout):
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    return proc.returncode, err.decode(errors="replace")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mpm", default="event", choices=["prefork", "worker", "event"])
    ap.add_argument("--duration", type=int, default=600, help="seconds under load (600)")
    ap.add_argument("--load", type=float, default=0.8, help="share of the maximum rate (0.8)")
    ap.add_argument("--restart-every", type=int, default=60, help="seconds between USR1 (60)")
    ap.add_argument("--httpd", default=os.path.join(REPO, "build", "httpd"))
    ap.add_argument("--loadgen", default=os.path.join(REPO, "build", "perf", "hd_loadgen"))
    ap.add_argument("--max-growth", type=float, default=1.0,
                    help="largest growth of summed RSS and descriptors, percent (1)")
    ap.add_argument("--child-tolerance", type=float, default=5.0,
                    help="largest growth of the busiest child's private RSS, percent (5): "
                         "each child lives one restart interval, its figure varies with its "
                         "share of the load")
    ap.add_argument("--json", help="write the figures here too")
    args = ap.parse_args()
    for path in (args.httpd, args.loadgen):
        if not os.access(path, os.X_OK):
            print("soak: %s is not built (./setup.sh build)" % path, file=sys.stderr)
            return 2
    if not 10 <= args.duration <= 24 * 3600 or not 0 < args.load <= 1:
        print("soak: --duration must be 10..86400 s and --load in (0, 1]", file=sys.stderr)
        return 2

    root = tempfile.mkdtemp(prefix="hdsoak-")
    port = free_port()
    conf = write_conf(root, port, args.mpm)
    urls = url_file(root)
    server = start_server(args.httpd, conf, args.mpm)
    result = {"mpm": args.mpm, "duration_s": args.duration, "restarts": 0}
    rc = 2
    try:
        if not wait_for(lambda: accepts(port), 10):
            print("soak: the server did not start", file=sys.stderr)
            return 2
        time.sleep(1)
        # the maximum, closed loop, keep-alive and close at once as under the soak
        probe = [loadgen(args, port, urls, 5, keepalive=True, out=os.path.join(root, "ka.json")),
                 loadgen(args, port, urls, 5, keepalive=False, out=os.path.join(root, "cl.json"))]
        for p in probe:
            finish(p, 30)
        max_rps = 0.0
        for name in ("ka.json", "cl.json"):
            with open(os.path.join(root, name)) as f:
                max_rps += json.load(f)["totals"]["rps"]
        rate = max(10, int(max_rps * args.load))
        result.update(max_rps=round(max_rps), rate=rate)
        print("soak: %s MPM, maximum %.0f requests/s, loading at %d/s for %d s, USR1 every %d s"
              % (args.mpm, max_rps, rate, args.duration, args.restart_every), flush=True)

        # a settled server: the probe's load is over, the access log so far is known
        time.sleep(2)
        log_path = os.path.join(root, "logs", "access_log")
        lines_before = sum(1 for _ in open(log_path, "rb")) if os.path.exists(log_path) else 0

        gens = [loadgen(args, port, urls, args.duration, rate // 2, True,
                        os.path.join(root, "soak-ka.json")),
                loadgen(args, port, urls, args.duration, rate - rate // 2, False,
                        os.path.join(root, "soak-close.json"))]
        start = time.monotonic()
        # The figures are taken under load, each the same time after a graceful
        # restart (children of the same age, their caches as warm): after the
        # first restart, and after the last one.
        every = args.restart_every
        restarts_at = [start + every * k for k in range(1, int(args.duration // every) + 1)
                       if every * k + 0.7 * every < args.duration - 2]
        if len(restarts_at) < 2:
            print("soak: --duration must allow two restarts and %d s after the last"
                  % int(0.7 * every), file=sys.stderr)
            return 2
        # the master's private memory settles over its first few reloads (two pages here)
        first_at = restarts_at[min(2, len(restarts_at) - 2)] + 0.6 * every
        last_at = restarts_at[-1] + 0.6 * every
        before = after = None
        pending = list(restarts_at)
        while time.monotonic() < start + args.duration and all(g.poll() is None for g in gens):
            now = time.monotonic()
            marks = pending[:1] + [first_at if before is None else last_at]
            time.sleep(min(1.0, max(0.0, min(marks) - now)))
            now = time.monotonic()
            if pending and now >= pending[0]:
                os.kill(server.pid, signal.SIGUSR1)
                result["restarts"] += 1
                pending.pop(0)
            if before is None and now >= first_at:
                before = snapshot(server.pid, server.pid)
            elif before is not None and after is None and now >= last_at:
                after = snapshot(server.pid, server.pid)
        outs = [finish(g, args.duration + 60) for g in gens]
        if before is None or after is None:
            print("soak: the load stopped early: %s" % [o[1][-300:] for o in outs],
                  file=sys.stderr)
            return 1

        completed = errors = requests = 0
        err_kinds = {}
        for name in ("soak-ka.json", "soak-close.json"):
            with open(os.path.join(root, name)) as f:
                j = json.load(f)
            completed += j["totals"]["responses"]
            requests += j["totals"]["requests"]
            errors += j["errors"]["total"]
            for k, v in j["errors"].items():
                if k != "total" and v:
                    err_kinds[k] = err_kinds.get(k, 0) + v
            non_ok = j["totals"]["status_classes"]
            errors += non_ok["4xx"] + non_ok["5xx"] + non_ok["invalid"]
        wait_for(lambda: sum(1 for _ in open(log_path, "rb")) - lines_before >= completed, 5)
        lines = sum(1 for _ in open(log_path, "rb")) - lines_before

        lf0, lf1 = leak_figures(before), leak_figures(after)
        growth = {}
        for k in ("master_rss_kib", "master_fds", "child_max_rss_kib", "child_mean_rss_kib",
                  "other_fds_per_child"):
            growth[k] = 100.0 * (lf1[k] - lf0[k]) / lf0[k] if lf0[k] else 0.0
        result.update(before=before, after=after, start=lf0, end=lf1,
                      growth_pct={k: round(v, 2) for k, v in growth.items()},
                      requests=requests, completed=completed, errors=errors,
                      error_kinds=err_kinds, log_lines=lines,
                      loadgen_status=[o[0] for o in outs])

        print("\n%-6s %8s %10s %6s %8s %7s" % ("when", "pid", "anon KiB", "fds", "sockets",
                                                 "served"))
        for label, rows in (("start", before), ("end", after)):
            for r in rows:
                print("%-6s %8d %10d %6d %8d %7d  %s" % (label, r["pid"], r["rss_kib"], r["fds"],
                                                         r["sockets"], r["served_files"],
                                                         r["role"]))
        print()
        for k, v in growth.items():
            print("%-26s %10.1f -> %10.1f  %+.2f%%" % (k, lf0[k], lf1[k], v))
        print("requests sent %d, completed %d, errors %d %s" % (requests, completed, errors,
                                                              err_kinds or ""))
        print("access log lines %d for %d completed requests; %d graceful restarts"
              % (lines, completed, result["restarts"]))
        # A child lives one restart interval: its memory is the share of the load
        # it happened to get (a child that got little is far below the others),
        # so the children are judged by the busiest one, against a looser bound,
        # and their mean is only reported.
        limits = {k: args.max_growth for k in growth if k != "child_mean_rss_kib"}
        limits["child_max_rss_kib"] = max(args.max_growth, args.child_tolerance)
        clean = (errors == 0 and lines == completed and
                 all(growth[k] < limits[k] for k in limits))
        print("soak: %s" % ("clean" if clean else "NOT clean"))
        result["clean"] = clean
        rc = 0 if clean else 1
    finally:
        stop_server(server)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(result, f, indent=1)
        shutil.rmtree(root, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
