"""Processes and signals: a killed child is replaced, graceful restart lets
requests in flight finish and applies a new configuration, a restart with a
broken configuration keeps the old one, TERM stops everything."""

import os
import signal
import time

import pytest

from hdtest import (BIN_4K, INDEX_HTML, IncompleteResponse, build_request, pid_alive,
                    port_accepts, thread_count, wait_for)

BIG = 50 * 1024 * 1024

# Enough spare capacity that killing one child drops below the minimum, so
# every MPM has to start a replacement.
SPARE = """\
<IfModule mpm_prefork_module>
    StartServers 2
    MinSpareServers 2
    MaxSpareServers 4
</IfModule>
<IfModule mpm_worker_module>
    StartServers 2
    ThreadsPerChild 4
    MinSpareThreads 8
    MaxSpareThreads 16
    MaxRequestWorkers 16
</IfModule>
<IfModule mpm_event_module>
    StartServers 2
    ThreadsPerChild 4
    MinSpareThreads 8
    MaxSpareThreads 16
    MaxRequestWorkers 16
</IfModule>
"""


def _big(s):
    with open(os.path.join(s.htdocs, "big.bin"), "wb") as f:
        f.truncate(BIG)


def test_killed_child_is_replaced(server_factory):
    s = server_factory(mpm_directives=SPARE)
    kids = wait_for(lambda: len(s.children()) >= 2 and s.children(), 5.0)
    assert kids, "expected at least 2 children, have %r" % s.children()
    victim = kids[0]
    os.kill(victim, signal.SIGKILL)
    assert wait_for(lambda: not pid_alive(victim), 2.0)
    new = wait_for(lambda: set(s.children()) - set(kids), 3.0, 0.1)
    assert new, "no new child within 3 s of killing %d (children now %r)" % (victim, s.children())
    for _ in range(10):
        r = s.get("/4k.bin")
        assert r.status == 200 and r.body == BIN_4K
    assert s.alive()


def test_graceful_restart_finishes_request_in_flight(server_factory):
    s = server_factory(setup=_big, timeout=10)
    with s.conn(timeout=20) as c:
        c.send(build_request("GET", "/big.bin"))
        r_head = c.read_head(10)
        assert r_head.status == 200
        assert r_head.header("Content-Length") == str(BIG)
        got = len(c.read_some(65536))
        s.signal(signal.SIGUSR1)
        time.sleep(1.0)
        while got < BIG:
            chunk = c.read_some(1 << 20, timeout=15)
            if not chunk:
                break
            assert chunk.count(0) == len(chunk)
            got += len(chunk)
        assert got == BIG, "only %d of %d bytes after a graceful restart" % (got, BIG)
    assert wait_for(lambda: s.get("/index.html").status == 200, 5.0)
    assert s.alive()


def test_graceful_restart_idle_keepalive_connection(server_factory):
    s = server_factory()
    with s.conn() as c:
        assert c.request("GET", "/index.html").status == 200
        s.signal(signal.SIGUSR1)
        time.sleep(1.0)
        # Either the request is answered, or the connection was closed while
        # idle without a single byte (a client then retries).
        before = c.nread
        try:
            c.send(build_request("GET", "/4k.bin"))
            r = c.read_response(timeout=5)
        except (BrokenPipeError, ConnectionResetError, IncompleteResponse):
            assert c.nread == before, "partial response after graceful restart: %r" % c.pending()
        else:
            assert r.status == 200 and r.body == BIN_4K
    assert wait_for(lambda: s.get("/4k.bin").status == 200, 5.0)


def test_graceful_restart_applies_new_config(server_factory):
    s = server_factory(files={"dir2/index.html": b"dir2 index\n", "dir2/home.html": b"home\n"})
    assert s.get("/dir2/").body == b"dir2 index\n"
    s.extra = "DirectoryIndex home.html index.html\n"
    s.write_conf()
    s.signal(signal.SIGUSR1)
    assert wait_for(lambda: s.get("/dir2/").body == b"home\n", 5.0, 0.2), s.error_log()
    assert s.alive()


def test_hup_with_broken_config_keeps_old(server_factory):
    s = server_factory(files={"dir2/index.html": b"dir2 index\n", "dir2/home.html": b"home\n"})
    master = s.pid
    s.extra = "DirectoryIndex home.html\nBogusDirectiveAfterRestart on\n"
    s.write_conf()
    s.signal(signal.SIGHUP)
    assert wait_for(lambda: "BogusDirectiveAfterRestart" in s.error_log(), 5.0, 0.1), s.error_log()
    assert s.alive() and s.pid == master

    def serving():
        try:
            return s.get("/dir2/").body
        except OSError:
            return None
    body = wait_for(serving, 5.0, 0.1)
    assert body == b"dir2 index\n"            # the old DirectoryIndex
    time.sleep(0.5)
    assert s.get("/dir2/").body == b"dir2 index\n"
    assert s.get("/index.html").body == INDEX_HTML


def test_term_stops_everything(server_factory):
    s = server_factory()
    assert s.get("/index.html").status == 200
    kids = wait_for(s.children, 5.0) or []
    assert os.path.exists(s.pid_file)
    s.signal(signal.SIGTERM)
    assert s.wait_exit(5.0), "master still running 5 s after TERM"
    assert wait_for(lambda: not any(pid_alive(k) for k in kids), 5.0), \
        "children left: %r" % [k for k in kids if pid_alive(k)]
    assert not os.path.exists(s.pid_file)
    assert not port_accepts(s.port)


def test_term_with_busy_connection(server_factory):
    s = server_factory(setup=_big)
    with s.conn() as c:
        c.send(build_request("GET", "/big.bin"))
        assert c.read_some(1024)
        s.signal(signal.SIGTERM)
        assert s.wait_exit(5.0), "master still running 5 s after TERM with a busy child"
    assert not os.path.exists(s.pid_file)


@pytest.mark.mpm("prefork")
def test_prefork_spare_children(server_factory):
    s = server_factory(mpm_directives="<IfModule mpm_prefork_module>\n    StartServers 5\n"
                                      "    MinSpareServers 1\n    MaxSpareServers 2\n"
                                      "</IfModule>\n")
    # Idle children above MaxSpareServers are stopped, one by one.
    assert wait_for(lambda: 1 <= len(s.children()) <= 2, 10.0, 0.2), s.children()
    for kid in s.children():
        assert thread_count(kid) == 1
    assert s.get("/index.html").status == 200


@pytest.mark.mpm("worker", "event")
def test_threaded_children(server_factory):
    s = server_factory(mpm_directives=SPARE)
    assert s.get("/index.html").status == 200

    def all_threaded():
        kids = s.children()
        return kids and all((thread_count(k) or 0) >= 4 for k in kids)   # ThreadsPerChild 4
    assert wait_for(all_threaded, 5.0, 0.1), [(k, thread_count(k)) for k in s.children()]
