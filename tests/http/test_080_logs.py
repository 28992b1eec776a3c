"""Logs: the access log in common, combined and custom formats, the error
log entry for a denied client, and log reopening on a graceful restart.
Logs may be buffered: every check polls the file for up to 5 s."""

import os
import re
import signal
import uuid

import pytest

from hdtest import INDEX_HTML, wait_for

CONF = r"""
LogFormat "%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-Agent}i\"" combined
CustomLog "{root}/logs/combined_log" combined
CustomLog "{root}/logs/custom_log" "%D %{X-Test}i %{Content-Type}o %>s %B"
<Directory "{htdocs}/denied_dir">
    Require all denied
</Directory>
"""

TIME = r"\[\d{2}/(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4}\]"


def common_re(request_line, status, size):
    return r"^127\.0\.0\.1 - - %s \"%s\" %s %s$" % (TIME, re.escape(request_line), status, size)


def _tag():
    return uuid.uuid4().hex[:12]


@pytest.fixture(scope="module")
def srv(module_server_factory):
    return module_server_factory(extra=CONF, files={"denied_dir/page.txt": b"no\n"})


def test_common_format_200(srv):
    t = _tag()
    assert srv.get("/4k.bin?t=" + t).status == 200
    m = srv.wait_log(common_re("GET /4k.bin?t=%s HTTP/1.1" % t, 200, 4096))
    assert m, srv.access_log()


def test_common_format_404_and_head(srv):
    t = _tag()
    r = srv.request("GET", "/missing?t=" + t)
    assert r.status == 404
    assert srv.wait_log(common_re("GET /missing?t=%s HTTP/1.1" % t, 404, len(r.body))), \
        srv.access_log()
    r = srv.request("HEAD", "/index.html?t=" + t)
    assert r.status == 200
    # %b is "-" when no body bytes were sent
    assert srv.wait_log(common_re("HEAD /index.html?t=%s HTTP/1.1" % t, 200, "-")), \
        srv.access_log()


def test_common_format_304_and_206(srv):
    t = _tag()
    etag = srv.get("/4k.bin").header("ETag")
    assert srv.request("GET", "/4k.bin?a=" + t, headers={"If-None-Match": etag}).status == 304
    assert srv.request("GET", "/4k.bin?b=" + t, headers={"Range": "bytes=0-99"}).status == 206
    assert srv.wait_log(common_re("GET /4k.bin?a=%s HTTP/1.1" % t, 304, "-")), srv.access_log()
    assert srv.wait_log(common_re("GET /4k.bin?b=%s HTTP/1.1" % t, 206, 100)), srv.access_log()


def test_common_format_malformed_request(srv):
    t = _tag()
    r = srv.raw(b"GET /" + t.encode() + b" HTTP/1.1\r\n\r\n")    # no Host
    assert r.status == 400
    assert srv.wait_log(common_re("GET /%s HTTP/1.1" % t, 400, r"\d+")), srv.access_log()


def test_common_format_every_request_of_a_connection(srv):
    t = _tag()
    with srv.conn() as c:
        for i in range(3):
            assert c.request("GET", "/index.html?k=%s-%d" % (t, i)).status == 200
    for i in range(3):
        assert srv.wait_log(common_re("GET /index.html?k=%s-%d HTTP/1.1" % (t, i), 200,
                                      len(INDEX_HTML))), srv.access_log()


def test_combined_format(srv):
    t = _tag()
    r = srv.request("GET", "/index.html?c=" + t,
                    headers={"Referer": "http://ref.example/page", "User-Agent": "hdtest/1.0 " + t})
    assert r.status == 200
    rx = (r"^127\.0\.0\.1 - - %s \"GET /index\.html\?c=%s HTTP/1\.1\" 200 %d "
          r"\"http://ref\.example/page\" \"hdtest/1\.0 %s\"$" % (TIME, t, len(INDEX_HTML), t))
    assert srv.wait_log(rx, "combined_log"), srv.access_log("combined_log")
    # without the headers: "-"
    t2 = _tag()
    assert srv.request("GET", "/index.html?c=" + t2).status == 200
    rx = r"^127\.0\.0\.1 - - %s \"GET /index\.html\?c=%s HTTP/1\.1\" 200 \d+ \"-\" \"-\"$" % (TIME, t2)
    assert srv.wait_log(rx, "combined_log"), srv.access_log("combined_log")


def test_custom_format(srv):
    t = _tag()
    r = srv.request("GET", "/4k.bin", headers={"X-Test": "xt-" + t})
    assert r.status == 200
    assert srv.wait_log(r"^\d+ xt-%s application/octet-stream 200 4096$" % t, "custom_log"), \
        srv.access_log("custom_log")
    # %B is 0 (not "-") for no body; a missing header or response type is "-"
    r = srv.request("HEAD", "/blob.zzqx", headers={"X-Test": "xh-" + t})
    assert r.status == 200
    assert srv.wait_log(r"^\d+ xh-%s - 200 0$" % t, "custom_log"), srv.access_log("custom_log")


def test_error_log_client_denied(srv):
    t = _tag()
    assert srv.request("GET", "/denied_dir/page.txt?t=" + t).status == 403
    m = srv.wait_log(r"(?i)^.*denied.*$", "error_log")
    assert m, srv.error_log()
    line = m.group(0)
    assert "127.0.0.1" in line
    assert "denied_dir" in line
    assert re.search(r"\[(\w+:)?(error|info|warn|notice)\]", line), line


def test_pid_file(srv):
    assert srv.pid_from_file() == srv.pid


def test_log_reopened_on_graceful_restart(server_factory):
    s = server_factory()
    t = _tag()
    assert s.get("/index.html?before=" + t).status == 200
    assert s.wait_log(r"before=%s" % t)
    old = os.path.join(s.logs_dir, "access_log")
    os.rename(old, old + ".1")
    master = s.pid_from_file()
    assert master == s.pid
    os.kill(master, signal.SIGUSR1)
    assert wait_for(lambda: os.path.exists(old), 5.0), "access_log not recreated after USR1"
    # Old children may still be finishing; keep asking until a request is
    # logged, and require it to be in the new file.
    t2 = _tag()

    def logged():
        s.get("/index.html?after=" + t2)
        return "after=" + t2 in s.access_log()
    assert wait_for(logged, 8.0, 0.3), (s.access_log(), s.access_log("access_log.1"))
    assert "before=" + t in s.access_log("access_log.1")
    assert "before=" + t not in s.access_log()
    assert s.alive() and s.pid_from_file() == master
