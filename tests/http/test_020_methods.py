"""Methods: OPTIONS, methods a static file does not allow, unknown methods."""

import pytest

import hdtest
from hdtest import INDEX_HTML


@pytest.fixture(scope="module")
def srv(module_server_factory):
    return module_server_factory()


def _allow(r):
    return {m.strip().upper() for m in r.header("Allow", "").split(",") if m.strip()}


def test_options_file(srv):
    r = srv.request("OPTIONS", "/index.html")
    assert r.status == 200
    allow = _allow(r)
    assert {"GET", "HEAD", "OPTIONS"} <= allow
    assert r.body == b""


def test_options_asterisk(srv):
    r = srv.request("OPTIONS", "*")
    assert r.status == 200
    assert r.body == b""
    assert not r.closed


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_method_not_allowed_on_static_file(srv, method):
    r = srv.request(method, "/index.html", body=b"x=1")
    assert r.status == 405
    assert "GET" in _allow(r)
    assert method not in _allow(r) or method == "POST"


def test_405_keeps_connection_usable(srv):
    with srv.conn() as c:
        r1 = c.request("DELETE", "/index.html")
        r2 = c.request("GET", "/index.html")
    assert r1.status == 405
    assert r2.status == 200 and r2.body == INDEX_HTML


@pytest.mark.parametrize("method", ["FOO", "get", "Get", "BREW"])
def test_unknown_method_501(srv, method):
    r = srv.request(method, "/index.html")
    assert r.status == 501
    # the server is still fine afterwards
    assert srv.get("/index.html").status == 200


def test_head_of_missing_has_no_body(srv):
    with srv.conn() as c:
        c.send(hdtest.build_request("HEAD", "/missing") + hdtest.build_request("GET", "/index.html"))
        h = c.read_response("HEAD")
        g = c.read_response("GET")
    assert h.status == 404 and h.body == b""
    assert g.status == 200 and g.body == INDEX_HTML
