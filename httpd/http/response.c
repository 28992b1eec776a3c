/*
 * Building responses: the body calls handlers use, the default error page,
 * and the status line and headers written before the body. ErrorDocument
 * (an internal redirect) is request processing's (request.c).
 */
#include "response.h"

#include "buf.h"
#include "config.h"
#include "core.h"
#include "date.h"
#include "file_cache.h"
#include "log.h"
#include "path.h"
#include "pool.h"
#include "request.h"
#include "sys.h"
#include "table.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef struct {
    int status;
    const char *reason;
    const char *message; /* body text of the default error page; NULL: generic */
} status_info_t;

static const status_info_t statuses[] = {
    {100, "Continue", NULL},
    {101, "Switching Protocols", NULL},
    {200, "OK", NULL},
    {201, "Created", NULL},
    {202, "Accepted", NULL},
    {204, "No Content", NULL},
    {206, "Partial Content", NULL},
    {300, "Multiple Choices", NULL},
    {301, "Moved Permanently", "The document has moved <a href=\"%s\">here</a>."},
    {302, "Found", "The document has moved <a href=\"%s\">here</a>."},
    {303, "See Other", "The answer to your request is located <a href=\"%s\">here</a>."},
    {304, "Not Modified", NULL},
    {307, "Temporary Redirect", "The document has moved <a href=\"%s\">here</a>."},
    {308, "Permanent Redirect", "The document has moved <a href=\"%s\">here</a>."},
    {400, "Bad Request", "Your browser sent a request that this server could not understand."},
    {401, "Unauthorized", "This server could not verify that you are authorized to access the document requested."},
    {403, "Forbidden", "You don't have permission to access this resource."},
    {404, "Not Found", "The requested URL was not found on this server."},
    {405, "Method Not Allowed", "The requested method %s is not allowed for this URL."},
    {406, "Not Acceptable", "An appropriate representation of the requested resource could not be found on this server."},
    {408, "Request Timeout", "Server timeout waiting for the HTTP request from the client."},
    {409, "Conflict", NULL},
    {410, "Gone", "The requested resource is no longer available on this server and there is no forwarding address."},
    {411, "Length Required", "A request of the requested method requires a valid Content-length."},
    {412, "Precondition Failed", "The precondition on the request for this URL evaluated to false."},
    {413, "Content Too Large", "The requested resource does not allow request data with this method, or the amount of data provided in the request exceeds the capacity limit."},
    {414, "URI Too Long", "The requested URL's length exceeds the capacity limit for this server."},
    {415, "Unsupported Media Type", "The supplied request data is not in a format acceptable for processing by this resource."},
    {416, "Range Not Satisfiable", "None of the range-specifier values in the Range request-header field overlap the current extent of the selected resource."},
    {417, "Expectation Failed", "The expectation given in the Expect request-header field could not be met by this server."},
    {421, "Misdirected Request", NULL},
    {426, "Upgrade Required", NULL},
    {429, "Too Many Requests", NULL},
    {431, "Request Header Fields Too Large", "Your browser sent a request whose header fields exceed this server's limits."},
    {500, "Internal Server Error", "The server encountered an internal error or misconfiguration and was unable to complete your request."},
    {501, "Not Implemented", "%s not supported for current URL."},
    {502, "Bad Gateway", NULL},
    {503, "Service Unavailable", "The server is temporarily unable to service your request due to maintenance downtime or capacity problems. Please try again later."},
    {504, "Gateway Timeout", NULL},
    {505, "HTTP Version Not Supported", "The server does not support the HTTP protocol version used in the request."},
};

static const status_info_t *status_find(int status)
{
    for (size_t i = 0; i < HD_ARRAY_SIZE(statuses); i++) {
        if (statuses[i].status == status) {
            return &statuses[i];
        }
    }
    return NULL;
}

const char *hd_status_reason(int status)
{
    const status_info_t *si = status_find(status);
    return si ? si->reason : NULL;
}

/* Host values that are safe to echo into a Location header. */
static bool host_ok(const char *h)
{
    if (h == NULL || *h == '\0') {
        return false;
    }
    for (; *h; h++) {
        char c = *h;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-' || c == '_' || c == ':' || c == '[' || c == ']')) {
            return false;
        }
    }
    return true;
}

const char *hd_construct_url(hd_request_t *r, const char *path)
{
    const hd_listen_t *l = r->c != NULL ? r->c->listener : NULL;
    bool https = l != NULL && l->protocol != NULL && strcmp(l->protocol, "https") == 0;
    const char *host = r->hostname;

    if (!host_ok(host)) {
        const hd_core_server_conf_t *sc = hd_core_sconf(r->server);
        unsigned port = r->c != NULL ? r->c->local_port : 0;

        host = sc->server_name ? sc->server_name : "localhost";
        if (port != 0 && port != (https ? 443u : 80u)) {
            host = hd_psprintf(r->pool, "%s:%u", host, port);
        }
    }
    return hd_pstrcat(r->pool, https ? "https://" : "http://", host, path, NULL);
}

static void body_append(hd_request_t *r, hd_buf_t *b)
{
    hd_chain_append(r->pool, &r->body, b);
}

void hd_body_append_mem(hd_request_t *r, const void *data, size_t len)
{
    if (len > 0) {
        body_append(r, hd_buf_wrap(r->pool, data, len));
    }
}

void hd_body_append_copy(hd_request_t *r, const void *data, size_t len)
{
    if (len > 0) {
        char *copy = hd_pnalloc(r->pool, len);
        memcpy(copy, data, len);
        body_append(r, hd_buf_wrap(r->pool, copy, len));
    }
}

void hd_body_append_file(hd_request_t *r, int fd, off_t off, off_t len)
{
    if (len > 0) {
        body_append(r, hd_buf_file(r->pool, fd, off, len));
    }
}

static void close_fd_cleanup(void *data)
{
    hd_close((int)(intptr_t)data);
}

static void release_cached_cleanup(void *data)
{
    hd_file_cache_release(data);
}

int hd_open_file_for_request(hd_request_t *r, const char *path)
{
    hd_cached_file_t *cached;
    /* only a path stat()ed for this request may come from the cache */
    bool statted = r->finfo_valid && strcmp(path, r->filename) == 0;
    int fd = hd_file_cache_open(path, &r->finfo,
                                statted ? hd_core_sconf(r->server)->open_file_cache : 0,
                                r->start_mono_us / 1000, &cached);
    if (fd >= 0 && cached != NULL) {
        hd_pool_cleanup_add(r->pool, release_cached_cleanup, cached);
    } else if (fd >= 0) {
        hd_pool_cleanup_add(r->pool, close_fd_cleanup, (void *)(intptr_t)fd);
    }
    return fd;
}

void hd_response_drop_representation(hd_request_t *r)
{
    static const char *const drop[] = {"ETag", "Last-Modified", "Accept-Ranges", "Content-Encoding",
                                       "Content-Language", "Content-Location", "Vary"};
    for (size_t i = 0; i < HD_ARRAY_SIZE(drop); i++) {
        hd_table_unset(r->headers_out, drop[i]);
    }
    if (r->status != 416) {
        hd_table_unset(r->headers_out, "Content-Range");
    }
    r->mtime = 0;
    r->body = NULL;
    r->content_length = -1;
}

void hd_response_default_error_body(hd_request_t *r, int status)
{
    const status_info_t *si = status_find(status);
    const char *reason = si ? si->reason : "Error";
    const char *msg = si && si->message ? si->message : "An error occurred while processing your request.";
    char *text;

    const char *hole = strstr(msg, "%s");
    if (hole != NULL) {
        /* The one "%s" of a message is the Location or the method, escaped. */
        const char *fill;
        if (status >= 300 && status < 400) {
            fill = hd_table_get(r->headers_out, "Location");
        } else {
            fill = r->method_name;
        }
        text = hd_pstrcat(r->pool, hd_pstrndup(r->pool, msg, (size_t)(hole - msg)),
                          hd_escape_html(r->pool, fill ? fill : ""), hole + 2, NULL);
    } else {
        text = (char *)msg;
    }
    char *body = hd_psprintf(r->pool,
                             "<!DOCTYPE HTML PUBLIC \"-//IETF//DTD HTML 2.0//EN\">\n"
                             "<html><head>\n<title>%d %s</title>\n</head><body>\n<h1>%s</h1>\n"
                             "<p>%s</p>\n</body></html>\n",
                             status, reason, reason, text);
    r->content_type = "text/html; charset=iso-8859-1";
    hd_body_append_mem(r, body, strlen(body));
    r->content_length = (int64_t)strlen(body);
}

void hd_response_error_page(hd_request_t *r, int status)
{
    r->status = status;
    r->status_line = NULL;
    hd_response_drop_representation(r);
    if (status == 304 || status == 204) {
        r->content_length = -1;
        return;
    }
    hd_response_default_error_body(r, status);
}

/* True for statuses after which Apache never keeps the connection. */
static bool status_drops_connection(int status)
{
    switch (status) {
    case 400:
    case 408:
    case 411:
    case 413:
    case 414:
    case 431:
    case 500:
    case 501:
    case 503:
    case 505:
        return true;
    default:
        return false;
    }
}

bool hd_response_has_body(const hd_request_t *r)
{
    return !(r->status < 200 || r->status == 204 || r->status == 304);
}

static char *put(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}

#define PUT_LIT(p, lit) put((p), (lit), sizeof(lit) - 1)

static char *put_str(char *p, const char *s)
{
    return put(p, s, strlen(s));
}

static char *put_u64(char *p, uint64_t v)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n) {
        *p++ = tmp[--n];
    }
    return p;
}

hd_buf_t *hd_response_head(hd_request_t *r, bool keepalive_possible)
{
    hd_core_server_conf_t *sc = hd_core_sconf(r->server);
    bool has_body = hd_response_has_body(r);

    /* the direct path (no filter) knows its whole body: count it */
    if (r->content_length < 0 && has_body && !r->chunked && r->filters == NULL) {
        r->content_length = r->body ? (int64_t)hd_chain_size(r->body) : 0;
    }
    if (!has_body) {
        r->body = NULL;
    }
    /* without a length the end of a body is the end of the connection,
     * unless it is chunked, or there is none (HEAD) */
    r->keepalive = keepalive_possible && !status_drops_connection(r->status) &&
                   (r->content_length >= 0 || r->chunked || !has_body || r->header_only);

    const char *reason = r->status_line ? r->status_line : hd_status_reason(r->status);
    size_t need = 256 + strlen(sc->server_banner) + (reason ? strlen(reason) : 0);
    /*
     * Measuring each field also checks it, at the cost of the strlen it
     * replaces: a name must not hold what ends or splits a field, a value
     * no line break (as Apache's check_headers; a module that echoes request
     * data into a header must not split the response).
     */
    if (r->content_type) {
        size_t n = strcspn(r->content_type, "\r\n");
        if (r->content_type[n] != '\0') {
            hd_log_rerror(r, HD_LOG_ERR, "core", "Content-Type '%s' contains invalid characters",
                          r->content_type);
            return NULL;
        }
        need += n + 16;
    }
    for (size_t i = 0; i < r->headers_out->nelts; i++) {
        const hd_table_entry_t *e = &r->headers_out->elts[i];
        size_t kn = strcspn(e->key, ":\r\n \t"), vn = strcspn(e->val, "\r\n");
        if (kn == 0 || e->key[kn] != '\0' || e->val[vn] != '\0') {
            hd_log_rerror(r, HD_LOG_ERR, "core",
                          "AH02430: Response header '%s' value of '%s' contains invalid "
                          "characters, aborting request", e->key, e->val);
            return NULL;
        }
        need += kn + vn + 4;
    }
    if (r->mtime) {
        need += 48;
    }

    hd_buf_t *b = hd_buf_create(r->pool, need);
    char *p = b->last;
    p = PUT_LIT(p, "HTTP/1.1 ");
    p = put_u64(p, (uint64_t)r->status);
    *p++ = ' ';
    if (reason) {
        p = put_str(p, reason);
    }
    p = PUT_LIT(p, "\r\nDate: ");
    p = put(p, hd_http_date_now(), HD_HTTP_DATE_LEN);
    p = PUT_LIT(p, "\r\nServer: ");
    p = put_str(p, sc->server_banner);
    p = PUT_LIT(p, "\r\n");
    if (r->mtime) {
        char date[32];
        hd_http_date_format(r->mtime, date);
        p = PUT_LIT(p, "Last-Modified: ");
        p = put(p, date, HD_HTTP_DATE_LEN);
        p = PUT_LIT(p, "\r\n");
    }
    for (size_t i = 0; i < r->headers_out->nelts; i++) {
        p = put_str(p, r->headers_out->elts[i].key);
        p = PUT_LIT(p, ": ");
        p = put_str(p, r->headers_out->elts[i].val);
        p = PUT_LIT(p, "\r\n");
    }
    if (has_body && r->chunked) {
        p = PUT_LIT(p, "Transfer-Encoding: chunked\r\n");
    } else if (has_body && r->content_length >= 0) {
        p = PUT_LIT(p, "Content-Length: ");
        p = put_u64(p, (uint64_t)r->content_length);
        p = PUT_LIT(p, "\r\n");
    }
    if (r->keepalive) {
        int timeout_s = (sc->keepalive_timeout_ms + 999) / 1000;
        p = PUT_LIT(p, "Keep-Alive: timeout=");
        p = put_u64(p, (uint64_t)timeout_s);
        if (sc->max_keepalive_requests > 0) {
            p = PUT_LIT(p, ", max=");
            p = put_u64(p, (uint64_t)(sc->max_keepalive_requests - (int)r->c->requests - 1));
        }
        p = PUT_LIT(p, "\r\n");
        if (r->proto_num < 1001) {
            p = PUT_LIT(p, "Connection: Keep-Alive\r\n");
        }
    } else {
        p = PUT_LIT(p, "Connection: close\r\n");
    }
    if (r->content_type && r->status != 304) {
        p = PUT_LIT(p, "Content-Type: ");
        p = put_str(p, r->content_type);
        p = PUT_LIT(p, "\r\n");
    }
    p = PUT_LIT(p, "\r\n");
    b->last = p;
    return b;
}
