"""Conditional requests (RFC 9110 13) and byte ranges (RFC 9110 14) on
4k.bin, whose mtime is Tue, 01 Jun 2021 12:00:00 GMT."""

import re

import pytest

from hdtest import BIN_4K, BIN_MTIME, build_request, http_date, parse_multipart_byteranges

LAST_MODIFIED = "Tue, 01 Jun 2021 12:00:00 GMT"


@pytest.fixture(scope="module")
def srv(module_server_factory):
    return module_server_factory()


@pytest.fixture(scope="module")
def etag(srv):
    r = srv.get("/4k.bin")
    assert r.status == 200
    assert r.header("Last-Modified") == LAST_MODIFIED
    e = r.header("ETag")
    assert e
    return e


def _req(srv, headers, method="GET", path="/4k.bin"):
    """Sends one request followed by a pipelined GET, so a 304/412/416 that
    leaks body bytes breaks the framing of the second response."""
    with srv.conn() as c:
        c.send(build_request(method, path, headers=headers)
               + build_request("GET", "/index.html"))
        r = c.read_response(method)
        probe = c.read_response("GET")
    assert probe.status == 200, "response framing broken after %r" % (r,)
    return r


# -- conditionals ---------------------------------------------------------

def test_if_none_match_etag_304(srv, etag):
    r = _req(srv, {"If-None-Match": etag})
    assert r.status == 304
    assert r.body == b""
    assert r.header("ETag") == etag
    assert r.header("Content-Length") in (None, "4096")
    assert r.header("Date")


def test_if_none_match_in_list_304(srv, etag):
    assert _req(srv, {"If-None-Match": '"nope", %s, "other"' % etag}).status == 304


def test_if_none_match_star_304(srv, etag):
    r = _req(srv, {"If-None-Match": "*"})
    assert r.status == 304
    assert r.body == b""


def test_if_none_match_other_200(srv, etag):
    r = _req(srv, {"If-None-Match": '"definitely-not-it"'})
    assert r.status == 200 and r.body == BIN_4K


def test_if_none_match_head_304(srv, etag):
    r = _req(srv, {"If-None-Match": etag}, method="HEAD")
    assert r.status == 304


def test_if_modified_since_equal_304(srv, etag):
    r = _req(srv, {"If-Modified-Since": LAST_MODIFIED})
    assert r.status == 304
    assert r.body == b""
    assert r.header("ETag") == etag


def test_if_modified_since_later_304(srv):
    assert _req(srv, {"If-Modified-Since": http_date(BIN_MTIME + 3600)}).status == 304


def test_if_modified_since_older_200(srv):
    r = _req(srv, {"If-Modified-Since": http_date(BIN_MTIME - 1)})
    assert r.status == 200 and r.body == BIN_4K


def test_if_modified_since_other_date_formats(srv):
    # RFC 850 and asctime forms must be understood as well.
    assert _req(srv, {"If-Modified-Since": "Tuesday, 01-Jun-21 12:00:00 GMT"}).status == 304
    assert _req(srv, {"If-Modified-Since": "Tue Jun  1 12:00:00 2021"}).status == 304


def test_if_modified_since_invalid_ignored(srv):
    r = _req(srv, {"If-Modified-Since": "not a date"})
    assert r.status == 200 and r.body == BIN_4K


def test_if_none_match_takes_precedence_over_ims(srv, etag):
    # If-None-Match present: If-Modified-Since is ignored (RFC 9110 13.2.2).
    r = _req(srv, {"If-None-Match": '"other"', "If-Modified-Since": LAST_MODIFIED})
    assert r.status == 200 and r.body == BIN_4K


def test_if_match_mismatch_412(srv, etag):
    r = _req(srv, {"If-Match": '"not-the-etag"'})
    assert r.status == 412
    assert BIN_4K not in r.body


def test_if_match_star_200(srv):
    r = _req(srv, {"If-Match": "*"})
    assert r.status == 200 and r.body == BIN_4K


def test_if_match_same_200(srv, etag):
    if etag.startswith("W/"):
        pytest.skip("weak ETag never matches If-Match")
    r = _req(srv, {"If-Match": etag})
    assert r.status == 200 and r.body == BIN_4K


def test_if_unmodified_since_past_412(srv):
    r = _req(srv, {"If-Unmodified-Since": http_date(BIN_MTIME - 86400)})
    assert r.status == 412


def test_if_unmodified_since_equal_200(srv):
    r = _req(srv, {"If-Unmodified-Since": LAST_MODIFIED})
    assert r.status == 200 and r.body == BIN_4K


def test_conditionals_on_missing_file_404(srv, etag):
    assert _req(srv, {"If-None-Match": "*"}, path="/missing").status == 404


# -- ranges ---------------------------------------------------------------

def _single(r, first, last):
    assert r.status == 206, r
    assert r.header("Content-Range") == "bytes %d-%d/4096" % (first, last)
    assert r.header("Content-Length") == str(last - first + 1)
    assert r.body == BIN_4K[first:last + 1]


def test_range_first_100(srv):
    _single(_req(srv, {"Range": "bytes=0-99"}), 0, 99)


def test_range_suffix(srv):
    _single(_req(srv, {"Range": "bytes=-100"}), 3996, 4095)


def test_range_open_ended(srv):
    _single(_req(srv, {"Range": "bytes=4000-"}), 4000, 4095)


def test_range_one_byte(srv):
    _single(_req(srv, {"Range": "bytes=0-0"}), 0, 0)


def test_range_middle(srv):
    _single(_req(srv, {"Range": "bytes=1000-1999"}), 1000, 1999)


def test_range_last_beyond_end_clamped(srv):
    _single(_req(srv, {"Range": "bytes=4000-9999"}), 4000, 4095)


def test_range_suffix_longer_than_file(srv):
    # The whole file: as a 206 of every byte, or (Range ignored) a 200.
    r = _req(srv, {"Range": "bytes=-10000"})
    if r.status == 206:
        _single(r, 0, 4095)
    else:
        assert r.status == 200 and r.body == BIN_4K


def test_range_not_satisfiable_416(srv):
    r = _req(srv, {"Range": "bytes=5000-6000"})
    assert r.status == 416
    assert r.header("Content-Range") == "bytes */4096"
    assert BIN_4K[:64] not in r.body


def test_range_starting_at_size_416(srv):
    r = _req(srv, {"Range": "bytes=4096-"})
    assert r.status == 416
    assert r.header("Content-Range") == "bytes */4096"


def test_range_head(srv):
    r = _req(srv, {"Range": "bytes=0-99"}, method="HEAD")
    assert r.status in (200, 206)
    assert r.body == b""


def _check_multipart(r, spans):
    assert r.status == 206, r
    assert r.header("Content-Range") is None
    assert re.match(r"^multipart/byteranges;\s*boundary=", r.header("Content-Type", ""))
    assert r.header("Content-Length") in (None, str(len(r.body)))
    parts = parse_multipart_byteranges(r)
    assert len(parts) == len(spans)
    for (hdrs, data), (first, last) in zip(parts, spans):
        assert hdrs.get("content-range") == "bytes %d-%d/4096" % (first, last)
        assert data == BIN_4K[first:last + 1]


def test_two_ranges_multipart(srv):
    _check_multipart(_req(srv, {"Range": "bytes=0-9,100-199"}), [(0, 9), (100, 199)])


def test_three_ranges_multipart_with_suffix(srv):
    _check_multipart(_req(srv, {"Range": "bytes=10-19,2000-2099,-5"}),
                     [(10, 19), (2000, 2099), (4091, 4095)])


def test_if_range_matching_etag_206(srv, etag):
    if etag.startswith("W/"):
        pytest.skip("weak ETag: If-Range never matches")
    _single(_req(srv, {"Range": "bytes=0-99", "If-Range": etag}), 0, 99)


def test_if_range_matching_date_206(srv):
    _single(_req(srv, {"Range": "bytes=0-99", "If-Range": LAST_MODIFIED}), 0, 99)


def test_if_range_other_etag_full(srv):
    r = _req(srv, {"Range": "bytes=0-99", "If-Range": '"stale-etag"'})
    assert r.status == 200 and r.body == BIN_4K
    assert r.header("Content-Range") is None


def test_if_range_other_date_full(srv):
    r = _req(srv, {"Range": "bytes=0-99", "If-Range": http_date(BIN_MTIME - 100)})
    assert r.status == 200 and r.body == BIN_4K


@pytest.mark.parametrize("value", ["bytes=abc", "bytes=", "pages=0-10", "bytes=10-5",
                                   "bytes 0-10", "bytes=0-10,x"])
def test_invalid_range_ignored(srv, value):
    r = _req(srv, {"Range": value})
    assert r.status == 200, r
    assert r.body == BIN_4K
    assert r.header("Content-Range") is None


def test_range_ignored_on_error_status(srv):
    r = _req(srv, {"Range": "bytes=0-9"}, path="/missing")
    assert r.status == 404
