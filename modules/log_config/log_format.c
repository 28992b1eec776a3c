/*
 * The LogFormat language: compiler and renderer. Semantics follow Apache's
 * mod_log_config (item letters, '<' / '>' for the original or final request,
 * status conditions, escaping of request-supplied strings); errors are
 * reported at configuration time where Apache would log something odd.
 */
#include "log_format.h"

#include "ids.h"

#include "core.h"
#include "date.h"
#include "pool.h"
#include "request.h"
#include "sys.h"
#include "table.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

typedef enum {
    IT_LITERAL,
    IT_DASH,          /* %l %u: no identd, no authenticated user */
    IT_CLIENT_IP,     /* %a %h (no DNS lookups) */
    IT_LOCAL_IP,      /* %A */
    IT_BYTES,         /* %B */
    IT_BYTES_CLF,     /* %b */
    IT_BYTES_OUT,     /* %O */
    IT_COOKIE,        /* %{name}C */
    IT_DURATION_US,   /* %D */
    IT_DURATION,      /* %T, %{unit}T */
    IT_FILENAME,      /* %f */
    IT_PROTOCOL,      /* %H */
    IT_HEADER_IN,     /* %{name}i */
    IT_HEADER_OUT,    /* %{name}o */
    IT_KEEPALIVES,    /* %k */
    IT_METHOD,        /* %m */
    IT_PORT,          /* %p, %{canonical|local|remote}p */
    IT_PID,           /* %P, %{pid|tid|hextid}P */
    IT_QUERY,         /* %q */
    IT_REQUEST_LINE,  /* %r */
    IT_HANDLER,       /* %R */
    IT_STATUS,        /* %s %>s */
    IT_TIME,          /* %t, %{format}t */
    IT_URI,           /* %U %>U */
    IT_SERVER_NAME,   /* %v */
    IT_HOST_NAME,     /* %V */
    IT_CONN_STATUS    /* %X */
} item_kind_t;

/* Variants of %t, %T, %p and %P. */
enum { TM_CLF, TM_STRFTIME, TM_SEC, TM_MSEC, TM_USEC, TM_MSEC_FRAC, TM_USEC_FRAC };
enum { UNIT_S, UNIT_MS, UNIT_US };
enum { PORT_CANONICAL, PORT_LOCAL, PORT_REMOTE };
enum { ID_PID, ID_TID, ID_HEXTID };

typedef struct {
    uint8_t kind;
    uint8_t sub;          /* variant, from the enums above */
    bool orig;            /* the request before internal redirects ('<') */
    bool negate;          /* '!': log unless the status is listed */
    bool end;             /* %{end:...}t */
    uint16_t nconds;
    const int *conds;     /* statuses for which the item is logged */
    const char *arg;      /* literal text, header/cookie name or strftime format */
    size_t arg_len;
} item_t;

struct hd_log_format {
    const item_t *items;
    size_t nitems;
    const char *source;
};

static const char *const month_names[12] = {
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
};

static const struct {
    const char *name;
    const char *fmt;
} predefined[] = {
    {"common", HD_LOG_FORMAT_DEFAULT},
    {"combined", HD_LOG_FORMAT_DEFAULT " \"%{Referer}i\" \"%{User-Agent}i\""},
    {"CLF", HD_LOG_FORMAT_DEFAULT},
};

const char *hd_log_format_predefined(const char *nickname)
{
    for (size_t i = 0; i < HD_ARRAY_SIZE(predefined); i++) {
        if (strcmp(predefined[i].name, nickname) == 0) {
            return predefined[i].fmt;
        }
    }
    return NULL;
}

const char *hd_log_format_source(const hd_log_format_t *f)
{
    return f->source;
}

/* ---------------------------------------------------------------------- */
/* compiling */

/* Apache's literal escapes; \" too, in case the config reader kept the backslash. */
static const char *parse_literal(hd_pool_t *p, item_t *it, const char *s)
{
    const char *e = s;
    while (*e && *e != '%') {
        e++;
    }
    char *d = hd_pnalloc(p, (size_t)(e - s) + 1);
    it->kind = IT_LITERAL;
    it->arg = d;
    while (s < e) {
        if (*s != '\\') {
            *d++ = *s++;
            continue;
        }
        s++;
        switch (*s) {
        case '\\': *d++ = '\\'; s++; break;
        case '"': *d++ = '"'; s++; break;
        case 'r': *d++ = '\r'; s++; break;
        case 'n': *d++ = '\n'; s++; break;
        case 't': *d++ = '\t'; s++; break;
        default: *d++ = '\\'; break; /* kept verbatim; the next byte is read as usual */
        }
    }
    it->arg_len = (size_t)(d - it->arg);
    *d = '\0';
    return e;
}

static const char *letter_error(hd_pool_t *p, const char *what, char c)
{
    if (c > ' ' && c < 0x7f) {
        return hd_psprintf(p, "%s %%%c", what, c);
    }
    return hd_psprintf(p, "%s %%\\x%02x", what, (unsigned char)c);
}

static int pick(const char *arg, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (strcasecmp(arg, names[i]) == 0) {
            return (int)i;
        }
    }
    return -1;
}

static void parse_time_arg(item_t *it)
{
    static const char *const abs_names[] = {"sec", "msec", "usec", "msec_frac", "usec_frac"};
    const char *a = it->arg ? it->arg : "";

    if (strncmp(a, "begin", 5) == 0 && (a[5] == '\0' || a[5] == ':')) {
        a += a[5] ? 6 : 5;
    } else if (strncmp(a, "end", 3) == 0 && (a[3] == '\0' || a[3] == ':')) {
        it->end = true;
        a += a[3] ? 4 : 3;
    }
    it->sub = TM_STRFTIME;
    if (*a == '\0') {
        it->sub = TM_CLF;
    }
    for (size_t i = 0; i < HD_ARRAY_SIZE(abs_names); i++) {
        if (strcmp(a, abs_names[i]) == 0) {
            it->sub = (uint8_t)(TM_SEC + i);
        }
    }
    it->arg = a;
    it->arg_len = strlen(a);
}

/* Checks the letter's argument and sets kind and variant. */
static const char *set_kind(hd_pool_t *p, item_t *it, char c)
{
    static const char *const units[] = {"s", "ms", "us"};
    static const char *const ports[] = {"canonical", "local", "remote"};
    static const char *const ids[] = {"pid", "tid", "hextid"};
    const char *arg = it->arg;
    int v;

    switch (c) {
    case 'a': case 'h': it->kind = IT_CLIENT_IP; break;
    case 'A': it->kind = IT_LOCAL_IP; break;
    case 'b': it->kind = IT_BYTES_CLF; break;
    case 'B': it->kind = IT_BYTES; break;
    case 'D': it->kind = IT_DURATION_US; break;
    case 'f': it->kind = IT_FILENAME; break;
    case 'H': it->kind = IT_PROTOCOL; break;
    case 'k': it->kind = IT_KEEPALIVES; break;
    case 'l': case 'u': it->kind = IT_DASH; break;
    case 'm': it->kind = IT_METHOD; break;
    case 'O': it->kind = IT_BYTES_OUT; break;
    case 'q': it->kind = IT_QUERY; break;
    case 'r': it->kind = IT_REQUEST_LINE; break;
    case 'R': it->kind = IT_HANDLER; break;
    case 's': it->kind = IT_STATUS; break;
    case 'U': it->kind = IT_URI; break;
    case 'v': it->kind = IT_SERVER_NAME; break;
    case 'V': it->kind = IT_HOST_NAME; break;
    case 'X': it->kind = IT_CONN_STATUS; break;
    case 't': it->kind = IT_TIME; parse_time_arg(it); break;
    case 'C': case 'i': case 'o':
        if (arg == NULL || *arg == '\0') {
            return hd_psprintf(p, "LogFormat directive %%%c needs a name: %%{Name}%c", c, c);
        }
        it->kind = c == 'C' ? IT_COOKIE : c == 'i' ? IT_HEADER_IN : IT_HEADER_OUT;
        break;
    case 'T':
        v = arg && *arg ? pick(arg, units, HD_ARRAY_SIZE(units)) : UNIT_S;
        if (v < 0) {
            return hd_psprintf(p, "Unrecognized time unit '%s' in %%{%s}T (use s, ms or us)",
                               arg, arg);
        }
        it->kind = IT_DURATION;
        it->sub = (uint8_t)v;
        break;
    case 'p':
        v = arg && *arg ? pick(arg, ports, HD_ARRAY_SIZE(ports)) : PORT_CANONICAL;
        if (v < 0) {
            return hd_psprintf(p, "Unrecognized port '%s' in %%{%s}p "
                               "(use canonical, local or remote)", arg, arg);
        }
        it->kind = IT_PORT;
        it->sub = (uint8_t)v;
        break;
    case 'P':
        v = arg && *arg ? pick(arg, ids, HD_ARRAY_SIZE(ids)) : ID_PID;
        if (v < 0) {
            return hd_psprintf(p, "Unrecognized id '%s' in %%{%s}P (use pid, tid or hextid)",
                               arg, arg);
        }
        it->kind = IT_PID;
        it->sub = (uint8_t)v;
        break;
    case 'I': return "LogFormat directive %I (bytes received) is not supported";
    case 'S': return "LogFormat directive %S (bytes transferred) is not supported";
    case 'e': return "LogFormat directive %e (environment variables) is not supported";
    case 'n': return "LogFormat directive %n (module notes) is not supported";
    case 'L': return "LogFormat directive %L (log ids) is not supported";
    default:
        return letter_error(p, "Unrecognized LogFormat directive", c);
    }
    if (it->arg != NULL && it->kind != IT_TIME) {
        it->arg_len = strlen(it->arg);
    }
    return NULL;
}

/* One %-directive, Apache's grammar: modifiers in any order, then one letter. */
static const char *parse_directive(hd_pool_t *p, item_t *it, const char **sp)
{
    const char *s = *sp + 1;
    int conds[32];
    unsigned nconds = 0;
    int want_orig = -1;

    if (*s == '%') {
        it->kind = IT_LITERAL;
        it->arg = "%";
        it->arg_len = 1;
        *sp = s + 1;
        return NULL;
    }
    while (*s) {
        if (*s == '!') {
            it->negate = !it->negate;
            s++;
        } else if (*s == '<' || *s == '>') {
            want_orig = *s == '<';
            s++;
        } else if (*s == ',') {
            s++;
        } else if (*s == '{') {
            const char *close = strchr(s + 1, '}');
            if (close == NULL) {
                break;
            }
            it->arg = hd_pstrndup(p, s + 1, (size_t)(close - s - 1));
            s = close + 1;
        } else if (*s >= '0' && *s <= '9') {
            int v = 0;
            while (*s >= '0' && *s <= '9') {
                v = v * 10 + (*s++ - '0');
                if (v > 999) {
                    return "LogFormat status conditions must be 3-digit statuses";
                }
            }
            if (nconds == HD_ARRAY_SIZE(conds)) {
                return "Too many status conditions in one LogFormat directive";
            }
            conds[nconds++] = v;
        } else {
            const char *err = set_kind(p, it, *s);
            if (err != NULL) {
                return err;
            }
            /* as Apache: %s and %U mean the original request unless '>' says otherwise */
            it->orig = want_orig == -1 ? (*s == 's' || *s == 'U') : want_orig == 1;
            if (nconds > 0) {
                int *c = hd_palloc(p, nconds * sizeof(int));
                memcpy(c, conds, nconds * sizeof(int));
                it->conds = c;
                it->nconds = (uint16_t)nconds;
            }
            *sp = s + 1;
            return NULL;
        }
    }
    return "Ran off end of LogFormat parsing args to some directive";
}

/* Joins runs of literals so that rendering copies each run once. */
static size_t merge_literals(hd_pool_t *p, item_t *items, size_t n)
{
    size_t out = 0;
    for (size_t i = 0; i < n; out++) {
        size_t j = i + 1, len = items[i].arg_len;
        if (items[i].kind == IT_LITERAL) {
            while (j < n && items[j].kind == IT_LITERAL) {
                len += items[j++].arg_len;
            }
        }
        if (j > i + 1) {
            char *d = hd_pnalloc(p, len + 1), *w = d;
            for (size_t k = i; k < j; k++) {
                memcpy(w, items[k].arg, items[k].arg_len);
                w += items[k].arg_len;
            }
            *w = '\0';
            items[i].arg = d;
            items[i].arg_len = len;
        }
        items[out] = items[i];
        i = j;
    }
    return out;
}

hd_log_format_t *hd_log_format_compile(hd_pool_t *p, const char *fmt, const char **err)
{
    hd_array_t *a = hd_array_create(p, 16, sizeof(item_t));
    const char *s = fmt;

    while (*s) {
        item_t *it = hd_array_push(a);
        if (*s != '%') {
            s = parse_literal(p, it, s);
            continue;
        }
        const char *e = parse_directive(p, it, &s);
        if (e != NULL) {
            *err = e;
            return NULL;
        }
    }
    item_t *nl = hd_array_push(a);
    nl->kind = IT_LITERAL;
    nl->arg = "\n";
    nl->arg_len = 1;

    hd_log_format_t *f = hd_palloc(p, sizeof(*f));
    f->items = a->elts;
    f->nitems = merge_literals(p, a->elts, a->nelts);
    f->source = hd_pstrdup(p, fmt);
    return f;
}

/* ---------------------------------------------------------------------- */
/* rendering */

typedef struct {
    char *buf;
    size_t cap;
    size_t len;   /* bytes the line needs; may exceed cap */
} out_t;

static inline void put(out_t *o, const char *s, size_t n)
{
    if (n > 0 && o->len < o->cap) {
        size_t room = o->cap - o->len;
        memcpy(o->buf + o->len, s, n < room ? n : room);
    }
    o->len += n;
}

static inline void put_str(out_t *o, const char *s)
{
    put(o, s, strlen(s));
}

static void put_i64(out_t *o, int64_t v)
{
    char tmp[24], *e = tmp + sizeof(tmp), *d = e;
    uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
    do {
        *--d = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (v < 0) {
        *--d = '-';
    }
    put(o, d, (size_t)(e - d));
}

static inline bool needs_escape(unsigned char c)
{
    return c < 0x20 || c >= 0x7f || c == '"' || c == '\\';
}

/* Apache's ap_escape_logitem: a client must not be able to forge log lines or fields. */
static void put_escaped_n(out_t *o, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t i = 0;
    while (i < n) {
        size_t run = i;
        while (run < n && !needs_escape((unsigned char)s[run])) {
            run++;
        }
        put(o, s + i, run - i);
        if (run == n) {
            return;
        }
        unsigned char c = (unsigned char)s[run];
        char e[4] = {'\\', 0, 0, 0};
        size_t elen = 2;
        switch (c) {
        case '\b': e[1] = 'b'; break;
        case '\n': e[1] = 'n'; break;
        case '\r': e[1] = 'r'; break;
        case '\t': e[1] = 't'; break;
        case '\v': e[1] = 'v'; break;
        case '\\': case '"': e[1] = (char)c; break;
        default:
            e[1] = 'x';
            e[2] = hex[c >> 4];
            e[3] = hex[c & 15];
            elen = 4;
        }
        put(o, e, elen);
        i = run + 1;
    }
}

/* NULL logs as "-", as Apache's process_item does. */
static void put_escaped(out_t *o, const char *s)
{
    if (s == NULL) {
        put(o, "-", 1);
    } else {
        put_escaped_n(o, s, strlen(s));
    }
}

/* Length of a "host[:port]" without the port ("[::1]:80" -> "[::1]"). */
static size_t host_len(const char *h)
{
    size_t n = strlen(h);
    const char *colon = strrchr(h, ':');
    if (colon == NULL || strchr(colon, ']') != NULL || colon[1] == '\0') {
        return n;
    }
    if (h[0] != '[' && strchr(h, ':') != colon) {
        return n; /* a bare IPv6 address */
    }
    for (const char *d = colon + 1; *d; d++) {
        if (*d < '0' || *d > '9') {
            return n;
        }
    }
    return (size_t)(colon - h);
}

static const char *server_name(const hd_request_t *r)
{
    const hd_core_server_conf_t *cs = r->server ? hd_core_sconf(r->server) : NULL;
    return cs ? cs->server_name : NULL;
}

/* The canonical port: ServerName's, else the one the request came in on. */
static int canonical_port(const hd_request_t *r)
{
    const char *name = server_name(r);
    if (name != NULL) {
        size_t n = host_len(name);
        if (name[n] == ':') {
            return atoi(name + n + 1);
        }
    }
    return r->c ? r->c->local_port : 0;
}

/* Formatting local time costs a localtime_r: done once a second per thread. */
static __thread struct {
    time_t sec;
    bool valid;
    struct tm tm;
} tm_cache;

static __thread struct {
    time_t sec;
    bool valid;
    size_t len;
    char s[40];
} clf_cache;

static const struct tm *local_tm(time_t sec)
{
    if (!tm_cache.valid || tm_cache.sec != sec) {
        localtime_r(&sec, &tm_cache.tm);
        tm_cache.sec = sec;
        tm_cache.valid = true;
    }
    return &tm_cache.tm;
}

static void put_clf_time(out_t *o, time_t sec)
{
    if (!clf_cache.valid || clf_cache.sec != sec) {
        const struct tm *tm = local_tm(sec);
        long off = tm->tm_gmtoff;
        char sign = off < 0 ? '-' : '+';
        off = off < 0 ? -off : off;
        int n = snprintf(clf_cache.s, sizeof(clf_cache.s),
                         "[%02d/%s/%d:%02d:%02d:%02d %c%02ld%02ld]", tm->tm_mday,
                         month_names[tm->tm_mon], tm->tm_year + 1900, tm->tm_hour, tm->tm_min,
                         tm->tm_sec, sign, off / 3600, (off % 3600) / 60);
        clf_cache.len = n > 0 && (size_t)n < sizeof(clf_cache.s) ? (size_t)n : 0;
        clf_cache.sec = sec;
        clf_cache.valid = true;
    }
    put(o, clf_cache.s, clf_cache.len);
}

static void put_time(out_t *o, const item_t *it, const hd_request_t *r, int64_t dur_us)
{
    int64_t us = (int64_t)r->start.tv_sec * 1000000 + r->start.tv_nsec / 1000;
    if (it->end) {
        us += dur_us;
    }
    time_t sec = (time_t)(us / 1000000);
    char tmp[256];
    size_t n;

    switch (it->sub) {
    case TM_CLF: put_clf_time(o, sec); break;
    case TM_SEC: put_i64(o, us / 1000000); break;
    case TM_MSEC: put_i64(o, us / 1000); break;
    case TM_USEC: put_i64(o, us); break;
    case TM_MSEC_FRAC:
        n = (size_t)snprintf(tmp, sizeof(tmp), "%03d", (int)(us % 1000000 / 1000));
        put(o, tmp, n);
        break;
    case TM_USEC_FRAC:
        n = (size_t)snprintf(tmp, sizeof(tmp), "%06d", (int)(us % 1000000));
        put(o, tmp, n);
        break;
    default:
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
        n = strftime(tmp, sizeof(tmp), it->arg, local_tm(sec));
#pragma GCC diagnostic pop
        put(o, tmp, n);
    }
}

/* Apache's log_cookie: first "name=value" of the Cookie header, name case-insensitive. */
static void put_cookie(out_t *o, const hd_request_t *r, const item_t *it)
{
    const char *s = r->headers_in ? hd_table_get(r->headers_in, "Cookie") : NULL;
    while (s != NULL && *s) {
        const char *end = strchr(s, ';');
        if (end == NULL) {
            end = s + strlen(s);
        }
        while (s < end && (*s == ' ' || *s == '\t')) {
            s++;
        }
        const char *eq = memchr(s, '=', (size_t)(end - s));
        if (eq != NULL) {
            const char *ne = eq;
            while (ne > s && (ne[-1] == ' ' || ne[-1] == '\t')) {
                ne--;
            }
            if ((size_t)(ne - s) == it->arg_len && strncasecmp(s, it->arg, it->arg_len) == 0) {
                const char *v = eq + 1, *ve = end;
                while (v < ve && (*v == ' ' || *v == '\t')) {
                    v++;
                }
                while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t')) {
                    ve--;
                }
                if (v < ve) {
                    put_escaped_n(o, v, (size_t)(ve - v));
                    return;
                }
            }
        }
        s = *end ? end + 1 : end;
    }
    put(o, "-", 1);
}

/* Response headers the core writes from request fields are found there too. */
static void put_header_out(out_t *o, const hd_request_t *r, const item_t *it)
{
    const hd_table_t *t = r->headers_out;
    const char *v = t ? hd_table_get(t, it->arg) : NULL;

    if (strcasecmp(it->arg, "Content-Type") == 0 && r->content_type != NULL) {
        /* as Apache (ap_field_noparam): the media type without parameters */
        const char *ct = r->content_type;
        size_t n = strcspn(ct, ";");
        while (n > 0 && (ct[n - 1] == ' ' || ct[n - 1] == '\t')) {
            n--;
        }
        put_escaped_n(o, ct, n);
        return;
    }
    if (v != NULL && t->nelts > 1 && strcasecmp(it->arg, "Set-Cookie") == 0) {
        bool first = true;
        for (size_t i = 0; i < t->nelts; i++) {
            if (strcasecmp(t->elts[i].key, it->arg) == 0) {
                if (!first) {
                    put(o, ", ", 2);
                }
                put_escaped(o, t->elts[i].val);
                first = false;
            }
        }
        return;
    }
    if (v == NULL && r->content_length >= 0 && strcasecmp(it->arg, "Content-Length") == 0) {
        put_i64(o, r->content_length);
        return;
    }
    if (v == NULL && r->mtime > 0 && strcasecmp(it->arg, "Last-Modified") == 0) {
        char date[HD_HTTP_DATE_LEN + 1];
        hd_http_date_format(r->mtime, date);
        put_str(o, date);
        return;
    }
    put_escaped(o, v);
}

static void render_item(out_t *o, const item_t *it, const hd_request_t *r, int64_t dur_us)
{
    const hd_conn_t *c = r->c;
    char tmp[32];
    int n;

    switch ((item_kind_t)it->kind) {
    case IT_LITERAL: put(o, it->arg, it->arg_len); break;
    case IT_DASH: put(o, "-", 1); break;
    case IT_CLIENT_IP: put_str(o, c && c->client_ip[0] ? c->client_ip : "-"); break;
    case IT_LOCAL_IP: put_str(o, c && c->local_ip[0] ? c->local_ip : "-"); break;
    case IT_BYTES: put_i64(o, r->body_bytes_sent > 0 ? r->body_bytes_sent : 0); break;
    case IT_BYTES_CLF:
        if (r->body_bytes_sent > 0) {
            put_i64(o, r->body_bytes_sent);
        } else {
            put(o, "-", 1);
        }
        break;
    case IT_BYTES_OUT: put_i64(o, r->bytes_sent > 0 ? r->bytes_sent : 0); break;
    case IT_COOKIE: put_cookie(o, r, it); break;
    case IT_DURATION_US: put_i64(o, dur_us); break;
    case IT_DURATION:
        put_i64(o, dur_us / (it->sub == UNIT_S ? 1000000 : it->sub == UNIT_MS ? 1000 : 1));
        break;
    case IT_FILENAME: put_escaped(o, r->filename); break;
    case IT_PROTOCOL: put_escaped(o, r->protocol); break;
    case IT_HEADER_IN:
        put_escaped(o, r->headers_in ? hd_table_get(r->headers_in, it->arg) : NULL);
        break;
    case IT_HEADER_OUT: put_header_out(o, r, it); break;
    case IT_KEEPALIVES: put_i64(o, c && c->requests > 1 ? c->requests - 1 : 0); break;
    case IT_METHOD: put_escaped(o, r->method_name); break;
    case IT_PORT:
        if (it->sub == PORT_CANONICAL) {
            put_i64(o, canonical_port(r));
        } else {
            put_i64(o, !c ? 0 : it->sub == PORT_LOCAL ? c->local_port : c->client_port);
        }
        break;
    case IT_PID:
        if (it->sub == ID_HEXTID) {
            n = snprintf(tmp, sizeof(tmp), "%x", (unsigned)hd_tid());
            put(o, tmp, (size_t)n);
        } else {
            put_i64(o, it->sub == ID_TID ? hd_tid() : hd_pid());
        }
        break;
    case IT_QUERY:
        if (r->args != NULL) {
            put(o, "?", 1);
            put_escaped(o, r->args);
        }
        break;
    case IT_REQUEST_LINE: put_escaped(o, r->the_request); break;
    case IT_HANDLER: put_escaped(o, r->handler); break;
    case IT_STATUS: {
        int st = it->orig && r->orig_status > 0 ? r->orig_status : r->status;
        if (st > 0) {
            put_i64(o, st);
        } else {
            put(o, "-", 1);
        }
        break;
    }
    case IT_TIME: put_time(o, it, r, dur_us); break;
    case IT_URI: put_escaped(o, it->orig && r->orig_uri ? r->orig_uri : r->uri); break;
    case IT_SERVER_NAME: {
        const char *name = server_name(r);
        if (name == NULL) {
            put(o, "-", 1);
        } else {
            put_escaped_n(o, name, host_len(name));
        }
        break;
    }
    case IT_HOST_NAME: {
        const char *name = r->hostname && r->hostname[0] ? r->hostname : server_name(r);
        if (name == NULL) {
            put(o, "-", 1);
        } else {
            put_escaped_n(o, name, host_len(name));
        }
        break;
    }
    case IT_CONN_STATUS:
        put(o, c && c->aborted ? "X" : r->keepalive ? "+" : "-", 1);
        break;
    }
}

static bool condition_met(const item_t *it, int status)
{
    bool listed = false;
    for (unsigned i = 0; i < it->nconds; i++) {
        if (it->conds[i] == status) {
            listed = true;
            break;
        }
    }
    return listed != it->negate;
}

size_t hd_log_format_render(const hd_log_format_t *f, const hd_request_t *r,
                            int64_t end_mono_us, char *buf, size_t cap)
{
    out_t o = {buf, cap, 0};
    int64_t dur_us = end_mono_us - r->start_mono_us;
    if (dur_us < 0) {
        dur_us = 0;
    }
    for (size_t i = 0; i < f->nitems; i++) {
        const item_t *it = &f->items[i];
        if (it->nconds > 0 && !condition_met(it, r->status)) {
            put(&o, "-", 1);
            continue;
        }
        render_item(&o, it, r, dur_us);
    }
    return o.len;
}
