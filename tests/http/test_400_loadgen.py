"""perf/loadgen (hd_loadgen) against our server and against a small scripted
server: counts, JSON fields, 404s as "missed", open-loop bookkeeping,
chunked and close-delimited bodies, keep-alive connections closed by the
server, errors by kind, and bad arguments (exit 1 with the usage).

Only counts are asserted, never timings: those belong in perf/.
"""

import json
import os
import socket
import subprocess
import threading
import time

import pytest

from hdtest import HTTPD_BIN, free_port

MPM = """\
<IfModule mpm_prefork_module>
    StartServers 6
    MinSpareServers 4
    MaxSpareServers 8
    MaxRequestWorkers 16
</IfModule>
<IfModule mpm_worker_module>
    StartServers 1
    ThreadsPerChild 8
    MinSpareThreads 4
    MaxSpareThreads 16
    MaxRequestWorkers 16
</IfModule>
<IfModule mpm_event_module>
    StartServers 1
    ThreadsPerChild 8
    MinSpareThreads 4
    MaxSpareThreads 16
    MaxRequestWorkers 16
</IfModule>
"""

PAGES = {
    "lg/a.html": b"<html>a</html>\n",
    "lg/sub/b.html": b"<html>b</html>\n",
    "lg/sp ace.html": b"<html>space</html>\n",
    "lg/c.txt": b"not a page\n",
    "lg/.hidden.html": b"hidden\n",
}


def loadgen_bin():
    env = os.environ.get("HD_LOADGEN")
    if env:
        return env
    build = os.path.dirname(HTTPD_BIN)
    for cand in (os.path.join(build, "perf", "hd_loadgen"), os.path.join(build, "hd_loadgen")):
        if os.path.exists(cand):
            return cand
    pytest.fail("hd_loadgen not found beside %s (build it: cmake --build build "
                "--target hd_loadgen, or set HD_LOADGEN)" % HTTPD_BIN, pytrace=False)


def run(*args, timeout=30):
    return subprocess.run([loadgen_bin()] + [str(a) for a in args], capture_output=True,
                          text=True, timeout=timeout)


def run_json(tmp_path, *args, rc=0):
    out = tmp_path / "lg.json"
    p = run("-q", "--json", out, *args)
    assert p.returncode == rc, p.stdout + p.stderr
    with open(out) as f:
        return json.load(f)


def by_path(d):
    return {u["path"]: u for u in d["urls"]}


def access_count(server, needle, want, timeout=5.0):
    """Lines of the access log holding @needle, once it has @want of them (or the timeout)."""
    deadline = time.monotonic() + timeout
    while True:
        n = sum(1 for line in server.access_log().splitlines() if needle in line)
        if n >= want or time.monotonic() > deadline:
            return n
        time.sleep(0.1)


@pytest.fixture(scope="module")
def srv(module_server_factory):
    return module_server_factory(mpm_directives=MPM, files=PAGES)


# -- against our server ---------------------------------------------------------

def test_closed_loop_counts_and_json(srv, tmp_path):
    d = run_json(tmp_path, "-c", 3, "-n", 200, "-d", 20,
                 "http://127.0.0.1:%d/4k.bin" % srv.port)
    cfg = d["config"]
    assert cfg["mode"] == "closed" and cfg["rate"] is None
    assert cfg["connections"] == 3 and cfg["threads"] == 1 and cfg["keepalive"] is True
    assert cfg["max_requests"] == 200 and cfg["duration_s"] == 20
    assert cfg["urls"] == [{"path": "/4k.bin", "weight": 1}]
    t = d["totals"]
    assert t["requests"] == 200 and t["responses"] == 200 and t["found"] == 200
    assert t["missed"] == 0 and t["other"] == 0
    assert t["status_classes"]["2xx"] == 200
    assert t["bytes"] > 200 * 4096
    # one per connection, and one more whenever the server ends one
    # (MaxKeepAliveRequests 100: a fast connection may take more than 100)
    assert t["connects"] >= 3 and t["connects"] == t["connections_opened"]
    assert t["reconnects"] == 0
    assert t["rps"] > 0
    assert d["errors"]["total"] == 0
    assert set(d["errors"]) == {"total", "connect", "write", "read", "timeout", "parse",
                                "aborted"}
    assert d["status"] == {"found": 200, "missed": 0, "other": 0}
    assert d["rate"]["target_achieved"] is None
    lat = d["latency_us"]
    assert lat["count"] == 200
    assert lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p99_9"] <= lat["max"]
    buckets = d["histogram"]["buckets"]
    assert sum(b[3] for b in buckets) == 200
    assert all(b[1] <= b[2] for b in buckets)
    assert d["client_syscalls"]["write"] >= 200
    (u,) = d["urls"]
    assert u["path"] == "/4k.bin" and u["hits"] == 200 and u["slowest_rank"] == 1
    assert sum(b[3] for b in u["histogram"]) == 200
    assert set(u["avg_us"]) == {"wait", "connect", "write", "read", "close", "total"}
    # exactly the requests counted reached the server
    assert access_count(srv, "GET /4k.bin", 200) == 200


def test_url_file_weights_and_missed(srv, tmp_path):
    urls = tmp_path / "urls.txt"
    urls.write_text("# a comment\n\n3 /index.html   # three times as often\n"
                    "/lg-nope.html 1\n/dir/\n")
    d = run_json(tmp_path, "-c", 2, "-n", 500, "-u", urls, "http://127.0.0.1:%d" % srv.port)
    assert d["config"]["url_source"] == "file"
    assert [(u["path"], u["weight"]) for u in d["config"]["urls"]] == \
        [("/index.html", 3), ("/lg-nope.html", 1), ("/dir/", 1)]
    u = by_path(d)
    nope = u["/lg-nope.html"]
    assert nope["missed"] == nope["responses"] > 0 and nope["found"] == 0
    assert nope["status_classes"]["4xx"] == nope["missed"]
    assert u["/index.html"]["found"] == u["/index.html"]["responses"]
    assert u["/dir/"]["found"] == u["/dir/"]["responses"]
    assert d["totals"]["responses"] == 500
    assert d["status"]["missed"] == nope["missed"]
    assert d["status"]["found"] + d["status"]["missed"] == 500
    # the weights hold roughly: 3/5 of the requests for /index.html
    assert 0.45 < u["/index.html"]["requests"] / 500 < 0.75
    assert access_count(srv, "GET /lg-nope.html", nope["requests"]) == nope["requests"]


def test_404_only_is_still_a_run(srv):
    p = run("-c", 1, "-n", 5, "http://127.0.0.1:%d/lg-nothing-here" % srv.port)
    assert p.returncode == 0, p.stderr
    assert "missed (404) 5" in p.stdout


def test_docroot_lists_pages(srv, tmp_path):
    d = run_json(tmp_path, "-c", 2, "-n", 30, "--docroot", srv.htdocs,
                 "http://127.0.0.1:%d/lg/" % srv.port)
    assert d["config"]["url_source"] == "docroot"
    assert [u["path"] for u in d["config"]["urls"]] == \
        ["/lg/a.html", "/lg/sp%20ace.html", "/lg/sub/b.html"]
    assert d["totals"]["found"] == 30 and d["errors"]["total"] == 0


def test_no_keepalive_connects_per_request(srv, tmp_path):
    d = run_json(tmp_path, "-c", 2, "-n", 40, "--no-keepalive",
                 "http://127.0.0.1:%d/index.html" % srv.port)
    assert d["config"]["keepalive"] is False
    assert d["totals"]["responses"] == 40 and d["totals"]["connects"] == 40
    assert d["client_syscalls"]["connect"] == 40


def test_threads_share_the_count(srv, tmp_path):
    d = run_json(tmp_path, "-c", 4, "-t", 2, "-n", 101, "http://127.0.0.1:%d/4k.bin" % srv.port)
    assert d["config"]["threads"] == 2
    assert d["totals"]["requests"] == 101 and d["totals"]["found"] == 101


def test_open_loop_bookkeeping(srv, tmp_path):
    d = run_json(tmp_path, "-c", 4, "-R", 200, "-d", 1, "http://127.0.0.1:%d/4k.bin" % srv.port)
    r = d["rate"]
    assert d["config"]["mode"] == "open" and d["config"]["rate"] == 200
    assert r["mode"] == "open" and r["intended"] == 200
    assert r["scheduled"] == 200
    assert r["sent"] + r["behind"] == 200
    assert d["totals"]["requests"] == r["sent"]
    assert d["totals"]["responses"] + d["errors"]["total"] == r["sent"]
    assert isinstance(r["target_achieved"], bool)
    assert sum(s["responses"] for s in d["timeline"]) == d["totals"]["responses"]


def test_open_loop_overload_is_reported(srv, tmp_path):
    d = run_json(tmp_path, "-c", 2, "-R", 1000000, "-d", 1,
                 "http://127.0.0.1:%d/4k.bin" % srv.port)
    r = d["rate"]
    assert r["target_achieved"] is False
    assert r["behind"] > 0 and r["scheduled"] == 1000000
    assert r["achieved"] < 1000000


# -- against a scripted server ------------------------------------------------------

class Scripted:
    """A tiny threaded HTTP/1.1 server whose answers exercise the response reader."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.stop = False
        threading.Thread(target=self.accept_loop, daemon=True).start()

    def close(self):
        self.stop = True
        self.sock.close()

    def accept_loop(self):
        while not self.stop:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self.serve, args=(c,), daemon=True).start()

    def serve(self, c):
        buf = b""
        served = 0
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    data = c.recv(4096)
                    if not data:
                        return
                    buf += data
                head, buf = buf.split(b"\r\n\r\n", 1)
                path = head.split(b" ")[1].decode()
                served += 1
                if not self.answer(c, path, served):
                    return
        except OSError:
            pass
        finally:
            c.close()

    @staticmethod
    def answer(c, path, served):
        """Sends the answer to @path; False when the connection is to close."""
        if path == "/chunked":
            c.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                      b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n")
        elif path == "/split":
            # every line cut across reads
            resp = (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                    b"Transfer-Encoding: chunked\r\n\r\n"
                    b"a\r\n0123456789\r\n0\r\n\r\n")
            for i in range(0, len(resp), 7):
                c.sendall(resp[i:i + 7])
                time.sleep(0.002)
        elif path == "/close":
            c.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil close")
            return False
        elif path == "/interim":
            c.sendall(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n")
        elif path == "/missing":
            c.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found")
        elif path == "/ka":
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            # closes after every third answer without saying so, as a server
            # whose keep-alive timeout expires just as the next request comes
            return served % 3 != 0
        elif path == "/garbage":
            c.sendall(b"HELLO WORLD\r\n\r\n")
            return False
        elif path == "/stall":
            time.sleep(3)
            return False
        else:
            c.sendall(b"HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n")
        return True


@pytest.fixture
def scripted():
    s = Scripted()
    yield s
    s.close()


def test_bodies_of_every_kind(scripted, tmp_path):
    urls = tmp_path / "urls.txt"
    urls.write_text("/chunked\n/split\n/close\n/interim\n2 /missing\n/other\n")
    d = run_json(tmp_path, "-c", 2, "-n", 70, "-u", urls, "http://127.0.0.1:%d" % scripted.port)
    assert d["errors"]["total"] == 0, d["errors"]
    assert d["totals"]["responses"] == 70
    u = by_path(d)
    for p in ("/chunked", "/split", "/close", "/interim"):
        assert u[p]["found"] == u[p]["responses"] == u[p]["requests"], p
    assert u["/missing"]["missed"] == u["/missing"]["requests"]
    assert u["/other"]["other"] == u["/other"]["requests"]
    assert u["/other"]["status_classes"]["5xx"] == u["/other"]["requests"]
    assert d["status"]["other"] == u["/other"]["requests"]
    # a close-delimited body ends its connection, and the next request opens
    # a new one: no retry, no error
    assert d["totals"]["connects"] >= u["/close"]["responses"] > 0
    assert d["totals"]["reconnects"] == 0


def test_server_closing_keepalive_is_retried(scripted, tmp_path):
    # closed after answers 3, 6 and 9; the fourth connection serves 10 and 11
    d = run_json(tmp_path, "-c", 1, "-n", 11, "http://127.0.0.1:%d/ka" % scripted.port)
    assert d["errors"]["total"] == 0, d["errors"]
    assert d["totals"]["responses"] == 11
    assert d["totals"]["reconnects"] + d["totals"]["idle_closes"] == 3
    assert d["totals"]["connects"] == 4


def test_parse_errors(scripted, tmp_path):
    d = run_json(tmp_path, "-c", 1, "-n", 3, "http://127.0.0.1:%d/garbage" % scripted.port,
                 rc=3)
    assert d["errors"]["parse"] == 3 and d["totals"]["responses"] == 0


def test_timeouts(scripted, tmp_path):
    d = run_json(tmp_path, "-c", 2, "-n", 2, "-T", "300ms",
                 "http://127.0.0.1:%d/stall" % scripted.port, rc=3)
    assert d["errors"]["timeout"] == 2 and d["totals"]["responses"] == 0


def test_connect_errors(tmp_path):
    d = run_json(tmp_path, "-c", 1, "-n", 5, "http://127.0.0.1:%d/" % free_port(), rc=3)
    assert d["errors"]["connect"] == 5 and d["errors"]["total"] == 5


# -- the command line -------------------------------------------------------------

BAD = [
    ([], "missing the target URL"),
    (["https://127.0.0.1:1/"], "only http://"),
    (["ftp://127.0.0.1/"], "must be http://"),
    (["http://10.1.2.3:80/"], "only loopback"),
    (["http://[::2]:80/"], "only loopback"),
    (["http://example.com/"], "not an IP address"),
    (["http://127.0.0.1:99999/"], "bad port"),
    (["-c", "0", "http://127.0.0.1:1/"], "-c wants"),
    (["-d", "soon", "http://127.0.0.1:1/"], "-d wants"),
    (["-R", "-5", "http://127.0.0.1:1/"], "-R wants"),
    (["-T", "0", "http://127.0.0.1:1/"], "-T wants"),
    (["-t", "4", "-c", "2", "http://127.0.0.1:1/"], "threads need"),
    (["--bogus", "http://127.0.0.1:1/"], "unknown option"),
    (["-c"], "needs a value"),
    (["-u", "/nonexistent/urls.txt", "http://127.0.0.1:1/"], "cannot open"),
    (["--docroot", "/nonexistent", "http://127.0.0.1:1/"], "not a directory"),
    (["http://127.0.0.1:1/", "http://127.0.0.1:2/"], "one target URL only"),
]


@pytest.mark.parametrize("args,message", BAD, ids=[" ".join(a) or "none" for a, _ in BAD])
def test_bad_arguments(args, message):
    p = run(*args)
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout == ""
    first = p.stderr.splitlines()[0]
    assert first.startswith("hd_loadgen: ") and message in first, p.stderr
    assert "Usage: hd_loadgen" in p.stderr


def test_bad_url_file_line(tmp_path):
    urls = tmp_path / "urls.txt"
    urls.write_text("/ok\nx /bad-weight\n")
    p = run("-u", urls, "http://127.0.0.1:1")
    assert p.returncode == 1
    assert "%s:2:" % urls in p.stderr.splitlines()[0]


def test_help():
    p = run("--help")
    assert p.returncode == 0 and "Usage: hd_loadgen" in p.stdout
