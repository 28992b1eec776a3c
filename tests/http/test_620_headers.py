"""mod_headers: Header and RequestHeader as Apache 2.4's, every action, the
onsuccess and always conditions on 2xx, 304, 301, 403, 404 and 400, the
server/<Directory>/<Files>/<Location> contexts and their merge order,
Content-Type and Last-Modified, %t/%D formats, and configuration errors.

Request header changes are seen three ways: echoed back by a server-level
"Header echo ^X-Echo-", in the access log (%{X-Logged}i), and through the
Range and If-None-Match headers that change the core's answer."""

import re
import time

import pytest

from hdtest import build_request

CONF = r"""
Header append X-Order server
Header always append X-AOrder server
Header always set X-Srv-Always yes
Header set X-Srv-Success yes
Header echo ^X-Echo-
RequestHeader append X-Echo-Order server
CustomLog "{root}/logs/rh_log" "%U %{X-Logged}i"

<Directory "{htdocs}/act/set">
    Header add X-Set a
    Header add X-Set b
    Header set X-Set c
    Header set ETag "\"fixed\""
</Directory>
<Directory "{htdocs}/act/add">
    Header add X-Add a
    Header add X-Add b
    Header add Accept-Ranges none
</Directory>
<Directory "{htdocs}/act/append">
    Header append X-App a
    Header append X-App b
    Header append Accept-Ranges foo
</Directory>
<Directory "{htdocs}/act/merge">
    Header merge X-M a
    Header merge X-M a
    Header merge X-M b
    Header merge X-M A
    Header set X-Q "\"a, b\", c"
    Header merge X-Q b
    Header merge X-Q c
    Header merge X-Q '"a, b"'
</Directory>
<Directory "{htdocs}/act/setifempty">
    Header setifempty X-E first
    Header setifempty X-E second
    Header setifempty ETag "\"no\""
</Directory>
<Directory "{htdocs}/act/unset">
    Header add X-U a
    Header add X-U b
    Header unset X-U
    Header unset ETag
    Header unset Accept-Ranges:
</Directory>
<Directory "{htdocs}/act/echo">
    Header echo (?i)^x-mirror
    Header echo ^(Content-Type|Connection|Content-Length|Last-Modified)$
</Directory>
<Directory "{htdocs}/act/edit">
    Header edit ETag "^\"([0-9a-f]+)-([0-9a-f]+)\"$" "\"$2-$1\""
    Header set X-Ed "a-a-a"
    Header edit X-Ed a b
    Header set X-EdAll "a-a-a"
    Header edit* X-EdAll a b
    Header set X-Bk "k1=v1; k2=v2"
    Header edit* X-Bk "(\w+)=(\w+)" "$2=$1"
    Header add X-Mv aa
    Header add X-Mv ca
    Header edit X-Mv a z
    Header set X-TEd T
    Header edit X-TEd "^T$" "[%t]"
    Header edit X-Absent a b
</Directory>

<Location "/rq/">
    RequestHeader set X-Echo-Set new
    RequestHeader add X-Echo-Add b
    RequestHeader append X-Echo-App b
    RequestHeader merge X-Echo-Merge b
    RequestHeader merge X-Echo-Merge c
    RequestHeader setifempty X-Echo-Sie dflt
    RequestHeader unset X-Echo-Unset
    RequestHeader edit X-Echo-Edit a b
    RequestHeader edit* X-Echo-EditAll a b
    RequestHeader edit X-Echo-Bk "^user=(\w+)$" "name=$1"
    RequestHeader set X-Logged yes
</Location>
<Location "/rq_range/">
    RequestHeader set Range "bytes=0-3"
</Location>
<Location "/rq_inm/">
    RequestHeader unset If-None-Match
</Location>

<Directory "{htdocs}/os">
    Header set X-OnSuccess yes
    Header always set X-Always yes
    Header always set X-Both always
    Header onsuccess set X-Both onsuccess
</Directory>
<Directory "{htdocs}/os/denied">
    Require all denied
</Directory>
<Location "/os_loc/">
    Header always edit Location "^http://[^/]+/" "https://example.org/"
</Location>

<Directory "{htdocs}/ctx">
    Header append X-Order dir
    Header set X-Ov dir
    Header set X-Gone dir
    RequestHeader append X-Echo-Order dir
</Directory>
<Directory "{htdocs}/ctx/sub">
    Header append X-Order subdir
</Directory>
<DirectoryMatch "/ctx/sub$">
    Header append X-Order dirmatch
</DirectoryMatch>
<Files "ctx.txt">
    Header append X-Order files
</Files>
<FilesMatch "^ctx\.txt$">
    Header append X-Order filesmatch
</FilesMatch>
<Location "/ctx">
    Header append X-Order location
    Header set X-Ov location
    Header unset X-Gone
    Header always append X-AOrder location
    RequestHeader append X-Echo-Order location
</Location>
<LocationMatch "^/ctx/sub/">
    Header append X-Order locmatch
</LocationMatch>

<Files "ct_set.txt">
    Header set Content-Type "application/x-hd-test"
</Files>
<Files "ct_unset.txt">
    Header unset Content-Type
</Files>
<Files "ct_edit.txt">
    Header edit Content-Type "^text/(plain)$" "text/$1; charset=utf-8"
</Files>
<Files "ct_sie.txt">
    Header setifempty Content-Type "application/x-never"
</Files>
<Files "ct_sie.zzqx">
    Header setifempty Content-Type "application/x-filled"
</Files>
<Files "ct_append.txt">
    Header append Content-Type "x-extra"
</Files>
<Files "lm_unset.txt">
    Header unset Last-Modified
</Files>
<Files "lm_set.txt">
    Header set Last-Modified "Mon, 01 Jan 2001 00:00:00 GMT"
</Files>
<Files "lm_edit.txt">
    Header edit Last-Modified "GMT$" "+0000"
</Files>

<Files "fmt.txt">
    Header set X-Time "%t %D"
    Header set X-Pct "100%% sure, 50%"
    Header set X-Esc "a\tb\\c\qd"
    Header set X-Braced "%{ignored}t"
</Files>
<Files "framing.txt">
    Header unset Date
    Header set Server evil
    Header always set Content-Length 1
    Header set Connection close
    Header set Keep-Alive "timeout=1"
    Header set Transfer-Encoding chunked
</Files>
"""

F = b"file body\n"
FILES = {p: F for p in (
    "act/set/f.txt", "act/add/f.txt", "act/append/f.txt", "act/merge/f.txt",
    "act/setifempty/f.txt", "act/unset/f.txt", "act/echo/f.txt", "act/edit/f.txt",
    "rq/f.txt", "rq_inm/f.txt", "os/f.txt", "os/denied/f.txt", "os/sub/index.html",
    "os_loc/sub/index.html",
    "ctx/other.txt", "ctx/sub/ctx.txt",
    "ct_set.txt", "ct_unset.txt", "ct_edit.txt", "ct_sie.txt", "ct_sie.zzqx", "ct_append.txt",
    "lm_unset.txt", "lm_set.txt", "lm_edit.txt", "fmt.txt", "framing.txt")}
FILES["rq_range/f.txt"] = b"0123456789"
MTIME = 1577934245  # Thu, 02 Jan 2020 03:04:05 GMT


def _setup(srv):
    import os
    for name in ("lm_unset.txt", "lm_set.txt", "lm_edit.txt", "act/edit/f.txt"):
        os.utime(os.path.join(srv.htdocs, name), (MTIME, MTIME))


@pytest.fixture(scope="module")
def srv(module_server_factory):
    return module_server_factory(extra=CONF, files=FILES, setup=_setup)


def get(srv, path, headers=None, method="GET"):
    return srv.request(method, path, headers=headers)


# -- every action of Header ------------------------------------------------

def test_set_replaces_every_value(srv):
    r = get(srv, "/act/set/f.txt")
    assert r.status == 200 and r.body == F
    assert r.header_all("X-Set") == ["c"]
    assert r.header_all("ETag") == ['"fixed"']


def test_add_adds_a_line(srv):
    r = get(srv, "/act/add/f.txt")
    assert r.header_all("X-Add") == ["a", "b"]
    assert r.header_all("Accept-Ranges") == ["bytes", "none"]


def test_append_joins_with_comma(srv):
    r = get(srv, "/act/append/f.txt")
    assert r.header_all("X-App") == ["a, b"]
    assert r.header_all("Accept-Ranges") == ["bytes, foo"]


def test_merge_skips_present_tokens(srv):
    r = get(srv, "/act/merge/f.txt")
    # exact, case-sensitive comparison of comma-separated elements
    assert r.header_all("X-M") == ["a, b, A"]
    # a quoted string is one element, commas inside it included
    assert r.header_all("X-Q") == ['"a, b", c, b']


def test_setifempty_only_when_absent(srv):
    plain = get(srv, "/act/set/f.txt")
    r = get(srv, "/act/setifempty/f.txt")
    assert r.header_all("X-E") == ["first"]
    etag = r.header("ETag")
    assert etag and etag != '"no"' and re.match(r'^"[0-9a-f]+-[0-9a-f]+"$', etag)
    assert plain.status == 200


def test_unset_removes_every_value(srv):
    r = get(srv, "/act/unset/f.txt")
    assert r.status == 200 and r.body == F
    assert not r.has_header("X-U")
    assert not r.has_header("ETag")
    assert not r.has_header("Accept-Ranges")


def test_echo_copies_matching_request_headers(srv):
    r = get(srv, "/act/echo/f.txt", headers=[("X-Mirror-One", "1"), ("x-mirror-two", "2"),
                                             ("X-Other", "3")])
    assert r.header_all("X-Mirror-One") == ["1"]
    assert r.header_all("x-mirror-two") == ["2"]
    assert not r.has_header("X-Other")


def test_echo_never_copies_framing_or_type(srv):
    r = srv.request("GET", "/act/echo/f.txt", body=b"x",
                    headers=[("Content-Type", "application/x-from-client"),
                             ("Last-Modified", "Mon, 01 Jan 2001 00:00:00 GMT")])
    assert r.header_all("Content-Type") == ["text/plain"]
    assert len(r.header_all("Content-Length")) == 1
    assert r.header_all("Content-Length") == [str(len(r.body))]
    assert len(r.header_all("Keep-Alive")) <= 1
    assert r.header_all("Last-Modified") != ["Mon, 01 Jan 2001 00:00:00 GMT"]


def test_edit_with_back_references(srv):
    # the file's ETag is "<size>-<mtime in µs>" in hex; the edit swaps the two
    r = get(srv, "/act/edit/f.txt")
    assert r.header_all("ETag") == ['"%x-%x"' % (MTIME * 10**6, len(F))]
    assert r.header_all("X-Bk") == ["v1=k1; v2=k2"]


def test_edit_first_match_vs_every_match(srv):
    r = get(srv, "/act/edit/f.txt")
    assert r.header_all("X-Ed") == ["b-a-a"]
    assert r.header_all("X-EdAll") == ["b-b-b"]
    # each value of a header is edited
    assert r.header_all("X-Mv") == ["za", "cz"]
    # edit never creates a header
    assert not r.has_header("X-Absent")


def test_edit_replacement_takes_formats(srv):
    before = int(time.time() * 1e6)
    r = get(srv, "/act/edit/f.txt")
    m = re.match(r"^\[t=(\d+)\]$", r.header("X-TEd", ""))
    assert m, r.headers
    assert before - 5e6 <= int(m.group(1)) <= time.time() * 1e6 + 5e6


# -- every action of RequestHeader -----------------------------------------

def test_request_header_actions(srv):
    r = get(srv, "/rq/f.txt", headers=[
        ("X-Echo-Set", "old"), ("X-Echo-Add", "a"), ("X-Echo-App", "a"),
        ("X-Echo-Merge", "a, b"), ("X-Echo-Sie", "orig"), ("X-Echo-Unset", "gone"),
        ("X-Echo-Edit", "aaa"), ("X-Echo-EditAll", "aaa"), ("X-Echo-Bk", "user=bob")])
    assert r.status == 200 and r.body == F
    assert r.header_all("X-Echo-Set") == ["new"]
    assert r.header_all("X-Echo-Add") == ["a", "b"]
    assert r.header_all("X-Echo-App") == ["a, b"]
    assert r.header_all("X-Echo-Merge") == ["a, b, c"]
    assert r.header_all("X-Echo-Sie") == ["orig"]
    assert not r.has_header("X-Echo-Unset")
    assert r.header_all("X-Echo-Edit") == ["baa"]
    assert r.header_all("X-Echo-EditAll") == ["bbb"]
    assert r.header_all("X-Echo-Bk") == ["name=bob"]


def test_request_header_actions_on_absent_headers(srv):
    r = get(srv, "/rq/f.txt")
    assert r.header_all("X-Echo-Set") == ["new"]
    assert r.header_all("X-Echo-Add") == ["b"]
    assert r.header_all("X-Echo-App") == ["b"]
    assert r.header_all("X-Echo-Merge") == ["b, c"]
    assert r.header_all("X-Echo-Sie") == ["dflt"]
    assert not r.has_header("X-Echo-Edit")


def test_request_header_reaches_the_access_log(srv):
    assert get(srv, "/rq/f.txt?log=1").status == 200
    assert get(srv, "/index.html?log=2", headers={"X-Logged": "client"}).status == 200
    assert srv.wait_log(r"^/rq/f\.txt yes$", name="rh_log"), srv.access_log("rh_log")
    assert srv.wait_log(r"^/index\.html client$", name="rh_log"), srv.access_log("rh_log")


def test_request_header_range_changes_the_answer(srv):
    r = get(srv, "/rq_range/f.txt")
    assert r.status == 206
    assert r.body == b"0123"
    assert r.header("Content-Range") == "bytes 0-3/10"


def test_request_header_unset_if_none_match(srv):
    etag = get(srv, "/rq_inm/f.txt").header("ETag")
    assert etag
    assert get(srv, "/os/f.txt", headers={"If-None-Match": get(srv, "/os/f.txt")
                                          .header("ETag")}).status == 304
    r = get(srv, "/rq_inm/f.txt", headers={"If-None-Match": etag})
    assert r.status == 200 and r.body == F


def test_request_header_not_applied_to_refused_requests(srv):
    # RequestHeader runs in fixups, after access control: a 403 never sees it
    r = get(srv, "/os/denied/f.txt", headers={"X-Echo-Probe": "1"})
    assert r.status == 403
    assert not r.has_header("X-Echo-Probe")


# -- onsuccess and always ----------------------------------------------------

def _onsuccess(r):
    assert r.header_all("X-OnSuccess") == ["yes"], r.headers
    assert r.header_all("X-Always") == ["yes"], r.headers
    # always runs first, then onsuccess: the later set wins
    assert r.header_all("X-Both") == ["onsuccess"], r.headers
    assert r.header_all("X-Srv-Success") == ["yes"]
    assert r.header_all("X-Srv-Always") == ["yes"]


def _always_only(r):
    assert not r.has_header("X-OnSuccess"), r.headers
    assert r.header_all("X-Always") == ["yes"], r.headers
    assert r.header_all("X-Both") == ["always"], r.headers
    assert not r.has_header("X-Srv-Success")
    assert r.header_all("X-Srv-Always") == ["yes"]


def test_200_gets_both(srv):
    r = get(srv, "/os/f.txt")
    assert r.status == 200 and r.body == F
    _onsuccess(r)


def test_directory_index_gets_both(srv):
    # mod_dir serves /os/sub/index.html: the index file's sections apply
    r = get(srv, "/os/sub/")
    assert r.status == 200 and r.body == F
    _onsuccess(r)


def test_head_200_gets_both(srv):
    r = get(srv, "/os/f.txt", method="HEAD")
    assert r.status == 200 and r.body == b""
    _onsuccess(r)


def test_304_gets_both(srv):
    etag = get(srv, "/os/f.txt").header("ETag")
    r = get(srv, "/os/f.txt", headers={"If-None-Match": etag})
    assert r.status == 304 and r.body == b""
    _onsuccess(r)


def test_206_gets_both(srv):
    r = get(srv, "/os/f.txt", headers={"Range": "bytes=0-3"})
    assert r.status == 206 and r.body == F[:4]
    _onsuccess(r)


def test_404_gets_always_only(srv):
    r = get(srv, "/os/missing.txt")
    assert r.status == 404
    _always_only(r)


def test_403_gets_always_only(srv):
    r = get(srv, "/os/denied/f.txt")
    assert r.status == 403
    assert b"file body" not in r.body
    _always_only(r)


def test_301_from_mod_dir_gets_always_only(srv):
    r = get(srv, "/os/sub")
    assert r.status == 301
    assert r.header("Location") == "http://test.local/os/sub/"
    _always_only(r)


def test_always_edit_reaches_a_redirect(srv):
    r = get(srv, "/os_loc/sub")
    assert r.status == 301
    assert r.header_all("Location") == ["https://example.org/os_loc/sub/"]


def test_malformed_request_gets_server_always(srv):
    r = srv.raw(b"GET /os/f.txt HTTP/1.1\r\n\r\n")     # no Host
    assert r.status == 400
    assert r.header_all("X-Srv-Always") == ["yes"]
    assert not r.has_header("X-Srv-Success")


# -- contexts and merge order ------------------------------------------------

def test_merge_order_every_context(srv):
    r = get(srv, "/ctx/sub/ctx.txt")
    assert r.status == 200
    assert r.header_all("X-Order") == [
        "server, dir, subdir, dirmatch, files, filesmatch, location, locmatch"]


def test_merge_order_fewer_sections(srv):
    r = get(srv, "/ctx/other.txt")
    assert r.header_all("X-Order") == ["server, dir, location"]
    assert r.header_all("X-Ov") == ["location"]
    assert not r.has_header("X-Gone")
    r = get(srv, "/index.html")
    assert r.header_all("X-Order") == ["server"]
    assert not r.has_header("X-Ov")


def test_merge_order_always_list(srv):
    r = get(srv, "/ctx/missing.txt")
    assert r.status == 404
    assert r.header_all("X-AOrder") == ["server, location"]
    assert not r.has_header("X-Order")


def test_merge_order_request_headers(srv):
    r = get(srv, "/ctx/other.txt")
    assert r.header_all("X-Echo-Order") == ["server, dir, location"]
    r = get(srv, "/index.html", headers={"X-Echo-Order": "client"})
    assert r.header_all("X-Echo-Order") == ["client, server"]


# -- Content-Type and Last-Modified ------------------------------------------

def test_content_type_set(srv):
    r = get(srv, "/ct_set.txt")
    assert r.header_all("Content-Type") == ["application/x-hd-test"]


def test_content_type_unset(srv):
    r = get(srv, "/ct_unset.txt")
    assert r.status == 200 and r.body == F
    assert not r.has_header("Content-Type")


def test_content_type_edit(srv):
    r = get(srv, "/ct_edit.txt")
    assert r.header_all("Content-Type") == ["text/plain; charset=utf-8"]


def test_content_type_setifempty(srv):
    assert get(srv, "/ct_sie.txt").header_all("Content-Type") == ["text/plain"]
    assert not get(srv, "/blob.zzqx").has_header("Content-Type")
    assert get(srv, "/ct_sie.zzqx").header_all("Content-Type") == ["application/x-filled"]


def test_content_type_append_keeps_one_type(srv):
    # as in Apache, the type the server determined wins over add/append/merge
    assert get(srv, "/ct_append.txt").header_all("Content-Type") == ["text/plain"]


def test_last_modified_unset(srv):
    assert get(srv, "/lm_edit.txt").has_header("Last-Modified")
    r = get(srv, "/lm_unset.txt")
    assert r.status == 200
    assert not r.has_header("Last-Modified")


def test_last_modified_set(srv):
    r = get(srv, "/lm_set.txt")
    assert r.header_all("Last-Modified") == ["Mon, 01 Jan 2001 00:00:00 GMT"]


def test_last_modified_edit(srv):
    r = get(srv, "/lm_edit.txt")
    assert r.header_all("Last-Modified") == ["Thu, 02 Jan 2020 03:04:05 +0000"]


# -- value formats -------------------------------------------------------------

def test_time_and_duration(srv):
    before = time.time()
    r = get(srv, "/fmt.txt")
    after = time.time()
    m = re.match(r"^t=(\d+) D=(\d+)$", r.header("X-Time", ""))
    assert m, r.headers
    t_us, d_us = int(m.group(1)), int(m.group(2))
    # microseconds since the epoch, taken when the request arrived
    assert (before - 2) * 1e6 <= t_us <= (after + 2) * 1e6
    assert 0 <= d_us < 10_000_000
    m = re.match(r"^t=(\d+)$", r.header("X-Braced", ""))
    assert m and abs(int(m.group(1)) - t_us) < 5_000_000


def test_percent_and_escapes(srv):
    r = get(srv, "/fmt.txt")
    assert r.header("X-Pct") == "100% sure, 50%"
    assert r.header("X-Esc") == "a\tb\\c\\qd"


# -- what Header cannot change -----------------------------------------------

def test_server_owned_headers_are_ignored(srv):
    with srv.conn() as c:
        r1 = c.request("GET", "/framing.txt")
        r2 = c.request("GET", "/framing.txt")
    for r in (r1, r2):
        assert r.status == 200 and r.body == F
        assert r.header_all("Content-Length") == [str(len(F))]
        assert len(r.header_all("Date")) == 1
        assert r.header("Server") != "evil"
        assert not r.has_header("Transfer-Encoding")
        assert not r.connection_close
        assert r.header_all("Keep-Alive") != ["timeout=1"]


# -- framing and keep-alive with a Header filter in place -----------------------

def test_keepalive_and_content_length_kept(srv):
    with srv.conn() as c:
        r1 = c.request("GET", "/os/f.txt")
        r2 = c.request("GET", "/os/missing.txt")
        r3 = c.request("HEAD", "/os/f.txt")
        r4 = c.request("GET", "/act/edit/f.txt")
    assert r1.status == 200 and r1.body == F
    assert r1.header("Content-Length") == str(len(F))
    assert not r1.has_header("Transfer-Encoding")
    assert not r1.connection_close
    assert r2.status == 404 and r2.header("Content-Length") == str(len(r2.body))
    assert not r2.connection_close
    assert r3.status == 200 and r3.header("Content-Length") == str(len(F))
    assert r4.status == 200 and r4.body == F
    assert r4.header("Content-Length") == str(len(F))


def test_pipelined_requests_stay_framed(srv):
    rs = srv.pipeline([build_request("GET", "/act/set/f.txt"),
                       build_request("GET", "/os/sub"),
                       build_request("GET", "/ctx/sub/ctx.txt")])
    assert [r.status for r in rs] == [200, 301, 200]
    assert rs[0].body == F and rs[2].body == F


# -- configuration errors --------------------------------------------------------

@pytest.fixture
def cfg(server_factory):
    return server_factory(start=False)


def _line_of(cfg, text):
    """1-based number of the line of httpd.conf that is @text (stripped)."""
    with open(cfg.conf_path) as f:
        for i, line in enumerate(f, 1):
            if line.strip() == text:
                return i
    raise ValueError(text)


def _check(cfg, line, *words):
    cfg.extra = line + "\n"
    cfg.write_conf()
    p = cfg.run("-t")
    out = p.stdout + p.stderr
    assert p.returncode != 0, out
    assert "%s:%d:" % (cfg.conf_path, _line_of(cfg, line)) in out, out
    for w in words:
        assert w in out, (w, out)
    assert "Syntax OK" not in out
    return out


@pytest.mark.parametrize("line,words", [
    ("Header", ["Header", "action"]),
    ("Header always", ["Header", "action"]),
    ("Header set", ["Header", "header name"]),
    ("Header set X-Foo", ["Header", "value"]),
    ("RequestHeader add X-Foo", ["RequestHeader", "value"]),
    ("Header frobnicate X-Foo bar", ["Header", "frobnicate"]),
    ("Header note X-Foo bar", ["Header", "'note'", "not supported"]),
    ("RequestHeader always set X-Foo a", ["RequestHeader", "'always'"]),
    ("RequestHeader echo ^X-", ["RequestHeader", "echo"]),
    ("Header edit X-Foo a", ["Header", "edit", "replacement"]),
    ("RequestHeader edit* X-Foo", ["RequestHeader", "edit*"]),
    ('Header edit X-Foo "a(" b', ["Header", "a(", "missing closing parenthesis"]),
    ('Header edit X-Foo "(a)" "$2"', ["Header", "$2", "1 group"]),
    ('RequestHeader edit X-Foo "a" "$1"', ["RequestHeader", "$1", "0 groups"]),
    ('Header set X-Foo "%e"', ["Header", "%e"]),
    ('Header set X-Foo "%{HOME}e"', ["Header", "%e"]),
    ('Header set X-Foo "%{x}s"', ["Header", "%s"]),
    ('Header set X-Foo "a %x b"', ["Header", "%x"]),
    ('Header set X-Foo "%{t"', ["Header", "%{"]),
    ('Header edit X-Foo a "%Q"', ["Header", "%Q"]),
    ("Header set X-Foo bar env=HOME", ["Header", "env=HOME"]),
    ("Header unset X-Foo env=!HOME", ["Header", "env=!HOME"]),
    ('Header set X-Foo bar "expr=-n %{HTTP_HOST}"', ["Header", "expr="]),
    ('Header set X-Foo "expr=%{REQUEST_URI}"', ["Header", "expr="]),
    ("Header set X-Foo bar early", ["Header", "early"]),
    ("RequestHeader set X-Foo bar early", ["RequestHeader", "early"]),
    ("Header set X-Foo bar bogus", ["Header", "bogus"]),
    ("Header always set X-Foo a b c d", ["Header", "too many arguments"]),
    ("Header unset X-Foo bar baz", ["Header", "unset"]),
    (r'Header set X-Foo "a\nb"', ["Header", "line break"]),
    (r'RequestHeader set X-Foo "a\rb"', ["RequestHeader", "line break"]),
    (r'Header edit X-Foo a "x\ny"', ["Header", "line break"]),
    ('Header set "X Foo" bar', ["Header", "X Foo", "header name"]),
    ("Header set X(Foo) bar", ["Header", "X(Foo)", "header name"]),
])
def test_config_errors(cfg, line, words):
    _check(cfg, line, *words)


def test_config_error_in_a_section(cfg):
    cfg.extra = '<Location "/x">\n    Header set X-Ok ok\n    Header edit X-Foo "[" y\n' \
                '</Location>\n'
    cfg.write_conf()
    p = cfg.run("-t")
    out = p.stdout + p.stderr
    assert p.returncode != 0, out
    assert "%s:%d:" % (cfg.conf_path, cfg.conf_line_of('Header edit X-Foo "["')) in out, out
    assert "Header" in out


def test_server_owned_header_is_a_warning(cfg):
    cfg.extra = "Header always unset Server\nHeader set Content-Length 3\n" \
                "Header set X-Fine yes\n"
    cfg.write_conf()
    p = cfg.run("-t")
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    assert "Syntax OK" in out
    assert "%s:%d:" % (cfg.conf_path, cfg.conf_line_of("unset Server")) in out, out
    assert "Server is written by the server" in out
    assert "Content-Length is written by the server" in out
    assert "X-Fine" not in out


def test_valid_forms_pass(cfg):
    cfg.extra = "\n".join([
        "Header onsuccess set X-A a",
        "Header always unset X-B",
        "Header set X-C: c",
        'Header edit* X-D "(a)(b)" "$2$1$0"',
        # an escaped dollar is no back-reference
        r'Header edit X-I a "\\$1 \$2"',
        "Header echo ^X-",
        "RequestHeader setifempty X-E %t",
        'RequestHeader merge X-F "%D %%"',
        "<Files x>\n    Header add X-G g\n</Files>",
        "<LocationMatch ^/y>\n    RequestHeader unset X-H\n</LocationMatch>",
    ]) + "\n"
    cfg.write_conf()
    p = cfg.run("-t")
    assert p.returncode == 0, p.stdout + p.stderr
