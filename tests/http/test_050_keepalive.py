"""Persistent connections: HTTP/1.1 and 1.0 rules, Connection: close,
MaxKeepAliveRequests, KeepAliveTimeout, pipelining, request bodies on a
kept-alive connection, Expect: 100-continue, KeepAlive Off."""

import time

import pytest

from hdtest import BIN_4K, DIR_INDEX_HTML, INDEX_HTML, build_request


@pytest.fixture(scope="module")
def srv(module_server_factory):
    return module_server_factory(keepalive_timeout=5)


def test_http11_keeps_connection_open(srv):
    with srv.conn() as c:
        r1 = c.request("GET", "/index.html")
        assert r1.status == 200 and r1.body == INDEX_HTML
        assert not r1.connection_close
        assert c.is_open(0.3)
        r2 = c.request("GET", "/4k.bin")
        assert r2.status == 200 and r2.body == BIN_4K
        r3 = c.request("GET", "/missing")
        assert r3.status == 404
        assert not r3.connection_close
        r4 = c.request("GET", "/index.html")
        assert r4.status == 200


def test_http10_closes_by_default(srv):
    with srv.conn() as c:
        r = c.request("GET", "/index.html", version="HTTP/1.0", host=None)
        assert r.status == 200 and r.body == INDEX_HTML
        assert "keep-alive" not in r.tokens("connection")
        assert c.wait_closed(3.0)


def test_http10_keepalive_requested(srv):
    with srv.conn() as c:
        r1 = c.request("GET", "/index.html", headers={"Connection": "keep-alive"},
                       version="HTTP/1.0")
        assert r1.status == 200 and r1.body == INDEX_HTML
        assert "keep-alive" in r1.tokens("connection")
        assert r1.header("Content-Length") == str(len(INDEX_HTML))
        assert c.is_open(0.3)
        r2 = c.request("GET", "/4k.bin", headers={"Connection": "keep-alive"},
                       version="HTTP/1.0")
        assert r2.status == 200 and r2.body == BIN_4K
        # without the token the connection ends after this one
        r3 = c.request("GET", "/index.html", version="HTTP/1.0")
        assert r3.status == 200
        assert c.wait_closed(3.0)


def test_connection_close_closes(srv):
    with srv.conn() as c:
        r = c.request("GET", "/index.html", headers={"Connection": "close"})
        assert r.status == 200 and r.body == INDEX_HTML
        assert r.connection_close
        assert c.wait_closed(3.0)
        assert c.pending() == b""


def test_connection_close_token_in_list(srv):
    with srv.conn() as c:
        r = c.request("GET", "/index.html", headers={"Connection": "TE, Close"})
        assert r.status == 200
        assert r.connection_close
        assert c.wait_closed(3.0)


def test_pipelining_three_requests_in_order(srv):
    rs = srv.pipeline([build_request("GET", "/index.html"),
                       build_request("GET", "/4k.bin"),
                       build_request("GET", "/dir/")])
    assert [r.status for r in rs] == [200, 200, 200]
    assert rs[0].body == INDEX_HTML
    assert rs[1].body == BIN_4K
    assert rs[2].body == DIR_INDEX_HTML


def test_pipelining_many_with_errors_and_head(srv):
    reqs = []
    expect = []
    for i in range(10):
        reqs.append(build_request("GET", "/4k.bin"))
        expect.append((200, BIN_4K))
        reqs.append(build_request("HEAD", "/index.html"))
        expect.append((200, b""))
        reqs.append(build_request("GET", "/missing-%d" % i))
        expect.append((404, None))
    rs = srv.pipeline(reqs)
    for r, (status, body) in zip(rs, expect):
        assert r.status == status
        if body is not None:
            assert r.body == body


def test_pipelined_request_after_content_length_body(srv):
    with srv.conn() as c:
        c.send(build_request("POST", "/index.html", body=b"a=1&b=2" * 100)
               + build_request("GET", "/4k.bin"))
        r1 = c.read_response("POST")
        r2 = c.read_response("GET")
    assert r1.status == 405
    assert r2.status == 200 and r2.body == BIN_4K


def test_pipelined_request_after_chunked_body(srv):
    body = b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n"
    with srv.conn() as c:
        c.send(build_request("POST", "/index.html", headers={"Transfer-Encoding": "chunked"},
                             body=body) + build_request("GET", "/4k.bin"))
        r1 = c.read_response("POST")
        r2 = c.read_response("GET")
    assert r1.status == 405
    assert r2.status == 200 and r2.body == BIN_4K


def test_body_sent_slowly_then_next_request(srv):
    with srv.conn() as c:
        c.send(build_request("PUT", "/index.html", headers={"Content-Length": "10"}))
        time.sleep(0.1)
        c.send(b"01234")
        time.sleep(0.1)
        c.send(b"56789" + build_request("GET", "/index.html"))
        r1 = c.read_response("PUT")
        r2 = c.read_response("GET")
    assert r1.status == 405
    assert r2.status == 200 and r2.body == INDEX_HTML


def test_expect_100_continue(srv):
    body = b"0123456789"
    with srv.conn() as c:
        c.send(build_request("POST", "/index.html",
                             headers={"Expect": "100-continue", "Content-Length": str(len(body))}))
        first = None
        if c.readable(2.0):
            first = c.read_response("POST", interim=True)
        if first is None or first.status == 100:
            # 100 Continue (or nothing yet): the client sends the body.
            if first is not None:
                assert first.version == "HTTP/1.1" and first.reason.lower() == "continue"
                assert first.body == b""
            c.send(body + build_request("GET", "/index.html"))
            final = c.read_response("POST")
            assert final.status in (405, 413)
            nxt = c.read_response("GET")
            assert nxt.status == 200 and nxt.body == INDEX_HTML
        else:
            # A final answer before the body.
            assert first.status in (405, 413, 417)
            if first.connection_close:
                assert c.wait_closed(3.0)
            else:
                # The server must then read and discard the body.
                c.send(body + build_request("GET", "/index.html"))
                nxt = c.read_response("GET")
                assert nxt.status == 200 and nxt.body == INDEX_HTML


def test_expect_100_continue_http10_ignored(srv):
    # Expect is HTTP/1.1; an HTTP/1.0 client gets no 100.
    with srv.conn() as c:
        c.send(build_request("POST", "/index.html", version="HTTP/1.0",
                             headers={"Expect": "100-continue"}, body=b"0123456789"))
        r = c.read_response("POST")
    assert r.status == 405
    assert r.interim == []


def test_max_keepalive_requests(server_factory):
    s = server_factory(extra="MaxKeepAliveRequests 3\n")
    with s.conn() as c:
        r1 = c.request("GET", "/index.html")
        r2 = c.request("GET", "/index.html")
        r3 = c.request("GET", "/index.html")
        assert [r.status for r in (r1, r2, r3)] == [200, 200, 200]
        assert not r1.connection_close and not r2.connection_close
        assert r3.connection_close
        assert c.wait_closed(3.0)


def test_max_keepalive_requests_pipelined(server_factory):
    s = server_factory(extra="MaxKeepAliveRequests 2\n")
    with s.conn() as c:
        c.send(build_request("GET", "/index.html") * 4)
        r1 = c.read_response()
        r2 = c.read_response()
        assert r1.status == 200 and r2.status == 200
        assert r2.connection_close
        assert c.wait_closed(3.0)
        assert c.pending() == b""


def test_keepalive_timeout_closes_idle(server_factory):
    s = server_factory(keepalive_timeout=1)
    with s.conn() as c:
        r = c.request("GET", "/index.html")
        assert r.status == 200 and not r.connection_close
        t0 = time.monotonic()
        assert c.wait_closed(4.0), "idle keep-alive connection still open after 4 s"
        assert time.monotonic() - t0 > 0.3
        assert c.pending() == b""


def test_keepalive_off(server_factory):
    s = server_factory(extra="KeepAlive Off\n")
    for version, headers in (("HTTP/1.1", None), ("HTTP/1.0", {"Connection": "keep-alive"})):
        with s.conn() as c:
            r = c.request("GET", "/index.html", headers=headers, version=version)
            assert r.status == 200 and r.body == INDEX_HTML
            assert r.connection_close
            assert c.wait_closed(3.0)
    with s.conn() as c:
        c.send(build_request("GET", "/index.html") * 2)
        r = c.read_response()
        assert r.connection_close
        assert c.wait_closed(3.0)
        assert c.pending() == b""
