"""mod_alias: Alias and AliasMatch to files and directories outside
DocumentRoot (index, listing, trailing slashes, segment boundaries, the
target's own <Directory> rules for Require and symbolic links, traversal),
the Redirect family (every status form, query strings, back-references,
redirects in <Location> and <Directory>, keep-alive after a redirect), and
configuration errors that name file, line and directive."""

import os

import pytest

from hdtest import INDEX_HTML, SECRET

ALIAS_FILE = b"the aliased file\n"
ADIR_INDEX = b"<html><body>alias dir index</body></html>\n"
ADIR_PAGE = b"page in the alias dir\n"
LINK_TARGET = b"link target outside every alias\n"
OTHER_OWNER = b"owned by someone else\n"

CONF = r"""
<Directory />
    Options None
    Require all denied
</Directory>

Alias /afile "{root}/alias_file.txt"
Alias /adir "{root}/alias_dir"
Alias /slash/ "{root}/alias_dir/"
Alias /listing "{root}/listing"
Alias /homedir "{root}/homedir"
Alias /follow "{root}/follow"
Alias /nofollow "{root}/nofollow"
Alias /ownermatch "{root}/ownermatch"
Alias /denied "{root}/denied"
Alias /granted "{root}/granted"
Alias /dir/aliased "{root}/alias_dir"
Alias /order/inner "{root}/inner"
Alias /order "{root}/outer"
Alias /first "{root}/outer"
Alias /first/second "{root}/inner"
AliasMatch "^/am/([a-z]+)/([0-9]+)\.txt$" "{root}/am_target/$2-$1.txt"
AliasMatch "^/amdir(/.*)?$" "{root}/alias_dir$1"
AliasMatch "^/dots(.*)$" "{root}/alias_dir/.$1"

<Directory "{root}/alias_dir">
    Require all granted
</Directory>
<Directory "{root}/listing">
    Options Indexes
    Require all granted
</Directory>
<Directory "{root}/homedir">
    DirectoryIndex home.html
    Require all granted
</Directory>
<Directory "{root}/follow">
    Options FollowSymLinks
    Require all granted
</Directory>
<Directory "{root}/nofollow">
    Options None
    Require all granted
</Directory>
<Directory "{root}/ownermatch">
    Options SymLinksIfOwnerMatch
    Require all granted
</Directory>
<Directory "{root}/granted">
    Require all granted
</Directory>
<Directory "{root}/granted/private">
    Require all denied
</Directory>
<Directory "{root}/inner">
    Require all granted
</Directory>
<Directory "{root}/outer">
    Require all granted
</Directory>
<Directory "{root}/am_target">
    Require all granted
</Directory>
<Files "alias_file.txt">
    Require all granted
</Files>

Redirect /r-default http://example.com/default
Redirect permanent /r-perm http://example.com/perm
Redirect temp /r-temp http://example.com/temp
Redirect seeother /r-see http://example.com/see
Redirect gone /r-gone
Redirect 307 /r-307 http://example.com/307
Redirect 308 /r-308 /local/308
Redirect 451 /r-451
Redirect /r-local /new/place
Redirect /r-query http://example.com/q?fixed=1
Redirect /r-slash/ http://example.com/slash/
RedirectPermanent /rp http://example.com/rp
RedirectTemp /rt http://example.com/rt
RedirectMatch "^/rm/([a-z]+)/([0-9]+)$" "http://example.com/m/$2/$1"
RedirectMatch 301 "^/rmp/(.*)$" "/moved/$1"
RedirectMatch gone "^/rmgone/"
RedirectMatch seeother "^/rmq/(.*)$" "http://example.com/rmq?x=$1"
RedirectMatch "(?s)^/crlf/(.*)$" "http://example.com/$1?x=$1#$1"
RedirectMatch "^/rmlocal(.*)$" "$1"
RedirectMatch "^/long/(.*)$" "/$1$1$1$1$1$1$1$1$1"
Redirect /adir/moved http://example.com/moved

<Location /loc-one>
    Redirect permanent http://example.com/one
</Location>
<Location /loc-gone>
    Redirect gone
</Location>
<Location /loc-two>
    Redirect /loc-two/inner http://example.com/two-inner
</Location>
<Location /loc-alias>
    Alias "{root}/alias_file.txt"
</Location>
<Directory "{htdocs}/dredir">
    Redirect /dredir/old http://example.com/d-old
</Directory>
<Directory "{htdocs}/done">
    Redirect 303 /three
</Directory>
<Directory "{htdocs}/nest">
    Redirect /nest http://example.com/outer
</Directory>
<Directory "{htdocs}/nest/in">
    Redirect /nest/in http://example.com/inner
</Directory>
"""


def _root_owned_file():
    for p in ("/etc/os-release", "/etc/hostname", "/etc/passwd"):
        try:
            if os.stat(p).st_uid == 0 and os.access(p, os.R_OK):
                return p
        except OSError:
            pass
    return None


def _setup(srv):
    root = srv.root

    def put(rel, data):
        p = os.path.join(root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
        return p

    put("alias_file.txt", ALIAS_FILE)
    put("alias_dir/index.html", ADIR_INDEX)
    put("alias_dir/page.txt", ADIR_PAGE)
    put("alias_dir/sub/x.txt", b"x in sub\n")
    put("listing/a.txt", b"a\n")
    put("listing/b.txt", b"b\n")
    put("homedir/home.html", b"home page\n")
    put("homedir/index.html", b"not the index here\n")
    put("inner/x.txt", b"inner x\n")
    put("outer/x.txt", b"outer x\n")
    put("outer/second/x.txt", b"outer second x\n")
    put("am_target/42-abc.txt", b"am 42 abc\n")
    put("denied/page.txt", b"page nobody may see\n")
    put("granted/page.txt", b"granted page\n")
    put("granted/private/page.txt", b"private page\n")
    target = put("target/t.txt", LINK_TARGET)
    for d in ("follow", "nofollow", "ownermatch"):
        put(d + "/real.txt", ("real file in %s\n" % d).encode())
        os.symlink(target, os.path.join(root, d, "link.txt"))
    # a link whose target has another owner than the link
    if os.getuid() == 0:
        other = put("target/other.txt", OTHER_OWNER)
        os.chown(other, 65534, 65534)
    else:
        other = _root_owned_file()
    if other is not None:
        os.symlink(other, os.path.join(root, "ownermatch", "other_link.txt"))
    for d in ("dredir", "done", "nest/in"):
        os.makedirs(os.path.join(srv.htdocs, d), exist_ok=True)
    srv.write_file("dredir/page.txt", b"page in dredir\n")


@pytest.fixture(scope="module")
def srv(module_server_factory):
    return module_server_factory(extra=CONF, setup=_setup)


def _get(srv, target, host="test.local", version="HTTP/1.1", method="GET"):
    head = "%s %s %s\r\n" % (method, target, version)
    if host is not None:
        head += "Host: %s\r\n" % host
    return srv.raw((head + "Connection: close\r\n\r\n").encode("latin-1"), method=method)


# ---- Alias ------------------------------------------------------------------


def test_alias_to_file(srv):
    r = srv.get("/afile")
    assert r.status == 200 and r.body == ALIAS_FILE
    assert r.header("Content-Type", "").startswith("text/plain")
    # a file has nothing below it (the core has no PATH_INFO walk, so the
    # <Files> grant does not reach "alias_file.txt/": refused, never served)
    for path in ("/afile/", "/afile/x"):
        r = srv.get(path)
        assert r.status in (403, 404), r
        assert ALIAS_FILE not in r.body


def test_alias_to_directory_index_and_files(srv):
    r = srv.request("GET", "/adir")
    assert r.status == 301
    assert r.header("Location") == "http://test.local/adir/"
    r = srv.get("/adir/")
    assert r.status == 200 and r.body == ADIR_INDEX
    r = srv.get("/adir/page.txt")
    assert r.status == 200 and r.body == ADIR_PAGE
    assert srv.get("/adir/missing.txt").status == 404


def test_alias_directory_uses_its_own_directoryindex(srv):
    r = srv.get("/homedir/")
    assert r.status == 200 and r.body == b"home page\n"


def test_alias_directory_listing_needs_indexes(srv):
    r = srv.get("/listing/")
    assert r.status == 200
    assert b"Index of /listing" in r.body
    assert b'href="a.txt"' in r.body and b'href="b.txt"' in r.body
    # the alias dir's own Options (None, from <Directory />) has no Indexes
    r = srv.get("/adir/sub/")
    assert r.status == 403
    assert b"x.txt" not in r.body


def test_alias_trailing_slash_is_required_when_configured(srv):
    # "Alias /slash/ ...": /slash is not aliased and DocumentRoot has no such file
    assert srv.get("/slash").status == 404
    r = srv.get("/slash/")
    assert r.status == 200 and r.body == ADIR_INDEX
    r = srv.get("/slash/page.txt")
    assert r.status == 200 and r.body == ADIR_PAGE


def test_alias_matches_whole_segments_only(srv):
    assert srv.get("/adirx").status == 404
    assert srv.get("/adirx/page.txt").status == 404
    assert srv.get("/afile.txt").status == 404
    assert srv.get("/ADIR/page.txt").status == 404
    # the DocumentRoot around an alias is untouched
    r = srv.get("/dir/page.txt")
    assert r.status == 200 and r.body == b"page in dir\n"
    r = srv.get("/dir/aliased/page.txt")
    assert r.status == 200 and r.body == ADIR_PAGE
    r = srv.get("/")
    assert r.status == 200 and r.body == INDEX_HTML


def test_alias_tolerates_repeated_slashes(srv):
    r = _get(srv, "//adir//page.txt")
    assert r.status == 200 and r.body == ADIR_PAGE
    r = _get(srv, "//afile")
    assert r.status == 200 and r.body == ALIAS_FILE


def test_alias_first_match_in_config_order(srv):
    r = srv.get("/order/inner/x.txt")
    assert r.status == 200 and r.body == b"inner x\n"
    r = srv.get("/order/x.txt")
    assert r.status == 200 and r.body == b"outer x\n"
    # "/first/second" comes after "/first": it never matches (and start-up warned)
    r = srv.get("/first/second/x.txt")
    assert r.status == 200 and r.body == b"outer second x\n"
    logs = srv.read_log(srv.stderr_path) + srv.error_log()
    assert "AH00671" in logs and "overlaps an earlier Alias" in logs


def test_aliasmatch_back_references(srv):
    r = srv.get("/am/abc/42.txt")
    assert r.status == 200 and r.body == b"am 42 abc\n"
    assert srv.get("/am/abc/43.txt").status == 404
    # no match: on to DocumentRoot
    assert srv.get("/am/ABC/42.txt").status == 404
    assert srv.get("/am/abc/42.txtx").status == 404


def test_aliasmatch_to_directory(srv):
    r = srv.get("/amdir/page.txt")
    assert r.status == 200 and r.body == ADIR_PAGE
    r = srv.request("GET", "/amdir")
    assert r.status == 301 and r.header("Location") == "http://test.local/amdir/"
    r = srv.get("/amdir/")
    assert r.status == 200 and r.body == ADIR_INDEX


def test_location_one_argument_alias(srv):
    r = srv.get("/loc-alias")
    assert r.status == 200 and r.body == ALIAS_FILE
    # the whole location is that one file, as in Apache
    r = srv.get("/loc-alias/anything")
    assert r.status == 200 and r.body == ALIAS_FILE


# ---- the target's own <Directory> rules -------------------------------------


def test_alias_outside_docroot_obeys_require(srv):
    r = srv.get("/denied/page.txt")
    assert r.status == 403
    assert b"nobody may see" not in r.body
    r = srv.get("/granted/page.txt")
    assert r.status == 200 and r.body == b"granted page\n"
    r = srv.get("/granted/private/page.txt")
    assert r.status == 403
    assert b"private page" not in r.body


def test_symlink_followed_with_followsymlinks(srv):
    r = srv.get("/follow/link.txt")
    assert r.status == 200 and r.body == LINK_TARGET


def test_symlink_refused_with_options_none(srv):
    r = srv.get("/nofollow/link.txt")
    assert r.status == 403
    assert LINK_TARGET not in r.body
    r = srv.get("/nofollow/real.txt")
    assert r.status == 200 and r.body == b"real file in nofollow\n"
    assert "AH00037" in srv.error_log()


def test_symlink_if_owner_match(srv):
    # link and target both ours
    r = srv.get("/ownermatch/link.txt")
    assert r.status == 200 and r.body == LINK_TARGET
    if not os.path.islink(os.path.join(srv.root, "ownermatch", "other_link.txt")):
        pytest.skip("no file of another owner to link to")
    r = srv.get("/ownermatch/other_link.txt")
    assert r.status == 403
    assert OTHER_OWNER not in r.body


TRAVERSALS = [
    "/adir/../secret.txt",
    "/adir/../../secret.txt",
    "/adir/%2e%2e/secret.txt",
    "/adir/%2E%2E/%2e%2e/%2e%2e/etc/passwd",
    "/adir/..%2fsecret.txt",
    "/adir/..%2F..%2Fsecret.txt",
    "/adir%2f..%2fsecret.txt",
    "/adir/.%2e/secret.txt",
    "/adir/sub/../../secret.txt",
    "/afile/../secret.txt",
    "/afile/%2e%2e/secret.txt",
    "/amdir/../secret.txt",
    "/amdir/%2e%2e/secret.txt",
    "/amdir%2f..%2fsecret.txt",
    "/am/..%2f..%2fsecret/1.txt",
    "/slash/%2e%2e/secret.txt",
    "/dots./secret.txt",
    "/dots.%2fsecret.txt",
    "/dots/..%2f..%2fsecret.txt",
    "/adir/..\\secret.txt",
    "/adir/%252e%252e/secret.txt",
]


@pytest.mark.parametrize("target", TRAVERSALS)
def test_traversal_never_escapes_alias_target(srv, target):
    r = _get(srv, target)
    assert r.status in (400, 403, 404), r
    assert SECRET not in r.body
    assert b"root:" not in r.body


def test_aliasmatch_dot_segments_are_resolved_before_directory_rules(srv):
    # "{root}/alias_dir/." + "./secret.txt" is {root}/secret.txt: <Directory
    # alias_dir> must not grant it, <Directory /> denies it
    r = _get(srv, "/dots./secret.txt")
    assert r.status == 403
    assert SECRET not in r.body
    r = _get(srv, "/dots/page.txt")
    assert r.status == 200 and r.body == ADIR_PAGE


# ---- Redirect ---------------------------------------------------------------


@pytest.mark.parametrize("path,status,location", [
    ("/r-default", 302, "http://example.com/default"),
    ("/r-default/a/b.html", 302, "http://example.com/default/a/b.html"),
    ("/r-perm/x", 301, "http://example.com/perm/x"),
    ("/r-temp/x", 302, "http://example.com/temp/x"),
    ("/r-see/x", 303, "http://example.com/see/x"),
    ("/r-307/x", 307, "http://example.com/307/x"),
    ("/r-308/x", 308, "http://test.local/local/308/x"),
    ("/r-local", 302, "http://test.local/new/place"),
    ("/rp/x", 301, "http://example.com/rp/x"),
    ("/rt/x", 302, "http://example.com/rt/x"),
    ("/r-slash/x", 302, "http://example.com/slash/x"),
])
def test_redirect_statuses(srv, path, status, location):
    r = srv.request("GET", path)
    assert r.status == status, r
    assert r.header("Location") == location
    # the default page shows where to go
    assert location.encode() in r.body
    assert r.header("Content-Type", "").startswith("text/html")


def test_redirect_matches_whole_segments_only(srv):
    assert srv.get("/r-defaultx").status == 404
    assert srv.get("/r-perm.html").status == 404
    # "Redirect /r-slash/ ...": the slash is required
    r = srv.get("/r-slash")
    assert r.status == 404 and r.header("Location") is None


@pytest.mark.parametrize("path,status", [("/r-gone", 410), ("/r-gone/x", 410),
                                         ("/r-451/x", 451), ("/rmgone/x", 410)])
def test_redirect_non_3xx_has_no_location(srv, path, status):
    r = srv.request("GET", path)
    assert r.status == status
    assert r.header("Location") is None
    if status == 410:
        assert b"no longer available" in r.body


def test_redirect_carries_the_query_string(srv):
    r = srv.request("GET", "/r-default/a?x=1&y=%20z")
    assert r.header("Location") == "http://example.com/default/a?x=1&y=%20z"
    r = srv.request("GET", "/r-local?q")
    assert r.header("Location") == "http://test.local/new/place?q"
    # a target with its own query keeps it, the request's is dropped (Apache:
    # the remainder of the path still goes after it)
    r = srv.request("GET", "/r-query?dropped=1")
    assert r.header("Location") == "http://example.com/q?fixed=1"
    r = srv.request("GET", "/r-query/sub?dropped=1")
    assert r.header("Location") == "http://example.com/q?fixed=1/sub"


def test_redirect_escapes_the_remainder(srv):
    r = srv.request("GET", "/r-default/a%20b/%3Cc%3E%25")
    assert r.header("Location") == "http://example.com/default/a%20b/%3Cc%3E%25"


def test_redirectmatch_back_references(srv):
    r = srv.request("GET", "/rm/abc/12")
    assert r.status == 302
    assert r.header("Location") == "http://example.com/m/12/abc"
    # RedirectMatch carries the query too (Apache does, when the target has none)
    r = srv.request("GET", "/rm/abc/12?k=v")
    assert r.header("Location") == "http://example.com/m/12/abc?k=v"
    assert srv.get("/rm/ABC/12").status == 404
    r = srv.request("GET", "/rmp/a%20b/c")
    assert r.status == 301
    assert r.header("Location") == "http://test.local/moved/a%20b/c"
    r = srv.request("GET", "/rmq/abc?orig=1")
    assert r.status == 303
    assert r.header("Location") == "http://example.com/rmq?x=abc"


def test_redirectmatch_target_checked_per_request(srv):
    # "$1" may or may not become a URL: a local path is made absolute ...
    r = srv.request("GET", "/rmlocal/abc")
    assert r.status == 302 and r.header("Location") == "http://test.local/abc"
    # ... anything else is a server error (Apache's AH00674), never a bad Location
    r = srv.request("GET", "/rmlocalabc")
    assert r.status == 500 and r.header("Location") is None
    assert "AH00674" in srv.error_log()


def test_redirectmatch_substitution_too_long_is_500(srv):
    r = srv.request("GET", "/long/" + "a" * 7500)
    assert r.status == 500 and r.header("Location") is None
    assert "AH00672" in srv.error_log()
    r = srv.request("GET", "/long/abc")
    assert r.status == 302
    assert r.header("Location") == "http://test.local/" + "abc" * 9


def test_redirectmatch_capture_cannot_inject_headers(srv):
    # a capture that holds a decoded CR LF lands in the path, the query and
    # the fragment: each is escaped, so no header can be smuggled in
    r = _get(srv, "/crlf/a%0d%0aX-Injected:%20yes")
    assert r.status == 302, r
    assert r.header("X-Injected") is None
    assert b"\r\nX-Injected" not in r.head
    assert r.header("Location") == ("http://example.com/a%0D%0AX-Injected:%20yes"
                                    "?x=a%0D%0AX-Injected:%20yes#a%0D%0AX-Injected:%20yes")


def test_redirect_wins_over_an_earlier_alias(srv):
    r = srv.request("GET", "/adir/moved/x")
    assert r.status == 302
    assert r.header("Location") == "http://example.com/moved/x"
    assert srv.get("/adir/page.txt").status == 200


def test_redirect_uses_the_requested_host(srv):
    r = srv.request("GET", "/r-308", host="www.example.org:8080")
    assert r.header("Location") == "http://www.example.org:8080/local/308"
    # absolute-form: the target's authority is the host
    r = srv.raw(b"GET http://other.example/r-308 HTTP/1.1\r\nHost: test.local\r\n"
                b"Connection: close\r\n\r\n")
    assert r.header("Location") == "http://other.example/local/308"
    # HTTP/1.0 without Host: ServerName and the port the request came in on
    r = _get(srv, "/r-308", host=None, version="HTTP/1.0")
    assert r.header("Location") == "http://test.local:%d/local/308" % srv.port


def test_redirect_head_has_location_and_no_body(srv):
    r = srv.request("HEAD", "/r-perm/x")
    assert r.status == 301
    assert r.header("Location") == "http://example.com/perm/x"
    assert r.body == b""


def test_redirect_in_location_one_argument(srv):
    r = srv.request("GET", "/loc-one/any/path?q=1")
    assert r.status == 301
    assert r.header("Location") == "http://example.com/one?q=1"
    r = srv.request("GET", "/loc-one")
    assert r.header("Location") == "http://example.com/one"
    r = srv.request("GET", "/loc-gone/x")
    assert r.status == 410 and r.header("Location") is None


def test_redirect_in_location_with_url_path(srv):
    r = srv.request("GET", "/loc-two/inner/p")
    assert r.status == 302
    assert r.header("Location") == "http://example.com/two-inner/p"
    assert srv.get("/loc-two/other").status == 404


def test_redirect_in_directory(srv):
    r = srv.request("GET", "/dredir/old/x?y=1")
    assert r.status == 302
    assert r.header("Location") == "http://example.com/d-old/x?y=1"
    r = srv.get("/dredir/page.txt")
    assert r.status == 200 and r.body == b"page in dredir\n"
    # the one-argument form: the whole directory goes to one URL
    r = srv.request("GET", "/done/anything.html")
    assert r.status == 303
    assert r.header("Location") == "http://test.local/three"


def test_redirect_in_nested_directories_inner_first(srv):
    r = srv.request("GET", "/nest/in/x")
    assert r.header("Location") == "http://example.com/inner/x"
    r = srv.request("GET", "/nest/y")
    assert r.header("Location") == "http://example.com/outer/y"


@pytest.mark.parametrize("first", ["/r-perm/x", "/r-gone", "/dredir/old/x", "/loc-one/x"])
def test_keepalive_survives_a_redirect(srv, first):
    with srv.conn() as c:
        r1 = c.request("GET", first)
        r2 = c.request("GET", "/adir/page.txt")
        r3 = c.request("GET", "/index.html")
    assert r1.status in (301, 302, 410)
    assert not r1.connection_close
    assert r2.status == 200 and r2.body == ADIR_PAGE
    assert r3.status == 200 and r3.body == INDEX_HTML


# ---- configuration errors ---------------------------------------------------


@pytest.fixture
def cfg(server_factory):
    """A server that is configured but not started."""
    return server_factory(start=False)


def _out(p):
    return p.stdout + p.stderr


BROKEN = [
    # (directive line, text the message must hold)
    ("Redirect moved /a http://example.com/", 'invalid status "moved"'),
    ("Redirect 200 /a", 'invalid status "200"'),
    ("Redirect 30x /a http://example.com/", 'invalid status "30x"'),
    ("Redirect permanent /a", "URL to redirect to is missing"),
    ("Redirect 301 /a", "URL to redirect to is missing"),
    ("RedirectMatch 302 ^/a", "URL to redirect to is missing"),
    ("Redirect gone /a http://example.com/", "status 410 takes no URL"),
    ("Redirect 404 /a http://example.com/", "status 404 takes no URL"),
    ("Redirect /a relative/path", "neither an absolute URL"),
    ("RedirectPermanent /a example.com/x", "neither an absolute URL"),
    ("RedirectMatch ^/a(.*)$ relative/$1", "neither an absolute URL"),
    ("Redirect moved http://example.com/", "neither a status"),
    ("Redirect http://example.com/", "needs a URL-path"),
    ("Redirect gone", "needs a URL-path"),
    ("AliasMatch ^/a( /srv/x", 'AliasMatch: regular expression "^/a(" could not be compiled'),
    ("RedirectMatch ^/a[ http://example.com/", "RedirectMatch: regular expression"),
    ("AliasMatch ^/a$ /srv/x/$1", "refers to $1"),
    ("RedirectMatch ^/(a)$ http://example.com/$2", "refers to $2"),
    ("Alias /onlyone", "Alias must have two arguments when used globally"),
    ("Alias nope /srv/x", "must start with '/'"),
    ("<Location /l>\n    Alias /x /srv/x\n</Location>", "not allowed in <Location>"),
    ("<Directory /srv>\n    Alias /srv/x\n</Directory>", "Alias not allowed in <Directory> context"),
    ("<Location /l>\n    AliasMatch ^/x /srv/x\n</Location>", "AliasMatch not allowed"),
    ("<Location /l>\n    Redirect http://example.com/%{REQUEST_URI}\n</Location>",
     "expressions"),
]


@pytest.mark.parametrize("text,message", BROKEN)
def test_config_errors_name_file_line_and_directive(cfg, text, message):
    cfg.extra = text + "\n"
    cfg.write_conf()
    p = cfg.run("-t")
    out = _out(p)
    assert p.returncode != 0, out
    assert "Syntax OK" not in out
    bad = [l for l in text.splitlines() if not l.strip().startswith("<")][0].strip()
    line = cfg.conf_line_of(bad)
    assert "%s:%d:" % (cfg.conf_path, line) in out, out
    assert bad.split()[0] in out, out
    assert message in out, out


def test_config_good_forms_pass(cfg):
    cfg.extra = CONF.replace("{root}", cfg.root)
    cfg.write_conf()
    p = cfg.run("-t")
    assert p.returncode == 0, _out(p)
    assert "Syntax OK" in _out(p)
