"""The event MPM: idle keep-alive connections wait in the poller and hold no
thread, so a child with a handful of threads keeps thousands of them open
and still answers a new client at once; timeouts still end them."""

import resource
import selectors
import socket
import time

import pytest

from hdtest import INDEX_HTML, Conn, thread_count, wait_for

IDLE_CONNS = 2000
THREADS = 4

# One child of four threads; the factor lets it take thousands of connections.
EVENT_FEW_THREADS = """\
<IfModule mpm_event_module>
    StartServers 1
    ServerLimit 1
    ThreadsPerChild %d
    ThreadLimit %d
    MinSpareThreads 1
    MaxSpareThreads %d
    MaxRequestWorkers %d
    AsyncRequestWorkerFactor 1000
</IfModule>
""" % (THREADS, THREADS, THREADS * 2, THREADS)

REQUEST = b"GET /index.html HTTP/1.1\r\nHost: test.local\r\n\r\n"


def _raise_nofile(need):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        if hard != resource.RLIM_INFINITY and hard < need:
            pytest.skip("RLIMIT_NOFILE hard limit %d < %d" % (hard, need))
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))


def _open_idle(port, n, batch=250):
    """Opens @n connections, each makes one keep-alive request; returns them."""
    socks = []
    sel = selectors.DefaultSelector()
    try:
        for start in range(0, n, batch):
            group = []
            for _ in range(min(batch, n - start)):
                s = socket.create_connection(("127.0.0.1", port), timeout=10)
                s.sendall(REQUEST)
                s.setblocking(False)
                group.append(s)
                sel.register(s, selectors.EVENT_READ, bytearray())
            left = len(group)
            deadline = time.monotonic() + 30
            while left and time.monotonic() < deadline:
                for key, _ in sel.select(1.0):
                    data = key.data
                    chunk = key.fileobj.recv(65536)
                    if not chunk:
                        raise AssertionError("connection closed before its response")
                    data += chunk
                    if data.endswith(INDEX_HTML):
                        assert data.startswith(b"HTTP/1.1 200 "), bytes(data[:80])
                        sel.unregister(key.fileobj)
                        left -= 1
            assert left == 0, "%d responses missing" % left
            socks.extend(group)
    except BaseException:
        for s in socks:
            s.close()
        raise
    finally:
        sel.close()
    return socks


def _still_open(socks):
    """True if the server closed none of @socks (no EOF, nothing unasked for)."""
    for s in socks:
        try:
            s.recv(1, socket.MSG_PEEK)
            return False
        except BlockingIOError:
            continue
        except OSError:
            return False
    return True


@pytest.mark.mpm("event")
def test_idle_keepalive_connections_hold_no_thread(server_factory):
    _raise_nofile(IDLE_CONNS + 256)
    s = server_factory(mpm_directives=EVENT_FEW_THREADS, keepalive_timeout=60, timeout=30)
    kids = wait_for(s.children, 5.0)
    assert kids and len(kids) == 1, kids
    assert s.get("/index.html").status == 200
    socks = _open_idle(s.port, IDLE_CONNS)
    try:
        assert len(socks) == IDLE_CONNS
        # A handful of threads (ThreadsPerChild and the main thread; a
        # sanitizer may add one or two of its own), whatever the number of
        # connections.
        assert s.children() == kids
        after = thread_count(kids[0])
        assert after <= THREADS + 3, after
        assert _still_open(socks), "the server closed idle keep-alive connections"

        # A new client is served at once.
        t0 = time.monotonic()
        r = s.get("/index.html", timeout=5)
        elapsed = time.monotonic() - t0
        assert r.status == 200 and r.body == INDEX_HTML
        assert elapsed < 1.0, "a new client waited %.2f s" % elapsed

        # Idle connections still serve their next request.
        for sock in socks[::100]:
            sock.setblocking(True)
            sock.settimeout(5)
            sock.sendall(REQUEST)
            data = b""
            while not data.endswith(INDEX_HTML):
                chunk = sock.recv(65536)
                assert chunk, "an idle connection was closed"
                data += chunk
            assert data.startswith(b"HTTP/1.1 200 ")
            sock.setblocking(False)
        assert s.alive()
    finally:
        for sock in socks:
            sock.close()


@pytest.mark.mpm("event")
def test_idle_connections_time_out(server_factory):
    s = server_factory(mpm_directives=EVENT_FEW_THREADS, keepalive_timeout=1, timeout=2)
    conns = []
    try:
        for _ in range(50):
            c = Conn(s.port, timeout=10)
            assert c.request("GET", "/index.html").status == 200
            conns.append(c)
        stalled = Conn(s.port, timeout=10)
        stalled.send(b"GET /index.html HTTP/1.1\r\nHost: test.local\r\n")
        conns.append(stalled)
        t0 = time.monotonic()
        for c in conns[:-1]:
            assert c.wait_closed(5.0), "an idle connection outlived KeepAliveTimeout"
        assert time.monotonic() - t0 < 4.0
        assert stalled.wait_closed(6.0), "a stalled request outlived Timeout"
        data = stalled.pending()
        assert data == b"" or data.startswith(b"HTTP/1.1 408"), data[:100]
    finally:
        for c in conns:
            c.close()
    assert s.get("/index.html").status == 200


@pytest.mark.mpm("event")
def test_threads_serve_many_connections_in_turn(server_factory):
    # More concurrent requests than threads: the poller queues them.
    s = server_factory(mpm_directives=EVENT_FEW_THREADS)
    conns = [Conn(s.port, timeout=10) for _ in range(40)]
    try:
        for _ in range(5):
            for c in conns:
                c.send(REQUEST)
            for c in conns:
                r = c.read_response(timeout=10)
                assert r.status == 200 and r.body == INDEX_HTML
    finally:
        for c in conns:
            c.close()
