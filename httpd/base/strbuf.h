/*
 * A growable string in a pool: for text whose length is not known in
 * advance (a directory listing, a config line joined from several, a header
 * value built from parts). It doubles as it grows and is always
 * NUL-terminated; the memory goes with the pool.
 */
#ifndef HD_STRBUF_H
#define HD_STRBUF_H

#include "hd.h"

#include <string.h>

typedef struct {
    hd_pool_t *pool; /**< where it grows: set before the first add */
    char *buf;       /**< NULL until something (even "") was added */
    size_t len;
    size_t cap;
} hd_strbuf_t;

/** Appends @p n bytes at @p s (the result stays NUL-terminated). */
void hd_strbuf_add(hd_strbuf_t *sb, const void *s, size_t n);

/** Appends the string @p s. */
static inline void hd_strbuf_addstr(hd_strbuf_t *sb, const char *s)
{
    hd_strbuf_add(sb, s, strlen(s));
}

#endif
