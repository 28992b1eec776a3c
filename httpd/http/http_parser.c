/*
 * HTTP/1.x request-head parser and chunked decoder: resumable state machines
 * fed the same (growing) buffer again and again, in the manner of nginx's
 * ngx_http_parse_request_line and ngx_http_parse_header_line.
 */
#include "http_parser.h"

#include <string.h>

const char *const hd_method_names[HD_M_NMETHODS] = {
    [HD_M_GET] = "GET",
    [HD_M_HEAD] = "HEAD",
    [HD_M_POST] = "POST",
    [HD_M_PUT] = "PUT",
    [HD_M_DELETE] = "DELETE",
    [HD_M_CONNECT] = "CONNECT",
    [HD_M_OPTIONS] = "OPTIONS",
    [HD_M_TRACE] = "TRACE",
    [HD_M_PATCH] = "PATCH",
    [HD_M_PROPFIND] = "PROPFIND",
    [HD_M_PROPPATCH] = "PROPPATCH",
    [HD_M_MKCOL] = "MKCOL",
    [HD_M_COPY] = "COPY",
    [HD_M_MOVE] = "MOVE",
    [HD_M_LOCK] = "LOCK",
    [HD_M_UNLOCK] = "UNLOCK",
    [HD_M_OTHER] = NULL,
};

#define MAX_METHOD_LEN 32
/* Apache's DEFAULT_LIMIT_BLANK_LINES: enough for sloppy clients, not a loop. */
#define MAX_BLANK_LINES 10
#define MAX_CHUNK_LINE 8190
#define MAX_TRAILERS 100

/* RFC 9110 5.6.2 tchar: method and field-name bytes. */
static const uint8_t tchar[256] = {
    ['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1, ['*'] = 1,
    ['+'] = 1, ['-'] = 1, ['.'] = 1, ['^'] = 1, ['_'] = 1, ['`'] = 1, ['|'] = 1,
    ['~'] = 1, ['0' ... '9'] = 1, ['A' ... 'Z'] = 1, ['a' ... 'z'] = 1,
};

/*
 * Request-target bytes. Stricter classes (pchar) would refuse what clients
 * send in practice ('"', '{', '|', UTF-8), so like Apache and nginx we only
 * refuse what can break framing or logs: controls, SP and DEL.
 */
static const uint8_t target_char[256] = {
    [0x21 ... 0x7e] = 1, [0x80 ... 0xff] = 1,
};

/* Field-value bytes other than SP/HTAB: VCHAR and obs-text. */
static const uint8_t value_char[256] = {
    [0x21 ... 0x7e] = 1, [0x80 ... 0xff] = 1,
};

/*
 * Authority bytes (RFC 3986 reg-name, IP-literal, port). No '@': userinfo in
 * an http(s) URI is an error to a recipient (RFC 9110 4.2.4).
 */
static const uint8_t host_char[256] = {
    ['0' ... '9'] = 1, ['A' ... 'Z'] = 1, ['a' ... 'z'] = 1, ['-'] = 1, ['.'] = 1,
    ['_'] = 1, ['~'] = 1, ['!'] = 1, ['$'] = 1, ['&'] = 1, ['\''] = 1, ['('] = 1,
    [')'] = 1, ['*'] = 1, ['+'] = 1, [','] = 1, [';'] = 1, ['='] = 1, [':'] = 1,
    ['['] = 1, [']'] = 1, ['%'] = 1,
};

/* RFC 3986 scheme bytes after the first ALPHA. */
static const uint8_t scheme_char[256] = {
    ['0' ... '9'] = 1, ['A' ... 'Z'] = 1, ['a' ... 'z'] = 1, ['+'] = 1, ['-'] = 1,
    ['.'] = 1,
};

/* Hex digit value + 1, so 0 means "not a hex digit". */
static const uint8_t hexval1[256] = {
    ['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7,
    ['7'] = 8, ['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14,
    ['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15,
    ['F'] = 16,
};

enum {
    /* request line; every state before S_FIELD_START counts against max_request_line */
    S_START = 0,      /* skipping empty lines before the request line */
    S_START_LF,       /* CR of such an empty line seen */
    S_METHOD,
    S_TARGET_START,
    S_PATH,
    S_QUERY,
    S_ASTERISK,
    S_SCHEME,
    S_SCHEME_SLASH1,
    S_SCHEME_SLASH2,
    S_AUTHORITY,      /* absolute-form authority */
    S_CONNECT_AUTH,   /* authority-form (CONNECT only) */
    S_VERSION,        /* matching "HTTP/", aux0 bytes matched */
    S_MAJOR,
    S_DOT,
    S_MINOR,
    S_LINE_END,
    S_LINE_LF,
    /* header fields; each line counts against max_field_size */
    S_FIELD_START,
    S_NAME,
    S_OWS,
    S_VALUE,
    S_FIELD_LF,
    S_HEAD_LF,
    S_DONE,
    S_ERROR           /* aux0 holds the status returned */
};

static int lower(int c)
{
    return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
}

static bool ci_equal(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (lower((unsigned char)a[i]) != lower((unsigned char)b[i])) {
            return false;
        }
    }
    return true;
}

static hd_method_t lookup_method(const char *m, size_t len)
{
    for (int i = 0; i < HD_M_OTHER; i++) {
        const char *name = hd_method_names[i];
        if (strlen(name) == len && memcmp(name, m, len) == 0) {
            return (hd_method_t)i;
        }
    }
    return HD_M_OTHER;
}

/* authority-form = uri-host ":" port, with a non-empty host and port */
static bool valid_authority_form(const char *a, size_t len)
{
    size_t colon = len;
    while (colon > 0 && a[colon - 1] != ':') {
        colon--;
    }
    if (colon < 2 || colon == len) {
        return false;
    }
    for (size_t i = colon; i < len; i++) {
        if (a[i] < '0' || a[i] > '9') {
            return false;
        }
    }
    return true;
}

/* Checks that need the whole request line; run when its end is seen. */
static int finish_request_line(hd_http_parser_t *p, const char *buf, uint32_t end)
{
    p->line_len = end - p->line_off;
    /* The HTTP/2 connection preface: this server speaks only HTTP/1.x. */
    if (p->asterisk_form && p->method_len == 3 && memcmp(buf + p->method_off, "PRI", 3) == 0
        && p->http_major == 2 && p->http_minor == 0) {
        return 400;
    }
    if (p->http_major != 1) {
        return 505;
    }
    /* RFC 9112 3.2.4: asterisk-form is only for a server-wide OPTIONS. */
    if (p->asterisk_form && p->method != HD_M_OPTIONS) {
        return 400;
    }
    return HD_OK;
}

void hd_http_parser_init(hd_http_parser_t *p, hd_http_field_t *fields)
{
    memset(p, 0, sizeof(*p));
    p->method = HD_M_OTHER;
    p->fields = fields;
    p->state = S_START;
}

int hd_http_parse_head(hd_http_parser_t *p, const char *buf, size_t len,
                       const hd_http_limits_t *limits)
{
    const unsigned char *b = (const unsigned char *)buf;
    uint32_t pos = p->pos;
    uint32_t end = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
    int state = p->state;
    int rc;

    if (state == S_DONE) {
        return HD_OK;
    }
    if (state == S_ERROR) {
        return (int)p->aux0;
    }

    for (; pos < end; pos++) {
        unsigned char c = b[pos];

        /* Limits are checked on every byte so an endless line is refused early. */
        if (c != '\r' && c != '\n') {
            if (state < S_FIELD_START) {
                if (pos - p->line_start >= limits->max_request_line) {
                    rc = 414;
                    goto fail;
                }
            } else if (pos - p->line_start >= limits->max_field_size) {
                rc = 431;
                goto fail;
            }
        }

        switch (state) {
        case S_START:
            if (c == '\r') {
                state = S_START_LF;
            } else if (c == '\n') {
                if (++p->aux0 > MAX_BLANK_LINES) {
                    goto bad;
                }
            } else if (tchar[c]) {
                p->line_off = pos;
                p->method_off = pos;
                state = S_METHOD;
            } else {
                goto bad;
            }
            break;

        case S_START_LF:
            if (c != '\n' || ++p->aux0 > MAX_BLANK_LINES) {
                goto bad;
            }
            state = S_START;
            break;

        case S_METHOD:
            if (c == ' ') {
                p->method_len = pos - p->method_off;
                p->method = lookup_method(buf + p->method_off, p->method_len);
                state = S_TARGET_START;
            } else if (!tchar[c] || pos - p->method_off >= MAX_METHOD_LEN) {
                goto bad;
            }
            break;

        case S_TARGET_START:
            p->target_off = pos;
            if (p->method == HD_M_CONNECT) {
                /* CONNECT takes only authority-form (RFC 9110 9.3.6). */
                if (!host_char[c]) {
                    goto bad;
                }
                p->host_off = pos;
                state = S_CONNECT_AUTH;
            } else if (c == '/') {
                p->path_off = pos;
                state = S_PATH;
            } else if (c == '*') {
                state = S_ASTERISK;
            } else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') {
                state = S_SCHEME;
            } else {
                goto bad;
            }
            break;

        case S_PATH:
            if (c == '?') {
                p->path_len = pos - p->path_off;
                p->query_off = pos + 1;
                state = S_QUERY;
            } else if (c == ' ') {
                p->path_len = pos - p->path_off;
                p->target_len = pos - p->target_off;
                p->aux0 = 0;
                state = S_VERSION;
            } else if (!target_char[c]) {
                goto bad;
            }
            break;

        case S_QUERY:
            if (c == ' ') {
                p->query_len = pos - p->query_off;
                p->target_len = pos - p->target_off;
                p->aux0 = 0;
                state = S_VERSION;
            } else if (!target_char[c]) {
                goto bad;
            }
            break;

        case S_ASTERISK:
            if (c != ' ') {
                goto bad;
            }
            p->asterisk_form = true;
            p->target_len = 1;
            p->aux0 = 0;
            state = S_VERSION;
            break;

        case S_SCHEME:
            if (c == ':') {
                uint32_t n = pos - p->target_off;
                if (!((n == 4 && ci_equal(buf + p->target_off, "http", 4))
                      || (n == 5 && ci_equal(buf + p->target_off, "https", 5)))) {
                    goto bad;
                }
                state = S_SCHEME_SLASH1;
            } else if (!scheme_char[c]) {
                goto bad;
            }
            break;

        case S_SCHEME_SLASH1:
            if (c != '/') {
                goto bad;
            }
            state = S_SCHEME_SLASH2;
            break;

        case S_SCHEME_SLASH2:
            if (c != '/') {
                goto bad;
            }
            p->absolute_form = true;
            p->host_off = pos + 1;
            state = S_AUTHORITY;
            break;

        case S_AUTHORITY:
            if (host_char[c]) {
                break;
            }
            if ((c != '/' && c != '?' && c != ' ') || pos == p->host_off) {
                goto bad;   /* userinfo, junk, or an empty host */
            }
            p->host_len = pos - p->host_off;
            /* an empty path stays path_len 0: the caller reads it as "/" */
            p->path_off = pos;
            if (c == '/') {
                state = S_PATH;
            } else if (c == '?') {
                p->query_off = pos + 1;
                state = S_QUERY;
            } else {
                p->target_len = pos - p->target_off;
                p->aux0 = 0;
                state = S_VERSION;
            }
            break;

        case S_CONNECT_AUTH:
            if (c == ' ') {
                p->host_len = pos - p->host_off;
                p->target_len = p->host_len;
                if (!valid_authority_form(buf + p->host_off, p->host_len)) {
                    goto bad;
                }
                p->aux0 = 0;
                state = S_VERSION;
            } else if (!host_char[c]) {
                goto bad;
            }
            break;

        case S_VERSION:
            /* HTTP-name is case-sensitive (RFC 9112 2.3) */
            if (c != (unsigned char)"HTTP/"[p->aux0]) {
                goto bad;
            }
            if (++p->aux0 == 5) {
                state = S_MAJOR;
            }
            break;

        case S_MAJOR:
            if (c < '0' || c > '9') {
                goto bad;
            }
            p->http_major = c - '0';
            state = S_DOT;
            break;

        case S_DOT:
            if (c != '.') {
                goto bad;
            }
            state = S_MINOR;
            break;

        case S_MINOR:
            if (c < '0' || c > '9') {
                goto bad;
            }
            p->http_minor = c - '0';
            state = S_LINE_END;
            break;

        case S_LINE_END:
            /* anything else here: "HTTP/1.10", trailing blanks, junk */
            if (c != '\r' && c != '\n') {
                goto bad;
            }
            rc = finish_request_line(p, buf, pos);
            if (rc != HD_OK) {
                goto fail;
            }
            if (c == '\r') {
                state = S_LINE_LF;
            } else {
                p->line_start = pos + 1;
                state = S_FIELD_START;
            }
            break;

        case S_LINE_LF:
            if (c != '\n') {
                goto bad;
            }
            p->line_start = pos + 1;
            state = S_FIELD_START;
            break;

        case S_FIELD_START:
            if (c == '\r') {
                state = S_HEAD_LF;
            } else if (c == '\n') {
                goto done;
            } else if (tchar[c]) {
                if (p->nfields >= limits->max_fields) {
                    rc = 431;
                    goto fail;
                }
                p->fields[p->nfields].name_off = pos;
                state = S_NAME;
            } else {
                /* SP/HTAB here is obs-fold (RFC 9112 5.2); ':' an empty name */
                goto bad;
            }
            break;

        case S_NAME:
            if (c == ':') {
                hd_http_field_t *f = &p->fields[p->nfields];
                f->name_len = pos - f->name_off;
                state = S_OWS;
            } else if (!tchar[c]) {
                /* includes whitespace before ':' (RFC 9112 5.1 says 400) */
                goto bad;
            }
            break;

        case S_OWS:
            if (c == ' ' || c == '\t') {
                break;
            }
            if (c == '\r' || c == '\n') {
                hd_http_field_t *f = &p->fields[p->nfields++];
                f->value_off = pos;
                f->value_len = 0;
                if (c == '\r') {
                    state = S_FIELD_LF;
                } else {
                    p->line_start = pos + 1;
                    state = S_FIELD_START;
                }
            } else if (value_char[c]) {
                p->fields[p->nfields].value_off = pos;
                p->aux1 = pos + 1;
                state = S_VALUE;
            } else {
                goto bad;
            }
            break;

        case S_VALUE:
            if (value_char[c]) {
                p->aux1 = pos + 1;   /* end of value without trailing OWS */
            } else if (c == '\r' || c == '\n') {
                hd_http_field_t *f = &p->fields[p->nfields++];
                f->value_len = p->aux1 - f->value_off;
                if (c == '\r') {
                    state = S_FIELD_LF;
                } else {
                    p->line_start = pos + 1;
                    state = S_FIELD_START;
                }
            } else if (c != ' ' && c != '\t') {
                goto bad;
            }
            break;

        case S_FIELD_LF:
            if (c != '\n') {
                goto bad;   /* a bare CR inside a field line */
            }
            p->line_start = pos + 1;
            state = S_FIELD_START;
            break;

        case S_HEAD_LF:
            if (c != '\n') {
                goto bad;
            }
            goto done;

        default:
            goto bad;
        }
    }

    p->pos = pos;
    p->state = state;
    return HD_AGAIN;

done:
    p->head_len = pos + 1;
    p->pos = pos + 1;
    p->state = S_DONE;
    return HD_OK;

bad:
    rc = 400;
fail:
    p->pos = pos;
    p->state = S_ERROR;
    p->aux0 = (uint32_t)rc;
    return rc;
}

bool hd_http_field_is(const char *buf, const hd_http_field_t *f, const char *name)
{
    size_t n = strlen(name);
    return f->name_len == n && ci_equal(buf + f->name_off, name, n);
}

enum {
    C_SIZE_START = 0,
    C_SIZE,
    C_SIZE_WS,          /* BWS after the size: only ';' may follow */
    C_EXT_BEFORE_NAME,
    C_EXT_NAME,
    C_EXT_AFTER_NAME,
    C_EXT_BEFORE_VAL,
    C_EXT_VAL,
    C_EXT_QUOTED,
    C_EXT_QUOTED_ESC,
    C_EXT_AFTER_VAL,
    C_SIZE_LF,
    C_DATA,
    C_DATA_CR,
    C_DATA_LF,
    C_TRAILER_START,
    C_TRAILER_NAME,
    C_TRAILER_VALUE,
    C_TRAILER_LF,
    C_FINAL_LF,
    C_DONE,
    C_ERROR
};

void hd_chunked_init(hd_chunked_t *c)
{
    memset(c, 0, sizeof(*c));
    c->state = C_SIZE_START;
}

/*
 * Unlike the head, chunked framing insists on CRLF: lenient line ends and
 * extension parsing are where front ends and back ends disagree, which is
 * how bodies get smuggled.
 */
int hd_chunked_parse(hd_chunked_t *c, const char *in, size_t len, size_t *consumed,
                     size_t *data_off, size_t *data_len)
{
    const unsigned char *b = (const unsigned char *)in;
    int state = c->state;
    size_t i;

    *data_off = 0;
    *data_len = 0;
    if (state == C_DONE) {
        *consumed = 0;
        return HD_OK;
    }
    if (state == C_ERROR) {
        *consumed = 0;
        return 400;
    }

    for (i = 0; i < len; i++) {
        unsigned char ch = b[i];

        if (state == C_DATA) {
            size_t n = len - i;
            if (n > c->chunk_left) {
                n = (size_t)c->chunk_left;
            }
            c->chunk_left -= n;
            if (c->chunk_left == 0) {
                state = C_DATA_CR;
            }
            *data_off = i;
            *data_len = n;
            c->state = state;
            *consumed = i + n;
            return HD_AGAIN;
        }

        if (state < C_DATA || (state >= C_TRAILER_START && state < C_FINAL_LF)) {
            if (ch != '\r' && ch != '\n' && ++c->line_len > MAX_CHUNK_LINE) {
                goto bad;
            }
        }

        switch (state) {
        case C_SIZE_START:
            if (!hexval1[ch]) {
                goto bad;
            }
            c->chunk_left = hexval1[ch] - 1u;
            state = C_SIZE;
            break;

        case C_SIZE:
            if (hexval1[ch]) {
                /* line_len counts the digits so far; refuse what int64 cannot hold */
                if (c->line_len > 16 || c->chunk_left > ((uint64_t)INT64_MAX >> 4)) {
                    goto bad;
                }
                c->chunk_left = (c->chunk_left << 4) | (hexval1[ch] - 1u);
            } else if (ch == ';') {
                state = C_EXT_BEFORE_NAME;
            } else if (ch == ' ' || ch == '\t') {
                state = C_SIZE_WS;
            } else if (ch == '\r') {
                state = C_SIZE_LF;
            } else {
                goto bad;
            }
            break;

        case C_SIZE_WS:
            if (ch == ';') {
                state = C_EXT_BEFORE_NAME;
            } else if (ch != ' ' && ch != '\t') {
                goto bad;
            }
            break;

        case C_EXT_BEFORE_NAME:
            if (tchar[ch]) {
                state = C_EXT_NAME;
            } else if (ch != ' ' && ch != '\t') {
                goto bad;
            }
            break;

        case C_EXT_NAME:
        case C_EXT_AFTER_NAME:
            if (tchar[ch] && state == C_EXT_NAME) {
                break;
            }
            if (ch == ' ' || ch == '\t') {
                state = C_EXT_AFTER_NAME;
            } else if (ch == '=') {
                state = C_EXT_BEFORE_VAL;
            } else if (ch == ';') {
                state = C_EXT_BEFORE_NAME;
            } else if (ch == '\r') {
                state = C_SIZE_LF;
            } else {
                goto bad;
            }
            break;

        case C_EXT_BEFORE_VAL:
            if (ch == '"') {
                state = C_EXT_QUOTED;
            } else if (tchar[ch]) {
                state = C_EXT_VAL;
            } else if (ch != ' ' && ch != '\t') {
                goto bad;
            }
            break;

        case C_EXT_VAL:
        case C_EXT_AFTER_VAL:
            if (tchar[ch] && state == C_EXT_VAL) {
                break;
            }
            if (ch == ' ' || ch == '\t') {
                state = C_EXT_AFTER_VAL;
            } else if (ch == ';') {
                state = C_EXT_BEFORE_NAME;
            } else if (ch == '\r') {
                state = C_SIZE_LF;
            } else {
                goto bad;
            }
            break;

        case C_EXT_QUOTED:
            /* qdtext = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text */
            if (ch == '"') {
                state = C_EXT_AFTER_VAL;
            } else if (ch == '\\') {
                state = C_EXT_QUOTED_ESC;
            } else if (!value_char[ch] && ch != ' ' && ch != '\t') {
                goto bad;
            }
            break;

        case C_EXT_QUOTED_ESC:
            if (!value_char[ch] && ch != ' ' && ch != '\t') {
                goto bad;
            }
            state = C_EXT_QUOTED;
            break;

        case C_SIZE_LF:
            if (ch != '\n') {
                goto bad;
            }
            c->line_len = 0;
            state = c->chunk_left ? C_DATA : C_TRAILER_START;
            break;

        case C_DATA_CR:
            if (ch != '\r') {
                goto bad;
            }
            state = C_DATA_LF;
            break;

        case C_DATA_LF:
            if (ch != '\n') {
                goto bad;
            }
            state = C_SIZE_START;
            break;

        case C_TRAILER_START:
            if (ch == '\r') {
                state = C_FINAL_LF;
            } else if (tchar[ch] && ++c->ntrailers <= MAX_TRAILERS) {
                state = C_TRAILER_NAME;
            } else {
                goto bad;   /* obs-fold, empty name, junk or too many */
            }
            break;

        case C_TRAILER_NAME:
            if (ch == ':') {
                state = C_TRAILER_VALUE;
            } else if (!tchar[ch]) {
                goto bad;
            }
            break;

        case C_TRAILER_VALUE:
            if (ch == '\r') {
                state = C_TRAILER_LF;
            } else if (!value_char[ch] && ch != ' ' && ch != '\t') {
                goto bad;
            }
            break;

        case C_TRAILER_LF:
            if (ch != '\n') {
                goto bad;
            }
            c->line_len = 0;
            state = C_TRAILER_START;
            break;

        case C_FINAL_LF:
            if (ch != '\n') {
                goto bad;
            }
            c->state = C_DONE;
            *consumed = i + 1;
            return HD_OK;

        default:
            goto bad;
        }
    }

    c->state = state;
    *consumed = len;
    return HD_AGAIN;

bad:
    c->state = C_ERROR;
    *consumed = i;
    return 400;
}
