/*
 * Byte ranges. The parser is pure so the unit tests drive it without files;
 * the range filter cuts the ranges out of the body's buffers, so a range of
 * a large file is never read into memory.
 */
#include "range.h"

#include "buf.h"
#include "date.h"
#include "filter.h"
#include "pool.h"
#include "request.h"
#include "response.h"
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

/*
 * Appends to *@p out the bytes [start, end] of the body held in @p in, as
 * new buffers over the same memory or file ranges: nothing is copied.
 */
static void slice(hd_pool_t *p, hd_chain_t **out, const hd_chain_t *in, off_t start, off_t end)
{
    off_t at = 0;

    for (; in != NULL && at <= end; in = in->next) {
        const hd_buf_t *b = in->buf;
        off_t size = hd_buf_size(b);
        off_t from = start > at ? start - at : 0;
        off_t to = end - at + 1 < size ? end - at + 1 : size;

        if (size > 0 && from < to) {
            hd_buf_t *nb;
            if (b->in_file) {
                nb = hd_buf_file(p, b->fd, b->file_pos + from, to - from);
            } else {
                nb = hd_buf_wrap(p, b->pos + from, (size_t)(to - from));
            }
            hd_chain_append(p, out, nb);
        }
        at += size;
    }
}

static int64_t append_text(hd_pool_t *p, hd_chain_t **out, const char *text)
{
    size_t n = strlen(text);
    hd_chain_append(p, out, hd_buf_wrap(p, text, n));
    return (int64_t)n;
}

/* multipart/byteranges: each part with its own Content-Type and Content-Range. */
static hd_chain_t *multipart(hd_request_t *r, const hd_chain_t *in, off_t size, const char *etag,
                             const hd_range_t *ranges, int n)
{
    const char *boundary = make_boundary(r, etag);
    const char *ct_line = "";
    hd_chain_t *out = NULL;
    int64_t total = 0;

    if (r->content_type != NULL) {
        ct_line = hd_psprintf(r->pool, "Content-Type: %s\r\n", r->content_type);
    }
    for (int i = 0; i < n; i++) {
        total += append_text(r->pool, &out,
                             hd_psprintf(r->pool, "\r\n--%s\r\n%sContent-Range: bytes %lld-%lld/%lld\r\n\r\n",
                                         boundary, ct_line, (long long)ranges[i].start,
                                         (long long)ranges[i].end, (long long)size));
        slice(r->pool, &out, in, ranges[i].start, ranges[i].end);
        total += ranges[i].end - ranges[i].start + 1;
    }
    total += append_text(r->pool, &out, hd_psprintf(r->pool, "\r\n--%s--\r\n", boundary));
    r->content_type = hd_psprintf(r->pool, "multipart/byteranges; boundary=%s", boundary);
    r->content_length = total;
    return out;
}

/* The body as the range filter holds it until its end arrives. */
typedef struct {
    hd_chain_t *held;
    off_t size;
} range_ctx_t;

/*
 * Applies the Range header to the whole body. Returns the chain to pass on:
 * the body itself (no range applies), the ranges of it (206), or an error
 * page (416).
 */
static hd_chain_t *apply_ranges(hd_request_t *r, range_ctx_t *ctx)
{
    hd_range_t ranges[HD_MAX_RANGES];
    const char *range = hd_table_get(r->headers_in, "Range");
    const char *if_range = hd_table_get(r->headers_in, "If-Range");
    const char *etag = hd_table_get(r->headers_out, "ETag");
    const char *accept = hd_table_get(r->headers_out, "Accept-Ranges");
    hd_chain_t *out = NULL;
    int n;

    if (range == NULL || r->status != 200 || r->header_only ||
        (accept != NULL && strcasecmp(accept, "none") == 0) ||
        (if_range != NULL && !hd_if_range_matches(if_range, etag, r->mtime))) {
        return ctx->held;
    }
    n = hd_range_parse(range, ctx->size, ranges, HD_MAX_RANGES);
    if (n == HD_RANGE_IGNORE) {
        return ctx->held;
    }
    if (n == HD_RANGE_UNSATISFIABLE) {
        hd_response_error_page(r, 416);
        hd_table_set(r->headers_out, "Content-Range",
                     hd_psprintf(r->pool, "bytes */%lld", (long long)ctx->size));
        out = r->body;
        r->body = NULL;
        return out;
    }
    r->status = 206;
    if (n == 1) {
        hd_table_set(r->headers_out, "Content-Range",
                     hd_psprintf(r->pool, "bytes %lld-%lld/%lld", (long long)ranges[0].start,
                                 (long long)ranges[0].end, (long long)ctx->size));
        slice(r->pool, &out, ctx->held, ranges[0].start, ranges[0].end);
        r->content_length = ranges[0].end - ranges[0].start + 1;
        return out;
    }
    return multipart(r, ctx->held, ctx->size, etag, ranges, n);
}

/*
 * The range filter (Apache's BYTERANGE): it runs after every content filter,
 * so ranges are cut from the body as sent. Like Apache's, it holds the body
 * until its end (a handler's file body arrives whole, at no cost), then cuts
 * the ranges from it as new buffers over the same memory and file ranges.
 */
static int range_filter(hd_filter_t *f, hd_chain_t *in)
{
    hd_request_t *r = f->r;
    range_ctx_t *ctx = f->ctx;
    bool last = false;

    if (ctx == NULL) {
        ctx = f->ctx = hd_pcalloc(r->pool, sizeof(*ctx));
    }
    for (; in != NULL; in = in->next) {
        if (in->buf->last_buf) {
            last = true;
        }
        if (hd_buf_size(in->buf) > 0) {
            ctx->size += hd_buf_size(in->buf);
            hd_chain_append(r->pool, &ctx->held, in->buf);
        }
    }
    if (!last) {
        return HD_OK;
    }
    hd_chain_t *out = apply_ranges(r, ctx);
    hd_chain_append(r->pool, &out, hd_buf_last(r->pool));
    ctx->held = NULL;
    return hd_filter_pass(f, out);
}

const hd_filter_type_t hd_range_filter = {
    .name = "BYTERANGE",
    .stage = HD_FILTER_PROTOCOL,
    .run = range_filter,
};

void hd_range_insert_filter(hd_request_t *r)
{
    if (r->method == HD_M_GET && hd_table_get(r->headers_in, "Range") != NULL) {
        hd_filter_insert(r, &hd_range_filter, NULL);
    }
}
