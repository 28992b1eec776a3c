"""The open-file cache (OpenFileCache) never shows a client anything a fresh
open would not: a file replaced, rewritten, shrunk, grown or removed between
two requests on one kept-alive connection is served as it is now, and a
thread keeps no more descriptors than the cache holds."""

import os
import time

import pytest

from hdtest import wait_for


@pytest.fixture(scope="module")
def srv(module_server_factory):
    return module_server_factory(extra="OpenFileCache 4\n",
                                 files={"fc/a.txt": b"first version\n"})


def _get(c, path):
    r = c.request("GET", path)
    return r.status, r.body, r.header("ETag")


def test_replaced_by_rename(srv):
    p = srv.write_file("fc/renamed.txt", b"old contents\n")
    with srv.conn() as c:
        assert _get(c, "/fc/renamed.txt")[:2] == (200, b"old contents\n")
        assert _get(c, "/fc/renamed.txt")[:2] == (200, b"old contents\n")  # now cached
        tmp = p + ".new"
        with open(tmp, "wb") as f:
            f.write(b"new contents, longer than before\n")
        os.rename(tmp, p)
        assert _get(c, "/fc/renamed.txt")[:2] == (200, b"new contents, longer than before\n")


def test_rewritten_in_place(srv):
    p = srv.write_file("fc/inplace.txt", b"AAAAAAAAAA\n")
    with srv.conn() as c:
        st1, body1, etag1 = _get(c, "/fc/inplace.txt")
        assert (st1, body1) == (200, b"AAAAAAAAAA\n")
        _get(c, "/fc/inplace.txt")
        # the same length, the same inode; a later mtime (set explicitly, as
        # the file system's clock may not have moved on)
        with open(p, "r+b") as f:
            f.write(b"BBBBBBBBBB\n")
        later = time.time() + 5
        os.utime(p, (later, later))
        st2, body2, etag2 = _get(c, "/fc/inplace.txt")
        assert (st2, body2) == (200, b"BBBBBBBBBB\n")
        assert etag2 != etag1, "the ETag must follow the file's new mtime"


def test_truncated_and_grown(srv):
    p = srv.write_file("fc/size.txt", b"x" * 1000)
    with srv.conn() as c:
        assert _get(c, "/fc/size.txt")[1] == b"x" * 1000
        _get(c, "/fc/size.txt")
        with open(p, "wb") as f:      # truncates the same inode
            f.write(b"short\n")
        status, body, _ = _get(c, "/fc/size.txt")
        assert (status, body) == (200, b"short\n")
        with open(p, "ab") as f:
            f.write(b"y" * 5000)
        status, body, _ = _get(c, "/fc/size.txt")
        assert (status, body) == (200, b"short\n" + b"y" * 5000)


def test_removed_is_404(srv):
    p = srv.write_file("fc/gone.txt", b"here for now\n")
    with srv.conn() as c:
        assert _get(c, "/fc/gone.txt")[0] == 200
        assert _get(c, "/fc/gone.txt")[0] == 200
        os.unlink(p)
        assert _get(c, "/fc/gone.txt")[0] == 404
        assert _get(c, "/fc/a.txt")[:2] == (200, b"first version\n")


def _files_open_under(pid, directory):
    n = 0
    fd_dir = "/proc/%d/fd" % pid
    for fd in os.listdir(fd_dir):
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        if target.startswith(directory + "/"):
            n += 1
    return n


@pytest.mark.mpm("prefork")
def test_more_files_than_entries(srv):
    """Ten files in turn through a cache of four: every answer right, and no
    process holds more than four of them open (prefork: one thread each)."""
    want = {}
    for i in range(10):
        want["/fc/many%d.txt" % i] = ("file %d\n" % i).encode() * (i + 1)
        srv.write_file("fc/many%d.txt" % i, want["/fc/many%d.txt" % i])
    with srv.conn() as c:
        for _ in range(3):
            for path, body in want.items():
                assert _get(c, path)[:2] == (200, body)
    docroot = os.path.realpath(srv.htdocs)
    held = {pid: _files_open_under(pid, docroot) for pid in srv.children()}
    assert held and all(n <= 4 for n in held.values()), held
    assert any(n > 0 for n in held.values()), "no descriptor is cached at all: %s" % held


def test_off_keeps_nothing_open(server_factory):
    s = server_factory(extra="OpenFileCache Off\n")
    with s.conn() as c:
        for _ in range(3):
            assert c.request("GET", "/4k.bin").status == 200
        docroot = os.path.realpath(s.htdocs)

        def held():
            return {pid: _files_open_under(pid, docroot) for pid in s.children()}
        # the last response's file closes just after its last byte went out
        assert wait_for(lambda: all(n == 0 for n in held().values()), 3.0), held()


def test_bad_value_names_file_and_line(server_factory):
    s = server_factory(extra="OpenFileCache lots\n", start=False)
    p = s.run("-t")
    assert p.returncode == 1
    line = s.conf_line_of("OpenFileCache lots")
    assert "httpd.conf:%d" % line in p.stderr, p.stderr
    assert "OpenFileCache must be On, Off or a number of entries from 0 to 1024" in p.stderr
