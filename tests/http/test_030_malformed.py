"""Malformed requests (raw sockets). Every one gets its 4xx/5xx with
"Connection: close", the connection is then closed, and a fresh connection
right after is served normally."""

import time

import pytest

from hdtest import INDEX_HTML

CONF = """
LimitRequestLine 1000
LimitRequestFieldSize 1000
LimitRequestFields 20
LimitRequestBody 1000
"""

H = b"Host: test.local\r\n"


def _many_fields(n):
    return b"".join(b"X-F%d: v\r\n" % i for i in range(n))


CASES = [
    ("request-line-too-long",
     b"GET /" + b"a" * 1200 + b" HTTP/1.1\r\n" + H + b"\r\n", {414}),
    ("field-too-long",
     b"GET /index.html HTTP/1.1\r\n" + H + b"X-Big: " + b"b" * 1200 + b"\r\n\r\n", {431, 400}),
    ("too-many-fields",
     b"GET /index.html HTTP/1.1\r\n" + H + _many_fields(30) + b"\r\n", {431, 400}),
    ("body-over-limit",
     b"POST /index.html HTTP/1.1\r\n" + H + b"Content-Length: 5000\r\n\r\n", {413}),
    ("te-gzip",
     b"POST /index.html HTTP/1.1\r\n" + H + b"Transfer-Encoding: gzip\r\n\r\n", {501}),
    ("te-gzip-chunked",
     b"POST /index.html HTTP/1.1\r\n" + H + b"Transfer-Encoding: gzip, chunked\r\n\r\n"
     b"0\r\n\r\n", {501}),
    ("te-chunked-and-content-length",
     b"POST /index.html HTTP/1.1\r\n" + H +
     b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n", {400}),
    ("two-different-content-lengths",
     b"POST /index.html HTTP/1.1\r\n" + H +
     b"Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", {400}),
    ("content-length-not-a-number",
     b"POST /index.html HTTP/1.1\r\n" + H + b"Content-Length: abc\r\n\r\n", {400}),
    ("content-length-negative",
     b"POST /index.html HTTP/1.1\r\n" + H + b"Content-Length: -1\r\n\r\n", {400}),
    ("bad-chunk-size",
     b"POST /index.html HTTP/1.1\r\n" + H +
     b"Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n", {400}),
    ("obs-fold",
     b"GET /index.html HTTP/1.1\r\n" + H + b"X-A: b\r\n c\r\n\r\n", {400}),
    ("nul-in-field",
     b"GET /index.html HTTP/1.1\r\n" + H + b"X-A: a\x00b\r\n\r\n", {400}),
    ("ctl-in-field",
     b"GET /index.html HTTP/1.1\r\n" + H + b"X-A: a\x01b\r\n\r\n", {400}),
    ("space-before-colon",
     b"GET /index.html HTTP/1.1\r\n" + H + b"X-A : b\r\n\r\n", {400}),
    ("field-without-colon",
     b"GET /index.html HTTP/1.1\r\n" + H + b"NoColonHere\r\n\r\n", {400}),
    ("http11-without-host",
     b"GET /index.html HTTP/1.1\r\n\r\n", {400}),
    ("two-hosts",
     b"GET /index.html HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n", {400}),
    ("http2-preface",
     b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", {400}),
    ("garbage-text",
     b"hello there, this is not http at all\r\n\r\n", {400}),
    ("garbage-binary",
     b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03" + bytes(range(40)) + b"\r\n\r\n", {400}),
    ("bad-version-token",
     b"GET /index.html HTTP/1.x\r\n" + H + b"\r\n", {400}),
    ("http-0.9-line",
     b"GET /index.html\r\n\r\n", {400}),
    ("target-not-origin-form",
     b"GET index.html HTTP/1.1\r\n" + H + b"\r\n", {400}),
    ("http-3.0",
     b"GET /index.html HTTP/3.0\r\n" + H + b"\r\n", {505}),
]


@pytest.fixture(scope="module")
def srv(module_server_factory):
    return module_server_factory(extra=CONF)


def _assert_served(srv):
    r = srv.raw(b"GET /index.html HTTP/1.1\r\n" + H + b"Connection: close\r\n\r\n")
    assert r.status == 200
    assert r.body == INDEX_HTML


@pytest.mark.parametrize("data,statuses", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed(srv, data, statuses):
    r = srv.raw(data, method="GET", wait_close=3.0)
    assert r.status in statuses, r
    assert r.connection_close, "no Connection: close in %r" % (r,)
    assert r.closed, "connection not closed after the error response"
    assert r.extra == b"", "bytes after the error response: %r" % r.extra
    assert r.header("Content-Type", "text/html").startswith("text/html")
    _assert_served(srv)


def test_limits_allow_requests_just_under(srv):
    # A line of exactly the limit and fields at the limit are served.
    target = b"/index.html?" + b"q" * (1000 - len(b"GET /index.html? HTTP/1.1"))
    line = b"GET " + target + b" HTTP/1.1"
    assert len(line) == 1000
    r = srv.raw(line + b"\r\n" + H + b"\r\n")
    assert r.status == 200 and r.body == INDEX_HTML
    r = srv.raw(b"GET /index.html HTTP/1.1\r\n" + H + _many_fields(19) + b"\r\n")
    assert r.status == 200


def test_body_at_limit_is_read(srv):
    # 1000 bytes: not over LimitRequestBody; the static file answers 405,
    # and the connection stays usable because the body was consumed.
    with srv.conn() as c:
        c.send(b"PUT /index.html HTTP/1.1\r\n" + H + b"Content-Length: 1000\r\n\r\n"
               + b"x" * 1000 + b"GET /index.html HTTP/1.1\r\n" + H + b"\r\n")
        r1 = c.read_response("PUT")
        r2 = c.read_response("GET")
    assert r1.status == 405
    assert r2.status == 200 and r2.body == INDEX_HTML


def test_chunked_body_over_limit_413(srv):
    body = b"".join(b"%x\r\n%s\r\n" % (200, b"y" * 200) for _ in range(8)) + b"0\r\n\r\n"
    r = srv.raw(b"POST /index.html HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\n"
                + body, wait_close=3.0)
    assert r.status == 413
    assert r.connection_close and r.closed
    _assert_served(srv)


def test_two_equal_content_lengths(srv):
    r = srv.raw(b"GET /index.html HTTP/1.1\r\n" + H +
                b"Content-Length: 5\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")
    assert r.status in (200, 400)
    if r.status == 200:
        assert r.body == INDEX_HTML
    else:
        assert r.connection_close and r.closed
    _assert_served(srv)


def test_http10_without_host(srv):
    r = srv.raw(b"GET /index.html HTTP/1.0\r\n\r\n")
    assert r.status == 200
    assert r.body == INDEX_HTML
    assert r.closed


def test_leading_empty_lines_ignored(srv):
    r = srv.raw(b"\r\n\r\nGET /index.html HTTP/1.1\r\n" + H + b"Connection: close\r\n\r\n")
    assert r.status == 200 and r.body == INDEX_HTML


def test_request_split_into_small_writes(srv):
    with srv.conn() as c:
        for piece in (b"GE", b"T /ind", b"ex.html HT", b"TP/1.1\r", b"\nHost: te",
                      b"st.local\r\n", b"\r", b"\n"):
            c.send(piece)
            time.sleep(0.02)
        r = c.read_response()
    assert r.status == 200 and r.body == INDEX_HTML
