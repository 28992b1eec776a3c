/*
 * Reading responses (see resp.h). Lines are found with memchr, header names
 * compared only when their length could match, and body bytes skipped by
 * count: the load generator must cost far less per response than the server.
 */
#include "resp.h"

#include <string.h>
#include <strings.h>

enum {
    ST_STATUS,
    ST_HEADERS,
    ST_BODY,
    ST_CHUNK_SIZE,
    ST_CHUNK_DATA,
    ST_CHUNK_END,
    ST_TRAILERS,
    ST_UNTIL_CLOSE,
    ST_DONE
};

void lg_resp_init(lg_resp_t *r)
{
    memset(r, 0, sizeof(*r));
    r->state = ST_STATUS;
}

/* "HTTP/1.x NNN reason": the reason may be empty, even without its space. */
static int status_line(lg_resp_t *r, const char *s, size_t n)
{
    if (n < 12 || memcmp(s, "HTTP/1.", 7) != 0 || s[7] < '0' || s[7] > '9' || s[8] != ' ')
        return -1;
    if (s[9] < '1' || s[9] > '5' || s[10] < '0' || s[10] > '9' || s[11] < '0' || s[11] > '9')
        return -1;
    if (n > 12 && s[12] != ' ')
        return -1;
    r->minor = s[7] - '0';
    r->status = (s[9] - '0') * 100 + (s[10] - '0') * 10 + (s[11] - '0');
    return 0;
}

/* Whether the comma-separated list @v (length @n) holds the token @tok. */
static bool has_token(const char *v, size_t n, const char *tok)
{
    size_t tl = strlen(tok), i = 0;

    while (i < n) {
        size_t start, end;

        while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
            i++;
        start = i;
        while (i < n && v[i] != ',')
            i++;
        end = i;
        while (end > start && (v[end - 1] == ' ' || v[end - 1] == '\t'))
            end--;
        if (end - start == tl && strncasecmp(v + start, tok, tl) == 0)
            return true;
    }
    return false;
}

static int header_line(lg_resp_t *r, const char *s, size_t n)
{
    const char *colon = memchr(s, ':', n), *v, *end = s + n;
    size_t name_len;

    if (colon == NULL || colon == s)
        return -1;
    name_len = (size_t)(colon - s);
    v = colon + 1;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
        end--;

    if (name_len == 14 && strncasecmp(s, "content-length", 14) == 0) {
        uint64_t len = 0;

        if (v == end)
            return -1;
        for (; v < end; v++) {
            if (*v < '0' || *v > '9' || len > UINT64_MAX / 10 - 10)
                return -1;
            len = len * 10 + (uint64_t)(*v - '0');
        }
        if (r->have_length && len != r->remaining)
            return -1;
        r->have_length = true;
        r->remaining = len;
    } else if (name_len == 17 && strncasecmp(s, "transfer-encoding", 17) == 0) {
        if (has_token(v, (size_t)(end - v), "chunked"))
            r->chunked = true;
    } else if (name_len == 10 && strncasecmp(s, "connection", 10) == 0) {
        if (has_token(v, (size_t)(end - v), "close"))
            r->close = true;
        if (has_token(v, (size_t)(end - v), "keep-alive"))
            r->keepalive = true;
    }
    return 0;
}

/* The header block ended: what follows, by RFC 9112 section 6.3. */
static void end_of_headers(lg_resp_t *r)
{
    if (r->minor == 0 && !r->keepalive)
        r->close = true;
    if (r->status >= 100 && r->status < 200 && r->status != 101) {
        /* an interim response: the real one follows */
        bool close = r->close;
        uint64_t bytes = r->bytes;

        lg_resp_init(r);
        r->close = close;
        r->bytes = bytes;
        return;
    }
    if (r->status == 204 || r->status == 304 || r->status == 101) {
        r->state = ST_DONE;
    } else if (r->chunked) {
        r->state = ST_CHUNK_SIZE;
    } else if (r->have_length) {
        r->state = r->remaining ? ST_BODY : ST_DONE;
    } else {
        r->state = ST_UNTIL_CLOSE;
        r->close = true;
    }
}

static int chunk_size_line(lg_resp_t *r, const char *s, size_t n)
{
    uint64_t size = 0;
    size_t i;

    for (i = 0; i < n; i++) {
        char c = s[i];
        unsigned d;

        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
            d = (unsigned)((c | 0x20) - 'a' + 10);
        else
            break;
        if (size >> 60)
            return -1;
        size = size * 16 + d;
    }
    if (i == 0 || (i < n && s[i] != ';' && s[i] != ' ' && s[i] != '\t'))
        return -1;
    r->remaining = size;
    r->state = size ? ST_CHUNK_DATA : ST_TRAILERS;
    return 0;
}

/* One complete line (without its end) in a line state; -1 if invalid. */
static int line(lg_resp_t *r, const char *s, size_t n)
{
    switch (r->state) {
    case ST_STATUS:
        if (status_line(r, s, n) < 0)
            return -1;
        r->state = ST_HEADERS;
        return 0;
    case ST_HEADERS:
        if (n == 0) {
            end_of_headers(r);
            return 0;
        }
        return header_line(r, s, n);
    case ST_CHUNK_SIZE:
        return chunk_size_line(r, s, n);
    case ST_CHUNK_END:
        if (n != 0)
            return -1;
        r->state = ST_CHUNK_SIZE;
        return 0;
    case ST_TRAILERS:
        if (n == 0)
            r->state = ST_DONE;
        return 0;
    default:
        return -1;
    }
}

int lg_resp_feed(lg_resp_t *r, const char *p, size_t len, size_t *used)
{
    size_t pos = 0;

    while (pos < len && r->state != ST_DONE) {
        const char *nl;
        size_t n, take;

        switch (r->state) {
        case ST_BODY:
        case ST_CHUNK_DATA:
            take = len - pos;
            if (take > r->remaining)
                take = (size_t)r->remaining;
            r->remaining -= take;
            r->body += take;
            pos += take;
            if (r->remaining == 0)
                r->state = r->state == ST_BODY ? ST_DONE : ST_CHUNK_END;
            continue;
        case ST_UNTIL_CLOSE:
            r->body += len - pos;
            pos = len;
            continue;
        default:
            break;
        }
        nl = memchr(p + pos, '\n', len - pos);
        if (nl == NULL) {
            if (len - pos > LG_RESP_MAX_LINE)
                goto bad;
            break;
        }
        n = (size_t)(nl - (p + pos));
        if (n > LG_RESP_MAX_LINE)
            goto bad;
        if (line(r, p + pos, n > 0 && nl[-1] == '\r' ? n - 1 : n) < 0)
            goto bad;
        pos += n + 1;
    }
    r->bytes += pos;
    *used = pos;
    return r->state == ST_DONE ? LG_RESP_DONE : LG_RESP_AGAIN;
bad:
    r->bytes += pos;
    *used = pos;
    return LG_RESP_ERROR;
}

int lg_resp_eof(lg_resp_t *r)
{
    if (r->state == ST_UNTIL_CLOSE || r->state == ST_DONE) {
        r->state = ST_DONE;
        return LG_RESP_DONE;
    }
    return LG_RESP_ERROR;
}
