/*
 * Header tables: a flat array in insertion order, searched linearly. Requests
 * carry a dozen headers or so, where a scan beats any hashing.
 */
#include "table.h"

#include "pool.h"

#include <string.h>
#include <strings.h>

hd_table_t *hd_table_make(hd_pool_t *pool, size_t n)
{
    hd_table_t *t = hd_palloc(pool, sizeof(*t));

    if (n == 0) {
        n = 8;
    }
    t->elts = hd_palloc(pool, n * sizeof(*t->elts));
    t->nelts = 0;
    t->nalloc = n;
    t->pool = pool;
    return t;
}

const char *hd_table_get(const hd_table_t *t, const char *key)
{
    for (size_t i = 0; i < t->nelts; i++) {
        if (strcasecmp(t->elts[i].key, key) == 0) {
            return t->elts[i].val;
        }
    }
    return NULL;
}

void hd_table_add(hd_table_t *t, const char *key, const char *val)
{
    if (t->nelts == t->nalloc) {
        /* the old array stays in the pool until it goes: cheap, and rare */
        hd_table_entry_t *elts = hd_palloc(t->pool, 2 * t->nalloc * sizeof(*elts));

        memcpy(elts, t->elts, t->nelts * sizeof(*elts));
        t->elts = elts;
        t->nalloc *= 2;
    }
    t->elts[t->nelts].key = key;
    t->elts[t->nelts].val = val;
    t->nelts++;
}

/* Removes the entries for @p key from index @p from on, keeping the order of the rest. */
static void remove_from(hd_table_t *t, size_t from, const char *key)
{
    size_t j = from;

    for (size_t i = from; i < t->nelts; i++) {
        if (strcasecmp(t->elts[i].key, key) != 0) {
            t->elts[j++] = t->elts[i];
        }
    }
    t->nelts = j;
}

void hd_table_set(hd_table_t *t, const char *key, const char *val)
{
    for (size_t i = 0; i < t->nelts; i++) {
        if (strcasecmp(t->elts[i].key, key) == 0) {
            t->elts[i].key = key;
            t->elts[i].val = val;
            remove_from(t, i + 1, key);
            return;
        }
    }
    hd_table_add(t, key, val);
}

void hd_table_unset(hd_table_t *t, const char *key)
{
    remove_from(t, 0, key);
}

size_t hd_table_count(const hd_table_t *t, const char *key)
{
    size_t n = 0;

    for (size_t i = 0; i < t->nelts; i++) {
        if (strcasecmp(t->elts[i].key, key) == 0) {
            n++;
        }
    }
    return n;
}

void hd_table_clear(hd_table_t *t)
{
    t->nelts = 0;
}
