/*
 * Request-head parser and chunked decoder: valid heads fed whole, byte by
 * byte and split at every offset, and every malformed case with its status.
 */
#include "http_parser.h"
#include "test.h"

#define MAXF 256

static const hd_http_limits_t deflim = { 8190, 8190, 100 };

typedef struct {
    hd_http_parser_t p;
    hd_http_field_t f[MAXF];
    const char *buf;
} parsed_t;

/* Copies buf[off, off+len) into one of a few rotating static strings. */
static const char *sub(const char *buf, uint32_t off, uint32_t len)
{
    static char out[8][9000];
    static int k;
    char *o = out[k++ % 8];
    if (len >= sizeof(out[0])) {
        len = sizeof(out[0]) - 1;
    }
    memcpy(o, buf + off, len);
    o[len] = '\0';
    return o;
}

static int parse_lim(parsed_t *r, const char *s, size_t n, const hd_http_limits_t *lim)
{
    hd_http_parser_init(&r->p, r->f);
    r->buf = s;
    return hd_http_parse_head(&r->p, s, n, lim);
}

static int parse(parsed_t *r, const char *s)
{
    return parse_lim(r, s, strlen(s), &deflim);
}

static int status_of(const char *s)
{
    parsed_t r;
    return parse(&r, s);
}

/*
 * Feeds s one more byte per call, each time in a freshly allocated copy, so
 * that any pointer kept across calls would show up under ASAN.
 */
static int parse_bytewise(parsed_t *r, const char *s, size_t n, const hd_http_limits_t *lim)
{
    int rc = HD_AGAIN;
    hd_http_parser_init(&r->p, r->f);
    for (size_t i = 1; i <= n && rc == HD_AGAIN; i++) {
        char *copy = malloc(i);
        memcpy(copy, s, i);
        rc = hd_http_parse_head(&r->p, copy, i, lim);
        free(copy);
    }
    r->buf = s;
    return rc;
}

static bool same_result(const parsed_t *a, const parsed_t *b)
{
    const hd_http_parser_t *x = &a->p, *y = &b->p;
    if (x->method != y->method || x->method_off != y->method_off
        || x->method_len != y->method_len || x->target_off != y->target_off
        || x->target_len != y->target_len || x->path_off != y->path_off
        || x->path_len != y->path_len || x->query_off != y->query_off
        || x->query_len != y->query_len || x->host_off != y->host_off
        || x->host_len != y->host_len || x->line_off != y->line_off
        || x->line_len != y->line_len || x->http_major != y->http_major
        || x->http_minor != y->http_minor || x->absolute_form != y->absolute_form
        || x->asterisk_form != y->asterisk_form || x->nfields != y->nfields
        || x->head_len != y->head_len) {
        return false;
    }
    return memcmp(a->f, b->f, x->nfields * sizeof(hd_http_field_t)) == 0;
}

#define FNAME(r, i) sub((r).buf, (r).f[i].name_off, (r).f[i].name_len)
#define FVALUE(r, i) sub((r).buf, (r).f[i].value_off, (r).f[i].value_len)

static void test_simple_get(void)
{
    parsed_t r;
    const char *s = "GET /index.html HTTP/1.1\r\nHost: example.com\r\n\r\n";
    CHECK_INT(parse(&r, s), HD_OK);
    CHECK_INT(r.p.method, HD_M_GET);
    CHECK_STR(sub(s, r.p.method_off, r.p.method_len), "GET");
    CHECK_STR(sub(s, r.p.target_off, r.p.target_len), "/index.html");
    CHECK_STR(sub(s, r.p.path_off, r.p.path_len), "/index.html");
    CHECK_STR(sub(s, r.p.line_off, r.p.line_len), "GET /index.html HTTP/1.1");
    CHECK_INT(r.p.query_off, 0);
    CHECK_INT(r.p.query_len, 0);
    CHECK_INT(r.p.host_len, 0);
    CHECK_INT(r.p.http_major, 1);
    CHECK_INT(r.p.http_minor, 1);
    CHECK(!r.p.absolute_form && !r.p.asterisk_form);
    CHECK_INT(r.p.nfields, 1);
    CHECK_STR(FNAME(r, 0), "Host");
    CHECK_STR(FVALUE(r, 0), "example.com");
    CHECK_INT(r.p.head_len, strlen(s));
    /* calling again after completion keeps the answer */
    CHECK_INT(hd_http_parse_head(&r.p, s, strlen(s), &deflim), HD_OK);

    /* an incomplete head asks for more */
    CHECK_INT(parse_lim(&r, s, strlen(s) - 1, &deflim), HD_AGAIN);
    CHECK_INT(parse_lim(&r, s, 0, &deflim), HD_AGAIN);
}

static void test_body_not_consumed(void)
{
    parsed_t r;
    const char *s = "POST /f HTTP/1.0\r\nContent-Length: 3\r\n\r\nabcGET";
    CHECK_INT(parse(&r, s), HD_OK);
    CHECK_INT(r.p.method, HD_M_POST);
    CHECK_INT(r.p.http_minor, 0);
    CHECK_INT(r.p.head_len, strlen(s) - 6);
}

static void test_many_headers(void)
{
    char buf[8192];
    size_t n = (size_t)snprintf(buf, sizeof(buf), "GET / HTTP/1.1\r\n");
    parsed_t r;
    for (int i = 0; i < 100; i++) {
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "X-H%d: v%d\r\n", i, i);
    }
    n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\r\n");
    CHECK_INT(parse(&r, buf), HD_OK);
    CHECK_INT(r.p.nfields, 100);
    CHECK_STR(FNAME(r, 0), "X-H0");
    CHECK_STR(FVALUE(r, 57), "v57");
    CHECK_STR(FNAME(r, 99), "X-H99");
    CHECK_INT(r.p.head_len, n);
}

static void test_value_trimming(void)
{
    parsed_t r;
    const char *s = "GET / HTTP/1.1\r\nA:   a  b \t \r\nB:\r\nC: \t\r\nD:x\r\n"
                    "E: caf\xc3\xa9\r\n\r\n";
    CHECK_INT(parse(&r, s), HD_OK);
    CHECK_INT(r.p.nfields, 5);
    CHECK_STR(FVALUE(r, 0), "a  b");
    CHECK_INT(r.f[1].value_len, 0);
    CHECK_INT(r.f[2].value_len, 0);
    CHECK_STR(FVALUE(r, 3), "x");
    CHECK_STR(FVALUE(r, 4), "caf\xc3\xa9");   /* obs-text is allowed */
}

static void test_field_is(void)
{
    parsed_t r;
    const char *s = "GET / HTTP/1.1\r\ncontent-LENGTH: 0\r\n\r\n";
    CHECK_INT(parse(&r, s), HD_OK);
    CHECK(hd_http_field_is(s, &r.f[0], "Content-Length"));
    CHECK(hd_http_field_is(s, &r.f[0], "content-length"));
    CHECK(!hd_http_field_is(s, &r.f[0], "Content-Lengt"));
    CHECK(!hd_http_field_is(s, &r.f[0], "Content-Length2"));
    CHECK(!hd_http_field_is(s, &r.f[0], "Host"));
}

static void test_absolute_form(void)
{
    parsed_t r;
    const char *s = "GET http://Example.com:8080/a/b?x=1 HTTP/1.1\r\n\r\n";
    CHECK_INT(parse(&r, s), HD_OK);
    CHECK(r.p.absolute_form);
    CHECK_STR(sub(s, r.p.host_off, r.p.host_len), "Example.com:8080");
    CHECK_STR(sub(s, r.p.path_off, r.p.path_len), "/a/b");
    CHECK_STR(sub(s, r.p.query_off, r.p.query_len), "x=1");
    CHECK_STR(sub(s, r.p.target_off, r.p.target_len), "http://Example.com:8080/a/b?x=1");

    s = "GET HTTPS://h HTTP/1.1\r\n\r\n";
    CHECK_INT(parse(&r, s), HD_OK);
    CHECK(r.p.absolute_form);
    CHECK_STR(sub(s, r.p.host_off, r.p.host_len), "h");
    CHECK_INT(r.p.path_len, 0);   /* empty path: the caller reads "/" */
    CHECK_INT(r.p.query_off, 0);

    s = "GET http://[::1]?q HTTP/1.1\r\n\r\n";
    CHECK_INT(parse(&r, s), HD_OK);
    CHECK_STR(sub(s, r.p.host_off, r.p.host_len), "[::1]");
    CHECK_INT(r.p.path_len, 0);
    CHECK_STR(sub(s, r.p.query_off, r.p.query_len), "q");

    CHECK_INT(status_of("GET ftp://h/ HTTP/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of("GET httpx://h/ HTTP/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of("GET http://user@h/ HTTP/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of("GET http:/h/ HTTP/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of("GET http:h HTTP/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of("GET http:///x HTTP/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of("GET http:// HTTP/1.1\r\n\r\n"), 400);
}

static void test_asterisk_and_connect(void)
{
    parsed_t r;
    const char *s = "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n";
    CHECK_INT(parse(&r, s), HD_OK);
    CHECK_INT(r.p.method, HD_M_OPTIONS);
    CHECK(r.p.asterisk_form);
    CHECK_STR(sub(s, r.p.target_off, r.p.target_len), "*");
    CHECK_INT(r.p.path_len, 0);
    CHECK_INT(status_of("GET * HTTP/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of("OPTIONS *x HTTP/1.1\r\n\r\n"), 400);

    s = "CONNECT example.com:443 HTTP/1.1\r\n\r\n";
    CHECK_INT(parse(&r, s), HD_OK);
    CHECK_INT(r.p.method, HD_M_CONNECT);
    CHECK(!r.p.absolute_form);
    CHECK_STR(sub(s, r.p.host_off, r.p.host_len), "example.com:443");
    CHECK_STR(sub(s, r.p.target_off, r.p.target_len), "example.com:443");
    CHECK_INT(r.p.path_len, 0);
    CHECK_INT(status_of("CONNECT example.com HTTP/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of("CONNECT example.com: HTTP/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of("CONNECT :443 HTTP/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of("CONNECT /x HTTP/1.1\r\n\r\n"), 400);
    /* authority-form for anything but CONNECT */
    CHECK_INT(status_of("GET example.com:443 HTTP/1.1\r\n\r\n"), 400);
}

static void test_query(void)
{
    parsed_t r;
    const char *s = "GET /a?b=1&c=%20?d HTTP/1.1\r\n\r\n";
    CHECK_INT(parse(&r, s), HD_OK);
    CHECK_STR(sub(s, r.p.path_off, r.p.path_len), "/a");
    CHECK_STR(sub(s, r.p.query_off, r.p.query_len), "b=1&c=%20?d");

    s = "GET /a? HTTP/1.1\r\n\r\n";
    CHECK_INT(parse(&r, s), HD_OK);
    CHECK_STR(sub(s, r.p.path_off, r.p.path_len), "/a");
    CHECK_INT(r.p.query_off, 7);   /* present but empty */
    CHECK_INT(r.p.query_len, 0);

    s = "GET /a HTTP/1.1\r\n\r\n";
    CHECK_INT(parse(&r, s), HD_OK);
    CHECK_INT(r.p.query_off, 0);

    /* bytes >= 0x80 and most punctuation are tolerated in a target */
    s = "GET /caf\xc3\xa9/{x}|\"#y HTTP/1.1\r\n\r\n";
    CHECK_INT(parse(&r, s), HD_OK);
    CHECK_STR(sub(s, r.p.path_off, r.p.path_len), "/caf\xc3\xa9/{x}|\"#y");
}

static void test_leading_crlf_and_bare_lf(void)
{
    parsed_t r;
    const char *s = "\r\n\r\nGET / HTTP/1.1\r\n\r\n";
    CHECK_INT(parse(&r, s), HD_OK);
    CHECK_INT(r.p.line_off, 4);
    CHECK_INT(r.p.method_off, 4);
    CHECK_STR(sub(s, r.p.line_off, r.p.line_len), "GET / HTTP/1.1");
    CHECK_INT(status_of("\n\nGET / HTTP/1.1\r\n\r\n"), HD_OK);
    CHECK_INT(status_of("\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\nGET / HTTP/1.1\r\n\r\n"), HD_OK);
    CHECK_INT(status_of("\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\nGET / HTTP/1.1\r\n\r\n"),
              400);
    CHECK_INT(status_of("\rGET / HTTP/1.1\r\n\r\n"), 400);

    /* the skipped lines count against the request-line limit */
    hd_http_limits_t lim = { 14, 100, 10 };
    s = "GET / HTTP/1.1\r\n\r\n";
    CHECK_INT(parse_lim(&r, s, strlen(s), &lim), HD_OK);
    s = "\r\nGET / HTTP/1.1\r\n\r\n";
    CHECK_INT(parse_lim(&r, s, strlen(s), &lim), 414);

    s = "GET / HTTP/1.0\nHost: x\nA: b \n\n";
    CHECK_INT(parse(&r, s), HD_OK);
    CHECK_INT(r.p.http_minor, 0);
    CHECK_INT(r.p.nfields, 2);
    CHECK_STR(FVALUE(r, 0), "x");
    CHECK_STR(FVALUE(r, 1), "b");
    CHECK_INT(r.p.head_len, strlen(s));
    /* mixed endings */
    CHECK_INT(status_of("GET / HTTP/1.1\nHost: x\r\n\n"), HD_OK);
}

static void test_methods(void)
{
    parsed_t r;
    char line[128];
    for (int m = 0; m < HD_M_OTHER; m++) {
        /* CONNECT takes only authority-form */
        snprintf(line, sizeof(line), "%s %s HTTP/1.1\r\n\r\n", hd_method_names[m],
                 m == HD_M_CONNECT ? "h:1" : "/");
        CHECK_INT(parse(&r, line), HD_OK);
        CHECK_INT(r.p.method, m);
    }
    CHECK(hd_method_names[HD_M_OTHER] == NULL);
    CHECK_INT(parse(&r, "get / HTTP/1.1\r\n\r\n"), HD_OK);
    CHECK_INT(r.p.method, HD_M_OTHER);
    CHECK_INT(parse(&r, "GETS / HTTP/1.1\r\n\r\n"), HD_OK);
    CHECK_INT(r.p.method, HD_M_OTHER);
    CHECK_INT(parse(&r, "M-SEARCH / HTTP/1.1\r\n\r\n"), HD_OK);
    CHECK_STR(sub(r.buf, r.p.method_off, r.p.method_len), "M-SEARCH");
    CHECK_INT(status_of("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA / HTTP/1.1\r\n\r\n"), HD_OK);
    CHECK_INT(status_of("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA / HTTP/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of("G@T / HTTP/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of("GE\x01T / HTTP/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of("G(T / HTTP/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of(" GET / HTTP/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of("GET  / HTTP/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of("GET\t/ HTTP/1.1\r\n\r\n"), 400);
}

static void test_versions(void)
{
    parsed_t r;
    CHECK_INT(status_of("GET /\r\n\r\n"), 400);           /* HTTP/0.9 */
    CHECK_INT(status_of("GET /\n"), 400);
    CHECK_INT(status_of("GET / \r\n\r\n"), 400);
    CHECK_INT(status_of("GET / HTTP/1.1 \r\n\r\n"), 400);
    CHECK_INT(status_of("GET / HTTP/1.10\r\n\r\n"), 400);
    CHECK_INT(status_of("GET / HTTP/11\r\n\r\n"), 400);
    CHECK_INT(status_of("GET / HTTP/1.\r\n\r\n"), 400);
    CHECK_INT(status_of("GET / http/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of("GET / HTTPS/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of("GET / HTTP/3.0\r\n\r\n"), 505);
    CHECK_INT(status_of("GET / HTTP/2.0\r\n\r\n"), 505);
    CHECK_INT(status_of("GET / HTTP/0.9\r\n\r\n"), 505);
    CHECK_INT(status_of("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 400);
    CHECK_INT(parse(&r, "GET / HTTP/1.2\r\n\r\n"), HD_OK);
    CHECK_INT(r.p.http_minor, 2);
    /* 505 still fills the request line, for the log */
    CHECK_INT(parse(&r, "GET / HTTP/3.0\r\n\r\n"), 505);
    CHECK_STR(sub(r.buf, r.p.line_off, r.p.line_len), "GET / HTTP/3.0");
}

static void test_bad_targets(void)
{
    CHECK_INT(status_of("GET /a b HTTP/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of("GET /a\x01 HTTP/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of("GET /a\x7f HTTP/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of("GET /a\tb HTTP/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of("GET /a?\x01 HTTP/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of("GET foo HTTP/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of("GET a/b HTTP/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of("GET ./a HTTP/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of("GET ?a HTTP/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of("GET %2F HTTP/1.1\r\n\r\n"), 400);
    CHECK_INT(status_of("GET  HTTP/1.1\r\n\r\n"), 400);
}

static void test_bad_fields(void)
{
    CHECK_INT(status_of("GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n"), 400);     /* obs-fold */
    CHECK_INT(status_of("GET / HTTP/1.1\r\nA: b\r\n\tc\r\n\r\n"), 400);
    CHECK_INT(status_of("GET / HTTP/1.1\r\n A: b\r\n\r\n"), 400);
    CHECK_INT(status_of("GET / HTTP/1.1\r\nA : b\r\n\r\n"), 400);          /* SP before ':' */
    CHECK_INT(status_of("GET / HTTP/1.1\r\nA\t: b\r\n\r\n"), 400);
    CHECK_INT(status_of("GET / HTTP/1.1\r\n: b\r\n\r\n"), 400);            /* empty name */
    CHECK_INT(status_of("GET / HTTP/1.1\r\nAb\r\n\r\n"), 400);             /* no colon */
    CHECK_INT(status_of("GET / HTTP/1.1\r\nA(b: c\r\n\r\n"), 400);
    CHECK_INT(status_of("GET / HTTP/1.1\r\nA: b\x01\r\n\r\n"), 400);       /* CTL */
    CHECK_INT(status_of("GET / HTTP/1.1\r\nA: \x1f\r\n\r\n"), 400);
    CHECK_INT(status_of("GET / HTTP/1.1\r\nA: b\x7f\r\n\r\n"), 400);
    CHECK_INT(status_of("GET / HTTP/1.1\r\nA: b\rc\r\n\r\n"), 400);        /* bare CR */
    CHECK_INT(status_of("GET / HTTP/1.1\r\nA: b\r\n\rX"), 400);
    CHECK_INT(status_of("GET / HTTP/1.1\rHost: x\r\n\r\n"), 400);

    /* NUL needs an explicit length */
    static const char nul[] = "GET / HTTP/1.1\r\nA: b\0c\r\n\r\n";
    static const char nul2[] = "GET / HTTP/1.1\r\nA\0: c\r\n\r\n";
    parsed_t r;
    CHECK_INT(parse_lim(&r, nul, sizeof(nul) - 1, &deflim), 400);
    CHECK_INT(parse_lim(&r, nul2, sizeof(nul2) - 1, &deflim), 400);
    /* the error sticks */
    CHECK_INT(hd_http_parse_head(&r.p, nul2, sizeof(nul2) - 1, &deflim), 400);
}

static void test_garbage(void)
{
    static const char tls[] = "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03";
    static const char nul[] = "\0GET / HTTP/1.1\r\n\r\n";
    parsed_t r;
    CHECK_INT(parse_lim(&r, tls, sizeof(tls) - 1, &deflim), 400);
    CHECK_INT(parse_lim(&r, nul, sizeof(nul) - 1, &deflim), 400);
    CHECK_INT(status_of("\xff\xfe"), 400);
    CHECK_INT(status_of("{\"json\": 1}\r\n"), 400);
    CHECK_INT(status_of("GET"), HD_AGAIN);
}

static void test_limits(void)
{
    hd_http_limits_t lim = { 30, 20, 3 };
    parsed_t r;
    char big[20000];

    /* request line: exactly 30 bytes is fine, 31 is 414 */
    const char *ok30 = "GET /aaaaaaaaaaaaaaaa HTTP/1.1\r\n\r\n";
    CHECK_INT(strlen("GET /aaaaaaaaaaaaaaaa HTTP/1.1"), 30);
    CHECK_INT(parse_lim(&r, ok30, strlen(ok30), &lim), HD_OK);
    const char *long31 = "GET /aaaaaaaaaaaaaaaaa HTTP/1.1\r\n\r\n";
    CHECK_INT(parse_lim(&r, long31, strlen(long31), &lim), 414);
    /* without any CRLF: refused as soon as the limit is passed */
    CHECK_INT(parse_lim(&r, long31, 30, &lim), HD_AGAIN);
    CHECK_INT(parse_lim(&r, long31, 31, &lim), 414);

    /* the default limit, a line of 9000 bytes with and without CRLF */
    memcpy(big, "GET /", 5);
    memset(big + 5, 'a', 9000);
    CHECK_INT(parse_lim(&r, big, 9005, &deflim), 414);
    CHECK_INT(parse_lim(&r, big, 8190, &deflim), HD_AGAIN);
    memcpy(big + 9005, " HTTP/1.1\r\n\r\n", 14);
    CHECK_INT(parse_lim(&r, big, 9019, &deflim), 414);
    CHECK_INT(parse_bytewise(&r, big, 9019, &deflim), 414);
    CHECK_INT(r.p.pos, 8190);

    /* a field line: exactly 20 bytes is fine, 21 is 431 */
    CHECK_INT(strlen("X-Aaaaaaaa: bbbbbbbb"), 20);
    const char *f20 = "GET / HTTP/1.1\r\nX-Aaaaaaaa: bbbbbbbb\r\n\r\n";
    CHECK_INT(parse_lim(&r, f20, strlen(f20), &lim), HD_OK);
    const char *f21 = "GET / HTTP/1.1\r\nX-Aaaaaaaa: bbbbbbbbb\r\n\r\n";
    CHECK_INT(parse_lim(&r, f21, strlen(f21), &lim), 431);
    CHECK_INT(parse_lim(&r, f21, strlen(f21) - 4, &lim), 431);   /* no CRLF yet */
    /* trailing OWS still counts */
    const char *fws = "GET / HTTP/1.1\r\nX-Aaaaaaaa: b            \r\n\r\n";
    CHECK_INT(parse_lim(&r, fws, strlen(fws), &lim), 431);

    /* field count: 3 fine, 4 is 431 */
    const char *n3 = "GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n";
    CHECK_INT(parse_lim(&r, n3, strlen(n3), &lim), HD_OK);
    const char *n4 = "GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n";
    CHECK_INT(parse_lim(&r, n4, strlen(n4), &lim), 431);
    CHECK_INT(r.p.nfields, 3);

    /* the default field limit with a 9000-byte value */
    size_t n = (size_t)snprintf(big, sizeof(big), "GET / HTTP/1.1\r\nX: ");
    memset(big + n, 'v', 9000);
    memcpy(big + n + 9000, "\r\n\r\n", 5);
    CHECK_INT(parse(&r, big), 431);
}

static const char *complex_req =
    "\r\nPOST http://www.example.org:81/cgi-bin/x.cgi?a=b&c=%20 HTTP/1.1\r\n"
    "Host: www.example.org\r\n"
    "User-Agent:  curl/8.0 \t\r\n"
    "Accept: */*\n"
    "X-Empty:\r\n"
    "Cookie: a=1; b=\"x y\"\r\n"
    "Transfer-Encoding: chunked\r\n"
    "\r\n"
    "5\r\nhello\r\n0\r\n\r\n";

static void test_bytewise_and_splits(void)
{
    parsed_t whole, one, split;
    size_t n = strlen(complex_req);

    CHECK_INT(parse(&whole, complex_req), HD_OK);
    CHECK_INT(whole.p.method, HD_M_POST);
    CHECK_INT(whole.p.nfields, 6);
    CHECK_STR(FVALUE(whole, 1), "curl/8.0");
    CHECK_STR(FVALUE(whole, 4), "a=1; b=\"x y\"");
    CHECK_STR(sub(complex_req, whole.p.path_off, whole.p.path_len), "/cgi-bin/x.cgi");

    CHECK_INT(parse_bytewise(&one, complex_req, n, &deflim), HD_OK);
    CHECK(same_result(&whole, &one));

    int mismatches = 0;
    for (size_t k = 0; k <= n; k++) {
        hd_http_parser_init(&split.p, split.f);
        split.buf = complex_req;
        int rc = hd_http_parse_head(&split.p, complex_req, k, &deflim);
        if (k < whole.p.head_len && rc != HD_AGAIN) {
            mismatches++;
        }
        rc = hd_http_parse_head(&split.p, complex_req, n, &deflim);
        if (rc != HD_OK || !same_result(&whole, &split)) {
            mismatches++;
        }
    }
    CHECK_INT(mismatches, 0);

    /* a bad head fails the same way whatever the split */
    const char *bad = "GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n";
    for (size_t k = 1; k <= strlen(bad); k++) {
        hd_http_parser_init(&split.p, split.f);
        (void)hd_http_parse_head(&split.p, bad, k, &deflim);
        if (hd_http_parse_head(&split.p, bad, strlen(bad), &deflim) != 400) {
            mismatches++;
        }
    }
    CHECK_INT(mismatches, 0);
}

/* Feeds in[0, len) to the decoder in pieces of @p step bytes (0: all at once). */
static int chunk_feed(const char *in, size_t len, size_t step, char *out, size_t *outlen,
                      size_t *used)
{
    hd_chunked_t c;
    size_t off = 0, avail;
    int rc = HD_AGAIN;

    hd_chunked_init(&c);
    *outlen = 0;
    avail = step ? (step < len ? step : len) : len;
    while (off < len) {
        size_t cons, doff, dlen;
        rc = hd_chunked_parse(&c, in + off, avail - off, &cons, &doff, &dlen);
        memcpy(out + *outlen, in + off + doff, dlen);
        *outlen += dlen;
        off += cons;
        if (rc != HD_AGAIN) {
            break;
        }
        if (off == avail) {
            avail = step ? (avail + step < len ? avail + step : len) : len;
        }
    }
    *used = off;
    return rc;
}

static int chunk_status(const char *in)
{
    char out[4096];
    size_t outlen, used;
    return chunk_feed(in, strlen(in), 0, out, &outlen, &used);
}

static void test_chunked_valid(void)
{
    static const char body[] =
        "4;ext=1;q=\"a \\\"b\\\"\"\r\nWiki\r\n"
        "5 ; name ; n2 = v\r\npedia\r\n"
        "E\r\n in\r\n\r\nchunks.\r\n"
        "000\r\n"
        "Expires: Wed, 21 Oct 2015 07:28:00 GMT\r\n"
        "X-Sum:  ab\xc3\xa9\r\n"
        "\r\n"
        "NEXT";
    const char *want = "Wikipedia in\r\n\r\nchunks.";
    size_t len = sizeof(body) - 1;
    char out[256];
    size_t outlen, used;

    for (size_t step = 0; step <= len; step++) {
        int rc = chunk_feed(body, len, step, out, &outlen, &used);
        CHECK_INT(rc, HD_OK);
        CHECK_INT(used, len - 4);
        CHECK_INT(outlen, strlen(want));
        CHECK(outlen == strlen(want) && memcmp(out, want, outlen) == 0);
    }

    /* a run is returned per call, then HD_AGAIN; the tail waits for the next call */
    hd_chunked_t c;
    size_t cons, doff, dlen;
    hd_chunked_init(&c);
    CHECK_INT(hd_chunked_parse(&c, "3\r\nabc\r\n0\r\n\r\n", 13, &cons, &doff, &dlen), HD_AGAIN);
    CHECK_INT(cons, 6);
    CHECK_INT(doff, 3);
    CHECK_INT(dlen, 3);
    CHECK_INT(hd_chunked_parse(&c, "\r\n0\r\n\r\n", 7, &cons, &doff, &dlen), HD_OK);
    CHECK_INT(cons, 7);
    CHECK_INT(dlen, 0);
    CHECK_INT(hd_chunked_parse(&c, "x", 1, &cons, &doff, &dlen), HD_OK);
    CHECK_INT(cons, 0);

    /* the largest size int64 holds is accepted */
    CHECK_INT(chunk_status("7fffffffffffffff\r\n"), HD_AGAIN);
    CHECK_INT(chunk_status("0000000000000001\r\n"), HD_AGAIN);
    CHECK_INT(chunk_status("0\r\n\r\n"), HD_OK);
}

static void test_chunked_bad(void)
{
    CHECK_INT(chunk_status("x\r\n"), 400);
    CHECK_INT(chunk_status("4g\r\nabcd\r\n"), 400);
    CHECK_INT(chunk_status("-1\r\n"), 400);
    CHECK_INT(chunk_status("0x4\r\n"), 400);
    CHECK_INT(chunk_status("\r\n"), 400);
    CHECK_INT(chunk_status(" 4\r\n"), 400);
    CHECK_INT(chunk_status("4 \r\n"), 400);
    CHECK_INT(chunk_status("4\n"), 400);
    CHECK_INT(chunk_status("4\rx"), 400);
    /* overflow: 17 digits, and more than int64 */
    CHECK_INT(chunk_status("10000000000000000\r\n"), 400);
    CHECK_INT(chunk_status("00000000000000001\r\n"), 400);
    CHECK_INT(chunk_status("8000000000000000\r\n"), 400);
    CHECK_INT(chunk_status("ffffffffffffffff\r\n"), 400);
    /* missing CRLF after the data */
    CHECK_INT(chunk_status("3\r\nabcd\r\n"), 400);
    CHECK_INT(chunk_status("3\r\nabc\n0\r\n\r\n"), 400);
    CHECK_INT(chunk_status("3\r\nabc\rX"), 400);
    /* extensions */
    CHECK_INT(chunk_status("1;\r\na\r\n"), 400);
    CHECK_INT(chunk_status("1;a\x01\r\na\r\n"), 400);
    CHECK_INT(chunk_status("1;a=\r\na\r\n"), 400);
    CHECK_INT(chunk_status("1;a=\"x\x01\"\r\na\r\n"), 400);
    CHECK_INT(chunk_status("1;a=\"x\r\na\r\n"), 400);
    CHECK_INT(chunk_status("1;a=b c\r\na\r\n"), 400);
    CHECK_INT(chunk_status("1;a=\"b\"c\r\na\r\n"), 400);
    CHECK_INT(chunk_status("1;a\nb\r\na\r\n"), 400);
    /* trailers */
    CHECK_INT(chunk_status("0\r\nBad Header: x\r\n\r\n"), 400);
    CHECK_INT(chunk_status("0\r\nA: x\r\n folded\r\n\r\n"), 400);
    CHECK_INT(chunk_status("0\r\n: x\r\n\r\n"), 400);
    CHECK_INT(chunk_status("0\r\nA x\r\n\r\n"), 400);
    CHECK_INT(chunk_status("0\r\nA: x\x01y\r\n\r\n"), 400);
    CHECK_INT(chunk_status("0\r\nA: x\ry\r\n\r\n"), 400);
    CHECK_INT(chunk_status("0\r\nA: x\n\r\n"), 400);
    CHECK_INT(chunk_status("0\r\n\rX"), 400);
    CHECK_INT(chunk_status("0\r\n\n"), 400);

    static const char nul[] = "0\r\nA: x\0y\r\n\r\n";
    char out[64];
    size_t outlen, used;
    CHECK_INT(chunk_feed(nul, sizeof(nul) - 1, 1, out, &outlen, &used), 400);
    CHECK_INT(used, 7);   /* stops at the NUL */
}

static void test_chunked_limits(void)
{
    static char buf[16384];
    char out[16];
    size_t n, outlen, used;

    /* 100 trailers pass, 101 do not */
    n = (size_t)snprintf(buf, sizeof(buf), "0\r\n");
    for (int i = 0; i < 100; i++) {
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "T%d: v\r\n", i);
    }
    memcpy(buf + n, "\r\n", 3);
    CHECK_INT(chunk_status(buf), HD_OK);
    memcpy(buf + n, "X: y\r\n\r\n", 9);
    CHECK_INT(chunk_status(buf), 400);

    /* a trailer line of 8190 bytes passes, 8191 does not */
    n = (size_t)snprintf(buf, sizeof(buf), "0\r\nX: ");
    memset(buf + n, 'v', 8190 - 3);
    memcpy(buf + n + 8187, "\r\n\r\n", 5);
    CHECK_INT(chunk_status(buf), HD_OK);
    memset(buf + n, 'v', 8190 - 2);
    memcpy(buf + n + 8188, "\r\n\r\n", 5);
    CHECK_INT(chunk_status(buf), 400);

    /* so does an endless extension, without waiting for CRLF */
    n = (size_t)snprintf(buf, sizeof(buf), "1;x=");
    memset(buf + n, 'v', 9000);
    CHECK_INT(chunk_feed(buf, n + 9000, 0, out, &outlen, &used), 400);
    CHECK_INT(used, 8190);
}

int main(void)
{
    RUN(test_simple_get);
    RUN(test_body_not_consumed);
    RUN(test_many_headers);
    RUN(test_value_trimming);
    RUN(test_field_is);
    RUN(test_absolute_form);
    RUN(test_asterisk_and_connect);
    RUN(test_query);
    RUN(test_leading_crlf_and_bare_lf);
    RUN(test_methods);
    RUN(test_versions);
    RUN(test_bad_targets);
    RUN(test_bad_fields);
    RUN(test_garbage);
    RUN(test_limits);
    RUN(test_bytewise_and_splits);
    RUN(test_chunked_valid);
    RUN(test_chunked_bad);
    RUN(test_chunked_limits);
    TEST_DONE();
}
