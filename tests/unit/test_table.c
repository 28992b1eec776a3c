/* Header tables: set/add/get/unset/count, case-insensitive keys, growth. */
#include "pool.h"
#include "table.h"
#include "test.h"

static void test_basic(void)
{
    hd_pool_t *p = hd_pool_create();
    hd_table_t *t = hd_table_make(p, 4);

    CHECK(hd_table_get(t, "Host") == NULL);
    hd_table_add(t, "Host", "example.com");
    hd_table_add(t, "Accept", "*/*");
    CHECK_STR(hd_table_get(t, "Host"), "example.com");
    CHECK_STR(hd_table_get(t, "host"), "example.com");
    CHECK_STR(hd_table_get(t, "ACCEPT"), "*/*");
    CHECK_INT(hd_table_count(t, "hOsT"), 1);
    CHECK_INT(hd_table_count(t, "Missing"), 0);

    /* add keeps earlier values; get returns the first */
    hd_table_add(t, "accept", "text/html");
    CHECK_INT(hd_table_count(t, "Accept"), 2);
    CHECK_STR(hd_table_get(t, "Accept"), "*/*");

    /* set replaces every value with one */
    hd_table_set(t, "ACCEPT", "image/png");
    CHECK_INT(hd_table_count(t, "accept"), 1);
    CHECK_STR(hd_table_get(t, "Accept"), "image/png");
    CHECK_INT(t->nelts, 2);

    /* set of a new key adds it */
    hd_table_set(t, "X-New", "1");
    CHECK_STR(hd_table_get(t, "x-new"), "1");
    CHECK_INT(t->nelts, 3);

    /* unset removes all and keeps the order of the rest */
    hd_table_add(t, "x-new", "2");
    hd_table_add(t, "Via", "proxy");
    hd_table_unset(t, "X-NEW");
    CHECK_INT(hd_table_count(t, "x-new"), 0);
    CHECK_INT(t->nelts, 3);
    CHECK_STR(t->elts[0].key, "Host");
    CHECK_STR(t->elts[1].val, "image/png");
    CHECK_STR(t->elts[2].key, "Via");
    hd_table_unset(t, "Nothing");
    CHECK_INT(t->nelts, 3);
    hd_pool_destroy(p);
}

static void test_growth(void)
{
    hd_pool_t *p = hd_pool_create();
    hd_table_t *t = hd_table_make(p, 1);
    char *keys[300];

    for (int i = 0; i < 300; i++) {
        keys[i] = hd_psprintf(p, "Header-%d", i);
        hd_table_add(t, keys[i], hd_psprintf(p, "v%d", i));
    }
    CHECK_INT(t->nelts, 300);
    CHECK(t->nalloc >= 300);
    CHECK_STR(hd_table_get(t, "header-0"), "v0");
    CHECK_STR(hd_table_get(t, "HEADER-299"), "v299");
    CHECK_STR(hd_table_get(t, "Header-150"), "v150");
    hd_table_set(t, "header-150", "changed");
    CHECK_STR(hd_table_get(t, "Header-150"), "changed");
    CHECK_INT(t->nelts, 300);

    hd_table_t *z = hd_table_make(p, 0);
    for (int i = 0; i < 20; i++) {
        hd_table_add(z, "Set-Cookie", keys[i]);
    }
    CHECK_INT(hd_table_count(z, "set-cookie"), 20);
    hd_table_set(z, "set-cookie", "one");
    CHECK_INT(z->nelts, 1);
    CHECK_STR(hd_table_get(z, "Set-Cookie"), "one");
    hd_pool_destroy(p);
}

int main(void)
{
    RUN(test_basic);
    RUN(test_growth);
    hd_pool_recycler_drain();
    TEST_DONE();
}
