/*
 * Region pools in the manner of nginx's ngx_palloc.c and h2o's memory.c.
 *
 * A pool is a list of HD_POOL_BLOCK_SIZE blocks; the pool record itself
 * lives at the start of its first block. Blocks come from a per-thread
 * recycler, so creating, filling and destroying a pool per request costs no
 * malloc once the recycler is warm. Requests too big for a block go on a
 * side list of malloc'd chunks, freed at reset or destroy.
 */
#include "pool.h"

#include <ctype.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POOL_ALIGN alignof(max_align_t)
#define ALIGN_UP(n, a) (((n) + ((a)-1)) & ~((size_t)(a)-1))

/* Beyond this many idle blocks a thread gives memory back to malloc. */
#define RECYCLER_MAX 64

typedef struct block {
    struct block *next;
    char *last; /* first free byte */
} block_t;

#define BLOCK_HDR ALIGN_UP(sizeof(block_t), POOL_ALIGN)
#define BLOCK_END(b) ((char *)(b) + HD_POOL_BLOCK_SIZE)

typedef struct large {
    struct large *next;
} large_t;

#define LARGE_HDR ALIGN_UP(sizeof(large_t), POOL_ALIGN)

typedef struct cleanup {
    struct cleanup *next;
    hd_cleanup_fn fn;
    void *data;
} cleanup_t;

struct hd_pool {
    block_t *first;
    block_t *current; /* the block allocations are carved from */
    large_t *large;
    cleanup_t *cleanups; /* newest first */
    size_t used;
};

#define POOL_HDR ALIGN_UP(sizeof(struct hd_pool), POOL_ALIGN)

/* Usable bytes in a block that is not the first one of its pool. */
#define BLOCK_USABLE (HD_POOL_BLOCK_SIZE - BLOCK_HDR)

static __thread hd_pool_stats_t stats;
static __thread block_t *recycled;

static void out_of_memory(size_t size)
{
    fprintf(stderr, "httpd: out of memory allocating %zu bytes\n", size);
    abort();
}

static void *sys_alloc(size_t size)
{
    void *p = malloc(size);

    if (p == NULL) {
        out_of_memory(size);
    }
    stats.sys_allocs++;
    stats.sys_bytes += size;
    return p;
}

static void sys_free(void *p)
{
    free(p);
    stats.sys_frees++;
}

static block_t *block_get(void)
{
    block_t *b = recycled;

    if (b != NULL) {
        recycled = b->next;
        stats.blocks_cached--;
    } else {
        b = sys_alloc(HD_POOL_BLOCK_SIZE);
    }
    b->next = NULL;
    b->last = (char *)b + BLOCK_HDR;
    return b;
}

static void block_put_list(block_t *b)
{
    while (b != NULL) {
        block_t *next = b->next;

        if (stats.blocks_cached < RECYCLER_MAX) {
            b->next = recycled;
            recycled = b;
            stats.blocks_cached++;
        } else {
            sys_free(b);
        }
        b = next;
    }
}

hd_pool_t *hd_pool_create(void)
{
    block_t *b = block_get();
    hd_pool_t *pool = (hd_pool_t *)b->last;

    b->last += POOL_HDR;
    pool->first = b;
    pool->current = b;
    pool->large = NULL;
    pool->cleanups = NULL;
    pool->used = 0;
    return pool;
}

/*
 * Cleanups may refer to memory of the pool (a struct holding an fd), so
 * they run before any block or large chunk goes away. A cleanup registered
 * by a cleanup runs too: the list is re-read after each call.
 */
static void release(hd_pool_t *pool)
{
    while (pool->cleanups != NULL) {
        cleanup_t *c = pool->cleanups;

        pool->cleanups = c->next;
        c->fn(c->data);
    }
    for (large_t *l = pool->large, *next; l != NULL; l = next) {
        next = l->next;
        sys_free(l);
    }
    pool->large = NULL;
}

void hd_pool_destroy(hd_pool_t *pool)
{
    if (pool == NULL) {
        return;
    }
    release(pool);
    /* the pool record lives in the first block: nothing of it is read after */
    block_put_list(pool->first);
}

void hd_pool_reset(hd_pool_t *pool)
{
    block_t *first = pool->first;

    release(pool);
    block_put_list(first->next);
    first->next = NULL;
    first->last = (char *)first + BLOCK_HDR + POOL_HDR;
    pool->current = first;
    pool->used = 0;
}

static void *alloc_large(hd_pool_t *pool, size_t size)
{
    large_t *l;

    if (size > SIZE_MAX - LARGE_HDR) {
        out_of_memory(size);
    }
    l = sys_alloc(LARGE_HDR + size);
    l->next = pool->large;
    pool->large = l;
    return (char *)l + LARGE_HDR;
}

static void *alloc(hd_pool_t *pool, size_t size, size_t align)
{
    block_t *b = pool->current;
    char *p = (char *)ALIGN_UP((uintptr_t)b->last, align);

    pool->used += size;
    if (hd_likely(p <= BLOCK_END(b) && size <= (size_t)(BLOCK_END(b) - p))) {
        b->last = p + size;
        return p;
    }
    if (size > BLOCK_USABLE) {
        return alloc_large(pool, size);
    }
    /* what is left in the old block is given up: at most one small request */
    b = block_get();
    pool->current->next = b;
    pool->current = b;
    p = b->last;
    b->last = p + size;
    return p;
}

void *hd_palloc(hd_pool_t *pool, size_t size)
{
    return alloc(pool, size, POOL_ALIGN);
}

void *hd_pnalloc(hd_pool_t *pool, size_t size)
{
    return alloc(pool, size, 1);
}

void *hd_pcalloc(hd_pool_t *pool, size_t size)
{
    void *p = alloc(pool, size, POOL_ALIGN);

    memset(p, 0, size);
    return p;
}

char *hd_pmemdup0(hd_pool_t *pool, const void *s, size_t n)
{
    char *p = alloc(pool, n + 1, 1);

    if (n > 0) {
        memcpy(p, s, n);
    }
    p[n] = '\0';
    return p;
}

char *hd_pstrdup(hd_pool_t *pool, const char *s)
{
    if (s == NULL) {
        return NULL;
    }
    return hd_pmemdup0(pool, s, strlen(s));
}

char *hd_pstrdup_lower(hd_pool_t *pool, const char *s)
{
    char *d = hd_pstrdup(pool, s);
    for (char *c = d; c != NULL && *c != '\0'; c++) {
        *c = (char)tolower((unsigned char)*c);
    }
    return d;
}

char *hd_pstrndup(hd_pool_t *pool, const char *s, size_t n)
{
    if (s == NULL) {
        return NULL;
    }
    return hd_pmemdup0(pool, s, strnlen(s, n));
}

char *hd_pvsprintf(hd_pool_t *pool, const char *fmt, va_list ap)
{
    block_t *b = pool->current;
    size_t room = (size_t)(BLOCK_END(b) - b->last);
    va_list ap2;
    int n;
    char *p;

    /* most strings fit in what is left of the block: format in place once */
    va_copy(ap2, ap);
    n = vsnprintf(b->last, room, fmt, ap2);
    va_end(ap2);
    if (n < 0) {
        return hd_pstrdup(pool, "");
    }
    if ((size_t)n < room) {
        p = b->last;
        b->last += (size_t)n + 1;
        pool->used += (size_t)n + 1;
        return p;
    }
    p = alloc(pool, (size_t)n + 1, 1);
    va_copy(ap2, ap);
    vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}

char *hd_psprintf(hd_pool_t *pool, const char *fmt, ...)
{
    va_list ap;
    char *p;

    va_start(ap, fmt);
    p = hd_pvsprintf(pool, fmt, ap);
    va_end(ap);
    return p;
}

char *hd_pstrcat(hd_pool_t *pool, ...)
{
    va_list ap;
    size_t len = 0;
    const char *s;
    char *res, *d;

    va_start(ap, pool);
    while ((s = va_arg(ap, const char *)) != NULL) {
        len += strlen(s);
    }
    va_end(ap);

    res = d = alloc(pool, len + 1, 1);
    va_start(ap, pool);
    while ((s = va_arg(ap, const char *)) != NULL) {
        size_t n = strlen(s);

        memcpy(d, s, n);
        d += n;
    }
    va_end(ap);
    *d = '\0';
    return res;
}

void hd_pool_cleanup_add(hd_pool_t *pool, hd_cleanup_fn fn, void *data)
{
    cleanup_t *c = alloc(pool, sizeof(*c), POOL_ALIGN);

    c->fn = fn;
    c->data = data;
    c->next = pool->cleanups;
    pool->cleanups = c;
}

size_t hd_pool_used(const hd_pool_t *pool)
{
    return pool->used;
}

const hd_pool_stats_t *hd_pool_stats(void)
{
    return &stats;
}

void hd_pool_recycler_drain(void)
{
    while (recycled != NULL) {
        block_t *b = recycled;

        recycled = b->next;
        sys_free(b);
    }
    stats.blocks_cached = 0;
}

static size_t mul_or_die(size_t a, size_t b)
{
    size_t r;

    if (__builtin_mul_overflow(a, b, &r)) {
        out_of_memory(SIZE_MAX);
    }
    return r;
}

hd_array_t *hd_array_create(hd_pool_t *pool, size_t n, size_t elt_size)
{
    hd_array_t *a = alloc(pool, sizeof(*a), POOL_ALIGN);

    if (n == 0) {
        n = 4;
    }
    a->elts = alloc(pool, mul_or_die(n, elt_size), POOL_ALIGN);
    a->nelts = 0;
    a->nalloc = n;
    a->elt_size = elt_size;
    a->pool = pool;
    return a;
}

void *hd_array_push(hd_array_t *a)
{
    char *elt;

    if (a->nelts == a->nalloc) {
        size_t old = mul_or_die(a->nalloc, a->elt_size);
        size_t nalloc = mul_or_die(a->nalloc, 2);
        block_t *b = a->pool->current;
        void *elts;

        /* the array ends the current block and the block has room: grow in place */
        if ((char *)a->elts + old == b->last && (size_t)(BLOCK_END(b) - b->last) >= old) {
            b->last += old;
            a->pool->used += old;
        } else {
            elts = alloc(a->pool, mul_or_die(nalloc, a->elt_size), POOL_ALIGN);
            memcpy(elts, a->elts, old);
            a->elts = elts;
        }
        a->nalloc = nalloc;
    }
    elt = (char *)a->elts + a->nelts * a->elt_size;
    a->nelts++;
    memset(elt, 0, a->elt_size);
    return elt;
}
