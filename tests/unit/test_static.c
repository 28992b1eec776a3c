/*
 * The static file handler, byte ranges, conditionals, mod_mime and mod_dir,
 * driven through fake requests on files in a temporary directory.
 */
#include "test.h"

#include "buf.h"
#include "config.h"
#include "core.h"
#include "date.h"
#include "dir/dir.h"
#include "log.h"
#include "mime/mime.h"
#include "module.h"
#include "output.h"
#include "pool.h"
#include "range.h"
#include "request.h"
#include "static_file.h"
#include "table.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

static hd_server_t server;
static hd_core_server_conf_t core_sconf;
static hd_core_dir_conf_t core_dconf;
static hd_conn_t conn;
static char docroot[PATH_MAX];

static hd_request_t *make_request(hd_pool_t *p, hd_method_t m, const char *uri)
{
    hd_request_t *r = hd_pcalloc(p, sizeof(*r));

    r->pool = p;
    r->c = &conn;
    r->server = &server;
    r->method = m;
    r->method_name = m == HD_M_GET ? "GET" : m == HD_M_HEAD ? "HEAD" : "OTHER";
    r->uri = hd_pstrdup(p, uri);
    r->headers_in = hd_table_make(p, 8);
    r->headers_out = hd_table_make(p, 8);
    r->status = 200;
    r->content_length = -1;
    r->dir_config = server.dir_default;
    r->header_only = m == HD_M_HEAD;
    r->start.tv_sec = time(NULL);
    return r;
}

/* translate + stat + mime, as the core runs them before the handler */
static hd_request_t *mapped_request(hd_pool_t *p, hd_method_t m, const char *uri)
{
    hd_request_t *r = make_request(p, m, uri);

    CHECK_INT(hd_core_translate(r), HD_OK);
    CHECK_INT(hd_core_map_to_storage(r), HD_OK);
    hd_mime_module.type_checker(r);
    return r;
}

/* A chain as one string (file buffers read back with pread). */
static char *flatten(hd_pool_t *p, const hd_chain_t *chain, size_t *len)
{
    size_t total = (size_t)hd_chain_size(chain), n = 0;
    char *out = hd_palloc(p, total + 1);

    for (const hd_chain_t *c = chain; c != NULL; c = c->next) {
        hd_buf_t *b = c->buf;
        if (b->in_file) {
            ssize_t got = pread(b->fd, out + n, (size_t)(b->file_last - b->file_pos), b->file_pos);
            CHECK_INT(got, b->file_last - b->file_pos);
            n += (size_t)(got > 0 ? got : 0);
        } else {
            memcpy(out + n, b->pos, (size_t)(b->last - b->pos));
            n += (size_t)(b->last - b->pos);
        }
    }
    out[n] = '\0';
    *len = n;
    return out;
}

/*
 * Runs the handler's response through the output side, as the connection
 * does (the insert_filter hooks, so the range filter for a Range header),
 * and returns the body queued after the head.
 */
static char *respond(hd_request_t *r, size_t *len)
{
    conn.out = NULL;
    CHECK_INT(hd_output_start(r, true), HD_OK);
    CHECK(hd_output_done(r));
    CHECK(conn.out != NULL);
    return flatten(r->pool, conn.out ? conn.out->next : NULL, len);
}

/* The handler's body chain as one string. */
static char *flatten_body(hd_request_t *r, size_t *len)
{
    return flatten(r->pool, r->body, len);
}

static void write_file(const char *rel, const char *content)
{
    const char *path = hd_psprintf(server.pool, "%s/%s", docroot, rel);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(content, f);
        fclose(f);
    }
}

static void make_dir(const char *rel)
{
    const char *path = hd_psprintf(server.pool, "%s/%s", docroot, rel);
    CHECK_INT(mkdir(path, 0755), 0);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(path);
}

static void test_range_parse(void)
{
    hd_range_t rg[HD_MAX_RANGES];

    CHECK_INT(hd_range_parse("bytes=0-99", 1000, rg, HD_MAX_RANGES), 1);
    CHECK_INT(rg[0].start, 0);
    CHECK_INT(rg[0].end, 99);
    CHECK_INT(hd_range_parse("bytes=500-", 1000, rg, HD_MAX_RANGES), 1);
    CHECK_INT(rg[0].start, 500);
    CHECK_INT(rg[0].end, 999);
    CHECK_INT(hd_range_parse("bytes=-200", 1000, rg, HD_MAX_RANGES), 1);
    CHECK_INT(rg[0].start, 800);
    CHECK_INT(rg[0].end, 999);
    /* suffix longer than the file: all of it */
    CHECK_INT(hd_range_parse("bytes=-2000", 1000, rg, HD_MAX_RANGES), 1);
    CHECK_INT(rg[0].start, 0);
    CHECK_INT(rg[0].end, 999);
    /* last-pos past the end is cut */
    CHECK_INT(hd_range_parse("bytes=990-5000", 1000, rg, HD_MAX_RANGES), 1);
    CHECK_INT(rg[0].end, 999);
    /* unit case, whitespace, empty list elements */
    CHECK_INT(hd_range_parse("BYTES = 1 - 2 , 5-6", 1000, rg, HD_MAX_RANGES), 2);
    CHECK_INT(rg[0].start, 1);
    CHECK_INT(rg[0].end, 2);
    CHECK_INT(rg[1].start, 5);
    CHECK_INT(rg[1].end, 6);
    CHECK_INT(hd_range_parse("bytes=,0-1,,4-5,", 1000, rg, HD_MAX_RANGES), 2);
    CHECK_INT(hd_range_parse("bytes=0-0,-1", 1000, rg, HD_MAX_RANGES), 2);
    CHECK_INT(rg[1].start, 999);

    /* overlapping and touching neighbours merge, in either order */
    CHECK_INT(hd_range_parse("bytes=0-10,5-20", 1000, rg, HD_MAX_RANGES), 1);
    CHECK_INT(rg[0].start, 0);
    CHECK_INT(rg[0].end, 20);
    CHECK_INT(hd_range_parse("bytes=10-19,0-9", 1000, rg, HD_MAX_RANGES), 1);
    CHECK_INT(rg[0].start, 0);
    CHECK_INT(rg[0].end, 19);
    CHECK_INT(hd_range_parse("bytes=0-1,5-6,0-1", 1000, rg, HD_MAX_RANGES), 3);
    /* unmerged overlaps adding up to more than the file: ignored */
    CHECK_INT(hd_range_parse("bytes=0-599,700-799,100-699", 1000, rg, HD_MAX_RANGES),
              HD_RANGE_IGNORE);

    /* invalid: the header is ignored */
    const char *bad[] = {"bytes=abc", "items=1-2",   "bytes=5-3",  "bytes=-",       "bytes=",
                         "bytes 0-1", "bytes=1-2x",  "bytes=1--2", "bytes=0-1;2-3", "bytes=,",
                         "",          "bytes=0-1,x", "bytesx=0-1", "bytes=+1-2"};
    for (size_t i = 0; i < HD_ARRAY_SIZE(bad); i++) {
        int n = hd_range_parse(bad[i], 1000, rg, HD_MAX_RANGES);
        if (n != HD_RANGE_IGNORE) {
            fprintf(stderr, "range \"%s\" not ignored (%d)\n", bad[i], n);
        }
        CHECK_INT(n, HD_RANGE_IGNORE);
    }

    /* unsatisfiable */
    CHECK_INT(hd_range_parse("bytes=1000-", 1000, rg, HD_MAX_RANGES), HD_RANGE_UNSATISFIABLE);
    CHECK_INT(hd_range_parse("bytes=2000-3000", 1000, rg, HD_MAX_RANGES), HD_RANGE_UNSATISFIABLE);
    CHECK_INT(hd_range_parse("bytes=-0", 1000, rg, HD_MAX_RANGES), HD_RANGE_UNSATISFIABLE);
    CHECK_INT(hd_range_parse("bytes=0-", 0, rg, HD_MAX_RANGES), HD_RANGE_UNSATISFIABLE);
    CHECK_INT(hd_range_parse("bytes=-5", 0, rg, HD_MAX_RANGES), HD_RANGE_UNSATISFIABLE);
    CHECK_INT(hd_range_parse("bytes=99999999999999999999999-", 1000, rg, HD_MAX_RANGES),
              HD_RANGE_UNSATISFIABLE);
    /* one unsatisfiable range among satisfiable ones is dropped */
    CHECK_INT(hd_range_parse("bytes=2000-3000,0-0", 1000, rg, HD_MAX_RANGES), 1);
    CHECK_INT(rg[0].start, 0);
    CHECK_INT(rg[0].end, 0);
    /* huge numbers saturate */
    CHECK_INT(hd_range_parse("bytes=-99999999999999999999", 1000, rg, HD_MAX_RANGES), 1);
    CHECK_INT(rg[0].start, 0);
    CHECK_INT(hd_range_parse("bytes=1-99999999999999999999", 1000, rg, HD_MAX_RANGES), 1);
    CHECK_INT(rg[0].end, 999);

    /* MaxRanges: 200 specs are served, 201 are ignored */
    char spec[4096] = "bytes=";
    for (int i = 0; i < 201; i++) {
        char one[16];
        snprintf(one, sizeof(one), "%s%d-%d", i ? "," : "", 2 * i, 2 * i);
        strcat(spec, one);
        if (i == 199) {
            CHECK_INT(hd_range_parse(spec, 1000, rg, HD_MAX_RANGES), 200);
            CHECK_INT(rg[199].start, 398);
        }
    }
    CHECK_INT(hd_range_parse(spec, 1000, rg, HD_MAX_RANGES), HD_RANGE_IGNORE);
}

static void test_if_range(void)
{
    time_t t = 1600000000;
    char date[32];

    hd_http_date_format(t, date);
    CHECK(hd_if_range_matches("\"abc-123\"", "\"abc-123\"", t));
    CHECK(!hd_if_range_matches("\"abc-124\"", "\"abc-123\"", t));
    CHECK(!hd_if_range_matches("W/\"abc-123\"", "\"abc-123\"", t));
    CHECK(!hd_if_range_matches("\"abc-123\"", NULL, t));
    CHECK(hd_if_range_matches(date, "\"x\"", t));
    CHECK(!hd_if_range_matches(date, "\"x\"", t + 1));
    CHECK(!hd_if_range_matches("not a date", "\"x\"", t));
}

static void test_etag(void)
{
    hd_pool_t *p = hd_pool_create();
    struct stat st;

    memset(&st, 0, sizeof(st));
    st.st_size = 0x1a2b;
    st.st_mtim.tv_sec = 1600000000;
    st.st_mtim.tv_nsec = 123456789;
    CHECK_STR(hd_file_etag(p, &st), "\"1a2b-5af3107a5e240\"");
    st.st_size = 0;
    st.st_mtim.tv_sec = 1;
    st.st_mtim.tv_nsec = 0;
    CHECK_STR(hd_file_etag(p, &st), "\"0-f4240\"");
    hd_pool_destroy(p);
}

static int cond(hd_method_t m, const char *name, const char *value, const char *name2,
                const char *value2)
{
    hd_pool_t *p = hd_pool_create();
    hd_request_t *r = make_request(p, m, "/x");
    int rc;

    r->start.tv_sec = 1700000000;
    if (name) {
        hd_table_set(r->headers_in, name, value);
    }
    if (name2) {
        hd_table_set(r->headers_in, name2, value2);
    }
    rc = hd_meets_conditions(r, "\"10-abc\"", 1600000000);
    hd_pool_destroy(p);
    return rc;
}

static void test_conditions(void)
{
    char at[32], before[32], after[32], future[32];

    hd_http_date_format(1600000000, at);
    hd_http_date_format(1599999999, before);
    hd_http_date_format(1600000001, after);
    hd_http_date_format(1800000000, future);

    CHECK_INT(cond(HD_M_GET, NULL, NULL, NULL, NULL), HD_OK);

    /* If-Match: strong comparison, "*", lists */
    CHECK_INT(cond(HD_M_GET, "If-Match", "\"10-abc\"", NULL, NULL), HD_OK);
    CHECK_INT(cond(HD_M_GET, "If-Match", "*", NULL, NULL), HD_OK);
    CHECK_INT(cond(HD_M_GET, "If-Match", "\"a\", \"10-abc\"", NULL, NULL), HD_OK);
    CHECK_INT(cond(HD_M_GET, "If-Match", "\"other\"", NULL, NULL), 412);
    CHECK_INT(cond(HD_M_GET, "If-Match", "W/\"10-abc\"", NULL, NULL), 412);
    CHECK_INT(cond(HD_M_PUT, "If-Match", "\"other\"", NULL, NULL), 412);
    CHECK_INT(cond(HD_M_GET, "If-Match", "garbage", NULL, NULL), 412);
    /* If-Match wins over If-Unmodified-Since */
    CHECK_INT(cond(HD_M_GET, "If-Match", "\"10-abc\"", "If-Unmodified-Since", before), HD_OK);

    /* If-Unmodified-Since */
    CHECK_INT(cond(HD_M_GET, "If-Unmodified-Since", at, NULL, NULL), HD_OK);
    CHECK_INT(cond(HD_M_GET, "If-Unmodified-Since", after, NULL, NULL), HD_OK);
    CHECK_INT(cond(HD_M_GET, "If-Unmodified-Since", before, NULL, NULL), 412);
    CHECK_INT(cond(HD_M_GET, "If-Unmodified-Since", "yesterday", NULL, NULL), HD_OK);

    /* If-None-Match: weak comparison; 304 for GET/HEAD, 412 otherwise */
    CHECK_INT(cond(HD_M_GET, "If-None-Match", "\"10-abc\"", NULL, NULL), 304);
    CHECK_INT(cond(HD_M_HEAD, "If-None-Match", "W/\"10-abc\"", NULL, NULL), 304);
    CHECK_INT(cond(HD_M_GET, "If-None-Match", "\"x\" ,W/\"10-abc\"", NULL, NULL), 304);
    CHECK_INT(cond(HD_M_GET, "If-None-Match", "*", NULL, NULL), 304);
    CHECK_INT(cond(HD_M_GET, "If-None-Match", "\"other\"", NULL, NULL), HD_OK);
    CHECK_INT(cond(HD_M_POST, "If-None-Match", "\"10-abc\"", NULL, NULL), 412);
    CHECK_INT(cond(HD_M_DELETE, "If-None-Match", "*", NULL, NULL), 412);
    /* a failing If-None-Match makes If-Modified-Since irrelevant */
    CHECK_INT(cond(HD_M_GET, "If-None-Match", "\"other\"", "If-Modified-Since", at), HD_OK);

    /* If-Modified-Since: GET/HEAD only, ignored when invalid or in the future */
    CHECK_INT(cond(HD_M_GET, "If-Modified-Since", at, NULL, NULL), 304);
    CHECK_INT(cond(HD_M_HEAD, "If-Modified-Since", after, NULL, NULL), 304);
    CHECK_INT(cond(HD_M_GET, "If-Modified-Since", before, NULL, NULL), HD_OK);
    CHECK_INT(cond(HD_M_GET, "If-Modified-Since", future, NULL, NULL), HD_OK);
    CHECK_INT(cond(HD_M_GET, "If-Modified-Since", "Sat, 32 Sep 2020 00:00:00 GMT", NULL, NULL),
              HD_OK);
    CHECK_INT(cond(HD_M_POST, "If-Modified-Since", at, NULL, NULL), HD_OK);
    CHECK_INT(cond(HD_M_GET, "If-Modified-Since", "Sunday, 13-Sep-20 12:26:40 GMT", NULL, NULL),
              304);

    /* 412 from If-Match comes before 304 from If-None-Match */
    CHECK_INT(cond(HD_M_GET, "If-Match", "\"other\"", "If-None-Match", "\"10-abc\""), 412);
}

static void test_handler(void)
{
    hd_pool_t *p = hd_pool_create();
    hd_request_t *r;
    const char *etag;
    char *body;
    size_t len;

    write_file("f.txt", "0123456789abcdefghij"); /* 20 bytes */
    write_file("empty.txt", "");

    /* 200, whole file */
    r = mapped_request(p, HD_M_GET, "/f.txt");
    CHECK_INT(hd_static_handler(r), HD_OK);
    CHECK_INT(r->status, 200);
    CHECK_INT(r->content_length, 20);
    CHECK_STR(r->content_type, "text/plain");
    CHECK_STR(hd_table_get(r->headers_out, "Accept-Ranges"), "bytes");
    CHECK_INT(r->mtime, r->finfo.st_mtime);
    etag = hd_table_get(r->headers_out, "ETag");
    CHECK_STR(etag, hd_file_etag(p, &r->finfo));
    body = flatten_body(r, &len);
    CHECK_STR(body, "0123456789abcdefghij");

    /* HEAD: same headers */
    r = mapped_request(p, HD_M_HEAD, "/f.txt");
    CHECK_INT(hd_static_handler(r), HD_OK);
    CHECK_INT(r->content_length, 20);
    CHECK_STR(hd_table_get(r->headers_out, "ETag"), etag);

    /* single range: the range filter cuts it from the file buffer */
    r = mapped_request(p, HD_M_GET, "/f.txt");
    hd_table_set(r->headers_in, "Range", "bytes=2-5");
    CHECK_INT(hd_static_handler(r), HD_OK);
    body = respond(r, &len);
    CHECK_INT(r->status, 206);
    CHECK_INT(r->content_length, 4);
    CHECK_STR(hd_table_get(r->headers_out, "Content-Range"), "bytes 2-5/20");
    CHECK_STR(body, "2345");
    CHECK(conn.out->next != NULL && conn.out->next->buf->in_file);

    /* suffix range; HEAD ignores Range */
    r = mapped_request(p, HD_M_GET, "/f.txt");
    hd_table_set(r->headers_in, "Range", "bytes=-3");
    CHECK_INT(hd_static_handler(r), HD_OK);
    CHECK_STR(respond(r, &len), "hij");
    r = mapped_request(p, HD_M_HEAD, "/f.txt");
    hd_table_set(r->headers_in, "Range", "bytes=-3");
    CHECK_INT(hd_static_handler(r), HD_OK);
    respond(r, &len);
    CHECK_INT(r->status, 200);

    /* multipart/byteranges with an exact Content-Length */
    r = mapped_request(p, HD_M_GET, "/f.txt");
    hd_table_set(r->headers_in, "Range", "bytes=0-1,10-11");
    CHECK_INT(hd_static_handler(r), HD_OK);
    body = respond(r, &len);
    CHECK_INT(r->status, 206);
    CHECK(hd_table_get(r->headers_out, "Content-Range") == NULL);
    CHECK(strncmp(r->content_type, "multipart/byteranges; boundary=", 31) == 0);
    {
        const char *b = r->content_type + 31;
        char *expect = hd_psprintf(p,
                                   "\r\n--%s\r\nContent-Type: text/plain\r\n"
                                   "Content-Range: bytes 0-1/20\r\n\r\n01"
                                   "\r\n--%s\r\nContent-Type: text/plain\r\n"
                                   "Content-Range: bytes 10-11/20\r\n\r\nab"
                                   "\r\n--%s--\r\n",
                                   b, b, b);
        CHECK_STR(body, expect);
        CHECK_INT(r->content_length, (long long)len);
        CHECK(strlen(b) >= 16);
    }
    /* two requests get different boundaries */
    {
        const char *first = r->content_type;
        r = mapped_request(p, HD_M_GET, "/f.txt");
        hd_table_set(r->headers_in, "Range", "bytes=0-1,10-11");
        CHECK_INT(hd_static_handler(r), HD_OK);
        respond(r, &len);
        CHECK(strcmp(first, r->content_type) != 0);
    }

    /* unsatisfiable: 416 with Content-Range and the error page */
    r = mapped_request(p, HD_M_GET, "/f.txt");
    hd_table_set(r->headers_in, "Range", "bytes=20-");
    CHECK_INT(hd_static_handler(r), HD_OK);
    body = respond(r, &len);
    CHECK_INT(r->status, 416);
    CHECK_STR(hd_table_get(r->headers_out, "Content-Range"), "bytes */20");
    CHECK(strstr(body, "416 Range Not Satisfiable") != NULL);
    CHECK(hd_table_get(r->headers_out, "ETag") == NULL);
    r = mapped_request(p, HD_M_GET, "/empty.txt");
    hd_table_set(r->headers_in, "Range", "bytes=0-");
    CHECK_INT(hd_static_handler(r), HD_OK);
    respond(r, &len);
    CHECK_INT(r->status, 416);
    CHECK_STR(hd_table_get(r->headers_out, "Content-Range"), "bytes */0");

    /* invalid Range: ignored */
    r = mapped_request(p, HD_M_GET, "/f.txt");
    hd_table_set(r->headers_in, "Range", "items=1-2");
    CHECK_INT(hd_static_handler(r), HD_OK);
    CHECK_STR(respond(r, &len), "0123456789abcdefghij");
    CHECK_INT(r->status, 200);
    CHECK_INT(r->content_length, 20);

    /* If-Range: a matching ETag keeps the range, another one drops it */
    r = mapped_request(p, HD_M_GET, "/f.txt");
    hd_table_set(r->headers_in, "Range", "bytes=0-0");
    hd_table_set(r->headers_in, "If-Range", etag);
    CHECK_INT(hd_static_handler(r), HD_OK);
    respond(r, &len);
    CHECK_INT(r->status, 206);
    r = mapped_request(p, HD_M_GET, "/f.txt");
    hd_table_set(r->headers_in, "Range", "bytes=0-0");
    hd_table_set(r->headers_in, "If-Range", "\"stale\"");
    CHECK_INT(hd_static_handler(r), HD_OK);
    respond(r, &len);
    CHECK_INT(r->status, 200);
    CHECK_INT(r->content_length, 20);
    {
        char date[32];
        r = mapped_request(p, HD_M_GET, "/f.txt");
        hd_http_date_format(r->finfo.st_mtime, date);
        hd_table_set(r->headers_in, "Range", "bytes=0-0");
        hd_table_set(r->headers_in, "If-Range", hd_pstrdup(p, date));
        CHECK_INT(hd_static_handler(r), HD_OK);
        respond(r, &len);
        CHECK_INT(r->status, 206);
    }

    /* conditionals */
    r = mapped_request(p, HD_M_GET, "/f.txt");
    hd_table_set(r->headers_in, "If-None-Match", etag);
    CHECK_INT(hd_static_handler(r), HD_OK);
    CHECK_INT(r->status, 304);
    CHECK(r->body == NULL);
    CHECK_STR(hd_table_get(r->headers_out, "ETag"), etag);
    r = mapped_request(p, HD_M_GET, "/f.txt");
    hd_table_set(r->headers_in, "If-Match", "\"nope\"");
    CHECK_INT(hd_static_handler(r), 412);

    /* methods and errors */
    r = mapped_request(p, HD_M_PUT, "/f.txt");
    CHECK_INT(hd_static_handler(r), 405);
    CHECK_STR(hd_table_get(r->headers_out, "Allow"), "GET, HEAD, OPTIONS");
    r = mapped_request(p, HD_M_POST, "/f.txt");
    CHECK_INT(hd_static_handler(r), 405);
    r = mapped_request(p, HD_M_DELETE, "/missing.txt");
    CHECK_INT(hd_static_handler(r), 405);
    r = mapped_request(p, HD_M_POST, "/missing.txt");
    CHECK_INT(hd_static_handler(r), 404);
    r = mapped_request(p, HD_M_GET, "/missing.txt");
    CHECK(!r->finfo_valid);
    CHECK_INT(hd_static_handler(r), 404);
    r = mapped_request(p, HD_M_GET, "/f.txt/");
    CHECK_INT(hd_static_handler(r), 404);
    r = mapped_request(p, HD_M_GET, "/");
    CHECK_INT(hd_static_handler(r), 403);

    hd_pool_destroy(p);
}

static void test_translate_and_symlinks(void)
{
    hd_pool_t *p = hd_pool_create();
    hd_request_t *r = make_request(p, HD_M_GET, "/a/b.html");
    const char *target = hd_psprintf(p, "%s/real", docroot);
    const char *link = hd_psprintf(p, "%s/linked", docroot);

    CHECK_INT(hd_core_translate(r), HD_OK);
    CHECK_STR(r->filename, hd_psprintf(p, "%s/a/b.html", docroot));
    CHECK_STR(r->context_root, docroot);

    make_dir("real");
    write_file("real/in.txt", "x");
    CHECK_INT(symlink(target, link), 0);

    core_dconf.options = HD_OPT_FOLLOWSYMLINKS;
    r = mapped_request(p, HD_M_GET, "/linked/in.txt");
    CHECK(r->finfo_valid);

    core_dconf.options = HD_OPT_NONE;
    r = make_request(p, HD_M_GET, "/linked/in.txt");
    hd_core_translate(r);
    CHECK_INT(hd_core_map_to_storage(r), 403);
    r = make_request(p, HD_M_GET, "/linked");
    hd_core_translate(r);
    CHECK_INT(hd_core_map_to_storage(r), 403);
    /* no link on the way: fine, and a missing file is still not an error */
    r = mapped_request(p, HD_M_GET, "/real/in.txt");
    CHECK(r->finfo_valid);
    r = mapped_request(p, HD_M_GET, "/real/nothing/here");
    CHECK(!r->finfo_valid);

    /* the link and its target have the same owner here */
    core_dconf.options = HD_OPT_SYMLINKS_IF_OWNER;
    r = mapped_request(p, HD_M_GET, "/linked/in.txt");
    CHECK(r->finfo_valid);

    core_dconf.options = HD_OPT_FOLLOWSYMLINKS | HD_OPT_INDEXES;
    hd_pool_destroy(p);
}

static const hd_command_t *find_cmd(const hd_module_t *m, const char *name)
{
    for (const hd_command_t *c = m->commands; c && c->name; c++) {
        if (strcmp(c->name, name) == 0) {
            return c;
        }
    }
    return NULL;
}

static const char *run_cmd(const hd_module_t *m, const char *name, void *mconfig, int argc,
                           const char **argv)
{
    const hd_command_t *c = find_cmd(m, name);
    hd_cmd_parms_t cmd;

    CHECK(c != NULL);
    if (c == NULL) {
        return "no such command";
    }
    memset(&cmd, 0, sizeof(cmd));
    cmd.server = &server;
    cmd.pool = server.pool;
    cmd.temp_pool = server.pool;
    cmd.cmd = c;
    cmd.module = (hd_module_t *)m;
    cmd.file = "test";
    cmd.line = 1;
    cmd.context = HD_CTX_MAIN;
    return c->fn(&cmd, mconfig, argc, (char **)argv);
}

static void setup_mime(void)
{
    const char *slash = strrchr(__FILE__, '/');
    const char *dir, *fixture;

    /* the fixture sits beside this file; __FILE__ may be relative */
    dir = slash ? hd_pstrndup(server.pool, __FILE__, (size_t)(slash - __FILE__)) : ".";
    if (dir[0] != '/') {
        char cwd[PATH_MAX];
        CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
        dir = hd_psprintf(server.pool, "%s/%s", cwd, dir);
    }
    fixture = hd_psprintf(server.pool, "%s/conf/mime.types.test", dir);
    if (access(fixture, R_OK) != 0) {
        /* ctest runs the tests in tests/unit */
        char cwd[PATH_MAX];
        CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
        fixture = hd_psprintf(server.pool, "%s/conf/mime.types.test", cwd);
    }
    const char *argv[] = {fixture};
    void *sc = hd_mime_module.create_server_config(server.pool, &server);
    server.module_config[hd_mime_module.index] = sc;
    CHECK(run_cmd(&hd_mime_module, "TypesConfig", sc, 1, argv) == NULL);
    CHECK_INT(hd_mime_module.post_config(&server), HD_OK);
    server.dir_default[hd_mime_module.index] = hd_mime_module.create_dir_config(server.pool, NULL);
}

static void test_mime(void)
{
    hd_pool_t *p = hd_pool_create();
    hd_request_t *r = make_request(p, HD_M_GET, "/");

    CHECK_STR(hd_mime_lookup(r, "/x/a.html"), "text/html");
    CHECK_STR(hd_mime_lookup(r, "A.HTM"), "text/html");
    CHECK_STR(hd_mime_lookup(r, "x.tar.gz"), "application/gzip");
    CHECK_STR(hd_mime_lookup(r, "x.tar"), "application/x-tar");
    CHECK_STR(hd_mime_lookup(r, "page.html.en"), "text/html");
    CHECK_STR(hd_mime_lookup(r, "a.gz.unknown"), "application/gzip");
    CHECK_STR(hd_mime_lookup(r, "pic.png"), "image/png");
    CHECK_STR(hd_mime_lookup(r, "data.json"), "application/json");
    CHECK_STR(hd_mime_lookup(r, "x.dup"), "text/x-dup-later");
    CHECK_STR(hd_mime_lookup(r, "x.crlf"), "text/x-crlf");
    CHECK_STR(hd_mime_lookup(r, "x.crlf2"), "text/x-crlf2");
    CHECK(hd_mime_lookup(r, "photo.jpg") == NULL);
    CHECK(hd_mime_lookup(r, "noext") == NULL);
    CHECK(hd_mime_lookup(r, "html") == NULL);
    CHECK(hd_mime_lookup(r, "/d.html/file") == NULL);
    CHECK(hd_mime_lookup(r, "trailing.") == NULL);
    CHECK(hd_mime_lookup(r, "a..") == NULL);

    /* AddType at server level, then a section that overrides it */
    void *base = server.dir_default[hd_mime_module.index];
    void *sect = hd_mime_module.create_dir_config(server.pool, "/sect");
    const char *a1[] = {"text/x-server", ".SRV"};
    const char *a2[] = {"application/x-custom", "html"};
    const char *a3[] = {"text/x-newer", "srv"};
    const char *a4[] = {"text/x-bad", "."};
    CHECK(run_cmd(&hd_mime_module, "AddType", base, 2, a1) == NULL);
    CHECK(run_cmd(&hd_mime_module, "AddType", sect, 2, a2) == NULL);
    CHECK(run_cmd(&hd_mime_module, "AddType", base, 2, a4) != NULL);
    CHECK_STR(hd_mime_lookup(r, "a.srv"), "text/x-server");
    CHECK_STR(hd_mime_lookup(r, "a.html"), "text/html");

    r->dir_config = hd_pcalloc(p, sizeof(server.dir_default));
    memcpy(r->dir_config, server.dir_default, sizeof(server.dir_default));
    r->dir_config[hd_mime_module.index] = hd_mime_module.merge_dir_config(p, base, sect);
    CHECK_STR(hd_mime_lookup(r, "a.html"), "application/x-custom");
    CHECK_STR(hd_mime_lookup(r, "a.srv"), "text/x-server");
    CHECK_STR(hd_mime_lookup(r, "a.css"), "text/css");
    /* a later AddType wins, here in the inner section */
    CHECK(run_cmd(&hd_mime_module, "AddType", sect, 2, a3) == NULL);
    r->dir_config[hd_mime_module.index] = hd_mime_module.merge_dir_config(p, base, sect);
    CHECK_STR(hd_mime_lookup(r, "a.srv"), "text/x-newer");

    /* the type checker: regular files only */
    write_file("t.css", "body{}");
    r = mapped_request(p, HD_M_GET, "/t.css");
    CHECK_STR(r->content_type, "text/css");
    r = make_request(p, HD_M_GET, "/");
    hd_core_translate(r);
    hd_core_map_to_storage(r);
    CHECK_INT(hd_mime_module.type_checker(r), HD_DECLINED);
    CHECK(r->content_type == NULL);

    /* a missing types file fails post_config */
    hd_server_t s2;
    memset(&s2, 0, sizeof(s2));
    s2.pool = p;
    s2.server_root = docroot;
    const char *argv[] = {"/nonexistent/mime.types"};
    void *sc2 = hd_mime_module.create_server_config(p, &s2);
    s2.module_config[hd_mime_module.index] = sc2;
    CHECK(run_cmd(&hd_mime_module, "TypesConfig", sc2, 1, argv) == NULL);
    CHECK_INT(hd_mime_module.post_config(&s2), HD_ERROR);

    hd_pool_destroy(p);
}

static void test_dir(void)
{
    hd_pool_t *p = hd_pool_create();
    hd_request_t *r;
    const char *const *names;
    void *base = hd_dir_module.create_dir_config(server.pool, NULL);
    void *sect = hd_dir_module.create_dir_config(server.pool, "/x");
    void *off = hd_dir_module.create_dir_config(server.pool, "/y");

    /* DirectoryIndex: default, lists that add up, replacement, disabled */
    server.dir_default[hd_dir_module.index] = base;
    r = make_request(p, HD_M_GET, "/");
    CHECK_INT(hd_dir_index_names(r, &names), 1);
    CHECK_STR(names[0], "index.html");
    const char *i1[] = {"index.htm", "home.html"};
    const char *i2[] = {"default.html"};
    const char *i3[] = {"disabled"};
    CHECK(run_cmd(&hd_dir_module, "DirectoryIndex", base, 2, i1) == NULL);
    CHECK(run_cmd(&hd_dir_module, "DirectoryIndex", base, 1, i2) == NULL);
    CHECK_INT(hd_dir_index_names(r, &names), 3);
    CHECK_STR(names[2], "default.html");
    CHECK(run_cmd(&hd_dir_module, "DirectoryIndex", sect, 1, i2) == NULL);
    CHECK(run_cmd(&hd_dir_module, "DirectoryIndex", off, 1, i3) == NULL);
    r->dir_config = hd_pcalloc(p, sizeof(server.dir_default));
    memcpy(r->dir_config, server.dir_default, sizeof(server.dir_default));
    r->dir_config[hd_dir_module.index] = hd_dir_module.merge_dir_config(p, base, sect);
    CHECK_INT(hd_dir_index_names(r, &names), 1);
    CHECK_STR(names[0], "default.html");
    r->dir_config[hd_dir_module.index] = hd_dir_module.merge_dir_config(p, base, off);
    CHECK_INT(hd_dir_index_names(r, &names), 0);
    r->dir_config[hd_dir_module.index] =
        hd_dir_module.merge_dir_config(p, base, hd_dir_module.create_dir_config(p, "/z"));
    CHECK_INT(hd_dir_index_names(r, &names), 3);
    server.dir_default[hd_dir_module.index] = hd_dir_module.create_dir_config(server.pool, NULL);

    /* no trailing slash: 301 to the absolute URL with it, query kept */
    make_dir("list");
    make_dir("list/sub dir");
    write_file("list/b&<x>.txt", "hello");
    write_file("list/a.txt", "0123456789012345678901234567890123456789");
    write_file("list/.hidden", "");
    r = mapped_request(p, HD_M_GET, "/list");
    hd_table_set(r->headers_in, "Host", "example.com:8080");
    r->hostname = "example.com:8080";
    r->args = "a=1";
    CHECK_INT(hd_dir_module.fixups(r), 301);
    CHECK_STR(hd_table_get(r->headers_out, "Location"), "http://example.com:8080/list/?a=1");
    r = mapped_request(p, HD_M_GET, "/list/sub dir");
    hd_table_set(r->headers_in, "Host", "bad host/");
    r->hostname = "bad host/";
    CHECK_INT(hd_dir_module.fixups(r), 301);
    CHECK_STR(hd_table_get(r->headers_out, "Location"), "http://srv.test/list/sub%20dir/");

    /* no index file: fixups decline, the handler lists (Indexes) */
    core_dconf.options = HD_OPT_FOLLOWSYMLINKS | HD_OPT_INDEXES;
    r = mapped_request(p, HD_M_GET, "/list/");
    CHECK_INT(hd_dir_module.fixups(r), HD_DECLINED);
    CHECK_INT(hd_dir_module.handler(r), HD_OK);
    CHECK_INT(r->status, 200);
    CHECK_STR(r->content_type, "text/html;charset=UTF-8");
    {
        size_t len;
        char *body = flatten_body(r, &len);
        CHECK_INT(r->content_length, (long long)len);
        CHECK(strstr(body, "<title>Index of /list</title>") != NULL);
        CHECK(strstr(body, "<a href=\"../\">Parent Directory</a>") != NULL);
        CHECK(strstr(body, "<a href=\"sub%20dir/\">sub dir/</a>") != NULL);
        CHECK(strstr(body, "<a href=\"b&amp;%3Cx%3E.txt\">b&amp;&lt;x&gt;.txt</a>") != NULL);
        CHECK(strstr(body, ">.hidden</a>") != NULL);
        CHECK(strstr(body, "\"./\"") == NULL);
        CHECK(strstr(body, "\"../\">..") == NULL);
        /* sorted by name: ".hidden" < "a.txt" < "b&..." < "sub dir" */
        char *h = strstr(body, ".hidden"), *a = strstr(body, "a.txt"), *b = strstr(body, "b&amp;");
        char *s = strstr(body, "sub dir/");
        CHECK(h && a && b && s && h < a && a < b && b < s);
        CHECK(strstr(body, ">40</td>") != NULL);
    }
    /* the root has no parent link */
    r = mapped_request(p, HD_M_GET, "/");
    CHECK_INT(hd_dir_module.handler(r), HD_OK);
    {
        size_t len;
        char *body = flatten_body(r, &len);
        CHECK(strstr(body, "Parent Directory") == NULL);
        CHECK(strstr(body, "<title>Index of /</title>") != NULL);
    }

    /* other methods: 405; without Indexes: 403 */
    r = mapped_request(p, HD_M_POST, "/list/");
    CHECK_INT(hd_dir_module.handler(r), 405);
    CHECK_STR(hd_table_get(r->headers_out, "Allow"), "GET, HEAD, OPTIONS");
    core_dconf.options = HD_OPT_FOLLOWSYMLINKS;
    r = mapped_request(p, HD_M_GET, "/list/");
    CHECK_INT(hd_dir_module.handler(r), 403);
    /* files are not the module's business */
    r = mapped_request(p, HD_M_GET, "/list/a.txt");
    CHECK_INT(hd_dir_module.fixups(r), HD_DECLINED);
    CHECK_INT(hd_dir_module.handler(r), HD_DECLINED);

    core_dconf.options = HD_OPT_FOLLOWSYMLINKS | HD_OPT_INDEXES;
    hd_pool_destroy(p);
}

int main(void)
{
    char tmpl[] = "/tmp/hd_test_static_XXXXXX";

    hd_modules_init();
    hd_log_set_level(HD_LOG_EMERG);
    CHECK(mkdtemp(tmpl) != NULL);
    CHECK(realpath(tmpl, docroot) != NULL);

    server.pool = hd_pool_create();
    server.server_root = docroot;
    server.module_config[hd_core_module.index] = &core_sconf;
    core_sconf.document_root = docroot;
    core_sconf.server_name = "srv.test";
    core_sconf.server_banner = "httpd";
    core_dconf.options = HD_OPT_FOLLOWSYMLINKS | HD_OPT_INDEXES;
    core_dconf.enable_sendfile = -1;
    core_dconf.limit_request_body = -1;
    server.dir_default[hd_core_module.index] = &core_dconf;
    server.dir_default[hd_dir_module.index] = hd_dir_module.create_dir_config(server.pool, NULL);
    snprintf(conn.client_ip, sizeof(conn.client_ip), "127.0.0.1");
    conn.local_port = 80;
    conn.server = &server;
    hd_modules_build_hooks(&server);

    setup_mime();
    RUN(test_range_parse);
    RUN(test_if_range);
    RUN(test_etag);
    RUN(test_conditions);
    RUN(test_handler);
    RUN(test_translate_and_symlinks);
    RUN(test_mime);
    RUN(test_dir);

    nftw(docroot, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    hd_pool_destroy(server.pool);
    TEST_DONE();
}
