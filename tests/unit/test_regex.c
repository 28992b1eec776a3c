/*
 * The regex helper: compiling (with PCRE2's own error text), matching with
 * captures, "$N" substitution as Apache's ap_pregsub, and matching from
 * several threads at once (each has its own match space).
 */
#include "test.h"

#include "pool.h"
#include "regex.h"

#include <pthread.h>

static void test_compile(void)
{
    hd_pool_t *p = hd_pool_create();
    const char *err = NULL;

    hd_regex_t *re = hd_regex_compile(p, "^/img/(.*)\\.(png|gif)$", 0, &err);
    CHECK(re != NULL);
    CHECK_STR(hd_regex_pattern(re), "^/img/(.*)\\.(png|gif)$");
    CHECK_INT(hd_regex_groups(re), 2);

    CHECK(hd_regex_compile(p, "(unclosed", 0, &err) == NULL);
    CHECK_STR(err, "missing closing parenthesis at offset 9");
    CHECK(hd_regex_compile(p, "a{2,1}", 0, &err) == NULL);
    CHECK(strstr(err, "out of order") != NULL);
    CHECK(strstr(err, "at offset 5") != NULL);
    hd_pool_destroy(p);
}

static void test_match(void)
{
    hd_pool_t *p = hd_pool_create();
    const char *err;
    hd_regmatch_t m[HD_REGEX_MAX_MATCH];
    hd_regex_t *re = hd_regex_compile(p, "^/img/(.*)\\.(png|gif)$", 0, &err);

    CHECK(hd_regex_match(re, "/img/a/b.png", m, HD_REGEX_MAX_MATCH));
    CHECK_INT(m[0].so, 0);
    CHECK_INT(m[0].eo, 12);
    CHECK_INT(m[1].so, 5);
    CHECK_INT(m[1].eo, 8);
    CHECK_INT(m[2].so, 9);
    CHECK_INT(m[2].eo, 12);
    /* groups the pattern does not have are unset */
    CHECK_INT(m[3].so, -1);
    CHECK_INT(m[9].eo, -1);
    CHECK(!hd_regex_match(re, "/img/a.jpg", m, HD_REGEX_MAX_MATCH));
    CHECK(hd_regex_match(re, "/img/x.gif", NULL, 0));

    /* an optional group that took no part */
    hd_regex_t *opt = hd_regex_compile(p, "^(a)?(b)$", 0, &err);
    CHECK(hd_regex_match(opt, "b", m, 3));
    CHECK_INT(m[1].so, -1);
    CHECK_INT(m[2].so, 0);

    /* case */
    hd_regex_t *cs = hd_regex_compile(p, "^/Docs$", 0, &err);
    hd_regex_t *ci = hd_regex_compile(p, "^/Docs$", HD_REGEX_ICASE, &err);
    CHECK(!hd_regex_match(cs, "/docs", NULL, 0));
    CHECK(hd_regex_match(ci, "/docs", NULL, 0));

    /* more groups than substitution can name still match, and $9 is filled */
    hd_regex_t *many = hd_regex_compile(p, "(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)(l)", 0, &err);
    CHECK_INT(hd_regex_groups(many), 12);
    CHECK(hd_regex_match(many, "abcdefghijkl", m, HD_REGEX_MAX_MATCH));
    CHECK_INT(m[9].so, 8);
    /* asking for more than HD_REGEX_MAX_MATCH fills only that many */
    hd_regmatch_t big[HD_REGEX_MAX_MATCH + 2];
    big[HD_REGEX_MAX_MATCH].so = 77;
    CHECK(hd_regex_match(many, "abcdefghijkl", big, HD_REGEX_MAX_MATCH + 2));
    CHECK_INT(big[HD_REGEX_MAX_MATCH].so, 77);
    hd_pool_destroy(p);
}

static void test_subst(void)
{
    hd_pool_t *p = hd_pool_create();
    const char *err;
    hd_regmatch_t m[HD_REGEX_MAX_MATCH];
    hd_regex_t *re = hd_regex_compile(p, "^/old/([^/]+)/(.*)$", 0, &err);
    const char *subject = "/old/docs/a/b.html";

    CHECK(hd_regex_match(re, subject, m, HD_REGEX_MAX_MATCH));
    CHECK_STR(hd_regex_subst(p, "/new/$2?from=$1", subject, m, HD_REGEX_MAX_MATCH),
              "/new/a/b.html?from=docs");
    CHECK_STR(hd_regex_subst(p, "$0", subject, m, HD_REGEX_MAX_MATCH), subject);
    /* a group beyond the pattern's (or beyond nmatch) is empty */
    CHECK_STR(hd_regex_subst(p, "[$3]", subject, m, HD_REGEX_MAX_MATCH), "[]");
    CHECK_STR(hd_regex_subst(p, "[$2]", subject, m, 2), "[]");
    /* backslash takes the next character literally; "$" without a digit is itself */
    CHECK_STR(hd_regex_subst(p, "\\$1 is $1, \\\\ and $x$", subject, m, HD_REGEX_MAX_MATCH),
              "$1 is docs, \\ and $x$");
    CHECK_STR(hd_regex_subst(p, "trailing\\", subject, m, HD_REGEX_MAX_MATCH), "trailing\\");
    /* no captures at all */
    CHECK_STR(hd_regex_subst(p, "plain $1", subject, NULL, 0), "plain ");

    CHECK_INT(hd_regex_subst_max_ref("/x/$1/$3"), 3);
    CHECK_INT(hd_regex_subst_max_ref("/x/\\$9/$0"), 0);
    CHECK_INT(hd_regex_subst_max_ref("/none"), -1);

    /* a result past the limit is refused, not built */
    char *big = hd_pnalloc(p, 4097);
    memset(big, 'x', 4096);
    big[4096] = '\0';
    hd_regex_t *all = hd_regex_compile(p, "^(.*)$", 0, &err);
    CHECK(hd_regex_match(all, big, m, HD_REGEX_MAX_MATCH));
    char *tmpl = hd_pnalloc(p, 2 * 17 + 1);
    tmpl[0] = '\0';
    for (int i = 0; i < 17; i++) {
        strcat(tmpl, "$1");
    }
    CHECK(hd_regex_subst(p, tmpl, big, m, HD_REGEX_MAX_MATCH) == NULL); /* 17 x 4096 > 64 KiB */
    CHECK(hd_regex_subst(p, "$1$1", big, m, HD_REGEX_MAX_MATCH) != NULL);
    hd_pool_destroy(p);
}

typedef struct {
    const hd_regex_t *re;
    int ok;
} thread_arg_t;

static void *match_many(void *arg)
{
    thread_arg_t *a = arg;
    char subject[64];
    hd_regmatch_t m[HD_REGEX_MAX_MATCH];

    for (int i = 0; i < 20000; i++) {
        snprintf(subject, sizeof(subject), "/item/%d/end", i);
        if (hd_regex_match(a->re, subject, m, 3) && m[1].eo - m[1].so == (int)strlen(subject) - 10) {
            a->ok++;
        }
    }
    return NULL;
}

/* One compiled pattern, several threads: each match uses its thread's own space. */
static void test_threads(void)
{
    hd_pool_t *p = hd_pool_create();
    const char *err;
    hd_regex_t *re = hd_regex_compile(p, "^/item/([0-9]+)/end$", 0, &err);
    pthread_t t[4];
    thread_arg_t args[4];

    for (int i = 0; i < 4; i++) {
        args[i].re = re;
        args[i].ok = 0;
        pthread_create(&t[i], NULL, match_many, &args[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        CHECK_INT(args[i].ok, 20000);
    }
    hd_pool_destroy(p);
}

int main(void)
{
    RUN(test_compile);
    RUN(test_match);
    RUN(test_subst);
    RUN(test_threads);
    hd_pool_recycler_drain();
    TEST_DONE();
}
