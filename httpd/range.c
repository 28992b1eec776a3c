/*
 * Byte ranges. The parser is pure so the unit tests drive it without files;
 * the responder turns the ranges into file buffers of the body chain, so a
 * range of a large file is never read into memory.
 */
#include "range.h"

#include "date.h"
#include "pool.h"
#include "request.h"
#include "table.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *skip_ows(const char *p)
{
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    return p;
}

/* Digits only; a number too large for off_t saturates, which still means
 * "past any end" for a first-pos and "all of it" for a suffix. */
static off_t parse_pos(const char **pp)
{
    const char *p = *pp;
    off_t v = 0;
    bool saturated = false;

    while (*p >= '0' && *p <= '9') {
        int d = *p - '0';
        if (!saturated && v > (INT64_MAX - d) / 10) {
            saturated = true;
        }
        if (!saturated) {
            v = v * 10 + d;
        }
        p++;
    }
    *pp = p;
    return saturated ? INT64_MAX : v;
}

int hd_range_parse(const char *value, off_t size, hd_range_t *out, int max)
{
    const char *p = skip_ows(value);
    int nspecs = 0, n = 0;

    if (strncasecmp(p, "bytes", 5) != 0) {
        return HD_RANGE_IGNORE;
    }
    p = skip_ows(p + 5);
    if (*p++ != '=') {
        return HD_RANGE_IGNORE;
    }
    for (;;) {
        off_t first = -1, last = -1, s, e;

        p = skip_ows(p);
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == '\0') {
            break;
        }
        if (*p >= '0' && *p <= '9') {
            first = parse_pos(&p);
            p = skip_ows(p);
        }
        if (*p++ != '-') {
            return HD_RANGE_IGNORE;
        }
        p = skip_ows(p);
        if (*p >= '0' && *p <= '9') {
            last = parse_pos(&p);
            p = skip_ows(p);
        }
        if ((*p != ',' && *p != '\0') || (first < 0 && last < 0) ||
            (first >= 0 && last >= 0 && last < first)) {
            return HD_RANGE_IGNORE;
        }
        if (++nspecs > max) {
            return HD_RANGE_IGNORE;
        }

        if (first < 0) {
            /* suffix-range: "-0", or any suffix of nothing, selects no byte */
            if (last == 0 || size == 0) {
                continue;
            }
            s = last >= size ? 0 : size - last;
            e = size - 1;
        } else {
            if (first >= size) {
                continue;
            }
            s = first;
            e = (last < 0 || last >= size) ? size - 1 : last;
        }

        /* Apache merges a range into the previous one when they overlap or
         * touch; the client asked for the same bytes either way. */
        if (n > 0 && s <= out[n - 1].end + 1 && e >= out[n - 1].start - 1) {
            if (s < out[n - 1].start) {
                out[n - 1].start = s;
            }
            if (e > out[n - 1].end) {
                out[n - 1].end = e;
            }
            continue;
        }
        out[n].start = s;
        out[n].end = e;
        n++;
    }
    if (nspecs == 0) {
        return HD_RANGE_IGNORE;
    }
    if (n == 0) {
        return HD_RANGE_UNSATISFIABLE;
    }

    /* Overlaps that were not merged could make the answer bigger than the
     * file: the whole file is cheaper for both sides (Apache does the same). */
    off_t sum = 0;
    for (int i = 0; i < n; i++) {
        sum += out[i].end - out[i].start + 1;
        if (sum > size) {
            return HD_RANGE_IGNORE;
        }
    }
    return n;
}

bool hd_if_range_matches(const char *if_range, const char *etag, time_t mtime)
{
    if (if_range[0] == '"') {
        return etag != NULL && etag[0] == '"' && strcmp(if_range, etag) == 0;
    }
    if (if_range[0] == 'W' && if_range[1] == '/') {
        return false;
    }
    time_t t = hd_http_date_parse(if_range);
    return t != -1 && mtime != 0 && t == mtime;
}

/* A boundary that will not occur in the parts: derived from the ETag, the
 * request time and a per-thread counter, so no random syscall is needed. */
static char *make_boundary(hd_request_t *r, const char *etag)
{
    static __thread uint32_t counter;
    uint64_t h = 0xcbf29ce484222325ull;

    for (const char *p = etag ? etag : ""; *p; p++) {
        h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
    }
    h ^= (uint64_t)r->start.tv_nsec * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t)r->start.tv_sec << 20;
    counter++;
    return hd_psprintf(r->pool, "%016llx%08x", (unsigned long long)h,
                       (unsigned)(counter * 2654435761u));
}

static void respond_multipart(hd_request_t *r, int fd, off_t size, const char *etag,
                              const hd_range_t *ranges, int n)
{
    const char *boundary = make_boundary(r, etag);
    const char *ct_line = "";
    int64_t total = 0;

    if (r->content_type != NULL) {
        ct_line = hd_psprintf(r->pool, "Content-Type: %s\r\n", r->content_type);
    }
    for (int i = 0; i < n; i++) {
        char *head = hd_psprintf(
            r->pool, "\r\n--%s\r\n%sContent-Range: bytes %lld-%lld/%lld\r\n\r\n", boundary, ct_line,
            (long long)ranges[i].start, (long long)ranges[i].end, (long long)size);
        size_t hlen = strlen(head);
        off_t len = ranges[i].end - ranges[i].start + 1;

        hd_body_append_mem(r, head, hlen);
        hd_body_append_file(r, fd, ranges[i].start, len);
        total += (int64_t)hlen + len;
    }
    char *tail = hd_psprintf(r->pool, "\r\n--%s--\r\n", boundary);
    size_t tlen = strlen(tail);
    hd_body_append_mem(r, tail, tlen);
    total += (int64_t)tlen;

    r->content_type = hd_psprintf(r->pool, "multipart/byteranges; boundary=%s", boundary);
    r->content_length = total;
}

int hd_range_respond(hd_request_t *r, int fd, off_t size, const char *etag)
{
    hd_range_t ranges[HD_MAX_RANGES];
    const char *range = hd_table_get(r->headers_in, "Range");
    const char *if_range;
    int n;

    if (range == NULL || r->method != HD_M_GET || (r->status != 0 && r->status != 200)) {
        return HD_DECLINED;
    }
    if_range = hd_table_get(r->headers_in, "If-Range");
    if (if_range != NULL && !hd_if_range_matches(if_range, etag, r->mtime)) {
        return HD_DECLINED;
    }

    n = hd_range_parse(range, size, ranges, HD_MAX_RANGES);
    if (n == HD_RANGE_IGNORE) {
        return HD_DECLINED;
    }
    if (n == HD_RANGE_UNSATISFIABLE) {
        hd_table_set(r->headers_out, "Content-Range",
                     hd_psprintf(r->pool, "bytes */%lld", (long long)size));
        return 416;
    }

    r->status = 206;
    if (n == 1) {
        off_t len = ranges[0].end - ranges[0].start + 1;
        hd_table_set(r->headers_out, "Content-Range",
                     hd_psprintf(r->pool, "bytes %lld-%lld/%lld", (long long)ranges[0].start,
                                 (long long)ranges[0].end, (long long)size));
        hd_body_append_file(r, fd, ranges[0].start, len);
        r->content_length = len;
        return HD_OK;
    }
    respond_multipart(r, fd, size, etag, ranges, n);
    return HD_OK;
}
