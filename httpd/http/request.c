/*
 * Request processing: turning a parsed head into a request record, checking
 * its framing, and running the modules' phases the way Apache's
 * ap_process_request_internal does (post_read_request, translate_name,
 * map_to_storage, the per-directory merge, access_checker, type_checker,
 * fixups, handler); sub-requests that run the mapping phases only; internal
 * redirects and ErrorDocument.
 */
#include "request_internal.h"

#include "buf.h"
#include "config.h"
#include "core.h"
#include "log.h"
#include "module.h"
#include "path.h"
#include "pool.h"
#include "request_config.h"
#include "response.h"
#include "table.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define MAX_INTERNAL_REDIRECTS 10

int64_t hd_now_mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

const char *const hd_method_allow = "GET, HEAD, OPTIONS";

static char *dup_span(hd_pool_t *p, const char *buf, uint32_t off, uint32_t len)
{
    return hd_pmemdup0(p, buf + off, len);
}

/* Content-Length: 1*DIGIT, also "n, n" lists of one value (RFC 9110 8.6). */
static int parse_content_length(const char *v, int64_t *out)
{
    int64_t value = -1;
    const char *p = v;
    for (;;) {
        while (*p == ' ' || *p == '\t') {
            p++;
        }
        if (*p < '0' || *p > '9') {
            return 400;
        }
        int64_t n = 0;
        while (*p >= '0' && *p <= '9') {
            if (n > (INT64_MAX - 9) / 10) {
                return 413;
            }
            n = n * 10 + (*p++ - '0');
        }
        if (value >= 0 && n != value) {
            return 400;
        }
        value = n;
        while (*p == ' ' || *p == '\t') {
            p++;
        }
        if (*p == '\0') {
            break;
        }
        if (*p != ',') {
            return 400;
        }
        p++;
    }
    *out = value;
    return HD_OK;
}

/* True if the comma-separated list @p v holds @p token (case-insensitive). */
static bool list_has_token(const char *v, const char *token)
{
    size_t tl = strlen(token);
    const char *p = v;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == ',') {
            p++;
        }
        const char *start = p;
        while (*p && *p != ',') {
            p++;
        }
        const char *end = p;
        while (end > start && (end[-1] == ' ' || end[-1] == '\t')) {
            end--;
        }
        if ((size_t)(end - start) == tl && strncasecmp(start, token, tl) == 0) {
            return true;
        }
    }
    return false;
}

/*
 * A Host value must be uri-host [ ":" port ] (RFC 9110 7.2, RFC 3986 3.2.2):
 * an IP-literal in brackets, or a reg-name (unreserved, pct-encoded and
 * sub-delims characters, which covers IPv4 addresses). Anything else ("a b",
 * "x/y", a bare ":80", control bytes) could smuggle a different name past
 * whatever reads it (redirects, logs, virtual hosts).
 */
static bool host_valid(const char *h)
{
    /* reg-name's characters but '%': ALPHA DIGIT - . _ ~ ! $ & ' ( ) * + , ; = */
    static const unsigned char reg_name[256] = {
        ['a' ... 'z'] = 1, ['A' ... 'Z'] = 1, ['0' ... '9'] = 1, ['-'] = 1, ['.'] = 1,
        ['_'] = 1, ['~'] = 1, ['!'] = 1, ['$'] = 1, ['&'] = 1, ['\''] = 1, ['('] = 1,
        [')'] = 1, ['*'] = 1, ['+'] = 1, [','] = 1, [';'] = 1, ['='] = 1};
    const char *p = h;

    if (*p == '[') {
        for (p++; *p != ']'; p++) {
            bool hex = (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') ||
                       (*p >= 'A' && *p <= 'F');
            if (!hex && *p != ':' && *p != '.') {
                return false;
            }
        }
        if (p == h + 1) {
            return false;
        }
        p++;
    } else {
        for (; *p != '\0' && *p != ':'; p++) {
            unsigned char c = (unsigned char)*p;
            if (c == '%') {
                if (!isxdigit((unsigned char)p[1]) || !isxdigit((unsigned char)p[2])) {
                    return false;
                }
                p += 2;
            } else if (!reg_name[c]) {
                return false;
            }
        }
        if (p == h) {
            return false;
        }
    }
    if (*p == ':') {
        for (p++; *p >= '0' && *p <= '9'; p++) {
        }
    }
    return *p == '\0';
}

/* Framing and mandatory fields (RFC 9112 6, RFC 9110 7.2). */
static int check_framing(hd_request_t *r, bool *close_after)
{
    const char *te = NULL;
    int64_t cl = -1;
    size_t nhost = 0;

    for (size_t i = 0; i < r->headers_in->nelts; i++) {
        const hd_table_entry_t *e = &r->headers_in->elts[i];
        if (strcasecmp(e->key, "Host") == 0) {
            nhost++;
            /* an empty Host is allowed only where the target has no authority: never here */
            if (!host_valid(e->val)) {
                return 400;
            }
            if (r->hostname == NULL) {
                r->hostname = e->val;
            }
        } else if (strcasecmp(e->key, "Content-Length") == 0) {
            int64_t n;
            int rv = parse_content_length(e->val, &n);
            if (rv != HD_OK) {
                return rv;
            }
            if (cl >= 0 && n != cl) {
                return 400;
            }
            cl = n;
        } else if (strcasecmp(e->key, "Transfer-Encoding") == 0) {
            if (te != NULL) {
                te = hd_pstrcat(r->pool, te, ", ", e->val, NULL);
            } else {
                te = e->val;
            }
        } else if (strcasecmp(e->key, "Connection") == 0) {
            if (list_has_token(e->val, "close")) {
                *close_after = true;
            }
            if (r->proto_num < 1001 && list_has_token(e->val, "keep-alive")) {
                r->c->keepalive = true;
            }
        } else if (strcasecmp(e->key, "Expect") == 0) {
            if (strcasecmp(e->val, "100-continue") == 0) {
                r->expect_continue = r->proto_num >= 1001;
            } else {
                return 417;
            }
        }
    }
    if (r->proto_num >= 1001 && nhost == 0 && !r->parser.absolute_form) {
        return 400;
    }
    if (nhost > 1) {
        return 400;
    }
    if (te != NULL) {
        if (cl >= 0) {
            return 400;
        }
        if (r->proto_num < 1001) {
            return 400;
        }
        /*
         * chunked must be the final coding (else the length is unknowable:
         * 400, RFC 9112 6.3); any other coding is one we do not implement.
         */
        const char *last = strrchr(te, ',');
        last = last ? last + 1 : te;
        while (*last == ' ' || *last == '\t') {
            last++;
        }
        size_t n = strlen(last);
        while (n > 0 && (last[n - 1] == ' ' || last[n - 1] == '\t')) {
            n--;
        }
        bool chunked_last = n == 7 && strncasecmp(last, "chunked", 7) == 0;
        if (chunked_last && last == te) {
            r->chunked_in = true;
        } else if (chunked_last) {
            return 501;
        } else if (list_has_token(te, "chunked")) {
            return 400;
        } else {
            return 501;
        }
    }
    r->content_length_in = cl;
    return HD_OK;
}

int hd_request_from_head(hd_request_t *r, bool *close_after)
{
    hd_conn_t *c = r->c;
    const hd_http_parser_t *hp = &r->parser;
    const char *buf = c->in;

    r->method = hp->method;
    r->method_name = dup_span(r->pool, buf, hp->method_off, hp->method_len);
    r->the_request = dup_span(r->pool, buf, hp->line_off, hp->line_len);
    r->unparsed_uri = dup_span(r->pool, buf, hp->target_off, hp->target_len);
    r->proto_num = hp->http_major * 1000 + hp->http_minor;
    r->protocol = r->proto_num == 1001 ? "HTTP/1.1" : r->proto_num == 1000 ? "HTTP/1.0"
                  : hd_psprintf(r->pool, "HTTP/%d.%d", hp->http_major, hp->http_minor);
    r->header_only = r->method == HD_M_HEAD;

    r->headers_in = hd_table_make(r->pool, hp->nfields + 1);
    for (uint32_t i = 0; i < hp->nfields; i++) {
        const hd_http_field_t *f = &hp->fields[i];
        hd_table_add(r->headers_in, dup_span(r->pool, buf, f->name_off, f->name_len),
                     dup_span(r->pool, buf, f->value_off, f->value_len));
    }
    if (hp->absolute_form && hp->host_len > 0) {
        r->hostname = dup_span(r->pool, buf, hp->host_off, hp->host_len);
    }
    if (hp->query_off != 0) {
        r->args = dup_span(r->pool, buf, hp->query_off, hp->query_len);
    }

    int rv = check_framing(r, close_after);
    if (rv != HD_OK) {
        return rv;
    }
    if (hp->asterisk_form) {
        r->uri = hd_pstrdup(r->pool, "*");
        return r->method == HD_M_OPTIONS ? HD_OK : 400;
    }
    size_t len = hp->path_len;
    char *path = len ? dup_span(r->pool, buf, hp->path_off, hp->path_len) : hd_pstrdup(r->pool, "/");
    if (!len) {
        len = 1;
    }
    rv = hd_path_normalize(path, &len);
    if (rv != 0) {
        r->uri = path;
        return rv;
    }
    r->uri = path;
    return HD_OK;
}

/* ---- the phases ------------------------------------------------------ */

/* run-all: every hook while each says HD_OK or HD_DECLINED; anything else ends the phase. */
#define RUN_ALL(r, phase)                                                      \
    do {                                                                       \
        for (hd_module_t **m_ = (r)->server->hooks->phase; *m_ != NULL; m_++) { \
            int rv_ = (*m_)->phase(r);                                         \
            if (rv_ != HD_OK && rv_ != HD_DECLINED) {                          \
                return rv_ == HD_ERROR ? 500 : rv_;                            \
            }                                                                  \
        }                                                                      \
    } while (0)

/* run-first: hooks until one answers other than HD_DECLINED; that is the phase's result. */
static inline int run_first(hd_request_t *r, hd_module_t **m, size_t offset)
{
    for (; *m != NULL; m++) {
        int (*hook)(hd_request_t *);
        memcpy(&hook, (const char *)*m + offset, sizeof(hook));
        int rv = hook(r);
        if (rv != HD_DECLINED) {
            return rv == HD_ERROR ? 500 : rv;
        }
    }
    return HD_DECLINED;
}

#define RUN_FIRST(r, phase) run_first((r), (r)->server->hooks->phase, offsetof(hd_module_t, phase))

static int run_post_read_request(hd_request_t *r)
{
    RUN_ALL(r, post_read_request);
    return HD_OK;
}

static int run_access_checker(hd_request_t *r)
{
    RUN_ALL(r, access_checker);
    return HD_OK;
}

static int run_fixups(hd_request_t *r)
{
    RUN_ALL(r, fixups);
    return HD_OK;
}

/*
 * URI to storage: translate_name, map_to_storage, then (unless the
 * core's map_to_storage already did) the <Location> and <Directory> merge.
 * A phase nobody answered is not an error here: a URI with no file name
 * goes on to the handlers (the status page needs none).
 */
static int map_request(hd_request_t *r, bool translate)
{
    int rv;

    if (translate) {
        rv = RUN_FIRST(r, translate_name);
        if (rv != HD_OK && rv != HD_DECLINED) {
            return rv;
        }
    }
    rv = RUN_FIRST(r, map_to_storage);
    if (rv != HD_OK && rv != HD_DECLINED && rv != HD_DONE) {
        return rv;
    }
    if (!r->config_merged) {
        hd_request_merge_config(r);
    }
    r->handler = hd_core_dconf(r)->handler;
    return HD_OK;
}

int hd_request_prepare(hd_request_t *r)
{
    if (r->uri[0] == '*') {
        r->dir_config = r->server->dir_default;
        return HD_OK;
    }
    int rv = run_post_read_request(r);
    if (rv != HD_OK) {
        return rv;
    }
    return map_request(r, true);
}

static int options_response(hd_request_t *r)
{
    hd_table_set(r->headers_out, "Allow", hd_method_allow);
    r->status = 200;
    r->content_length = 0;
    return HD_OK;
}

int hd_request_run_phases(hd_request_t *r)
{
    int rv;
    if (r->uri[0] == '*') {
        return options_response(r);
    }
    rv = run_access_checker(r);
    if (rv != HD_OK) {
        return rv;
    }
    if (r->method == HD_M_OPTIONS && r->handler == NULL) {
        return options_response(r);
    }
    rv = RUN_FIRST(r, type_checker);
    if (rv != HD_OK && rv != HD_DECLINED) {
        return rv;
    }
    rv = run_fixups(r);
    if (rv != HD_OK) {
        return rv;
    }
    rv = RUN_FIRST(r, handler);
    /* the http module's handler is last and always answers */
    return rv == HD_DECLINED ? 500 : rv;
}

/* ---- sub-requests ----------------------------------------------------- */

static hd_request_t *sub_req_create(hd_request_t *r)
{
    hd_request_t *rr = hd_pcalloc(r->pool, sizeof(*rr));
    hd_request_t *main = r->main != NULL ? r->main : r;

    rr->pool = r->pool;
    rr->c = r->c;
    rr->server = r->server;
    rr->main = main;
    rr->method = r->method == HD_M_HEAD ? HD_M_GET : r->method;
    rr->method_name = r->method_name;
    rr->the_request = r->the_request;
    rr->unparsed_uri = r->unparsed_uri;
    rr->protocol = r->protocol;
    rr->proto_num = r->proto_num;
    rr->hostname = r->hostname;
    rr->headers_in = r->headers_in;
    rr->content_length_in = -1;
    rr->start = r->start;
    rr->start_mono_us = r->start_mono_us;
    rr->status = 200;
    rr->content_length = -1;
    rr->headers_out = hd_table_make(r->pool, 4);
    rr->dir_config = r->server->dir_default;
    return rr;
}

/* The phases a look-up runs after the mapping: access, then type. */
static void sub_req_check(hd_request_t *rr, int rv)
{
    if (rv == HD_OK) {
        rv = run_access_checker(rr);
    }
    if (rv == HD_OK) {
        rv = RUN_FIRST(rr, type_checker);
        rv = rv == HD_DECLINED ? HD_OK : rv;
    }
    if (rv != HD_OK && rv != HD_DONE) {
        rr->status = rv;
    }
}

hd_request_t *hd_sub_req_lookup_uri(hd_request_t *r, const char *uri)
{
    hd_request_t *rr = sub_req_create(r);
    const char *q = strchr(uri, '?');
    size_t len = q ? (size_t)(q - uri) : strlen(uri);
    char *path = hd_pstrndup(r->pool, uri, len);
    int rv;

    if (q != NULL) {
        rr->args = hd_pstrdup(r->pool, q + 1);
    }
    rv = hd_path_normalize(path, &len);
    rr->uri = path;
    if (rv == 0) {
        rv = map_request(rr, true);
    }
    sub_req_check(rr, rv);
    return rr;
}

hd_request_t *hd_sub_req_lookup_file(hd_request_t *r, const char *filename)
{
    hd_request_t *rr = sub_req_create(r);
    const char *base = strrchr(filename, '/');
    base = base ? base + 1 : filename;

    /* the URI a sibling file would have: the request's directory plus its name */
    if (r->uri != NULL && r->uri[0] == '/') {
        const char *slash = strrchr(r->uri, '/');
        rr->uri = hd_pstrcat(r->pool, hd_pstrndup(r->pool, r->uri, (size_t)(slash - r->uri) + 1),
                             base, NULL);
    } else {
        rr->uri = hd_pstrcat(r->pool, "/", base, NULL);
    }
    rr->filename = hd_pstrdup(r->pool, filename);
    sub_req_check(rr, map_request(rr, false));
    return rr;
}

void hd_internal_fast_redirect(hd_request_t *rr, hd_request_t *r)
{
    r->uri = rr->uri;
    if (rr->args != NULL) {
        r->args = rr->args;
    }
    r->filename = rr->filename;
    r->path_info = rr->path_info;
    r->finfo = rr->finfo;
    r->finfo_valid = rr->finfo_valid;
    r->config_merged = rr->config_merged;
    r->dir_config = rr->dir_config;
    r->handler = rr->handler;
    r->content_type = rr->content_type;
    r->content_encoding = rr->content_encoding;
    r->content_language = rr->content_language;
    r->content_charset = rr->content_charset;
    for (size_t i = 0; i < rr->headers_out->nelts; i++) {
        hd_table_add(r->headers_out, rr->headers_out->elts[i].key, rr->headers_out->elts[i].val);
    }
}

/* ---- redirects and errors --------------------------------------------- */

int hd_internal_redirect(hd_request_t *r, const char *new_uri)
{
    if (++r->internal_redirects > MAX_INTERNAL_REDIRECTS) {
        hd_log_rerror(r, HD_LOG_ERR, "core",
                      "Request exceeded the limit of %d internal redirects", MAX_INTERNAL_REDIRECTS);
        return 500;
    }
    if (r->orig_uri == NULL) {
        r->orig_uri = r->uri;
    }
    const char *q = strchr(new_uri, '?');
    size_t len = q ? (size_t)(q - new_uri) : strlen(new_uri);
    char *path = hd_pstrndup(r->pool, new_uri, len);
    int rv = hd_path_normalize(path, &len);
    if (rv != 0) {
        return rv;
    }
    r->uri = path;
    if (q != NULL) {
        r->args = hd_pstrdup(r->pool, q + 1);
    }
    /* An error document is fetched with GET whatever the original method. */
    if (r->orig_status != 0 && r->method != HD_M_HEAD) {
        r->method = HD_M_GET;
    }
    r->filename = NULL;
    r->finfo_valid = false;
    r->config_merged = false;
    r->dir_config = r->server->dir_default;
    r->handler = NULL;
    r->content_type = NULL;
    r->content_encoding = NULL;
    r->content_language = NULL;
    r->content_charset = NULL;
    r->body = NULL;
    r->content_length = -1;
    r->mtime = 0;
    r->status = 200;

    /* as Apache's internal redirects: the mapping again, not post_read_request */
    rv = map_request(r, true);
    if (rv == HD_OK) {
        rv = hd_request_run_phases(r);
    }
    if (rv == HD_DONE) {
        return HD_DONE;
    }
    if (rv != HD_OK) {
        if (r->orig_status != 0) {
            return rv; /* the caller falls back to the plain error page */
        }
        hd_send_error(r, rv);
    }
    return HD_DONE;
}

int hd_send_error(hd_request_t *r, int status)
{
    r->status = status;
    r->status_line = NULL;
    hd_response_drop_representation(r);

    const char *doc = NULL;
    if (r->dir_config != NULL && status >= 400) {
        doc = hd_core_error_document(hd_core_dconf(r), status);
    }
    /* An error while serving an ErrorDocument falls back to the plain page. */
    if (doc != NULL && r->orig_status == 0) {
        if (doc[0] == '/') {
            r->orig_status = status;
            int rv = hd_internal_redirect(r, doc);
            if (rv == HD_OK || rv == HD_DONE) {
                if (r->status == 200 || r->status == 206 || r->status == 304) {
                    r->status = status;
                }
                return HD_OK;
            }
            r->status = status;
            hd_response_drop_representation(r);
            hd_log_rerror(r, HD_LOG_INFO, "core", "ErrorDocument %s for %d could not be served",
                          doc, status);
        } else if (strncmp(doc, "http://", 7) == 0 || strncmp(doc, "https://", 8) == 0) {
            r->orig_status = status;
            r->status = 302;
            hd_table_set(r->headers_out, "Location", doc);
            hd_response_default_error_body(r, 302);
            return HD_OK;
        } else {
            r->content_type = "text/html; charset=iso-8859-1";
            hd_body_append_mem(r, doc, strlen(doc));
            r->content_length = (int64_t)strlen(doc);
            return HD_OK;
        }
    }
    if (status == 304 || status == 204) {
        r->content_length = -1;
        return HD_OK;
    }
    hd_response_default_error_body(r, status);
    return HD_OK;
}
