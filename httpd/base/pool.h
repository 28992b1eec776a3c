/*
 * Region pools. A pool per connection and a pool per request, freed as a
 * whole. Pools take fixed-size blocks from a per-thread recycler, so a
 * steady-state request takes nothing from malloc; what the recycler takes from
 * the system allocator is counted (hd_pool_stats).
 */
#ifndef HD_POOL_H
#define HD_POOL_H

#include "hd.h"

#include <stdarg.h>

/** Size of the blocks pools are made of; larger requests go to a side list. */
#define HD_POOL_BLOCK_SIZE 8192

/** What the calling thread's pools took from the system allocator. */
typedef struct {
    uint64_t sys_allocs;   /**< malloc calls made for pools */
    uint64_t sys_bytes;    /**< bytes asked of malloc for pools */
    uint64_t sys_frees;    /**< free calls made for pools */
    uint64_t blocks_cached; /**< blocks currently in the recycler */
} hd_pool_stats_t;

typedef void (*hd_cleanup_fn)(void *data);

/** Creates a pool (one block from the recycler). Aborts if memory runs out. */
hd_pool_t *hd_pool_create(void);

/** Frees everything allocated from @p pool and runs its cleanups, newest first. */
void hd_pool_destroy(hd_pool_t *pool);

/** Like destroy, but keeps the pool (and its first block) for reuse. */
void hd_pool_reset(hd_pool_t *pool);

/** Allocates @p size bytes aligned for any type. Never returns NULL. */
void *hd_palloc(hd_pool_t *pool, size_t size);

/** Allocates @p size zeroed bytes. */
void *hd_pcalloc(hd_pool_t *pool, size_t size);

/** Allocates @p size bytes with no alignment (strings). */
void *hd_pnalloc(hd_pool_t *pool, size_t size);

char *hd_pstrdup(hd_pool_t *pool, const char *s);
/** hd_pstrdup in lower case (ASCII): for names compared case-blind, stored once. */
char *hd_pstrdup_lower(hd_pool_t *pool, const char *s);
char *hd_pstrndup(hd_pool_t *pool, const char *s, size_t n);
/** Copies @p n bytes into a new NUL-terminated string. */
char *hd_pmemdup0(hd_pool_t *pool, const void *s, size_t n);
char *hd_psprintf(hd_pool_t *pool, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *hd_pvsprintf(hd_pool_t *pool, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/** Concatenates NUL-terminated strings up to a NULL argument. */
char *hd_pstrcat(hd_pool_t *pool, ...) __attribute__((sentinel));

/** Registers @p fn(@p data) to run when the pool is reset or destroyed. */
void hd_pool_cleanup_add(hd_pool_t *pool, hd_cleanup_fn fn, void *data);

/** Bytes handed out by @p pool since its creation or last reset. */
size_t hd_pool_used(const hd_pool_t *pool);

/** The calling thread's allocator counters. */
const hd_pool_stats_t *hd_pool_stats(void);

/** Frees the calling thread's recycled blocks (thread exit, tests). */
void hd_pool_recycler_drain(void);

/** A growable array in a pool. */
typedef struct {
    void *elts;
    size_t nelts;
    size_t nalloc;
    size_t elt_size;
    hd_pool_t *pool;
} hd_array_t;

hd_array_t *hd_array_create(hd_pool_t *pool, size_t n, size_t elt_size);
/** Returns a pointer to a new zeroed element at the end. */
void *hd_array_push(hd_array_t *a);

#endif
