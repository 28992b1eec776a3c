/* Pools: alignment, blocks, the side list, cleanups, recycling, strings, arrays. */
#include "pool.h"
#include "test.h"

#include <stdalign.h>

static void test_alignment(void)
{
    hd_pool_t *p = hd_pool_create();

    for (int i = 0; i < 200; i++) {
        char *s = hd_pnalloc(p, (size_t)(i % 7) + 1);
        void *a = hd_palloc(p, (size_t)i + 1);

        CHECK(s != NULL);
        CHECK((uintptr_t)a % alignof(max_align_t) == 0);
    }
    /* unaligned allocations pack tightly */
    char *x = hd_pnalloc(p, 3);
    char *y = hd_pnalloc(p, 3);
    CHECK(y == x + 3);
    hd_pool_destroy(p);
}

static void test_many_small(void)
{
    hd_pool_t *p = hd_pool_create();
    unsigned char *ptrs[5000];

    for (int i = 0; i < 5000; i++) {
        ptrs[i] = hd_palloc(p, 24);
        memset(ptrs[i], i & 0xff, 24);
    }
    /* 120 KB spans many blocks; every allocation keeps its own bytes */
    int bad = 0;
    for (int i = 0; i < 5000; i++) {
        for (int j = 0; j < 24; j++) {
            bad += ptrs[i][j] != (i & 0xff);
        }
    }
    CHECK_INT(bad, 0);
    CHECK(hd_pool_used(p) >= 5000 * 24);
    hd_pool_destroy(p);
}

static void test_large(void)
{
    hd_pool_t *p = hd_pool_create();
    uint64_t allocs = hd_pool_stats()->sys_allocs;
    uint64_t frees = hd_pool_stats()->sys_frees;
    char *big = hd_palloc(p, 100000);

    CHECK((uintptr_t)big % alignof(max_align_t) == 0);
    memset(big, 'x', 100000);
    CHECK_INT(hd_pool_stats()->sys_allocs, allocs + 1);
    CHECK(hd_pool_stats()->sys_bytes >= 100000);
    /* a small allocation after it still comes from the block */
    char *small = hd_palloc(p, 16);
    CHECK(small != NULL);
    CHECK_INT(hd_pool_stats()->sys_allocs, allocs + 1);
    hd_pool_reset(p);
    CHECK_INT(hd_pool_stats()->sys_frees, frees + 1);
    CHECK_INT(hd_pool_used(p), 0);
    hd_pool_destroy(p);
}

static char order[16];
static int norder;

static void record(void *data)
{
    order[norder++] = *(const char *)data;
    order[norder] = '\0';
}

static void test_cleanups(void)
{
    static const char a = 'a', b = 'b', c = 'c';
    hd_pool_t *p = hd_pool_create();

    hd_pool_cleanup_add(p, record, (void *)&a);
    hd_pool_cleanup_add(p, record, (void *)&b);
    hd_pool_cleanup_add(p, record, (void *)&c);
    norder = 0;
    hd_pool_reset(p);
    CHECK_STR(order, "cba");
    /* reset forgets them: a second reset runs nothing */
    norder = 0;
    order[0] = '\0';
    hd_pool_reset(p);
    CHECK_STR(order, "");

    hd_pool_cleanup_add(p, record, (void *)&b);
    hd_pool_cleanup_add(p, record, (void *)&a);
    norder = 0;
    hd_pool_destroy(p);
    CHECK_STR(order, "ab");
}

static void test_reset_reuse(void)
{
    /* warm-up fills the recycler */
    for (int i = 0; i < 10; i++) {
        hd_pool_t *p = hd_pool_create();
        for (int j = 0; j < 100; j++) {
            hd_palloc(p, 200);
        }
        hd_pool_destroy(p);
    }
    uint64_t allocs = hd_pool_stats()->sys_allocs;
    uint64_t frees = hd_pool_stats()->sys_frees;

    for (int i = 0; i < 1000; i++) {
        hd_pool_t *p = hd_pool_create();
        for (int j = 0; j < 100; j++) {
            hd_palloc(p, 200);
        }
        hd_psprintf(p, "request %d", i);
        hd_pool_destroy(p);
    }
    CHECK_INT(hd_pool_stats()->sys_allocs, allocs);
    CHECK_INT(hd_pool_stats()->sys_frees, frees);

    /* reset keeps the first block: the same memory comes back */
    hd_pool_t *p = hd_pool_create();
    void *first = hd_palloc(p, 64);
    for (int j = 0; j < 100; j++) {
        hd_palloc(p, 200);
    }
    hd_pool_reset(p);
    CHECK(hd_palloc(p, 64) == first);
    hd_pool_destroy(p);

    CHECK(hd_pool_stats()->blocks_cached > 0);
    CHECK(hd_pool_stats()->blocks_cached <= 64);
    hd_pool_recycler_drain();
    CHECK_INT(hd_pool_stats()->blocks_cached, 0);
}

static void test_strings(void)
{
    hd_pool_t *p = hd_pool_create();
    char long_str[20000];

    CHECK_STR(hd_pstrdup(p, "hello"), "hello");
    CHECK(hd_pstrdup(p, NULL) == NULL);
    CHECK_STR(hd_pstrdup_lower(p, "AcceptFilter HTTP"), "acceptfilter http");
    CHECK(hd_pstrdup_lower(p, NULL) == NULL);
    CHECK_STR(hd_pstrndup(p, "hello world", 5), "hello");
    CHECK_STR(hd_pstrndup(p, "hi", 10), "hi");
    CHECK_STR(hd_pmemdup0(p, "abc\0def", 3), "abc");
    CHECK_STR(hd_psprintf(p, "%s-%d-%05.1f", "x", 42, 3.14159), "x-42-003.1");
    CHECK_STR(hd_pstrcat(p, "a", "bc", "", "def", NULL), "abcdef");
    CHECK_STR(hd_pstrcat(p, NULL), "");

    /* a formatted string bigger than a block goes to the side list intact */
    memset(long_str, 'z', sizeof(long_str) - 1);
    long_str[sizeof(long_str) - 1] = '\0';
    char *s = hd_psprintf(p, "<%s>", long_str);
    CHECK_INT(strlen(s), sizeof(long_str) + 1);
    CHECK(s[0] == '<' && s[1] == 'z' && s[sizeof(long_str)] == '>');

    /* strings filling the rest of a block */
    for (int i = 0; i < 500; i++) {
        char *t = hd_psprintf(p, "%0*d", 100, i);
        CHECK_INT(strlen(t), 100);
    }
    hd_pool_destroy(p);
}

static void test_arrays(void)
{
    hd_pool_t *p = hd_pool_create();
    hd_array_t *a = hd_array_create(p, 2, sizeof(int));

    for (int i = 0; i < 1000; i++) {
        int *e = hd_array_push(a);
        CHECK_INT(*e, 0);
        *e = i * 3;
        /* other allocations in between force copies as well as in-place growth */
        if (i % 100 == 0) {
            hd_palloc(p, 8);
        }
    }
    CHECK_INT(a->nelts, 1000);
    CHECK(a->nalloc >= 1000);
    int bad = 0;
    for (int i = 0; i < 1000; i++) {
        bad += ((int *)a->elts)[i] != i * 3;
    }
    CHECK_INT(bad, 0);

    hd_array_t *b = hd_array_create(p, 0, 40);
    for (int i = 0; i < 10; i++) {
        char *e = hd_array_push(b);
        e[39] = (char)i;
    }
    CHECK_INT(b->nelts, 10);
    CHECK_INT(((char *)b->elts)[9 * 40 + 39], 9);
    hd_pool_destroy(p);
}

int main(void)
{
    RUN(test_alignment);
    RUN(test_many_small);
    RUN(test_large);
    RUN(test_cleanups);
    RUN(test_reset_reuse);
    RUN(test_strings);
    RUN(test_arrays);
    hd_pool_recycler_drain();
    TEST_DONE();
}
