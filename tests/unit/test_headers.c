/*
 * mod_headers' pure operations: value formats (%t, %D, %%, escapes, what
 * is refused), merge's token test with Apache's quoting rule, and edit /
 * edit* with back-references, empty matches, the length cap and line breaks.
 */
#include "headers/headers.h"
#include "pool.h"
#include "regex.h"
#include "test.h"

#include <string.h>

static hd_pool_t *p;

static const char *fmt(const char *s, int64_t start, int64_t elapsed)
{
    hd_hfmt_t f;
    const char *err = hd_headers_parse_format(p, s, &f);
    if (err != NULL) {
        return err;
    }
    return hd_headers_format(p, &f, start, elapsed);
}

static bool fmt_fails(const char *s, const char *word)
{
    hd_hfmt_t f;
    const char *err = hd_headers_parse_format(p, s, &f);
    return err != NULL && strstr(err, word) != NULL;
}

static void test_format(void)
{
    hd_hfmt_t f;

    CHECK(hd_headers_parse_format(p, "plain value", &f) == NULL);
    CHECK_STR(f.constant, "plain value");
    /* a constant needs no allocation per request: the same string comes back */
    CHECK(hd_headers_format(p, &f, 1, 2) == f.constant);

    CHECK(hd_headers_parse_format(p, "", &f) == NULL);
    CHECK_STR(f.constant, "");

    CHECK_STR(fmt("%t", 1700000000123456, 42), "t=1700000000123456");
    CHECK_STR(fmt("%D", 1, 42), "D=42");
    CHECK_STR(fmt("a %t b %D c", 5, 7), "a t=5 b D=7 c");
    CHECK_STR(fmt("%{ignored}t", 9, 0), "t=9");
    CHECK(hd_headers_parse_format(p, "x %t", &f) == NULL);
    CHECK(f.constant == NULL);

    CHECK_STR(fmt("100%%", 0, 0), "100%");
    CHECK_STR(fmt("50%", 0, 0), "50%");
    CHECK_STR(fmt("%%t", 0, 0), "%t");

    /* Apache's escapes; any other backslash stays */
    CHECK_STR(fmt("a\\tb", 0, 0), "a\tb");
    CHECK_STR(fmt("a\\\\b", 0, 0), "a\\b");
    CHECK_STR(fmt("a\\qb\\", 0, 0), "a\\qb\\");
    CHECK_STR(fmt("\\$1", 0, 0), "\\$1");

    CHECK(fmt_fails("%e", "%e"));
    CHECK(fmt_fails("%{HOME}e", "%e"));
    CHECK(fmt_fails("%{x}s", "%s"));
    CHECK(fmt_fails("a %x", "%x"));
    CHECK(fmt_fails("%{t", "%{"));
    CHECK(fmt_fails("a\\nb", "line break"));
    CHECK(fmt_fails("a\\rb", "line break"));
    CHECK(fmt_fails("a\nb", "line break"));
    CHECK(fmt_fails("a\rb", "line break"));
}

static void test_token_listed(void)
{
    CHECK(hd_headers_token_listed("a", "a"));
    CHECK(hd_headers_token_listed("a, b", "b"));
    CHECK(hd_headers_token_listed("a,b", "b"));
    CHECK(hd_headers_token_listed("  a,   b", "b"));
    CHECK(!hd_headers_token_listed("a, b", "c"));
    CHECK(!hd_headers_token_listed("", "a"));
    /* exact: case and trailing space count, as in Apache */
    CHECK(!hd_headers_token_listed("A", "a"));
    CHECK(!hd_headers_token_listed("a , b", "a"));
    CHECK(hd_headers_token_listed("a , b", "a "));
    CHECK(!hd_headers_token_listed("ab, b", "a"));
    CHECK(!hd_headers_token_listed("no-cache", "no"));
    /* a quoted string is one element, commas and all */
    CHECK(!hd_headers_token_listed("\"a, b\", c", "b"));
    CHECK(hd_headers_token_listed("\"a, b\", c", "\"a, b\""));
    CHECK(hd_headers_token_listed("\"a, b\", c", "c"));
    CHECK(hd_headers_token_listed("x=\"1,2\", y", "x=\"1,2\""));
    /* an unterminated quote runs to the end */
    CHECK(!hd_headers_token_listed("\"a, b", "b"));
}

static hd_regex_t *re(const char *pattern)
{
    const char *err = NULL;
    hd_regex_t *r = hd_regex_compile(p, pattern, 0, &err);
    CHECK(r != NULL);
    return r;
}

static void test_edit(void)
{
    const char *v = "a-a-a";

    /* nothing matched: the value itself */
    CHECK(hd_headers_edit(p, re("x"), "y", v, false) == v);
    CHECK(hd_headers_edit(p, re("x"), "y", v, true) == v);

    CHECK_STR(hd_headers_edit(p, re("a"), "b", v, false), "b-a-a");
    CHECK_STR(hd_headers_edit(p, re("a"), "b", v, true), "b-b-b");
    CHECK_STR(hd_headers_edit(p, re("a"), "", v, true), "--");
    CHECK_STR(hd_headers_edit(p, re("(\\w+)=(\\w+)"), "$2=$1", "k1=v1; k2=v2", true),
              "v1=k1; v2=k2");
    CHECK_STR(hd_headers_edit(p, re("(\\w+)=(\\w+)"), "$2=$1", "k1=v1; k2=v2", false),
              "v1=k1; k2=v2");
    CHECK_STR(hd_headers_edit(p, re("b+"), "[$0]", "abbcbd", true), "a[bb]c[b]d");
    CHECK_STR(hd_headers_edit(p, re("a"), "\\$1", "xa", false), "x$1");
    CHECK_STR(hd_headers_edit(p, re("^(.*)$"), "pre-$1", "v", false), "pre-v");

    /* Apache looks for each further match in the rest as a string of its own */
    CHECK_STR(hd_headers_edit(p, re("^a"), "b", "aaa", true), "bbb");
    CHECK_STR(hd_headers_edit(p, re("^a"), "b", "aaa", false), "baa");

    /* empty matches move on by one character instead of looping */
    CHECK_STR(hd_headers_edit(p, re("x*"), "-", "abc", true), "-a-b-c-");
    CHECK_STR(hd_headers_edit(p, re("x*"), "-", "axb", true), "-a--b-");
    CHECK_STR(hd_headers_edit(p, re("$"), "!", "ab", true), "ab!");
    CHECK_STR(hd_headers_edit(p, re("x*"), "-", "", true), "-");
    CHECK_STR(hd_headers_edit(p, re("x*"), "-", "abc", false), "-abc");

    /* a result past HD_REGEX_SUBST_MAX is refused, for edit and edit* alike */
    size_t n = HD_REGEX_SUBST_MAX / 8;
    char *big = hd_pnalloc(p, n + 1);
    memset(big, 'a', n);
    big[n] = '\0';
    CHECK(hd_headers_edit(p, re("a"), "0123456789", big, true) == NULL);
    CHECK(hd_headers_edit(p, re("^(.*)$"), "$1$1$1$1$1$1$1$1$1$1", big, false) == NULL);
    CHECK(hd_headers_edit(p, re("a"), "01234567", big, true) != NULL);

    /* no line break leaves an edit, whatever the value held */
    CHECK_STR(hd_headers_edit(p, re("x"), "y", "a\r\nx", false), "a  y");
    CHECK_STR(hd_headers_edit(p, re("(?s)(.)x"), "$1$1", "a\nx", false), "a  ");
}

int main(void)
{
    p = hd_pool_create();
    RUN(test_format);
    RUN(test_token_listed);
    RUN(test_edit);
    hd_pool_destroy(p);
    hd_pool_recycler_drain();
    TEST_DONE();
}
