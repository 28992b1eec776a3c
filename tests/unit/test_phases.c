/*
 * The request phases (request.c) with made-up modules: the order phases run
 * in, run-first phases stopping at the first answer, run-all phases going
 * on past HD_OK and stopping at a status, HD_ERROR as 500, sub-request
 * look-ups that run only the mapping phases, and the fast redirect.
 */
#include "test.h"

#include "config.h"
#include "core.h"
#include "log.h"
#include "module.h"
#include "pool.h"
#include "request.h"
#include "request_internal.h"
#include "table.h"

static hd_server_t server;
static hd_core_server_conf_t core_sconf;
static hd_core_dir_conf_t core_dconf;
static hd_conn_t conn;
static hd_hooks_t hooks;

/* Every hook call appends "<module>.<phase> " here. */
static char calls[1024];

/* What each fake module's hooks answer, by phase. */
typedef struct {
    int post_read, translate, map, access, type, fixups, handler;
} answers_t;

static answers_t ans_a, ans_b;

static void note(const char *who, const char *phase)
{
    strcat(calls, who);
    strcat(calls, ".");
    strcat(calls, phase);
    strcat(calls, " ");
}

#define FAKE_HOOKS(who, ans)                                                  \
    static int who##_post_read(hd_request_t *r)                              \
    {                                                                          \
        note(#who, "post_read");                                              \
        return ans.post_read;                                                  \
    }                                                                          \
    static int who##_translate(hd_request_t *r)                              \
    {                                                                          \
        note(#who, "translate");                                              \
        if (ans.translate == HD_OK) {                                          \
            r->filename = hd_pstrcat(r->pool, "/srv/" #who, r->uri, NULL);     \
        }                                                                      \
        return ans.translate;                                                  \
    }                                                                          \
    static int who##_map(hd_request_t *r)                                    \
    {                                                                          \
        note(#who, "map");                                                    \
        return ans.map;                                                        \
    }                                                                          \
    static int who##_access(hd_request_t *r)                                 \
    {                                                                          \
        note(#who, "access");                                                 \
        return ans.access;                                                     \
    }                                                                          \
    static int who##_type(hd_request_t *r)                                   \
    {                                                                          \
        note(#who, "type");                                                   \
        if (ans.type == HD_OK) {                                               \
            r->content_type = "text/x-" #who;                                  \
        }                                                                      \
        return ans.type;                                                       \
    }                                                                          \
    static int who##_fixups(hd_request_t *r)                                 \
    {                                                                          \
        note(#who, "fixups");                                                 \
        return ans.fixups;                                                     \
    }                                                                          \
    static int who##_handler(hd_request_t *r)                                \
    {                                                                          \
        note(#who, "handler");                                                \
        return ans.handler;                                                    \
    }                                                                          \
    static hd_module_t who##_module = {                                        \
        .name = #who,                                                          \
        .post_read_request = who##_post_read,                                  \
        .translate_name = who##_translate,                                     \
        .map_to_storage = who##_map,                                           \
        .access_checker = who##_access,                                        \
        .type_checker = who##_type,                                            \
        .fixups = who##_fixups,                                                \
        .handler = who##_handler,                                              \
    };

FAKE_HOOKS(a, ans_a)
FAKE_HOOKS(b, ans_b)

static hd_module_t *both[] = {&a_module, &b_module, NULL};

static void reset(void)
{
    calls[0] = '\0';
    ans_a = (answers_t){HD_DECLINED, HD_DECLINED, HD_DECLINED, HD_DECLINED, HD_DECLINED,
                        HD_DECLINED, HD_DECLINED};
    ans_b = ans_a;
}

static hd_request_t *make_request(hd_pool_t *p, const char *uri)
{
    hd_request_t *r = hd_pcalloc(p, sizeof(*r));
    r->pool = p;
    r->c = &conn;
    r->server = &server;
    r->method = HD_M_GET;
    r->method_name = "GET";
    r->uri = hd_pstrdup(p, uri);
    r->headers_in = hd_table_make(p, 4);
    r->headers_out = hd_table_make(p, 4);
    r->status = 200;
    r->content_length = -1;
    r->dir_config = server.dir_default;
    return r;
}

/* prepare (up to the mapping) and the rest, as the connection runs them */
static int run(hd_request_t *r)
{
    int rv = hd_request_prepare(r);
    return rv != HD_OK ? rv : hd_request_run_phases(r);
}

static void test_order(void)
{
    hd_pool_t *p = hd_pool_create();

    reset();
    ans_b.handler = HD_OK;
    CHECK_INT(run(make_request(p, "/x")), HD_OK);
    CHECK_STR(calls, "a.post_read b.post_read a.translate b.translate a.map b.map "
                     "a.access b.access a.type b.type a.fixups b.fixups a.handler b.handler ");
    hd_pool_destroy(p);
}

static void test_run_first(void)
{
    hd_pool_t *p = hd_pool_create();
    hd_request_t *r;

    /* the first module that maps the URI ends translate_name */
    reset();
    ans_a.translate = HD_OK;
    ans_b.handler = HD_OK;
    r = make_request(p, "/x");
    CHECK_INT(run(r), HD_OK);
    CHECK_STR(r->filename, "/srv/a/x");
    CHECK(strstr(calls, "b.translate") == NULL);

    /* declined by the first, answered by the second */
    reset();
    ans_b.translate = HD_OK;
    ans_b.handler = HD_OK;
    r = make_request(p, "/x");
    CHECK_INT(run(r), HD_OK);
    CHECK_STR(r->filename, "/srv/b/x");

    /* a type chosen by one module is not overwritten by the next */
    reset();
    ans_a.type = HD_OK;
    ans_b.type = HD_OK;
    ans_b.handler = HD_OK;
    r = make_request(p, "/x");
    CHECK_INT(run(r), HD_OK);
    CHECK_STR(r->content_type, "text/x-a");
    CHECK(strstr(calls, "b.type") == NULL);

    /* the first handler that answers is the handler */
    reset();
    ans_a.handler = HD_OK;
    ans_b.handler = HD_OK;
    CHECK_INT(run(make_request(p, "/x")), HD_OK);
    CHECK(strstr(calls, "b.handler") == NULL);

    /* a status from a run-first phase is the answer */
    reset();
    ans_a.translate = 301;
    CHECK_INT(run(make_request(p, "/x")), 301);
    CHECK(strstr(calls, "map") == NULL);

    /* map_to_storage HD_OK: the request is off the file system, phases go on */
    reset();
    ans_a.map = HD_OK;
    ans_b.handler = HD_OK;
    CHECK_INT(run(make_request(p, "/x")), HD_OK);
    CHECK(strstr(calls, "b.map") == NULL);
    CHECK(strstr(calls, "b.handler") != NULL);
    hd_pool_destroy(p);
}

static void test_run_all(void)
{
    hd_pool_t *p = hd_pool_create();

    /* HD_OK does not end a run-all phase */
    reset();
    ans_a.access = HD_OK;
    ans_a.fixups = HD_OK;
    ans_a.post_read = HD_OK;
    ans_b.handler = HD_OK;
    CHECK_INT(run(make_request(p, "/x")), HD_OK);
    CHECK(strstr(calls, "b.post_read") != NULL);
    CHECK(strstr(calls, "b.access") != NULL);
    CHECK(strstr(calls, "b.fixups") != NULL);

    /* a status does, and nothing after it runs */
    reset();
    ans_a.access = 403;
    CHECK_INT(run(make_request(p, "/x")), 403);
    CHECK(strstr(calls, "b.access") == NULL);
    CHECK(strstr(calls, "type") == NULL);

    /* HD_DONE from fixups (the response is set): no handler */
    reset();
    ans_b.fixups = HD_DONE;
    CHECK_INT(run(make_request(p, "/x")), HD_DONE);
    CHECK(strstr(calls, "handler") == NULL);

    /* HD_ERROR from any hook is a 500 */
    reset();
    ans_b.post_read = HD_ERROR;
    CHECK_INT(run(make_request(p, "/x")), 500);
    reset();
    ans_a.handler = HD_ERROR;
    CHECK_INT(run(make_request(p, "/x")), 500);

    /* nobody handles it: 500, not a crash (the http module is always last in the server) */
    reset();
    CHECK_INT(run(make_request(p, "/x")), 500);
    hd_pool_destroy(p);
}

static void test_sub_request(void)
{
    hd_pool_t *p = hd_pool_create();
    hd_request_t *r, *rr;

    reset();
    ans_b.translate = HD_OK;
    ans_a.type = HD_OK;
    r = make_request(p, "/dir/");
    r->method = HD_M_HEAD;
    rr = hd_sub_req_lookup_uri(r, "/dir/index.html?q=1");
    /* mapping, access and type only: no post_read, fixups or handler */
    CHECK_STR(calls, "a.translate b.translate a.map b.map a.access b.access a.type ");
    CHECK_INT(rr->status, 200);
    CHECK(rr->main == r);
    CHECK_STR(rr->uri, "/dir/index.html");
    CHECK_STR(rr->args, "q=1");
    CHECK_STR(rr->filename, "/srv/b/dir/index.html");
    CHECK_STR(rr->content_type, "text/x-a");
    CHECK_INT(rr->method, HD_M_GET);
    CHECK(rr->headers_in == r->headers_in);
    CHECK(rr->config_merged);

    /* a refusal is the look-up's status */
    reset();
    ans_b.access = 403;
    rr = hd_sub_req_lookup_uri(r, "/dir/secret.html");
    CHECK_INT(rr->status, 403);
    CHECK(strstr(calls, "type") == NULL);

    /* a URI that does not normalise */
    reset();
    rr = hd_sub_req_lookup_uri(r, "/../etc/passwd");
    CHECK_INT(rr->status, 400);
    CHECK_STR(calls, "");

    /* by file name: no translate; the URI is the sibling's */
    reset();
    r = make_request(p, "/docs/page.html");
    rr = hd_sub_req_lookup_file(r, "/srv/docs/page.html.fr");
    CHECK(strstr(calls, "translate") == NULL);
    CHECK(strstr(calls, "a.map") != NULL);
    CHECK_STR(rr->uri, "/docs/page.html.fr");
    CHECK_STR(rr->filename, "/srv/docs/page.html.fr");
    CHECK_INT(rr->status, 200);

    /* the fast redirect makes the sub-request's resource the request's */
    reset();
    ans_a.translate = HD_OK;
    ans_b.type = HD_OK;
    r = make_request(p, "/dir/");
    rr = hd_sub_req_lookup_uri(r, "/dir/index.html");
    hd_table_set(rr->headers_out, "X-From-Sub", "1");
    hd_internal_fast_redirect(rr, r);
    CHECK_STR(r->uri, "/dir/index.html");
    CHECK_STR(r->filename, "/srv/a/dir/index.html");
    CHECK_STR(r->content_type, "text/x-b");
    CHECK(r->dir_config == rr->dir_config);
    CHECK_STR(hd_table_get(r->headers_out, "X-From-Sub"), "1");
    hd_pool_destroy(p);
}

/* An internal redirect (ErrorDocument) maps and handles again, but the head was read once. */
static void test_internal_redirect(void)
{
    hd_pool_t *p = hd_pool_create();
    hd_request_t *r;

    reset();
    ans_a.translate = HD_OK;
    ans_b.handler = HD_OK;
    r = make_request(p, "/missing");
    CHECK_INT(run(r), HD_OK);
    calls[0] = '\0';
    CHECK_INT(hd_internal_redirect(r, "/errors/404.html?x=1"), HD_DONE);
    CHECK_STR(calls, "a.translate a.map b.map a.access b.access a.type b.type a.fixups b.fixups "
                     "a.handler b.handler ");
    CHECK_STR(r->uri, "/errors/404.html");
    CHECK_STR(r->orig_uri, "/missing");
    CHECK_STR(r->args, "x=1");
    CHECK_STR(r->filename, "/srv/a/errors/404.html");
    hd_pool_destroy(p);
}

int main(void)
{
    hd_modules_init();
    hd_log_set_level(HD_LOG_EMERG);
    server.pool = hd_pool_create();
    server.module_config[hd_core_module.index] = &core_sconf;
    server.dir_default[hd_core_module.index] = &core_dconf;
    core_dconf.options = HD_OPT_FOLLOWSYMLINKS;
    conn.server = &server;

    /* two made-up modules and nothing else, in this order, for every phase */
    hooks.pre_connection = both + 2;
    hooks.input_wait = both + 2;
    hooks.post_read_request = both;
    hooks.translate_name = both;
    hooks.map_to_storage = both;
    hooks.access_checker = both;
    hooks.type_checker = both;
    hooks.fixups = both;
    hooks.insert_filter = both + 2;
    hooks.handler = both;
    hooks.log_transaction = both + 2;
    server.hooks = &hooks;

    RUN(test_order);
    RUN(test_run_first);
    RUN(test_run_all);
    RUN(test_sub_request);
    RUN(test_internal_redirect);

    hd_pool_destroy(server.pool);
    hd_pool_recycler_drain();
    TEST_DONE();
}
