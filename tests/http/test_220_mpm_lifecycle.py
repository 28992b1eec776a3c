"""What every MPM does the same way: a graceful restart under load loses no
request, MaxConnectionsPerChild replaces children, graceful-stop finishes
the requests in flight, and the directives' limits are adjusted with
Apache's warnings."""

import os
import re
import shutil
import signal
import subprocess
import time

import pytest

from hdtest import BIN_4K, HTTPD_MPM, INDEX_HTML, Conn, build_request, pid_alive, wait_for

# Enough capacity for 20 keep-alive connections under every MPM (prefork
# needs a process for each).
LOAD = """\
<IfModule mpm_prefork_module>
    StartServers 24
    MinSpareServers 4
    MaxSpareServers 32
    MaxRequestWorkers 64
</IfModule>
<IfModule mpm_worker_module>
    StartServers 3
    ThreadsPerChild 10
    MinSpareThreads 4
    MaxSpareThreads 40
    MaxRequestWorkers 60
</IfModule>
<IfModule mpm_event_module>
    StartServers 2
    ThreadsPerChild 4
    MinSpareThreads 2
    MaxSpareThreads 16
    MaxRequestWorkers 16
</IfModule>
"""


def _wrk_errors(out):
    """(requests, socket errors, non-2xx) from wrk's output."""
    m = re.search(r"(\d+) requests in", out)
    requests = int(m.group(1)) if m else 0
    errors = 0
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    if m:
        errors = sum(int(x) for x in m.groups())
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    non2xx = int(m.group(1)) if m else 0
    return requests, errors, non2xx


def test_graceful_restart_during_load_loses_nothing(server_factory):
    wrk = shutil.which("wrk")
    if wrk is None:
        pytest.skip("wrk is not installed")
    s = server_factory(mpm_directives=LOAD, keepalive_timeout=5, timeout=10)
    assert wait_for(lambda: s.get("/4k.bin").status == 200, 5.0)
    before = set(s.children())
    p = subprocess.Popen([wrk, "-t1", "-c20", "-d4s", "--timeout", "5s",
                          "http://127.0.0.1:%d/4k.bin" % s.port],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(1.0)
        s.signal(signal.SIGUSR1)
        out, _ = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    requests, errors, non2xx = _wrk_errors(out)
    assert requests > 100, out
    assert errors == 0, out
    assert non2xx == 0, out
    assert s.wait_log(r"Graceful restart requested", "error_log", 1.0), s.error_log()
    # The old generation went away; new children serve.
    assert wait_for(lambda: not (before & set(s.children())), 10.0), \
        (sorted(before), s.children())
    assert s.get("/4k.bin").body == BIN_4K
    assert s.alive()


MAX_CONNS = """\
<IfModule mpm_prefork_module>
    StartServers 1
    MinSpareServers 1
    MaxSpareServers 2
    MaxConnectionsPerChild 5
</IfModule>
<IfModule mpm_worker_module>
    StartServers 1
    ThreadsPerChild 2
    MinSpareThreads 1
    MaxSpareThreads 4
    MaxRequestWorkers 4
    MaxConnectionsPerChild 5
</IfModule>
<IfModule mpm_event_module>
    StartServers 1
    ThreadsPerChild 2
    MinSpareThreads 1
    MaxSpareThreads 4
    MaxRequestWorkers 4
    MaxConnectionsPerChild 5
</IfModule>
"""


def test_max_connections_per_child_replaces_children(server_factory):
    s = server_factory(mpm_directives=MAX_CONNS)
    seen = set(wait_for(s.children, 5.0) or [])
    assert seen
    for i in range(40):
        def one():
            try:
                return s.get("/index.html", headers={"Connection": "close"}, timeout=5)
            except OSError:
                return None
        r = wait_for(one, 5.0, 0.1)
        assert r is not None and r.status == 200 and r.body == INDEX_HTML, i
        seen.update(s.children())
    # 40 connections at 5 per child: children came and went.
    assert len(seen) >= 4, sorted(seen)
    assert s.alive()


def test_graceful_stop_finishes_request_in_flight(server_factory, tmp_path):
    big = 20 * 1024 * 1024

    def setup(srv):
        with open(os.path.join(srv.htdocs, "big.bin"), "wb") as f:
            f.truncate(big)
    s = server_factory(setup=setup, timeout=10)
    idle = Conn(s.port, timeout=10)
    try:
        assert idle.request("GET", "/index.html").status == 200
        with Conn(s.port, timeout=20) as c:
            c.send(build_request("GET", "/big.bin"))
            head = c.read_head(10)
            assert head.status == 200
            kids = s.children()
            s.signal(signal.SIGWINCH)
            time.sleep(0.5)
            got = 0
            while got < big:
                chunk = c.read_some(1 << 20, timeout=10)
                if not chunk:
                    break
                got += len(chunk)
            assert got == big, got
        # The idle connection was closed, not answered half-way.
        assert idle.wait_closed(5.0)
        assert s.wait_exit(10.0), "master still running after graceful-stop"
        assert wait_for(lambda: not any(pid_alive(k) for k in kids), 5.0)
        assert "caught SIGWINCH" in s.error_log()
    finally:
        idle.close()


def test_mpm_named_in_version_and_log(server_factory):
    s = server_factory()
    p = s.run("-V")
    assert re.search(r"(?m)^Server MPM:\s+%s$" % HTTPD_MPM, p.stdout), p.stdout
    assert s.wait_log(r"MPM %s configured -- resuming normal operations" % HTTPD_MPM,
                      "error_log", 2.0), s.error_log()


@pytest.mark.mpm("worker", "event")
def test_threaded_limits_adjusted_with_warnings(server_factory):
    s = server_factory(start=False)
    p = s.run("-t", "-c", "ThreadsPerChild 8", "-c", "ThreadLimit 4", "-c",
              "MaxRequestWorkers 30", "-c", "MinSpareThreads 0", "-c", "MaxSpareThreads 2")
    err = p.stderr
    assert p.returncode == 0, err
    assert "AH00310: WARNING: ThreadsPerChild of 8 exceeds ThreadLimit of 4" in err, err
    assert "AH00316: WARNING: MaxRequestWorkers of 30 is not an integer multiple of " \
           "ThreadsPerChild of 4, decreasing to nearest multiple 28" in err, err
    assert "AH00322: WARNING: MinSpareThreads of 0 not allowed, increasing to 1" in err, err
    assert "MaxSpareThreads of 2 is less than MinSpareThreads + ThreadsPerChild, " \
           "increasing to 5" in err, err
    p = s.run("-t", "-c", "ServerLimit 2", "-c", "ThreadsPerChild 4", "-c",
              "MaxRequestWorkers 40")
    assert "AH00318: WARNING: MaxRequestWorkers of 40 would require 10 servers and would " \
           "exceed ServerLimit of 2, decreasing to 8" in p.stderr, p.stderr
    p = s.run("-t", "-c", "AsyncRequestWorkerFactor 0")
    if HTTPD_MPM == "event":
        assert p.returncode == 1 and "positive number" in p.stderr, p.stderr
    else:
        assert p.returncode == 1 and "AsyncRequestWorkerFactor" in p.stderr, p.stderr


def test_second_mpm_is_an_error(server_factory):
    s = server_factory(start=False)
    other = "event" if HTTPD_MPM != "event" else "worker"
    p = s.run("-t", "-c", "LoadModule mpm_%s_module modules/mod_mpm_%s.so" % (other, other))
    assert p.returncode == 1, p.stderr
    assert "More than one MPM loaded" in p.stderr, p.stderr
