/*
 * Header tables: small arrays of name/value strings with case-insensitive
 * lookup, allocated from a pool (request headers in and out).
 */
#ifndef HD_TABLE_H
#define HD_TABLE_H

#include "hd.h"

typedef struct {
    const char *key;
    const char *val;
} hd_table_entry_t;

typedef struct {
    hd_table_entry_t *elts;
    size_t nelts;
    size_t nalloc;
    hd_pool_t *pool;
} hd_table_t;

hd_table_t *hd_table_make(hd_pool_t *pool, size_t n);
/** First value for @p key (case-insensitive), or NULL. */
const char *hd_table_get(const hd_table_t *t, const char *key);
/** Replaces every value of @p key with @p val (strings are not copied). */
void hd_table_set(hd_table_t *t, const char *key, const char *val);
/** Adds a value for @p key, keeping any others (strings are not copied). */
void hd_table_add(hd_table_t *t, const char *key, const char *val);
/** Removes every value of @p key. */
void hd_table_unset(hd_table_t *t, const char *key);
/** Number of values for @p key. */
size_t hd_table_count(const hd_table_t *t, const char *key);
/** Removes every entry. */
void hd_table_clear(hd_table_t *t);

#endif
