/*
 * Path normalisation (decoding, dot segments, slashes), query unescaping and
 * the path and HTML escapers.
 */
#include "path.h"
#include "pool.h"
#include "test.h"

static char out[1024];

/* Normalises a copy of @p in; returns the status, the result in out. */
static int norm(const char *in)
{
    size_t len = strlen(in);
    snprintf(out, sizeof(out), "%s", in);
    int rc = hd_path_normalize(out, &len);
    if (rc == 0 && len != strlen(out)) {
        return -100;   /* length and terminator disagree */
    }
    return rc;
}

#define NORM_OK(in, want)             \
    do {                              \
        CHECK_INT(norm(in), 0);       \
        CHECK_STR(out, want);         \
    } while (0)

static void test_decode(void)
{
    NORM_OK("/a%20b", "/a b");
    NORM_OK("/%41%4a%4A%6a%6A", "/AJJjj");
    NORM_OK("/caf%C3%A9/x", "/caf\xc3\xa9/x");
    NORM_OK("/a+b", "/a+b");
    NORM_OK("/%25", "/%");
    NORM_OK("/%2541", "/%41");   /* decoded once only */
    NORM_OK("/", "/");
}

static void test_encoded_dots(void)
{
    NORM_OK("/a/%2e%2e/b", "/b");
    NORM_OK("/a/%2E%2E/b", "/b");
    NORM_OK("/a/.%2e/b", "/b");
    NORM_OK("/a/%2E/b", "/a/b");
    NORM_OK("/a/%2e%2e", "/");
    CHECK_INT(norm("/%2e%2e/etc/passwd"), 400);
    CHECK_INT(norm("/a/%2e%2e/%2e%2e/etc/passwd"), 400);
}

static void test_bad_escapes(void)
{
    CHECK_INT(norm("/a%2Fb"), 404);
    CHECK_INT(norm("/a%2fb"), 404);
    CHECK_INT(norm("/%2F"), 404);
    CHECK_INT(norm("/a%00b"), 400);
    CHECK_INT(norm("/a%"), 400);
    CHECK_INT(norm("/a%4"), 400);
    CHECK_INT(norm("/a%G1"), 400);
    CHECK_INT(norm("/a%1G"), 400);
    CHECK_INT(norm("/a%%41"), 400);
    CHECK_INT(norm("/a% 1"), 400);
    /* a bad escape wins over an encoded slash, whichever comes first */
    CHECK_INT(norm("/a%2Fb%G1"), 400);
    CHECK_INT(norm("/a%G1%2F"), 400);

    char raw[] = "/a\0b";
    size_t len = 4;
    CHECK_INT(hd_path_normalize(raw, &len), 400);

    CHECK_INT(norm(""), 400);
    CHECK_INT(norm("a/b"), 400);
    CHECK_INT(norm("%2Fa"), 400);
    CHECK_INT(norm("./a"), 400);
}

/* RFC 3986 5.4 examples against base "http://a/b/c/d;p?q", as absolute paths. */
static void test_rfc3986_examples(void)
{
    NORM_OK("/b/c/g", "/b/c/g");
    NORM_OK("/b/c/./g", "/b/c/g");
    NORM_OK("/b/c/g/", "/b/c/g/");
    NORM_OK("/b/c/.", "/b/c/");
    NORM_OK("/b/c/./", "/b/c/");
    NORM_OK("/b/c/..", "/b/");
    NORM_OK("/b/c/../", "/b/");
    NORM_OK("/b/c/../g", "/b/g");
    NORM_OK("/b/c/../..", "/");
    NORM_OK("/b/c/../../", "/");
    NORM_OK("/b/c/../../g", "/g");
    NORM_OK("/./g", "/g");
    NORM_OK("/b/c/g.", "/b/c/g.");
    NORM_OK("/b/c/.g", "/b/c/.g");
    NORM_OK("/b/c/g..", "/b/c/g..");
    NORM_OK("/b/c/..g", "/b/c/..g");
    NORM_OK("/b/c/./../g", "/b/g");
    NORM_OK("/b/c/./g/.", "/b/c/g/");
    NORM_OK("/b/c/g/./h", "/b/c/g/h");
    NORM_OK("/b/c/g/../h", "/b/c/h");
    NORM_OK("/b/c/g;x=1/./y", "/b/c/g;x=1/y");
    NORM_OK("/b/c/g;x=1/../y", "/b/c/y");
    /* RFC 3986 5.2.4's own examples */
    NORM_OK("/a/b/c/./../../g", "/a/g");
    NORM_OK("/mid/content=5/../6", "/mid/6");
    NORM_OK("/a/.../b", "/a/.../b");
    /* where the RFC would clamp to "/g", we refuse, as Apache does */
    CHECK_INT(norm("/b/c/../../../g"), 400);
    CHECK_INT(norm("/b/c/../../../../g"), 400);
}

static void test_climbing(void)
{
    CHECK_INT(norm("/.."), 400);
    CHECK_INT(norm("/../"), 400);
    CHECK_INT(norm("/../a"), 400);
    CHECK_INT(norm("/a/../.."), 400);
    CHECK_INT(norm("/a/./../../b"), 400);
    CHECK_INT(norm("//../a"), 400);
    NORM_OK("/a/../b/../c", "/c");
}

static void test_slashes(void)
{
    NORM_OK("//", "/");
    NORM_OK("//a///b//c", "/a/b/c");
    NORM_OK("//a///b//", "/a/b/");
    NORM_OK("/a//../b", "/b");
    NORM_OK("/a/.//./b", "/a/b");
    NORM_OK("/./", "/");
}

static void test_trailing_slash(void)
{
    NORM_OK("/a/b/", "/a/b/");
    NORM_OK("/a/b", "/a/b");
    NORM_OK("/a/.", "/a/");
    NORM_OK("/a/..", "/");
    NORM_OK("/a/b/..", "/a/");
    NORM_OK("/.", "/");
    NORM_OK("/a/%2e", "/a/");
}

static void test_unescape(void)
{
    char s[64];
    size_t len;

    snprintf(s, sizeof(s), "a+b%%20c%%2F%%3d");
    len = strlen(s);
    CHECK_INT(hd_unescape(s, &len), 0);
    CHECK_STR(s, "a+b c/=");
    CHECK_INT(len, 7);

    snprintf(s, sizeof(s), "%%");
    len = strlen(s);
    CHECK_INT(hd_unescape(s, &len), 400);
    snprintf(s, sizeof(s), "x=%%zz");
    len = strlen(s);
    CHECK_INT(hd_unescape(s, &len), 400);
    snprintf(s, sizeof(s), "x=%%00");
    len = strlen(s);
    CHECK_INT(hd_unescape(s, &len), 400);

    len = 0;
    s[0] = '\0';
    CHECK_INT(hd_unescape(s, &len), 0);
    CHECK_INT(len, 0);
}

static void test_escape_path(void)
{
    hd_pool_t *pool = hd_pool_create();
    CHECK_STR(hd_escape_path(pool, "/a b/caf\xc3\xa9?#%\"<>"),
              "/a%20b/caf%C3%A9%3F%23%25%22%3C%3E");
    CHECK_STR(hd_escape_path(pool, "/AZaz09-._~!$&'()*+,;=:@/"), "/AZaz09-._~!$&'()*+,;=:@/");
    CHECK_STR(hd_escape_path(pool, "\x01\x7f\xff"), "%01%7F%FF");
    CHECK_STR(hd_escape_path(pool, ""), "");

    /* escaping then decoding gives the name back */
    char *e = hd_escape_path(pool, "/dir with space/%2e.txt");
    size_t len = strlen(e);
    CHECK_INT(hd_path_normalize(e, &len), 0);
    CHECK_STR(e, "/dir with space/%2e.txt");
    hd_pool_destroy(pool);
}

static void test_escape_html(void)
{
    hd_pool_t *pool = hd_pool_create();
    CHECK_STR(hd_escape_html(pool, "<a href=\"x\">&amp;</a>"),
              "&lt;a href=&quot;x&quot;&gt;&amp;amp;&lt;/a&gt;");
    CHECK_STR(hd_escape_html(pool, "plain caf\xc3\xa9 'q'"), "plain caf\xc3\xa9 'q'");
    CHECK_STR(hd_escape_html(pool, ""), "");
    hd_pool_destroy(pool);
}

int main(void)
{
    RUN(test_decode);
    RUN(test_encoded_dots);
    RUN(test_bad_escapes);
    RUN(test_rfc3986_examples);
    RUN(test_climbing);
    RUN(test_slashes);
    RUN(test_trailing_slash);
    RUN(test_unescape);
    RUN(test_escape_path);
    RUN(test_escape_html);
    TEST_DONE();
}
