/*
 * Request paths: percent-decoding, dot-segment removal and the escaping used
 * when a path or a name goes back out in a URL or in HTML.
 */
#include "path.h"

#include "pool.h"

#include <string.h>

/* Hex digit value + 1, so 0 means "not a hex digit". */
static const uint8_t hexval1[256] = {
    ['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7,
    ['7'] = 8, ['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14,
    ['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15,
    ['F'] = 16,
};

/* Bytes a path keeps as they are: unreserved, sub-delims, ':', '@', '/'. */
static const uint8_t path_safe[256] = {
    ['0' ... '9'] = 1, ['A' ... 'Z'] = 1, ['a' ... 'z'] = 1, ['-'] = 1, ['.'] = 1,
    ['_'] = 1, ['~'] = 1, ['!'] = 1, ['$'] = 1, ['&'] = 1, ['\''] = 1, ['('] = 1,
    [')'] = 1, ['*'] = 1, ['+'] = 1, [','] = 1, [';'] = 1, ['='] = 1, [':'] = 1,
    ['@'] = 1, ['/'] = 1,
};

static const char hex_upper[] = "0123456789ABCDEF";

/*
 * Decodes in place. Like Apache's ap_unescape_url, a bad escape wins over an
 * encoded slash, so the whole string is looked at before answering.
 * @p slash_status is what an encoded '/' earns (0: allowed).
 */
static int unescape(char *s, size_t *len, int slash_status)
{
    size_t n = *len, i, o = 0;
    bool bad = false, slash = false;

    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '%') {
            unsigned hi, lo;
            if (i + 2 >= n) {
                bad = true;   /* truncated: fewer than two bytes follow */
                break;
            }
            hi = hexval1[(unsigned char)s[i + 1]];
            lo = hexval1[(unsigned char)s[i + 2]];
            if (!hi || !lo) {
                bad = true;
                break;
            }
            c = (unsigned char)(((hi - 1) << 4) | (lo - 1));
            i += 2;
            if (c == '\0') {
                bad = true;
                break;
            }
            if (c == '/') {
                slash = true;
            }
        } else if (c == '\0') {
            bad = true;
            break;
        }
        s[o++] = (char)c;
    }
    if (bad) {
        return 400;
    }
    s[o] = '\0';
    *len = o;
    if (slash && slash_status) {
        return slash_status;
    }
    return 0;
}

int hd_unescape(char *s, size_t *len)
{
    return unescape(s, len, 0);
}

/*
 * RFC 3986 5.2.4 for a path that starts with '/', written in place: the
 * output never outgrows the input, so one cursor writes behind the other.
 * Empty segments ("//") are dropped; a trailing '/' is kept.
 */
static int remove_dot_segments(char *path, size_t *len)
{
    size_t n = *len, i = 1, o = 1;

    while (i < n) {
        size_t j = i;
        while (j < n && path[j] != '/') {
            j++;
        }
        size_t seg = j - i;
        if (seg == 0 || (seg == 1 && path[i] == '.')) {
            /* nothing to write: the output already ends with '/' */
        } else if (seg == 2 && path[i] == '.' && path[i + 1] == '.') {
            if (o == 1) {
                return 400;   /* would climb above the root */
            }
            o--;
            while (path[o - 1] != '/') {
                o--;
            }
        } else {
            memmove(path + o, path + i, seg);
            o += seg;
            if (j < n) {
                path[o++] = '/';
            }
        }
        i = j + 1;
    }
    path[o] = '\0';
    *len = o;
    return 0;
}

int hd_path_normalize(char *path, size_t *len)
{
    int rc;

    if (*len == 0 || path[0] != '/') {
        return 400;
    }
    /* decode first, so "%2e%2e" is a ".." segment like any other */
    rc = unescape(path, len, 404);
    if (rc != 0) {
        return rc;
    }
    return remove_dot_segments(path, len);
}

char *hd_escape_path(hd_pool_t *pool, const char *s)
{
    size_t n = 0;
    const unsigned char *p;
    char *out, *o;

    for (p = (const unsigned char *)s; *p; p++) {
        n += path_safe[*p] ? 1 : 3;
    }
    out = hd_pnalloc(pool, n + 1);
    o = out;
    for (p = (const unsigned char *)s; *p; p++) {
        if (path_safe[*p]) {
            *o++ = (char)*p;
        } else {
            *o++ = '%';
            *o++ = hex_upper[*p >> 4];
            *o++ = hex_upper[*p & 0xf];
        }
    }
    *o = '\0';
    return out;
}

static const char *html_entity(unsigned char c)
{
    switch (c) {
    case '&':
        return "&amp;";
    case '<':
        return "&lt;";
    case '>':
        return "&gt;";
    case '"':
        return "&quot;";
    default:
        return NULL;
    }
}

char *hd_escape_html(hd_pool_t *pool, const char *s)
{
    size_t n = 0;
    const unsigned char *p;
    const char *e;
    char *out, *o;

    for (p = (const unsigned char *)s; *p; p++) {
        e = html_entity(*p);
        n += e ? strlen(e) : 1;
    }
    out = hd_pnalloc(pool, n + 1);
    o = out;
    for (p = (const unsigned char *)s; *p; p++) {
        e = html_entity(*p);
        if (e) {
            size_t k = strlen(e);
            memcpy(o, e, k);
            o += k;
        } else {
            *o++ = (char)*p;
        }
    }
    *o = '\0';
    return out;
}
