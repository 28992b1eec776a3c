"""mod_status against the kernel: our system call count for a fixed run is
within 5% of what `perf stat -e raw_syscalls:sys_enter` counts on the same
processes, and the test prints, by kind, what we did not count.

Run with -s (or -rP) to see the table.
"""

import json
import os
import resource
import select
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

import hdtest

STATUS_CONF = """
LoadModule status_module modules/mod_status.so
<Location "/server-status">
    SetHandler server-status
</Location>
"""

# Enough idle workers that no process or thread is started or stopped while
# perf watches: perf -p sees only the tasks that exist when it attaches.
STABLE_MPM = """\
<IfModule mpm_prefork_module>
    StartServers 3
    MinSpareServers 1
    MaxSpareServers 10
</IfModule>
<IfModule mpm_worker_module>
    StartServers 2
    ThreadsPerChild 8
    MinSpareThreads 2
    MaxSpareThreads 32
    MaxRequestWorkers 32
</IfModule>
<IfModule mpm_event_module>
    StartServers 2
    ThreadsPerChild 8
    MinSpareThreads 2
    MaxSpareThreads 32
    MaxRequestWorkers 32
</IfModule>
"""

# Kernel syscall names (tracepoints) for each of our kinds; anything else is "other".
KIND_OF = {}
for kind, names in {
    "read": ["read", "pread64", "readv", "preadv", "recvfrom", "recvmsg"],
    "write": ["write", "pwrite64", "writev", "pwritev", "sendto", "sendmsg"],
    "sendfile": ["sendfile64"],
    "open": ["open", "openat", "openat2"],
    "stat": ["newstat", "newlstat", "newfstat", "newfstatat", "statx"],
    "close": ["close"],
    "accept": ["accept", "accept4"],
    "epoll_wait": ["epoll_wait", "epoll_pwait", "epoll_pwait2"],
    "epoll_ctl": ["epoll_ctl"],
}.items():
    for n in names:
        KIND_OF[n] = kind
# Calls of the "other" kind worth naming when they make up a difference.
OTHER_NAMED = ["poll", "ppoll", "wait4", "rt_sigprocmask", "rt_sigaction", "rt_sigreturn",
               "getpid", "gettid", "brk", "mmap", "munmap", "mprotect", "madvise", "futex",
               "clock_nanosleep", "nanosleep", "shutdown", "setsockopt", "getsockname",
               "fcntl", "kill", "clone", "clone3", "exit", "sched_yield", "rseq"]

KINDS = ["accept", "read", "write", "sendfile", "open", "stat", "close", "epoll_wait",
         "epoll_ctl", "other"]


def tracefs_syscalls():
    for d in ("/sys/kernel/tracing/events/syscalls", "/sys/kernel/debug/tracing/events/syscalls"):
        try:
            return {n[len("sys_enter_"):] for n in os.listdir(d) if n.startswith("sys_enter_")}
        except OSError:
            continue
    return set()


def perf_works():
    perf = shutil.which("perf")
    if perf is None:
        return None, "perf is not installed (setup.sh installs linux-perf)"
    try:
        r = subprocess.run([perf, "stat", "-x,", "-e", "raw_syscalls:sys_enter", "true"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30, text=True)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, "perf does not run: %s" % e
    if r.returncode != 0 or "raw_syscalls:sys_enter" not in r.stderr:
        return None, "perf cannot count raw_syscalls:sys_enter here: %s" % r.stderr.strip()[:200]
    return perf, None


PERF, WHY_NOT = perf_works()


def ours(srv):
    """Our count so far: every worker (and listener) plus the master."""
    doc = json.loads(srv.get("/server-status?json&history=0").body)
    w = doc["totals"]["syscalls"]
    m = doc["master"]["syscalls"]
    return {k: w[k] + m[k] for k in KINDS}


def load(srv):
    """A fixed run: kept-alive connections and new ones, files and errors."""
    n = 0
    for _ in range(6):
        with srv.conn() as c:
            for i in range(90):     # MaxKeepAliveRequests is 100
                r = c.request("GET", "/4k.bin" if i % 3 else "/index.html")
                assert r.status == 200
                n += 1
    for i in range(60):
        r = srv.get("/missing.txt" if i % 4 == 0 else "/4k.bin")
        assert r.status in (200, 404)
        n += 1
    return n


class PerfControl:
    """perf stat's --control fifos: a command, then wait for its ack."""

    def __init__(self, proc, ctl, ack):
        self.proc = proc
        deadline = time.monotonic() + 20
        while True:
            try:
                self.ctl = os.open(ctl, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError:         # ENXIO until perf opens its end
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("perf did not start: %s"
                                         % proc.stderr.read().decode(errors="replace"))
                time.sleep(0.01)
        self.ack = os.open(ack, os.O_RDONLY | os.O_NONBLOCK)

    def send(self, cmd):
        os.write(self.ctl, cmd.encode() + b"\n")
        ready, _, _ = select.select([self.ack], [], [], 20)
        assert ready, "perf did not acknowledge %r" % cmd
        assert os.read(self.ack, 16).startswith(b"ack")


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(hard, 65536), max(hard, 65536)))
    except (ValueError, OSError):
        pass


@pytest.mark.skipif(PERF is None, reason=WHY_NOT or "")
def test_our_count_matches_the_kernel(server_factory):
    srv = server_factory(extra=STATUS_CONF, mpm_directives=STABLE_MPM)
    time.sleep(1.5)            # children and threads all started
    srv.get("/index.html")
    pids = [srv.pid] + srv.children()
    available = tracefs_syscalls()
    named = [n for n in list(KIND_OF) + OTHER_NAMED if n in available]
    events = ["raw_syscalls:sys_enter"] + ["syscalls:sys_enter_" + n for n in named]
    tmp = tempfile.mkdtemp(prefix="hdtest-perf-")
    out, ctl, ack = (os.path.join(tmp, n) for n in ("perf.csv", "ctl", "ack"))
    os.mkfifo(ctl)
    os.mkfifo(ack)
    perf = None
    try:
        # events start disabled; "enable" and "disable" on the control fifo
        # bound the window exactly where the load starts and ends
        perf = subprocess.Popen([PERF, "stat", "-x,", "-o", out, "-D", "-1",
                                 "--control", "fifo:%s,%s" % (ctl, ack),
                                 "-e", ",".join(events), "-p", ",".join(str(p) for p in pids)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                preexec_fn=raise_nofile)
        control = PerfControl(perf, ctl, ack)
        before = ours(srv)
        control.send("enable")
        requests = load(srv)
        control.send("disable")
        after = ours(srv)
        perf.send_signal(signal.SIGINT)
        _, err = perf.communicate(timeout=30)
        assert perf.returncode in (0, -signal.SIGINT, 130), err.decode(errors="replace")
        kernel = {}
        with open(out) as f:
            for line in f:
                parts = line.strip().split(",")
                if len(parts) >= 3 and parts[0].strip().isdigit():
                    kernel[parts[2]] = int(parts[0])
    finally:
        if perf is not None and perf.poll() is None:
            perf.kill()
            perf.wait(5)
        shutil.rmtree(tmp, ignore_errors=True)

    total_kernel = kernel["raw_syscalls:sys_enter"]
    counted = {k: after[k] - before[k] for k in KINDS}
    total_ours = sum(counted.values())
    by_kind = {k: 0 for k in KINDS}
    for n in named:
        by_kind[KIND_OF.get(n, "other")] += kernel.get("syscalls:sys_enter_" + n, 0)
    # "other" from the kernel: all that is not one of the named kinds
    by_kind["other"] = total_kernel - sum(v for k, v in by_kind.items() if k != "other")

    lines = ["%d requests under %s; perf on pids %s" % (requests, hdtest.HTTPD_MPM, pids),
             "%-11s %9s %9s %9s" % ("kind", "kernel", "ours", "uncounted")]
    for k in KINDS:
        lines.append("%-11s %9d %9d %9d" % (k, by_kind[k], counted[k], by_kind[k] - counted[k]))
    lines.append("%-11s %9d %9d %9d" % ("total", total_kernel, total_ours,
                                        total_kernel - total_ours))
    other_named = ["%s=%d" % (n, kernel.get("syscalls:sys_enter_" + n, 0))
                   for n in OTHER_NAMED if kernel.get("syscalls:sys_enter_" + n)]
    lines.append("kernel's 'other' calls by name: " + (", ".join(other_named) or "none"))
    print("\n" + "\n".join(lines))

    assert total_kernel > requests * 4, "perf saw too little: %d" % total_kernel
    diff = abs(total_kernel - total_ours) / total_kernel
    assert diff <= 0.05, "our count is %.1f%% off the kernel's\n%s" % (100 * diff,
                                                                       "\n".join(lines))


@pytest.mark.mpm("worker")
def test_listener_threads_are_sampled(server_factory):
    """The worker MPM's listener owns no worker slot; the master samples it
    all the same, so the totals hold its context switches and CPU: they are
    more than the slots' sum by what the listeners did."""
    srv = server_factory(extra=STATUS_CONF, mpm_directives=STABLE_MPM)
    time.sleep(1.5)
    for _ in range(60):    # a new connection each: the listener wakes up for each
        assert srv.get("/index.html", headers={"Connection": "close"}).status == 200
    time.sleep(2.5)        # two samples by the master

    def excess():
        doc = json.loads(srv.get("/server-status?json&history=0").body)
        slots = sum(s["cs_voluntary"] for s in doc["slots"])
        return doc["totals"]["cs_voluntary"] - slots, doc["totals"]["cs_voluntary"], slots
    extra, total, slots = excess()
    print("voluntary context switches: totals %d, slots %d, listeners %d" % (total, slots, extra))
    assert extra >= 30, (total, slots)
