"""Idle, slow and hostile clients, and the answers that matter on the internet:
RequestReadTimeout, Host checking, bare LF, escaping in the error log, the
descriptor limit, graceful stop refusing new clients, scoreboard states,
buffered and unbuffered access logs, lock waits, and a full event child."""

import os
import re
import signal
import socket
import time

import pytest

from hdtest import BIN_4K, INDEX_HTML, wait_for


def connect(srv, timeout=10.0):
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def read_until_closed(s, limit=10.0):
    """Everything the server sends until it closes (or @limit seconds pass)."""
    s.settimeout(0.5)
    out = b""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        try:
            b = s.recv(65536)
        except socket.timeout:
            continue
        except ConnectionResetError:
            break
        if not b:
            break
        out += b
    return out


# ---- RequestReadTimeout ----------------------------------------------------

SHORT_TIMEOUTS = "RequestReadTimeout header=2-3,MinRate=500 body=2,MinRate=500\n"


def test_slow_head_gets_408_within_the_header_limit(server_factory):
    """A client trickling its head never finishes it: Timeout alone (60 s here
    would be 5 s) would let it go on for ever; header=2-3 ends it after 2 s."""
    srv = server_factory(extra=SHORT_TIMEOUTS, timeout=60)
    s = connect(srv)
    t0 = time.monotonic()
    s.sendall(b"GET /index.html HTTP/1.1\r\n")
    answer = b""
    s.settimeout(0.4)
    for i in range(40):   # a byte every 0.4 s: each wait is far below Timeout
        try:
            s.sendall(b"X")
        except OSError:
            break
        try:
            answer += s.recv(4096)
        except socket.timeout:
            continue
        except ConnectionResetError:
            break
        if answer:
            break
    answer += read_until_closed(s, 5)
    elapsed = time.monotonic() - t0
    s.close()
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
    assert elapsed >= 1.9, "408 before the 2 s limit: %.2f s" % elapsed
    assert elapsed < 15, "no 408 within the header limit: %.2f s" % elapsed
    assert wait_for(lambda: "AH01382: Request header read timeout" in srv.error_log(), 5)


def test_fast_enough_client_is_not_cut(server_factory):
    """MinRate extends the limit: 2 s plus a second per 500 bytes, up to 3 s."""
    srv = server_factory(extra=SHORT_TIMEOUTS, timeout=60)
    s = connect(srv)
    # 1.5 s in, well inside the limit, the head completes
    s.sendall(b"GET /index.html HTTP/1.1\r\n")
    time.sleep(1.5)
    s.sendall(b"Host: test.local\r\nConnection: close\r\n\r\n")
    answer = read_until_closed(s, 5)
    s.close()
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:200]


def test_slow_body_gets_408(server_factory):
    srv = server_factory(extra=SHORT_TIMEOUTS, timeout=60)
    s = connect(srv)
    t0 = time.monotonic()
    s.sendall(b"POST /index.html HTTP/1.1\r\nHost: test.local\r\nContent-Length: 1000\r\n\r\nab")
    answer = read_until_closed(s, 12)
    elapsed = time.monotonic() - t0
    s.close()
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
    assert 1.9 <= elapsed < 15
    assert wait_for(lambda: "AH01382: Request body read timeout" in srv.error_log(), 5)


def test_request_read_timeout_config_errors(server_factory):
    srv = server_factory(start=False)
    for bad, msg in [("header=20-10,MinRate=500", "maximum timeout must be larger"),
                     ("header=20-40", "must set MinRate"),
                     ("header=x", "bad timeout"),
                     ("headers=20", "unknown stage"),
                     ("body=20,MinRate=0", "MinRate must be greater than 0"),
                     ("header=20,Rate=5", "unknown option")]:
        srv.extra = "RequestReadTimeout %s\n" % bad
        srv.write_conf()
        r = srv.run("-t")
        assert r.returncode != 0, bad
        assert msg in r.stderr and "httpd.conf:" in r.stderr, (bad, r.stderr)
    srv.extra = "RequestReadTimeout header=0 body=20,MinRate=500\n"
    srv.write_conf()
    assert srv.run("-t").returncode == 0


# ---- Host, bare LF, absolute form ----------------------------------------

@pytest.fixture(scope="module")
def srv(module_server_factory):
    return module_server_factory()


@pytest.mark.parametrize("host", [b"a b", b"a/b", b"a\\b", b"a@b", b"", b"[zz::1]", b"x:80a",
                                  b"%zz.example", b":80", b"a\x7fb"])
def test_bad_host_is_400(srv, host):
    r = srv.raw(b"GET / HTTP/1.1\r\nHost: " + host + b"\r\n\r\n")
    assert r.status == 400, host


@pytest.mark.parametrize("host", [b"test.local", b"test.local:8080", b"127.0.0.1", b"[::1]:80",
                                  b"a-b_c~d.example", b"%41.example", b"sub.delims!$&'()*+,;="])
def test_good_host_is_served(srv, host):
    r = srv.raw(b"GET /index.html HTTP/1.1\r\nHost: " + host + b"\r\nConnection: close\r\n\r\n")
    assert r.status == 200 and r.body == INDEX_HTML, host


def test_absolute_form_host_wins_in_redirects(srv):
    r = srv.raw(b"GET http://a.example/dir HTTP/1.1\r\nHost: b.example\r\n"
                b"Connection: close\r\n\r\n")
    assert r.status == 301
    assert r.header("location") == "http://a.example/dir/"


def test_bare_lf_head_is_answered_at_once(srv):
    t0 = time.monotonic()
    with srv.conn() as c:
        c.send(b"GET /index.html HTTP/1.1\nHost: x\n\n")
        r = c.read_response("GET", timeout=5)
        assert r.status == 200 and r.body == INDEX_HTML
        # and the connection goes on like any other
        c.send(b"GET /4k.bin HTTP/1.1\nHost: x\n\n")
        r = c.read_response("GET", timeout=5)
        assert r.status == 200 and r.body == BIN_4K
    assert time.monotonic() - t0 < 4


def test_high_bytes_are_escaped_in_the_error_log(srv):
    r = srv.raw(b"GET /.ht%9b31mX HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert r.status in (403, 404)
    assert wait_for(lambda: "\\x9b31mX" in srv.error_log(), 5), srv.error_log()[-500:]
    with open(srv.error_log_path, "rb") as f:
        raw = f.read()
    assert not any(b >= 0x80 for b in raw), "a raw byte >= 0x80 reached the error log"
    assert b"\x1b" not in raw


# ---- scoreboard and lock waits -------------------------------------------

STATUS = """
LoadModule status_module modules/mod_status.so
<Location "/server-status">
    SetHandler server-status
</Location>
"""


def test_own_worker_shows_w_while_writing(server_factory):
    srv = server_factory(extra=STATUS)
    r = srv.get("/server-status?auto")
    board = re.search(r"^Scoreboard: (\S+)$", r.body.decode(), re.M).group(1)
    assert "W" in board, board
    assert "R" not in board, board


def test_idle_waiting_is_not_a_lock_wait(server_factory):
    srv = server_factory(extra=STATUS)
    assert srv.get("/index.html").status == 200
    time.sleep(3)  # idle: every worker waits for work
    body = srv.get("/server-status?auto").body.decode()
    us = int(re.search(r"^LockWaitUs: (\d+)$", body, re.M).group(1))
    # a second of idle waiting per thread used to count here
    assert us < 500000, body


# ---- access log buffering ------------------------------------------------

def access_lines(srv):
    try:
        with open(os.path.join(srv.logs_dir, "access_log"), "rb") as f:
            return f.read().count(b"\n")
    except FileNotFoundError:
        return 0


def test_access_log_line_is_written_at_once_by_default(server_factory):
    srv = server_factory()
    for i in range(3):
        before = access_lines(srv)
        assert srv.get("/index.html").status == 200
        # the line is in the file when the response has been read (give the
        # worker the moment it takes to reach its log hook)
        assert wait_for(lambda: access_lines(srv) == before + 1, 2.0, 0.01), i


def test_buffered_log_line_arrives_within_a_second_or_so_idle_or_busy(server_factory):
    srv = server_factory(extra="BufferedLogs On\n")
    before = access_lines(srv)
    assert srv.get("/index.html").status == 200
    # idle
    assert wait_for(lambda: access_lines(srv) > before, 4.0, 0.05)
    # busy: other requests keep coming (on other connections)
    before = access_lines(srv)
    end = time.monotonic() + 4
    seen = False
    while time.monotonic() < end and not seen:
        srv.get("/4k.bin")
        seen = access_lines(srv) > before
        time.sleep(0.05)
    assert seen


# ---- graceful stop refuses new clients -------------------------------------

def test_graceful_stop_refuses_new_clients_at_once(server_factory):
    srv = server_factory(files={"big.bin": os.urandom(32 << 20)})
    # a response in progress keeps its child busy: the client does not read
    # on (more than the socket buffers hold) until the check below is done
    slow = connect(srv)
    slow.sendall(b"GET /big.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    slow.settimeout(5)
    assert slow.recv(100).startswith(b"HTTP/1.1 200")
    srv.signal(signal.SIGWINCH)

    def refused():
        try:
            s = socket.create_connection(("127.0.0.1", srv.port), timeout=2)
        except ConnectionRefusedError:
            return True
        s.close()
        return False
    assert wait_for(refused, 5.0, 0.05), "new clients still accepted after graceful stop"
    # the response in progress still completes
    got = 100
    slow.settimeout(10)
    while True:
        b = slow.recv(1 << 20)
        if not b:
            break
        got += len(b)
    slow.close()
    assert got > 32 << 20
    assert srv.wait_exit(10)


# ---- at the descriptor limit ------------------------------------------------

@pytest.mark.mpm("event", "worker")
def test_descriptor_limit_answers_503_and_logs_once(server_factory):
    srv = server_factory(nofile=64, extra="OpenFileCache Off\n",
                         mpm_directives="""
<IfModule mpm_worker_module>
    StartServers 1
    ServerLimit 1
    ThreadsPerChild 60
    ThreadLimit 60
    MinSpareThreads 1
    MaxSpareThreads 60
    MaxRequestWorkers 60
</IfModule>
<IfModule mpm_event_module>
    StartServers 1
    ServerLimit 1
    ThreadsPerChild 8
    MinSpareThreads 1
    MaxSpareThreads 8
    MaxRequestWorkers 8
    AsyncRequestWorkerFactor 100
</IfModule>
""")
    first = srv.conn()
    assert first.request("GET", "/index.html").status == 200
    idle = []
    for i in range(80):
        try:
            c = srv.conn(timeout=2)
            c.send(b"GET /4k.bin HTTP/1.1\r\nHost: x\r\n\r\n")
            idle.append(c)
        except OSError:
            break
    time.sleep(1)
    statuses = set()
    for i in range(5):
        try:
            statuses.add(first.request("GET", "/index.html").status)
        except Exception:
            break
        if 503 in statuses:
            break
    for c in idle:
        c.close()
    first.close()
    log = srv.error_log()
    assert 403 not in statuses, log[-2000:]
    if 503 in statuses:
        assert log.count("cannot open files to serve them (first") == 1, log[-2000:]
    # accept failures: one line when it starts (and one when it ends), not one per try
    assert log.count("AH00069: accept: (client socket)") <= 1, log[-2000:]
    # and after the crowd left, it serves again
    assert wait_for(lambda: srv.get("/index.html").status == 200, 5)


# ---- prefork reports MaxRequestWorkers ---------------------------------------

@pytest.mark.mpm("prefork")
def test_prefork_logs_max_request_workers_reached(server_factory):
    srv = server_factory(mpm_directives="""
<IfModule mpm_prefork_module>
    StartServers 1
    MinSpareServers 1
    MaxSpareServers 2
    MaxRequestWorkers 2
    ServerLimit 2
</IfModule>
""", timeout=30)
    held = []
    for i in range(2):
        s = connect(srv)
        s.sendall(b"GET /index.html HTTP/1.1\r\nHost: x\r\n")  # the head never ends
        held.append(s)
    assert wait_for(lambda: "AH00161: server reached MaxRequestWorkers" in srv.error_log(),
                    10.0, 0.2), srv.error_log()[-1000:]
    for s in held:
        s.close()


# ---- a full event child ---------------------------------------------------------

EVENT_SMALL = """
<IfModule mpm_event_module>
    StartServers 1
    ServerLimit 4
    ThreadsPerChild 4
    MinSpareThreads 1
    MaxSpareThreads 16
    MaxRequestWorkers 16
    AsyncRequestWorkerFactor 2
</IfModule>
"""


@pytest.mark.mpm("event")
def test_event_child_full_of_idle_clients_still_serves_new_ones(server_factory):
    """A child takes 4 + 2 x 4 = 12 connections; 60 idle keep-alive clients are
    far more than all four children's 48: each new client is served, an idle
    one giving way to it."""
    srv = server_factory(mpm_directives=EVENT_SMALL, keepalive_timeout=30)
    idle = []
    for i in range(60):
        try:
            c = srv.conn(timeout=5)
            if c.request("GET", "/4k.bin").status == 200:
                idle.append(c)
        except Exception:
            pass
    assert len(idle) >= 40
    for i in range(10):
        t0 = time.monotonic()
        r = srv.get("/index.html", timeout=5)
        assert r.status == 200 and r.body == INDEX_HTML
        assert time.monotonic() - t0 < 4
    for c in idle:
        c.close()


@pytest.mark.mpm("event")
def test_event_children_full_of_slow_clients_start_more(server_factory):
    """30 clients that never finish their head fill more than the first child can
    take (12); its idle threads then do not count as spare, so the master starts
    more children and a new client is served."""
    srv = server_factory(mpm_directives=EVENT_SMALL, timeout=60)
    slow = []
    for i in range(30):
        try:
            s = connect(srv, timeout=5)
            s.sendall(b"GET /index.html HTTP/1.1\r\nHost: x\r\n")
            slow.append(s)
        except OSError:
            pass
    assert len(slow) == 30
    assert wait_for(lambda: srv.get("/index.html", timeout=3).status == 200, 15.0, 0.2)
    assert len(srv.children()) >= 3
    for s in slow:
        s.close()
