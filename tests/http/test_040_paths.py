"""Paths: traversal, percent-decoding, dot segments, absolute-form targets,
symbolic links and trailing slashes."""

import os

import pytest

from hdtest import BIN_4K, INDEX_HTML, SECRET, SPACE_TXT

CONF = """
<Directory "{htdocs}/nofollow">
    Options -FollowSymLinks
</Directory>
<Directory "{htdocs}/nooptions">
    Options None
</Directory>
"""


@pytest.fixture(scope="module")
def srv(module_server_factory):
    return module_server_factory(extra=CONF)


def _get(srv, target):
    return srv.raw(b"GET " + target.encode("latin-1") + b" HTTP/1.1\r\nHost: test.local\r\n"
                   b"Connection: close\r\n\r\n")


TRAVERSALS = [
    "/../secret.txt",
    "/../../../../../../etc/passwd",
    "/%2e%2e/secret.txt",
    "/%2E%2E/%2e%2e/etc/passwd",
    "/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    "/.%2e/secret.txt",
    "/a/../../secret.txt",
    "/dir/../../secret.txt",
    "/dir/%2e%2e/%2e%2e/secret.txt",
    "/dir/..%2f..%2fsecret.txt",
    "/..%2fsecret.txt",
    "/..%5csecret.txt",
    "/..\\secret.txt",
    "//../secret.txt",
    "/./../secret.txt",
    "/dir/./../.././secret.txt",
    "/%252e%252e/secret.txt",
]


@pytest.mark.parametrize("target", TRAVERSALS)
def test_traversal_never_escapes_root(srv, target):
    r = _get(srv, target)
    assert r.status in (400, 404), r
    assert SECRET not in r.body
    assert b"root:" not in r.body


def test_encoded_slash_404(srv):
    r = _get(srv, "/dir%2Findex.html")
    assert r.status == 404
    r = _get(srv, "/dir%2findex.html")
    assert r.status == 404


def test_encoded_nul_400(srv):
    r = _get(srv, "/index.html%00.txt")
    assert r.status == 400
    assert INDEX_HTML not in r.body


def test_bad_percent_escape_400(srv):
    assert _get(srv, "/index%zz.html").status == 400
    assert _get(srv, "/index.html%").status == 400
    assert _get(srv, "/index.html%4").status == 400


def test_percent_encoded_name(srv):
    r = _get(srv, "/sp%20ace.txt")
    assert r.status == 200 and r.body == SPACE_TXT
    r = _get(srv, "/%69ndex.%68tml")
    assert r.status == 200 and r.body == INDEX_HTML


def test_dot_segments_inside_root(srv):
    r = _get(srv, "/dir/../4k.bin")
    assert r.status == 200 and r.body == BIN_4K
    r = _get(srv, "/./index.html")
    assert r.status == 200 and r.body == INDEX_HTML
    r = _get(srv, "/dir/%2e%2e/4k.bin")
    assert r.status == 200 and r.body == BIN_4K


def test_query_string_ignored_for_files(srv):
    r = _get(srv, "/4k.bin?x=1&y=/../../etc/passwd")
    assert r.status == 200 and r.body == BIN_4K


def test_absolute_form(srv):
    r = srv.raw(b"GET http://test.local/4k.bin HTTP/1.1\r\nHost: test.local\r\n"
                b"Connection: close\r\n\r\n")
    assert r.status == 200 and r.body == BIN_4K


def test_absolute_form_with_port_and_query(srv):
    r = srv.raw(b"GET http://test.local:%d/index.html?a=b HTTP/1.1\r\nHost: test.local\r\n"
                b"Connection: close\r\n\r\n" % srv.port)
    assert r.status == 200 and r.body == INDEX_HTML


def test_symlink_inside_root_followed(srv):
    r = _get(srv, "/link_in.bin")
    assert r.status == 200 and r.body == BIN_4K


def test_symlink_outside_root_with_followsymlinks(srv):
    r = _get(srv, "/link_out.txt")
    assert r.status == 200 and r.body == SECRET


@pytest.mark.parametrize("d", ["nofollow", "nooptions"])
def test_symlinks_refused_without_followsymlinks(srv, d):
    r = _get(srv, "/%s/link_out.txt" % d)
    assert r.status == 403
    assert SECRET not in r.body
    r = _get(srv, "/%s/link_in.bin" % d)
    assert r.status == 403
    r = _get(srv, "/%s/real.txt" % d)
    assert r.status == 200


def test_trailing_slash_on_file_404(srv):
    assert _get(srv, "/4k.bin/").status == 404
    assert _get(srv, "/index.html/extra").status == 404


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads mode 000 files, as Apache does")
def test_unreadable_file_403(srv):
    assert _get(srv, "/unreadable.txt").status == 403



LEVELS_CONF = """
<Directory "{htdocs}/lvl">
    Options None
</Directory>
<Directory "{htdocs}/lvl/sub">
    Options FollowSymLinks
</Directory>
"""


def _levels(server):
    """lvl/ follows no links, lvl/sub/ does, but lvl/sub is itself a link (to lvl/real_sub)."""
    server.write_file("lvl/real_sub/real.txt", b"real\n")
    os.symlink("real.txt", os.path.join(server.htdocs, "lvl", "real_sub", "link.txt"))
    os.symlink("real_sub", os.path.join(server.htdocs, "lvl", "sub"))
    os.symlink(os.path.join(server.root, "secret.txt"), os.path.join(server.htdocs, "lvl",
                                                                      "out.txt"))


def test_symlinks_judged_by_the_directory_holding_them(server_factory):
    """As Apache's directory walk: a link is judged by the Options of the directory
    it sits in, not by those of the file at the end of the path. lvl/sub is a link
    sitting in lvl/ (Options None), so nothing below it is served, though the
    <Directory> of lvl/sub follows links."""
    srv = server_factory(extra=LEVELS_CONF, setup=_levels)
    assert _get(srv, "/lvl/sub/real.txt").status == 403
    assert _get(srv, "/lvl/sub/link.txt").status == 403
    r = _get(srv, "/lvl/out.txt")
    assert r.status == 403 and SECRET not in r.body
    # the same file by its real path: no link on the way
    r = _get(srv, "/lvl/real_sub/real.txt")
    assert r.status == 200 and r.body == b"real\n"
    assert "Symbolic link not allowed" in srv.error_log()
