/*
 * mod_alias's rules on their own: URL-path prefix matching as Apache's
 * alias_matches, the one spelling of a mapped file name, the escaping of
 * redirect targets, and the status keywords.
 */
#include "test.h"

#include "alias/alias.h"
#include "pool.h"

static void test_prefix_match(void)
{
    /* whole segments only */
    CHECK_INT(hd_alias_prefix_match("/foo", "/foo"), 4);
    CHECK_INT(hd_alias_prefix_match("/foo/", "/foo"), 4);
    CHECK_INT(hd_alias_prefix_match("/foo/bar", "/foo"), 4);
    CHECK_INT(hd_alias_prefix_match("/foobar", "/foo"), 0);
    CHECK_INT(hd_alias_prefix_match("/fo", "/foo"), 0);
    CHECK_INT(hd_alias_prefix_match("/Foo", "/foo"), 0);
    /* a trailing slash in the alias must be in the URI */
    CHECK_INT(hd_alias_prefix_match("/icons", "/icons/"), 0);
    CHECK_INT(hd_alias_prefix_match("/icons/", "/icons/"), 7);
    CHECK_INT(hd_alias_prefix_match("/icons/a.png", "/icons/"), 7);
    /* runs of slashes match runs of any length, and count in the URI */
    CHECK_INT(hd_alias_prefix_match("//foo//bar", "/foo"), 5);
    CHECK_INT(hd_alias_prefix_match("/foo//bar", "/foo/"), 6);
    CHECK_INT(hd_alias_prefix_match("/foo/bar", "//foo"), 4);
    CHECK_INT(hd_alias_prefix_match("/foo", "/foo//"), 0);
    /* "/" covers everything; the remainder keeps no leading slash */
    CHECK_INT(hd_alias_prefix_match("/", "/"), 1);
    CHECK_INT(hd_alias_prefix_match("/x/y", "/"), 1);
    CHECK_INT(hd_alias_prefix_match("", "/"), 0);
    CHECK_INT(hd_alias_prefix_match("/x", ""), 0);
}

static void check_clean(const char *in, const char *want)
{
    char buf[256];

    strcpy(buf, in);
    hd_alias_clean_path(buf);
    CHECK_STR(buf, want);
    if (strcmp(buf, want) != 0) {
        fprintf(stderr, "  (input \"%s\")\n", in);
    }
}

static void test_clean_path(void)
{
    check_clean("/srv/x/f.txt", "/srv/x/f.txt");
    check_clean("/srv/x//f.txt", "/srv/x/f.txt");
    check_clean("//srv///x/", "/srv/x/");
    check_clean("/srv/x/./f", "/srv/x/f");
    check_clean("/srv/x/../y/f", "/srv/y/f");
    check_clean("/srv/x/..", "/srv/");
    check_clean("/srv/x/.", "/srv/x/");
    check_clean("/srv/x/../../../..", "/");
    check_clean("/..", "/");
    check_clean("/", "/");
    check_clean("/a/..b/c.", "/a/..b/c.");
    check_clean("/a/.../b", "/a/.../b");
    /* relative names are left alone (they are made absolute first) */
    check_clean("a/../b", "a/../b");
}

static void test_is_url(void)
{
    CHECK(hd_alias_is_url("http://example.com/"));
    CHECK(hd_alias_is_url("https://example.com"));
    CHECK(hd_alias_is_url("x-my+scheme.1:opaque"));
    CHECK(hd_alias_is_url("mailto:a@b"));
    CHECK(!hd_alias_is_url("/local/path"));
    CHECK(!hd_alias_is_url("relative/path"));
    CHECK(!hd_alias_is_url(":nothing"));
    CHECK(!hd_alias_is_url("ht tp://x"));
    CHECK(!hd_alias_is_url(""));
}

static void test_escape_target(void)
{
    hd_pool_t *p = hd_pool_create();

    CHECK_STR(hd_alias_escape_target(p, "/a b/c"), "/a%20b/c");
    CHECK_STR(hd_alias_escape_target(p, "http://h.example:8080/a b"), "http://h.example:8080/a%20b");
    /* the authority keeps IPv6 brackets; the path escapes them */
    CHECK_STR(hd_alias_escape_target(p, "http://[::1]:80/[x]"), "http://[::1]:80/%5Bx%5D");
    /* query and fragment stay as written, but never carry a control or a space */
    CHECK_STR(hd_alias_escape_target(p, "/p q?a=b c&d=%41#f g"), "/p%20q?a=b%20c&d=%41#f%20g");
    CHECK_STR(hd_alias_escape_target(p, "/x?\r\nSet-Cookie: a"), "/x?%0D%0ASet-Cookie:%20a");
    CHECK_STR(hd_alias_escape_target(p, "http://h\r\nX: y/"), "http://h%0D%0AX:%20y/");
    /* '%' in the path is escaped, as Apache's ap_escape_uri does */
    CHECK_STR(hd_alias_escape_target(p, "/100%"), "/100%25");
    CHECK_STR(hd_alias_escape_target(p, "http://h"), "http://h");
    CHECK_STR(hd_alias_escape_target(p, ""), "");
    hd_pool_destroy(p);
}

static void test_parse_status(void)
{
    CHECK_INT(hd_alias_parse_status("permanent"), 301);
    CHECK_INT(hd_alias_parse_status("Permanent"), 301);
    CHECK_INT(hd_alias_parse_status("temp"), 302);
    CHECK_INT(hd_alias_parse_status("seeother"), 303);
    CHECK_INT(hd_alias_parse_status("GONE"), 410);
    CHECK_INT(hd_alias_parse_status("307"), 307);
    CHECK_INT(hd_alias_parse_status("451"), 451);
    CHECK_INT(hd_alias_parse_status("599"), 599);
    CHECK_INT(hd_alias_parse_status("200"), -1);
    CHECK_INT(hd_alias_parse_status("600"), -1);
    CHECK_INT(hd_alias_parse_status("30x"), -1);
    CHECK_INT(hd_alias_parse_status("99999999999"), -1);
    CHECK_INT(hd_alias_parse_status("/path"), 0);
    CHECK_INT(hd_alias_parse_status("http://x"), 0);
    CHECK_INT(hd_alias_parse_status("moved"), 0);
}

int main(void)
{
    RUN(test_prefix_match);
    RUN(test_clean_path);
    RUN(test_is_url);
    RUN(test_escape_target);
    RUN(test_parse_status);
    TEST_DONE();
}
