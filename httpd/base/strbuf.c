/*
 * Growable pool strings (strbuf.h).
 */
#include "strbuf.h"

#include "pool.h"

void hd_strbuf_add(hd_strbuf_t *sb, const void *s, size_t n)
{
    if (sb->len + n + 1 > sb->cap) {
        size_t cap = sb->cap ? sb->cap * 2 : 128;
        while (cap < sb->len + n + 1) {
            cap *= 2;
        }
        char *buf = hd_pnalloc(sb->pool, cap);
        if (sb->len > 0) {
            memcpy(buf, sb->buf, sb->len);
        }
        sb->buf = buf;
        sb->cap = cap;
    }
    if (n > 0) {
        memcpy(sb->buf + sb->len, s, n);
    }
    sb->len += n;
    sb->buf[sb->len] = '\0';
}
