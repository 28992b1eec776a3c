"""Error responses: ErrorDocument (local file and text), access control with
Require (all denied, ip, local) in <Directory> and <Location>."""

import pytest

from hdtest import ERR403_HTML, ERR404_HTML, INDEX_HTML

CONF = """
<Directory "{htdocs}/e_local">
    ErrorDocument 404 /err404.html
</Directory>
<Directory "{htdocs}/e_text">
    ErrorDocument 404 "Custom not found text"
</Directory>
<Directory "{htdocs}/e_403text">
    ErrorDocument 403 "Custom forbidden text"
    Require all denied
</Directory>
<Directory "{htdocs}/e_403local">
    ErrorDocument 403 /err403.html
    Require all denied
</Directory>
<Directory "{htdocs}/denied_dir">
    Require all denied
</Directory>
<Location "/denied_loc">
    Require all denied
</Location>
<Directory "{htdocs}/ip_local">
    Require ip 127.0.0.1
</Directory>
<Directory "{htdocs}/ip_net">
    Require ip 127.0.0.0/8
</Directory>
<Directory "{htdocs}/ip_ten">
    Require ip 10.0.0.0/8
</Directory>
<Directory "{htdocs}/ip_list">
    Require ip 10.1.2.3 192.168.0.0/16 127.0.0.1
</Directory>
<Directory "{htdocs}/local">
    Require local
</Directory>
<Directory "{htdocs}/granted_sub">
    Require all denied
</Directory>
<Directory "{htdocs}/granted_sub/open">
    Require all granted
</Directory>
"""

FILES = {d + "/page.txt": ("page in %s\n" % d).encode()
         for d in ("e_local", "e_text", "e_403text", "e_403local", "denied_dir", "denied_loc",
                   "ip_local", "ip_net", "ip_ten", "ip_list", "local", "granted_sub",
                   "granted_sub/open")}


@pytest.fixture(scope="module")
def srv(module_server_factory):
    return module_server_factory(extra=CONF, files=FILES)


def test_errordocument_local_file(srv):
    r = srv.request("GET", "/e_local/missing.html")
    assert r.status == 404
    assert r.body == ERR404_HTML
    assert r.header("Content-Type", "").startswith("text/html")
    # existing files in that directory are unaffected
    r = srv.request("GET", "/e_local/page.txt")
    assert r.status == 200 and r.body == b"page in e_local\n"


def test_errordocument_local_file_keeps_connection(srv):
    with srv.conn() as c:
        r1 = c.request("GET", "/e_local/missing.html")
        r2 = c.request("GET", "/index.html")
    assert r1.status == 404 and r1.body == ERR404_HTML
    assert r2.status == 200 and r2.body == INDEX_HTML


def test_errordocument_local_file_head(srv):
    r = srv.request("HEAD", "/e_local/missing.html")
    assert r.status == 404
    assert r.body == b""


def test_errordocument_text(srv):
    r = srv.request("GET", "/e_text/missing.html")
    assert r.status == 404
    assert b"Custom not found text" in r.body
    assert b'"Custom' not in r.body


def test_default_404_elsewhere(srv):
    r = srv.request("GET", "/missing.html")
    assert r.status == 404
    assert r.body != ERR404_HTML
    assert b"Custom not found text" not in r.body


def test_errordocument_403_text(srv):
    r = srv.request("GET", "/e_403text/page.txt")
    assert r.status == 403
    assert b"Custom forbidden text" in r.body
    assert b"page in" not in r.body


def test_errordocument_403_local(srv):
    r = srv.request("GET", "/e_403local/page.txt")
    assert r.status == 403
    assert r.body == ERR403_HTML


def test_require_all_denied_directory(srv):
    r = srv.request("GET", "/denied_dir/page.txt")
    assert r.status == 403
    assert b"page in" not in r.body
    assert srv.request("GET", "/denied_dir/").status == 403
    assert srv.request("GET", "/denied_dir/missing").status in (403, 404)


def test_require_all_denied_location(srv):
    r = srv.request("GET", "/denied_loc/page.txt")
    assert r.status == 403
    assert b"page in" not in r.body
    assert srv.request("GET", "/denied_loc").status == 403


def test_denied_through_dot_segments_and_escapes(srv):
    for target in ("/index.html/../denied_dir/page.txt", "/dir/../denied_loc/page.txt",
                   "/%64enied_loc/page.txt", "//denied_loc/page.txt",
                   "/denied_loc/./page.txt"):
        r = srv.request("GET", target)
        assert r.status in (403, 404), target
        assert b"page in" not in r.body, target


@pytest.mark.parametrize("d,status", [("ip_local", 200), ("ip_net", 200), ("ip_ten", 403),
                                      ("ip_list", 200), ("local", 200)])
def test_require_ip(srv, d, status):
    r = srv.request("GET", "/%s/page.txt" % d)
    assert r.status == status
    if status == 200:
        assert r.body == ("page in %s\n" % d).encode()


def test_nested_directory_grants(srv):
    assert srv.request("GET", "/granted_sub/page.txt").status == 403
    r = srv.request("GET", "/granted_sub/open/page.txt")
    assert r.status == 200 and r.body == b"page in granted_sub/open\n"
