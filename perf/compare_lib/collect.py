"""What is measured around each run, besides the load generator's figures.

- The server's own counters: GET /server-status?json before and after the
  run, and the difference per request (status_counters / status_delta: the
  adapter to mod_status's schema, htdocs/manual/status.html). Both reads are
  taken while the server is idle and at least SETTLE_S after the last load,
  because the kernel figures (context switches, CPU, run delay) are sampled
  by the master once a second: read too early and the last second of the
  run is missing.
- The kernel's count: `perf stat -e raw_syscalls:sys_enter,context-switches,
  task-clock -p <master,children>` for exactly the run (PerfStat). Attached
  to the master, it also follows children forked during the run.
- System samples: /proc/stat every second during the run (SysSampler), like
  `vmstat 1`: run queue r, blocked b, context switches and interrupts per
  second, CPU us/sy/id/wa/intr in %.
"""

import json
import os
import select
import shutil
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request

SETTLE_S = 1.2

SYS_KINDS = ("accept", "read", "write", "sendfile", "open", "stat", "close", "epoll_wait",
             "epoll_ctl", "other")


# ---- the server's counters (mod_status ?json) --------------------------------

def fetch_status(port, timeout=5.0):
    """The parsed ?json of the server on @port, or None when it has none."""
    url = "http://127.0.0.1:%d/server-status?json&history=1" % port
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            body = r.read()
            ctype = r.headers.get("Content-Type", "")
    except (urllib.error.URLError, OSError, ValueError):
        return None
    if "json" not in ctype and not body.lstrip().startswith(b"{"):
        return None
    try:
        j = json.loads(body)
    except ValueError:
        return None
    return j if isinstance(j, dict) and "totals" in j else None


def last_sample_time(j):
    """Wall-clock time of the newest once-a-second sample in a ?json, or None."""
    t = _get(j, "history.time")
    return t[-1] if isinstance(t, list) and t else None


def fetch_status_settled(port, since_wall, timeout=SETTLE_S + 1.5):
    """(?json, number of status requests made) once the master has sampled the
    kernel after @since_wall (time.time()): then the context switches and CPU
    of everything before are in it. Without a ring to tell, it waits SETTLE_S.
    Each read is a request the server counts, hence the number."""
    deadline = time.monotonic() + timeout
    j = fetch_status(port)
    if j is None:
        return None, 1
    n = 1
    if last_sample_time(j) is None:
        time.sleep(max(0.0, since_wall + SETTLE_S - time.time()))
        return fetch_status(port), 2
    while last_sample_time(j) < since_wall and time.monotonic() < deadline:
        # The next sample is due a second after the newest one.
        time.sleep(min(1.05, max(0.05, last_sample_time(j) + 1.05 - time.time())))
        j = fetch_status(port) or j
        n += 1
    return j, n


def _get(d, path, default=None):
    cur = d
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return default
        cur = cur[part]
    return cur


def status_counters(j):
    """Cumulative counters from one ?json document, flat: the one place that
    knows mod_status's schema (schema_version 1)."""
    t = j.get("totals", {})
    c = {"requests": t.get("requests", 0), "bytes": t.get("bytes", 0)}
    sysd = t.get("syscalls", {})
    for k in SYS_KINDS:
        c["sys." + k] = sysd.get(k, 0)
    c["sys.total"] = sysd.get("total", sum(sysd.get(k, 0) for k in SYS_KINDS))
    for k in ("cs_voluntary", "cs_involuntary", "cpu_user_us", "cpu_system_us",
              "run_delay_us", "alloc_calls", "alloc_bytes", "lock_waits", "lock_wait_us"):
        c[k] = t.get(k, 0)
    c["master.sys.total"] = _get(j, "master.syscalls.total", 0)
    c["master.cpu_us"] = _get(j, "master.cpu_user_us", 0) + _get(j, "master.cpu_system_us", 0)
    return c


def status_delta(before, after, own_requests=1):
    """Per-request figures of a run from two ?json documents. @own_requests:
    status requests counted in the window (the first read's own)."""
    if before is None or after is None:
        return None
    a, b = status_counters(before), status_counters(after)
    d = {k: b[k] - a.get(k, 0) for k in b}
    reqs = d["requests"] - own_requests
    out = {"requests": reqs, "bytes": d["bytes"]}
    if reqs <= 0:
        return out
    out["syscalls/req"] = d["sys.total"] / reqs
    for k in SYS_KINDS:
        out["sys %s/req" % k] = d["sys." + k] / reqs
    out["cs voluntary/req"] = d["cs_voluntary"] / reqs
    out["cs involuntary/req"] = d["cs_involuntary"] / reqs
    out["cs/req"] = (d["cs_voluntary"] + d["cs_involuntary"]) / reqs
    out["cpu us/req"] = (d["cpu_user_us"] + d["cpu_system_us"]) / reqs
    out["cpu user us/req"] = d["cpu_user_us"] / reqs
    out["cpu sys us/req"] = d["cpu_system_us"] / reqs
    out["run delay us/req"] = d["run_delay_us"] / reqs
    out["alloc calls/req"] = d["alloc_calls"] / reqs
    out["alloc bytes/req"] = d["alloc_bytes"] / reqs
    out["master syscalls/req"] = d["master.sys.total"] / reqs
    return out


# ---- perf stat ------------------------------------------------------------

PERF_EVENTS = "raw_syscalls:sys_enter,context-switches,task-clock"

# The kernel's count by kind, as the syscall layer's kinds (sys.h): one
# tracepoint per system call; "other" is the total less these.
PERF_KINDS = {
    "accept": ("accept4", "accept"),
    "read": ("read", "pread64", "readv", "recvfrom", "recvmsg"),
    "write": ("write", "writev", "pwrite64", "sendto", "sendmsg"), "sendfile": ("sendfile64",),
    "open": ("openat", "open"), "stat": ("newfstat", "newfstatat", "statx", "newstat",
                                         "newlstat"),
    "close": ("close",), "epoll_wait": ("epoll_wait", "epoll_pwait"),
    "epoll_ctl": ("epoll_ctl",),
}
_kind_events = None


def perf_kind_events():
    """{tracepoint: kind} for the syscall tracepoints this kernel has (cached)."""
    global _kind_events
    if _kind_events is None:
        _kind_events = {}
        try:
            out = subprocess.run(["perf", "list", "syscalls:sys_enter_*"],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                 timeout=60).stdout
        except (OSError, subprocess.TimeoutExpired):
            out = ""
        have = set(w for w in out.split() if w.startswith("syscalls:sys_enter_"))
        for kind, names in PERF_KINDS.items():
            for n in names:
                ev = "syscalls:sys_enter_" + n
                if ev in have:
                    _kind_events[ev] = kind
    return _kind_events


def perf_usable():
    """(True, "") when perf can count the events on another process here."""
    if shutil.which("perf") is None:
        return False, "perf is not installed (apt-get install linux-perf)"
    try:
        p = subprocess.run(["perf", "stat", "-x,", "-e", PERF_EVENTS, "--", "true"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, "perf stat failed: %s" % e
    if p.returncode != 0 or "not supported" in p.stderr or "<not counted>" in p.stderr:
        return False, "perf stat cannot count %s: %s" % (PERF_EVENTS, p.stderr.strip()[-300:])
    return True, ""


class PerfStat:
    """perf stat attached to @pids, counting exactly from start() to stop().

    perf starts with its counters open but disabled (-D -1) and is enabled
    and disabled through its control FIFO, each command acknowledged: the
    window is the run's, not perf's own start-up (opening counters on a
    hundred processes takes a while). Children forked in the window are
    counted too (perf follows them)."""

    def __init__(self, pids, out_path):
        self.pids = pids
        self.out_path = out_path
        self.proc = None
        self.ctl = None
        self.ack = None
        self.dir = os.path.dirname(out_path)

    def _command(self, cmd, timeout=10.0):
        """Sends @cmd to perf, waits for its ack; False if perf did not answer."""
        try:
            self.ctl.write(cmd + "\n")
            self.ctl.flush()
        except OSError:
            return False
        r, _w, _x = select.select([self.ack], [], [], timeout)
        if not r:
            return False
        return b"ack" in os.read(self.ack.fileno(), 64)

    def start(self):
        events = ",".join([PERF_EVENTS] + sorted(perf_kind_events()))
        ctl_path = os.path.join(self.dir, "perf-ctl.fifo")
        ack_path = os.path.join(self.dir, "perf-ack.fifo")
        for p in (ctl_path, ack_path):
            if os.path.exists(p):
                os.unlink(p)
            os.mkfifo(p)
        args = ["perf", "stat", "-x,", "-o", self.out_path, "-e", events, "-D", "-1",
                "--control", "fifo:%s,%s" % (ctl_path, ack_path),
                "-p", ",".join(str(p) for p in self.pids)]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        # Opening a FIFO blocks until the other end opens it: non-blocking
        # opens in a loop, so that a perf that died does not hang us.
        deadline = time.monotonic() + 15.0
        while self.ctl is None and time.monotonic() < deadline and self.proc.poll() is None:
            try:
                self.ctl = os.fdopen(os.open(ctl_path, os.O_WRONLY | os.O_NONBLOCK), "w")
            except OSError:
                time.sleep(0.02)
        if self.ctl is None:
            raise PerfError("perf stat did not start: %s" % self._stderr())
        self.ack = open(ack_path, "rb", buffering=0)
        if not self._command("enable"):
            raise PerfError("perf stat did not acknowledge enable: %s" % self._stderr())
        return self

    def _stderr(self):
        if self.proc and self.proc.poll() is not None and self.proc.stderr:
            return self.proc.stderr.read().decode(errors="replace").strip()[-300:]
        return "(no answer)"

    def stop(self):
        """Stops counting; {"syscalls": n, "context_switches": n, "task_clock_ms": x,
        "kinds": {...}} or None."""
        if self.proc is None:
            return None
        if self.ctl is not None:
            self._command("disable")
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGINT)
        try:
            _out, err = self.proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, signal.SIGKILL)
            _out, err = self.proc.communicate()
        for f in (self.ctl, self.ack):
            try:
                if f is not None:
                    f.close()
            except OSError:
                pass
        self.proc = self.ctl = self.ack = None
        return parse_perf_csv(self.out_path)


class PerfError(Exception):
    pass


def parse_perf_csv(path, err=""):
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    out = {}
    for line in text.splitlines():
        fields = line.split(",")
        if len(fields) < 3 or line.startswith("#"):
            continue
        value, event = fields[0], fields[2]
        try:
            v = float(value)
        except ValueError:
            continue
        kind = perf_kind_events().get(event.split(":u")[0].split(":k")[0])
        if kind:
            out.setdefault("kinds", {})
            out["kinds"][kind] = out["kinds"].get(kind, 0.0) + v
        elif event.startswith("raw_syscalls:sys_enter"):
            out["syscalls"] = v
        elif event.startswith("context-switches"):
            out["context_switches"] = v
        elif event.startswith("task-clock"):
            out["task_clock_ms"] = v
    return out or None


def perf_per_request(perf, requests):
    if not perf or not requests:
        return {}
    out = {}
    if "syscalls" in perf:
        out["perf syscalls/req"] = perf["syscalls"] / requests
    if "context_switches" in perf:
        out["perf cs/req"] = perf["context_switches"] / requests
    if "task_clock_ms" in perf:
        out["perf task-clock us/req"] = perf["task_clock_ms"] * 1000.0 / requests
    kinds = perf.get("kinds")
    if kinds and "syscalls" in perf:
        for k in SYS_KINDS[:-1]:
            out["perf sys %s/req" % k] = kinds.get(k, 0.0) / requests
        out["perf sys other/req"] = (perf["syscalls"] - sum(kinds.values())) / requests
    return out


# ---- /proc/stat ---------------------------------------------------------------

def read_proc_stat():
    s = {"t": time.monotonic()}
    with open("/proc/stat") as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            if parts[0] == "cpu":
                s["cpu"] = [int(x) for x in parts[1:9]]
            elif parts[0] == "ctxt":
                s["ctxt"] = int(parts[1])
            elif parts[0] == "intr":
                s["intr"] = int(parts[1])
            elif parts[0] == "procs_running":
                s["r"] = int(parts[1])
            elif parts[0] == "procs_blocked":
                s["b"] = int(parts[1])
    return s


def proc_stat_interval(a, b):
    """vmstat-like figures between two /proc/stat samples."""
    dt = b["t"] - a["t"]
    d = [y - x for x, y in zip(a["cpu"], b["cpu"])]
    ticks = sum(d) or 1
    user, nice, system, idle, iowait, irq, softirq, steal = d
    return {
        "dt": dt, "r": b["r"], "b": b["b"],
        "cs/s": (b["ctxt"] - a["ctxt"]) / dt if dt > 0 else 0.0,
        "in/s": (b["intr"] - a["intr"]) / dt if dt > 0 else 0.0,
        "us": 100.0 * (user + nice) / ticks, "sy": 100.0 * system / ticks,
        "intr": 100.0 * (irq + softirq) / ticks, "id": 100.0 * idle / ticks,
        "wa": 100.0 * iowait / ticks, "st": 100.0 * steal / ticks,
    }


class SysSampler:
    """Samples /proc/stat every @interval seconds in a thread, like `vmstat 1`."""

    def __init__(self, interval=1.0):
        self.interval = interval
        self.samples = []
        self.first = None
        self.last = None
        self._stop = threading.Event()
        self._thread = None

    def start(self):
        self.first = read_proc_stat()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def _loop(self):
        prev = self.first
        while not self._stop.wait(self.interval):
            cur = read_proc_stat()
            self.samples.append(proc_stat_interval(prev, cur))
            prev = cur

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join()
        self.last = read_proc_stat()
        return self.summary()

    def summary(self):
        """Means over the run: the per-second samples' r and b, and the totals' rates."""
        out = {"samples": self.samples}
        if self.first and self.last:
            whole = proc_stat_interval(self.first, self.last)
            out["whole"] = whole
            rs = [s["r"] for s in self.samples] or [whole["r"]]
            bs = [s["b"] for s in self.samples] or [whole["b"]]
            out["mean"] = {"sys r": sum(rs) / len(rs), "sys b": sum(bs) / len(bs),
                           "sys cs/s": whole["cs/s"], "sys in/s": whole["in/s"],
                           "sys us%": whole["us"], "sys sy%": whole["sy"],
                           "sys intr%": whole["intr"], "sys id%": whole["id"],
                           "sys wa%": whole["wa"]}
        return out
