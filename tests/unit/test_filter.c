/*
 * Output filters (output.c, filter.h): the direct path without filters, a
 * filter that transforms a body, one that passes file segments untouched,
 * byte ranges cut after a content filter, chunked and close framing for a
 * body of unknown length, flow control (HD_AGAIN and resume), stage order,
 * failures, and Vary.
 */
#include "test.h"

#include "buf.h"
#include "config.h"
#include "core.h"
#include "filter.h"
#include "log.h"
#include "module.h"
#include "output.h"
#include "pool.h"
#include "request.h"
#include "table.h"

#include <ctype.h>
#include <fcntl.h>
#include <unistd.h>

static hd_server_t server;
static hd_core_server_conf_t core_sconf;
static hd_core_dir_conf_t core_dconf;
static hd_conn_t conn;

static hd_request_t *make_request(hd_pool_t *p, int proto_num, bool head)
{
    hd_request_t *r = hd_pcalloc(p, sizeof(*r));

    r->pool = p;
    r->c = &conn;
    r->server = &server;
    r->method = head ? HD_M_HEAD : HD_M_GET;
    r->method_name = head ? "HEAD" : "GET";
    r->uri = "/t";
    r->proto_num = proto_num;
    r->header_only = head;
    r->headers_in = hd_table_make(p, 4);
    r->headers_out = hd_table_make(p, 4);
    r->status = 200;
    r->content_length = -1;
    r->content_type = "text/plain";
    r->dir_config = server.dir_default;
    conn.out = NULL;
    return r;
}

/* Bytes of a chain as a string (file buffers read back). */
static char *flatten(hd_pool_t *p, const hd_chain_t *c)
{
    size_t total = (size_t)hd_chain_size(c), n = 0;
    char *out = hd_pnalloc(p, total + 1);

    for (; c != NULL; c = c->next) {
        const hd_buf_t *b = c->buf;
        if (b->in_file) {
            ssize_t got = pread(b->fd, out + n, (size_t)(b->file_last - b->file_pos), b->file_pos);
            n += got > 0 ? (size_t)got : 0;
        } else if (b->last > b->pos) {
            memcpy(out + n, b->pos, (size_t)(b->last - b->pos));
            n += (size_t)(b->last - b->pos);
        }
    }
    out[n] = '\0';
    return out;
}

/* What the connection would write: head and body, and the writer's view that all was sent. */
static char *drain(hd_request_t *r)
{
    char *s = flatten(r->pool, conn.out);
    conn.out = NULL;
    return s;
}

static const char *body_of(const char *response)
{
    const char *b = strstr(response, "\r\n\r\n");
    return b ? b + 4 : "";
}

/* ---- test filters ------------------------------------------------------ */

/* Upper-cases the whole body (memory or file) and drops the length, passing
 * the result in one piece or (ctx "split") in two. */
static int upper_run(hd_filter_t *f, hd_chain_t *in)
{
    hd_request_t *r = f->r;
    bool split = f->ctx != NULL && strcmp(f->ctx, "split") == 0;
    hd_chain_t *out = NULL;
    bool last = hd_chain_ends_body(in);

    r->content_length = -1;
    hd_table_set(r->headers_out, "X-Upper", "1");
    char *text = flatten(r->pool, in);
    for (char *c = text; *c; c++) {
        *c = (char)toupper((unsigned char)*c);
    }
    size_t n = strlen(text);
    if (split && n > 1) {
        hd_chain_t *first = NULL;
        hd_chain_append(r->pool, &first, hd_buf_wrap(r->pool, text, n / 2));
        int rv = hd_filter_pass(f, first);
        if (rv == HD_ERROR) {
            return rv;
        }
        hd_chain_append(r->pool, &out, hd_buf_wrap(r->pool, text + n / 2, n - n / 2));
    } else if (n > 0) {
        hd_chain_append(r->pool, &out, hd_buf_wrap(r->pool, text, n));
    }
    if (last) {
        hd_chain_append(r->pool, &out, hd_buf_last(r->pool));
    }
    return hd_filter_pass(f, out);
}

static const hd_filter_type_t upper_filter = {"UPPER", HD_FILTER_CONTENT, upper_run};

/* Counts what passes and passes it on untouched. */
typedef struct {
    int calls;
    off_t bytes;
    int file_bufs;
} count_ctx_t;

static int count_run(hd_filter_t *f, hd_chain_t *in)
{
    count_ctx_t *ctx = f->ctx;
    ctx->calls++;
    for (hd_chain_t *l = in; l != NULL; l = l->next) {
        ctx->bytes += hd_buf_size(l->buf);
        ctx->file_bufs += l->buf->in_file;
    }
    return hd_filter_pass(f, in);
}

static const hd_filter_type_t count_filter = {"COUNT", HD_FILTER_CONTENT_SET, count_run};

/* Produces `total` bytes of 'x' in pieces of `piece`, obeying HD_AGAIN. */
typedef struct {
    size_t total, piece, produced;
    int runs;
    size_t most_held;
} gen_ctx_t;

static int gen_run(hd_filter_t *f, hd_chain_t *in)
{
    gen_ctx_t *g = f->ctx;
    hd_request_t *r = f->r;

    g->runs++;
    r->content_length = (int64_t)g->total; /* a generator that knows its length */
    while (g->produced < g->total) {
        size_t n = g->total - g->produced < g->piece ? g->total - g->produced : g->piece;
        char *data = hd_pnalloc(r->pool, n);
        memset(data, 'x', n);
        hd_chain_t *out = NULL;
        hd_chain_append(r->pool, &out, hd_buf_wrap(r->pool, data, n));
        g->produced += n;
        if (g->produced == g->total) {
            hd_chain_append(r->pool, &out, hd_buf_last(r->pool));
        }
        int rv = hd_filter_pass(f, out);
        size_t held = hd_chain_memory_size(conn.out);
        if (held > g->most_held) {
            g->most_held = held;
        }
        if (rv != HD_OK) {
            return rv;
        }
    }
    return HD_OK;
}

static const hd_filter_type_t gen_filter = {"GEN", HD_FILTER_CONTENT, gen_run};

/* Appends its name to a log, to show the order filters run in. */
static char order_log[64];

static int order_run(hd_filter_t *f, hd_chain_t *in)
{
    if (in != NULL) {
        strcat(order_log, f->type->name);
    }
    return hd_filter_pass(f, in);
}

static const hd_filter_type_t order_a = {"a", HD_FILTER_PROTOCOL, order_run};
static const hd_filter_type_t order_b = {"b", HD_FILTER_CONTENT, order_run};
static const hd_filter_type_t order_c = {"c", HD_FILTER_CONTENT_SET, order_run};
static const hd_filter_type_t order_d = {"d", HD_FILTER_CONTENT, order_run};

static int fail_run(hd_filter_t *f, hd_chain_t *in)
{
    return HD_ERROR;
}

static const hd_filter_type_t fail_filter = {"FAIL", HD_FILTER_CONTENT, fail_run};

/* Says it holds input but never produces any. */
static int stuck_run(hd_filter_t *f, hd_chain_t *in)
{
    if (f->ctx == NULL) {
        f->ctx = "started";
        return hd_filter_pass(f, NULL) == HD_ERROR ? HD_ERROR : HD_AGAIN;
    }
    return HD_AGAIN;
}

static const hd_filter_type_t stuck_filter = {"STUCK", HD_FILTER_CONTENT, stuck_run};

/* ---- tests --------------------------------------------------------------- */

static void test_direct_path(void)
{
    hd_pool_t *p = hd_pool_create();
    hd_request_t *r = make_request(p, 1001, false);

    hd_body_append_mem(r, "hello", 5);
    hd_buf_t *body_buf = r->body->buf;
    CHECK_INT(hd_output_start(r, true), HD_OK);
    CHECK(hd_output_done(r));
    CHECK(r->filters == NULL);
    /* the head, then the handler's own buffer: nothing copied, nothing added */
    CHECK(conn.out != NULL && conn.out->next != NULL && conn.out->next->buf == body_buf);
    CHECK(conn.out->next->next == NULL);
    char *resp = drain(r);
    CHECK(strstr(resp, "\r\nContent-Length: 5\r\n") != NULL);
    CHECK(strstr(resp, "Transfer-Encoding") == NULL);
    CHECK_STR(body_of(resp), "hello");
    CHECK(r->keepalive);
    hd_pool_destroy(p);
}

static void test_transform(void)
{
    hd_pool_t *p = hd_pool_create();

    /* the whole body reaches the connection at once: it is counted */
    hd_request_t *r = make_request(p, 1001, false);
    hd_body_append_mem(r, "hello", 5);
    r->content_length = 5;
    hd_filter_insert(r, &upper_filter, NULL);
    CHECK_INT(hd_output_start(r, true), HD_OK);
    char *resp = drain(r);
    CHECK_STR(body_of(resp), "HELLO");
    CHECK(strstr(resp, "\r\nContent-Length: 5\r\n") != NULL);
    CHECK(strstr(resp, "\r\nX-Upper: 1\r\n") != NULL);
    CHECK(r->keepalive);

    /* in two pieces on HTTP/1.1: chunked, and the connection stays open */
    r = make_request(p, 1001, false);
    hd_body_append_mem(r, "hello world", 11);
    r->content_length = 11;
    hd_filter_insert(r, &upper_filter, "split");
    CHECK_INT(hd_output_start(r, true), HD_OK);
    CHECK(hd_output_done(r));
    resp = drain(r);
    CHECK(strstr(resp, "\r\nTransfer-Encoding: chunked\r\n") != NULL);
    CHECK(strstr(resp, "Content-Length") == NULL);
    CHECK_STR(body_of(resp), "5\r\nHELLO\r\n6\r\n WORLD\r\n0\r\n\r\n");
    CHECK(r->keepalive);

    /* the same on HTTP/1.0: no length, so the end of the body is the close */
    r = make_request(p, 1000, false);
    hd_body_append_mem(r, "hello world", 11);
    hd_filter_insert(r, &upper_filter, "split");
    CHECK_INT(hd_output_start(r, true), HD_OK);
    resp = drain(r);
    CHECK(strstr(resp, "Transfer-Encoding") == NULL);
    CHECK(strstr(resp, "Content-Length") == NULL);
    CHECK(strstr(resp, "\r\nConnection: close\r\n") != NULL);
    CHECK_STR(body_of(resp), "HELLO WORLD");
    CHECK(!r->keepalive);

    /* HEAD: the filter still decides the headers, no body leaves, keep-alive holds */
    r = make_request(p, 1001, true);
    hd_body_append_mem(r, "hello world", 11);
    hd_filter_insert(r, &upper_filter, "split");
    CHECK_INT(hd_output_start(r, true), HD_OK);
    resp = drain(r);
    CHECK(strstr(resp, "\r\nX-Upper: 1\r\n") != NULL);
    CHECK(strstr(resp, "Transfer-Encoding") == NULL);
    CHECK_STR(body_of(resp), "");
    CHECK(r->keepalive);
    hd_pool_destroy(p);
}

static int make_file(const char *content)
{
    char path[] = "/tmp/hd_test_filter_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    unlink(path);
    CHECK_INT(write(fd, content, strlen(content)), (long long)strlen(content));
    return fd;
}

static void test_file_segments_untouched(void)
{
    hd_pool_t *p = hd_pool_create();
    int fd = make_file("0123456789");
    hd_request_t *r = make_request(p, 1001, false);
    count_ctx_t counts = {0};

    hd_body_append_file(r, fd, 2, 6);
    r->content_length = 6;
    hd_filter_insert(r, &count_filter, &counts);
    CHECK_INT(hd_output_start(r, true), HD_OK);
    CHECK_INT(counts.calls, 1);
    CHECK_INT(counts.bytes, 6);
    CHECK_INT(counts.file_bufs, 1);
    /* what the connection got is still the file range: sendfile can send it */
    CHECK(conn.out->next != NULL && conn.out->next->buf->in_file);
    CHECK_INT(conn.out->next->buf->fd, fd);
    CHECK_INT(conn.out->next->buf->file_pos, 2);
    CHECK_INT(conn.out->next->buf->file_last, 8);
    char *resp = drain(r);
    CHECK(strstr(resp, "\r\nContent-Length: 6\r\n") != NULL);
    CHECK_STR(body_of(resp), "234567");
    close(fd);
    hd_pool_destroy(p);
}

static void test_ranges_after_content_filter(void)
{
    hd_pool_t *p = hd_pool_create();
    int fd = make_file("hello world");

    /* ranges of the transformed body, not of the file */
    hd_request_t *r = make_request(p, 1001, false);
    hd_table_set(r->headers_in, "Range", "bytes=1-3");
    hd_body_append_file(r, fd, 0, 11);
    r->content_length = 11;
    hd_table_set(r->headers_out, "ETag", "\"e1\"");
    hd_filter_insert(r, &upper_filter, "split");
    CHECK_INT(hd_output_start(r, true), HD_OK); /* the insert_filter hooks add the range filter */
    CHECK(hd_filter_find(r, &upper_filter) == r->filters);
    CHECK(r->filters->next != NULL && r->filters->next->type->stage == HD_FILTER_PROTOCOL);
    char *resp = drain(r);
    CHECK_INT(r->status, 206);
    CHECK(strstr(resp, "HTTP/1.1 206 Partial Content\r\n") != NULL);
    CHECK(strstr(resp, "\r\nContent-Range: bytes 1-3/11\r\n") != NULL);
    CHECK(strstr(resp, "\r\nContent-Length: 3\r\n") != NULL);
    CHECK_STR(body_of(resp), "ELL");

    /* unsatisfiable against the filtered length: 416 */
    r = make_request(p, 1001, false);
    hd_table_set(r->headers_in, "Range", "bytes=50-");
    hd_body_append_file(r, fd, 0, 11);
    hd_filter_insert(r, &upper_filter, NULL);
    CHECK_INT(hd_output_start(r, true), HD_OK);
    resp = drain(r);
    CHECK_INT(r->status, 416);
    CHECK(strstr(resp, "\r\nContent-Range: bytes */11\r\n") != NULL);

    /* If-Range compares with the ETag the filters left */
    r = make_request(p, 1001, false);
    hd_table_set(r->headers_in, "Range", "bytes=0-0");
    hd_table_set(r->headers_in, "If-Range", "\"e1\"");
    hd_table_set(r->headers_out, "ETag", "\"e1-changed\"");
    hd_body_append_mem(r, "abc", 3);
    CHECK_INT(hd_output_start(r, true), HD_OK);
    resp = drain(r);
    CHECK_INT(r->status, 200);
    CHECK_STR(body_of(resp), "abc");

    /* a range of a memory body without content filters: cut from memory */
    r = make_request(p, 1001, false);
    hd_table_set(r->headers_in, "Range", "bytes=-2");
    hd_body_append_mem(r, "abcdef", 6);
    CHECK_INT(hd_output_start(r, true), HD_OK);
    CHECK_STR(body_of(drain(r)), "ef");
    CHECK_INT(r->status, 206);
    close(fd);
    hd_pool_destroy(p);
}

static void test_flow_control(void)
{
    hd_pool_t *p = hd_pool_create();
    hd_request_t *r = make_request(p, 1001, false);
    gen_ctx_t g = {.total = 1000000, .piece = 16384};
    size_t body = 0;
    int resumes = 0;

    hd_filter_insert(r, &gen_filter, &g);
    CHECK_INT(hd_output_start(r, true), HD_OK);
    CHECK(!hd_output_done(r));
    /* the first batch: the head and no more than the high-water mark and one piece */
    CHECK(g.produced < g.total);
    char *first = drain(r);
    CHECK(strstr(first, "\r\nContent-Length: 1000000\r\n") != NULL);
    body += strlen(body_of(first));
    while (!hd_output_done(r) && resumes < 1000) {
        CHECK_INT(hd_output_resume(r), HD_OK);
        resumes++;
        body += hd_chain_size(conn.out);
        conn.out = NULL;
    }
    CHECK(hd_output_done(r));
    CHECK_INT(body, 1000000);
    CHECK(resumes > 5);
    CHECK_INT(g.runs, resumes + 1);
    CHECK(g.most_held <= HD_OUTPUT_HIGH_WATER + 16384);
    hd_pool_destroy(p);
}

static void test_stage_order(void)
{
    hd_pool_t *p = hd_pool_create();
    hd_request_t *r = make_request(p, 1001, false);

    order_log[0] = '\0';
    hd_filter_insert(r, &order_a, NULL);
    hd_filter_insert(r, &order_b, NULL);
    hd_filter_insert(r, &order_c, NULL);
    hd_filter_insert(r, &order_d, NULL);
    hd_body_append_mem(r, "x", 1);
    CHECK_INT(hd_output_start(r, true), HD_OK);
    /* by stage, and in insertion order within one */
    CHECK_STR(order_log, "bdca");
    CHECK(hd_filter_find(r, &order_c) != NULL);
    CHECK(hd_filter_find(r, &upper_filter) == NULL);
    drain(r);
    hd_pool_destroy(p);
}

static void test_failures(void)
{
    hd_pool_t *p = hd_pool_create();

    /* before the head: the client gets a plain 500 */
    hd_request_t *r = make_request(p, 1001, false);
    hd_body_append_mem(r, "secret", 6);
    hd_filter_insert(r, &fail_filter, NULL);
    CHECK_INT(hd_output_start(r, true), HD_OK);
    char *resp = drain(r);
    CHECK_INT(r->status, 500);
    CHECK(strstr(resp, "HTTP/1.1 500 Internal Server Error\r\n") != NULL);
    CHECK(strstr(resp, "secret") == NULL);
    CHECK(!r->keepalive);

    /* a filter that holds input but never produces: resume says so */
    r = make_request(p, 1001, false);
    hd_body_append_mem(r, "x", 1);
    hd_filter_insert(r, &stuck_filter, NULL);
    CHECK_INT(hd_output_start(r, true), HD_OK);
    CHECK(!hd_output_done(r));
    conn.out = NULL;
    CHECK_INT(hd_output_resume(r), HD_ERROR);
    hd_pool_destroy(p);
}

/* A head no module may send: CR/LF in a value, a name that is not a token (response splitting). */
static void test_invalid_head(void)
{
    hd_pool_t *p = hd_pool_create();
    hd_request_t *r = make_request(p, 1001, false);

    hd_table_set(r->headers_out, "X-Echo", "a\r\nSet-Cookie: evil=1");
    hd_body_append_mem(r, "body", 4);
    CHECK_INT(hd_output_start(r, true), HD_OK);
    char *resp = drain(r);
    CHECK_INT(r->status, 500);
    CHECK(strstr(resp, "evil") == NULL);
    CHECK(strstr(resp, "X-Echo") == NULL);

    r = make_request(p, 1001, false);
    hd_table_set(r->headers_out, "Bad Name", "v");
    CHECK_INT(hd_output_start(r, true), HD_OK);
    drain(r);
    CHECK_INT(r->status, 500);

    /* through a filter, before the head leaves */
    r = make_request(p, 1001, false);
    r->content_type = "text/html\nX-Injected: 1";
    hd_body_append_mem(r, "body", 4);
    hd_filter_insert(r, &upper_filter, NULL);
    CHECK_INT(hd_output_start(r, true), HD_OK);
    resp = drain(r);
    CHECK_INT(r->status, 500);
    CHECK(strstr(resp, "X-Injected") == NULL);
    CHECK(strstr(resp, "BODY") == NULL);

    /* what is allowed stays */
    r = make_request(p, 1001, false);
    hd_table_set(r->headers_out, "X-Fine_1.2", "tab\tand \"quotes\", commas");
    CHECK_INT(hd_output_start(r, true), HD_OK);
    resp = drain(r);
    CHECK_INT(r->status, 200);
    CHECK(strstr(resp, "\r\nX-Fine_1.2: tab\tand \"quotes\", commas\r\n") != NULL);
    hd_pool_destroy(p);
}

static void test_vary(void)
{
    hd_pool_t *p = hd_pool_create();
    hd_request_t *r = make_request(p, 1001, false);

    hd_vary_add(r, "Accept-Encoding");
    CHECK_STR(hd_table_get(r->headers_out, "Vary"), "Accept-Encoding");
    hd_vary_add(r, "accept-encoding");
    CHECK_STR(hd_table_get(r->headers_out, "Vary"), "Accept-Encoding");
    hd_vary_add(r, "Accept-Language");
    CHECK_STR(hd_table_get(r->headers_out, "Vary"), "Accept-Encoding,Accept-Language");
    hd_table_set(r->headers_out, "Vary", "*");
    hd_vary_add(r, "Accept");
    CHECK_STR(hd_table_get(r->headers_out, "Vary"), "*");
    hd_pool_destroy(p);
}

int main(void)
{
    hd_modules_init();
    hd_log_set_level(HD_LOG_EMERG);
    server.pool = hd_pool_create();
    server.module_config[hd_core_module.index] = &core_sconf;
    core_sconf.server_banner = "httpd";
    core_sconf.keepalive_timeout_ms = 5000;
    core_dconf.enable_sendfile = 1;
    server.dir_default[hd_core_module.index] = &core_dconf;
    hd_modules_build_hooks(&server);
    conn.server = &server;
    snprintf(conn.client_ip, sizeof(conn.client_ip), "127.0.0.1");

    RUN(test_direct_path);
    RUN(test_transform);
    RUN(test_file_segments_untouched);
    RUN(test_ranges_after_content_filter);
    RUN(test_flow_control);
    RUN(test_stage_order);
    RUN(test_failures);
    RUN(test_invalid_head);
    RUN(test_vary);

    hd_pool_destroy(server.pool);
    hd_pool_recycler_drain();
    TEST_DONE();
}
