/*
 * Output for the status renderers: text is formatted into chunks taken from
 * the request pool, each appended to the response body once full (no copy,
 * one writev), plus the escaping and number formats the four formats need.
 */
#include "status.h"

#include "build_info.h"
#include "buildmark.h"
#include "pool.h"

#include <math.h> /* isfinite only: a macro, no libm */
#include <stdio.h>
#include <string.h>

/* Fits in a pool block with room to spare, so a chunk never goes to malloc. */
#define CHUNK 7168

const status_build_t status_build = {
    .version = HD_SERVER_BASEPRODUCT "/" HD_VERSION " (Unix)",
    .built = hd_server_built,
    .git_commit = HD_GIT_COMMIT,
    .build_type = HD_BUILD_TYPE,
    .compiler = HD_COMPILER,
    .cflags = HD_CFLAGS,
#ifdef HD_NO_COUNTERS
    .counters = false,
#else
    .counters = true,
#endif
};

void status_out_init(status_out_t *o, hd_request_t *r)
{
    o->r = r;
    o->buf = NULL;
    o->len = 0;
    o->cap = 0;
}

static void flush_chunk(status_out_t *o)
{
    if (o->len > 0) {
        hd_body_append_mem(o->r, o->buf, o->len);
    }
    o->buf = NULL;
    o->len = 0;
    o->cap = 0;
}

/* Room for @p n more bytes in the current chunk. */
static char *room(status_out_t *o, size_t n)
{
    if (o->len + n > o->cap) {
        flush_chunk(o);
        o->cap = n > CHUNK ? n : CHUNK;
        o->buf = hd_pnalloc(o->r->pool, o->cap);
    }
    return o->buf + o->len;
}

void status_putn(status_out_t *o, const char *s, size_t n)
{
    if (n == 0) {
        return;
    }
    memcpy(room(o, n), s, n);
    o->len += n;
}

void status_puts(status_out_t *o, const char *s)
{
    status_putn(o, s, strlen(s));
}

void status_printf(status_out_t *o, const char *fmt, ...)
{
    va_list ap;
    size_t left = o->cap - o->len;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf != NULL ? o->buf + o->len : NULL, o->buf != NULL ? left : 0, fmt,
                      ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    if (o->buf != NULL && (size_t)n < left) {
        o->len += (size_t)n;
        return;
    }
    char *p = room(o, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    o->len += (size_t)n;
}

void status_put_html(status_out_t *o, const char *s)
{
    const char *start = s;
    for (; *s != '\0'; s++) {
        const char *rep;
        switch (*s) {
        case '&':
            rep = "&amp;";
            break;
        case '<':
            rep = "&lt;";
            break;
        case '>':
            rep = "&gt;";
            break;
        case '"':
            rep = "&quot;";
            break;
        case '\'':
            rep = "&#39;";
            break;
        default:
            continue;
        }
        status_putn(o, start, (size_t)(s - start));
        status_puts(o, rep);
        start = s + 1;
    }
    status_putn(o, start, (size_t)(s - start));
}

void status_put_json_str(status_out_t *o, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    status_putn(o, "\"", 1);
    if (s == NULL) {
        s = "";
    }
    const char *start = s;
    for (; *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch >= 0x20 && ch != '"' && ch != '\\' && ch < 0x7f) {
            continue;
        }
        status_putn(o, start, (size_t)(s - start));
        char esc[6] = {'\\', 'u', '0', '0', hex[ch >> 4], hex[ch & 15]};
        if (ch == '"' || ch == '\\') {
            esc[1] = (char)ch;
            status_putn(o, esc, 2);
        } else {
            /* control bytes, and bytes above ASCII that may not be UTF-8 (request lines) */
            status_putn(o, esc, 6);
        }
        start = s + 1;
    }
    status_putn(o, start, (size_t)(s - start));
    status_putn(o, "\"", 1);
}

void status_put_json_num(status_out_t *o, double d)
{
    if (!isfinite(d)) {
        status_puts(o, "null");
    } else if (d > -9007199254740992.0 && d < 9007199254740992.0 && (double)(int64_t)d == d) {
        status_printf(o, "%lld", (long long)d);
    } else {
        status_printf(o, "%.6g", d);
    }
}

void status_out_finish(status_out_t *o)
{
    flush_chunk(o);
}

void status_apache_g(char *buf, size_t size, double d)
{
    char tmp[64];
    snprintf(tmp, sizeof(tmp), "%g", d);
    /* APR's %g writes no zero before the point: ".5", "-.5" */
    const char *src = tmp;
    char *dst = buf;
    size_t left = size;
    if (src[0] == '-' && src[1] == '0' && src[2] == '.') {
        src += 2;
        if (left > 1) {
            *dst++ = '-';
            left--;
        }
    } else if (src[0] == '0' && src[1] == '.') {
        src++;
    }
    snprintf(dst, left, "%s", src);
}

void status_apache_time(char *buf, size_t size, time_t t)
{
    struct tm tm;
    if (localtime_r(&t, &tm) == NULL ||
        strftime(buf, size, "%A, %d-%b-%Y %H:%M:%S %Z", &tm) == 0) {
        snprintf(buf, size, "-");
    }
}

void status_apache_uptime(char *buf, size_t size, uint64_t secs)
{
    static const char *const unit[] = {"day", "hour", "minute", "second"};
    uint64_t part[4] = {secs / 86400, secs / 3600 % 24, secs / 60 % 60, secs % 60};
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < 4 && len < size; i++) {
        if (part[i] != 0) {
            int n = snprintf(buf + len, size - len, " %llu %s%s", (unsigned long long)part[i],
                             unit[i], part[i] == 1 ? "" : "s");
            if (n < 0) {
                break;
            }
            len += (size_t)n;
        }
    }
}
