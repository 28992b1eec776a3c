"""Basics: GET and HEAD of files, standard headers, 404, directories,
DirectoryIndex, listings and MIME types."""

import time
import urllib.parse

import pytest

import hdtest
from hdtest import BIN_4K, DIR_INDEX_HTML, INDEX_HTML, MIME_FILES

CONF = """
<Directory "{htdocs}/noindex_off">
    Options -Indexes
</Directory>
AddType application/x-hdtest .hdt
"""


def _setup(s):
    s.write_file("noindex_off/a.txt", b"a\n")


@pytest.fixture(scope="module")
def srv(module_server_factory):
    return module_server_factory(extra=CONF, setup=_setup)


def test_get_root_serves_index(srv):
    r = srv.get("/")
    assert r.status == 200
    assert r.body == INDEX_HTML
    assert r.header("Content-Type", "").split(";")[0].strip() == "text/html"
    assert r.header("Content-Length") == str(len(INDEX_HTML))


def test_standard_headers(srv):
    r = srv.get("/index.html")
    assert r.status == 200
    date = hdtest.parse_http_date(r.header("Date"))
    assert abs(date - time.time()) < 60
    assert r.header("Server") == "httpd/0.1.0 (Unix)"      # ServerTokens Full (default)
    assert r.header("Last-Modified") == "Thu, 02 Jan 2020 03:04:05 GMT"
    etag = r.header("ETag")
    assert etag and etag.startswith(('"', 'W/"')) and etag.endswith('"') and len(etag) > 2
    assert r.header("Accept-Ranges") == "bytes"
    assert len(r.header_all("Date")) == 1 and len(r.header_all("Server")) == 1


def test_4k_file_exact_bytes(srv):
    r = srv.get("/4k.bin")
    assert r.status == 200
    assert r.header("Content-Length") == "4096"
    assert r.body == BIN_4K
    assert r.header("Last-Modified") == "Tue, 01 Jun 2021 12:00:00 GMT"


def test_etag_stable_and_distinct(srv):
    a1 = srv.get("/4k.bin").header("ETag")
    a2 = srv.get("/4k.bin").header("ETag")
    b = srv.get("/index.html").header("ETag")
    assert a1 == a2
    assert a1 != b


def test_head_same_headers_no_body(srv):
    g = srv.get("/4k.bin")
    with srv.conn() as c:
        # HEAD then GET pipelined: if HEAD leaked a body, the GET's status
        # line would not be where the client expects it.
        c.send(hdtest.build_request("HEAD", "/4k.bin") + hdtest.build_request("GET", "/index.html"))
        h = c.read_response("HEAD")
        nxt = c.read_response("GET")
    assert h.status == 200
    for name in ("Content-Length", "Content-Type", "ETag", "Last-Modified", "Accept-Ranges"):
        assert h.header(name) == g.header(name), name
    assert h.body == b""
    assert nxt.status == 200 and nxt.body == INDEX_HTML


def test_head_via_http_client(srv):
    r = srv.get("/index.html", method="HEAD")
    assert r.status == 200
    assert r.body == b""
    assert r.header("Content-Length") == str(len(INDEX_HTML))


def test_404_missing(srv):
    r = srv.get("/no-such-file.html")
    assert r.status == 404
    assert r.header("Content-Type", "").startswith("text/html")
    assert 0 < len(r.body) < 2048
    assert b"Not Found" in r.body
    assert r.header("Content-Length") == str(len(r.body))


def test_404_missing_in_missing_dir(srv):
    assert srv.get("/no/such/dir/file.txt").status == 404


def _location_of(r):
    loc = r.header("Location")
    assert loc, r
    return urllib.parse.urlsplit(loc)


def test_directory_without_slash_redirects(srv):
    r = srv.request("GET", "/dir")
    assert r.status == 301
    loc = _location_of(r)
    assert loc.path == "/dir/"
    assert r.header("Location").endswith("/dir/")
    assert loc.query == ""


def test_directory_redirect_keeps_query(srv):
    r = srv.request("GET", "/dir?a=1&b=two")
    assert r.status == 301
    loc = _location_of(r)
    assert loc.path == "/dir/"
    assert loc.query == "a=1&b=two"


def test_directory_with_slash_serves_its_index(srv):
    r = srv.get("/dir/")
    assert r.status == 200
    assert r.body == DIR_INDEX_HTML


def test_directory_without_index_indexes_on_lists(srv):
    r = srv.get("/noindex/")
    assert r.status == 200
    assert r.header("Content-Type", "").startswith("text/html")
    for name in (b"a.txt", b"b.txt", b"sub"):
        assert name in r.body


def test_directory_without_index_indexes_off_403(srv):
    r = srv.get("/noindex_off/")
    assert r.status == 403
    assert b"a.txt" not in r.body


def test_file_in_dir_without_index(srv):
    r = srv.get("/noindex/a.txt")
    assert r.status == 200 and r.body == b"file a\n"


@pytest.mark.parametrize("name,types", [
    ("style.css", ("text/css",)),
    ("app.js", ("text/javascript", "application/javascript", "application/x-javascript")),
    ("image.png", ("image/png",)),
    ("data.json", ("application/json",)),
    ("pic.svg", ("image/svg+xml",)),
    ("plain.txt", ("text/plain",)),
])
def test_mime_types(srv, name, types):
    r = srv.get("/" + name)
    assert r.status == 200
    assert r.body == MIME_FILES[name]
    assert r.header("Content-Type", "").split(";")[0].strip().lower() in types


def test_unknown_extension_has_no_content_type(srv):
    r = srv.get("/blob.zzqx")
    assert r.status == 200
    assert r.body == MIME_FILES["blob.zzqx"]
    assert not r.has_header("Content-Type")


def test_addtype(srv):
    r = srv.get("/x.hdt")
    assert r.status == 200
    assert r.header("Content-Type") == "application/x-hdtest"


def test_addtype_in_directory_overrides(server_factory):
    s = server_factory(extra='<Directory "{htdocs}/override">\n'
                             '    AddType text/plain .json\n</Directory>\n',
                       files={"override/data.json": b"{}\n"})
    assert s.get("/override/data.json").header("Content-Type", "").startswith("text/plain")
    assert s.get("/data.json").header("Content-Type", "").startswith("application/json")


@pytest.mark.parametrize("tokens,expected", [
    ("Prod", "httpd"),
    ("Major", "httpd/0"),
    ("Minor", "httpd/0.1"),
    ("Minimal", "httpd/0.1.0"),
    ("OS", "httpd/0.1.0 (Unix)"),
    ("Full", "httpd/0.1.0 (Unix)"),
])
def test_server_tokens(server_factory, tokens, expected):
    s = server_factory(extra="ServerTokens %s\n" % tokens)
    assert s.get("/index.html").header("Server") == expected
    assert s.get("/missing").header("Server") == expected


def test_custom_directory_index(server_factory):
    s = server_factory(extra="DirectoryIndex start.htm index.html\n",
                       files={"start.htm": b"start page\n", "dir/start.htm": b"dir start\n",
                              "only/index.html": b"only index\n"})
    assert s.get("/").body == b"start page\n"
    assert s.get("/dir/").body == b"dir start\n"
    # the second name is used when the first is missing
    assert s.get("/only/").body == b"only index\n"


def test_directory_index_disabled(server_factory):
    s = server_factory(extra="DirectoryIndex disabled\n"
                             '<Directory "{htdocs}/dir">\n    Options -Indexes\n</Directory>\n')
    r = s.get("/")
    # with Indexes on, the listing is served instead of index.html
    assert r.status == 200
    assert r.body != INDEX_HTML
    assert b"index.html" in r.body and b"4k.bin" in r.body
    assert s.get("/dir/").status == 403
