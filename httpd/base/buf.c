/*
 * Buffers, chains and the chain writer (after nginx's ngx_writev_chain.c and
 * ngx_linux_sendfile_chain.c).
 *
 * The writer sends the chain in as few system calls as it can: every run of
 * memory buffers becomes one writev; a file range becomes sendfile, or, when
 * sendfile is off (or the sink has none, as TLS without kernel TLS), is read
 * into the scratch buffer and sent in the same writev as the memory around it. A response head followed by a small body therefore
 * costs one writev (memory body), writev + sendfile (file, sendfile on) or
 * pread + writev (file, sendfile off).
 */
#include "buf.h"

/* sys.h uses rename() without <stdio.h> */
#include <stdio.h>

#include "pool.h"
#include "sys.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif
#define HD_IOV_MAX (IOV_MAX < 1024 ? IOV_MAX : 1024)

/* Linux sends at most this much per sendfile/writev call anyway. */
#define MAX_SEND_CHUNK ((size_t)0x7ffff000)

hd_buf_t *hd_buf_create(hd_pool_t *pool, size_t size)
{
    hd_buf_t *b = hd_pcalloc(pool, sizeof(*b));

    b->start = hd_pnalloc(pool, size);
    b->pos = b->start;
    b->last = b->start;
    b->end = b->start + size;
    b->fd = -1;
    b->memory = 1;
    return b;
}

hd_buf_t *hd_buf_wrap(hd_pool_t *pool, const void *data, size_t len)
{
    hd_buf_t *b = hd_pcalloc(pool, sizeof(*b));

    /* the bytes are only read from: dropping const keeps one buffer type */
    b->start = (char *)data;
    b->pos = b->start;
    b->last = b->start + len;
    b->end = b->last;
    b->fd = -1;
    b->memory = 1;
    return b;
}

hd_buf_t *hd_buf_file(hd_pool_t *pool, int fd, off_t off, off_t len)
{
    hd_buf_t *b = hd_pcalloc(pool, sizeof(*b));

    b->fd = fd;
    b->file_pos = off;
    b->file_last = off + len;
    b->in_file = 1;
    return b;
}

hd_chain_t *hd_chain_append(hd_pool_t *pool, hd_chain_t **head, hd_buf_t *b)
{
    hd_chain_t *cl = hd_palloc(pool, sizeof(*cl));
    hd_chain_t **ll = head;

    cl->buf = b;
    cl->next = NULL;
    while (*ll != NULL) {
        ll = &(*ll)->next;
    }
    *ll = cl;
    return cl;
}

off_t hd_chain_size(const hd_chain_t *c)
{
    off_t total = 0;

    for (; c != NULL; c = c->next) {
        total += hd_buf_size(c->buf);
    }
    return total;
}

hd_chain_t *hd_chain_consume(hd_chain_t *c, size_t sent)
{
    for (; c != NULL; c = c->next) {
        hd_buf_t *b = c->buf;
        size_t size = (size_t)hd_buf_size(b);

        if (sent < size) {
            if (b->in_file) {
                b->file_pos += (off_t)sent;
            } else {
                b->pos += sent;
            }
            return c;
        }
        if (b->in_file) {
            b->file_pos = b->file_last;
        } else {
            b->pos = b->last;
        }
        sent -= size;
    }
    return NULL;
}

static hd_chain_t *skip_empty(hd_chain_t *c)
{
    while (c != NULL && hd_buf_size(c->buf) == 0) {
        c = c->next;
    }
    return c;
}

/* pread that retries on EINTR; 0 means the file is shorter than the buffer says. */
static ssize_t read_file(hd_buf_t *b, char *dst, size_t n)
{
    for (;;) {
        ssize_t r = hd_pread(b->fd, dst, n, b->file_pos);

        if (r >= 0 || errno != EINTR) {
            if (r == 0) {
                errno = EIO;
                return -1;
            }
            return r;
        }
    }
}

/*
 * Gathers the links from @p c into @p iov: memory buffers as they are, file
 * buffers (only when sendfile is off) read into the scratch space. Stops at a
 * file buffer to be sent with sendfile, when the iovec array or the scratch
 * space is full, or after a short read. Returns the number of entries, or -1
 * when a read fails.
 */
static int gather(hd_chain_t *c, bool use_sendfile, char *scratch, size_t scratch_size,
                  struct iovec *iov, size_t *total)
{
    size_t used = 0;
    int n = 0;

    *total = 0;
    for (; c != NULL && n < HD_IOV_MAX && *total < MAX_SEND_CHUNK; c = c->next) {
        hd_buf_t *b = c->buf;
        size_t size = (size_t)hd_buf_size(b);
        ssize_t r;

        if (size == 0) {
            continue;
        }
        if (!b->in_file) {
            iov[n].iov_base = b->pos;
            iov[n].iov_len = size;
            n++;
            *total += size;
            continue;
        }
        if (use_sendfile || used == scratch_size) {
            break;
        }
        if (size > scratch_size - used) {
            size = scratch_size - used;
        }
        r = read_file(b, scratch + used, size);
        if (r < 0) {
            return -1;
        }
        iov[n].iov_base = scratch + used;
        iov[n].iov_len = (size_t)r;
        n++;
        used += (size_t)r;
        *total += (size_t)r;
        /* the rest of this file must go before anything after it */
        if ((size_t)r < (size_t)hd_buf_size(b)) {
            break;
        }
    }
    return n;
}

static bool would_block(void)
{
    return errno == EAGAIN || errno == EWOULDBLOCK;
}

/* Whether a file buffer comes right after the @p n memory buffers gathered from @p c. */
static bool file_follows(hd_chain_t *c, int n)
{
    for (; c != NULL; c = c->next) {
        if (hd_buf_size(c->buf) == 0) {
            continue;
        }
        if (c->buf->in_file) {
            return n == 0;
        }
        n--;
    }
    return false;
}

/*
 * Writes gathered memory. When a sendfile follows (a response head before
 * its file), MSG_MORE holds the bytes back so head and body leave in one
 * segment: with TCP_NODELAY they would go as two, and the client would
 * wake up twice per response (Apache corks the socket for the same
 * reason). Not a socket (a test's pipe): writev.
 */
ssize_t hd_fd_send(void *ctx, const struct iovec *iov, int n, bool more)
{
    int fd = (int)(intptr_t)ctx;

    if (more) {
        struct msghdr msg = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)n};
        ssize_t w = hd_sendmsg(fd, &msg, MSG_MORE);
        if (w >= 0 || errno != ENOTSOCK) {
            return w;
        }
    }
    return hd_writev(fd, iov, n);
}

ssize_t hd_fd_sendfile(void *ctx, int fd, off_t *off, size_t len)
{
    return hd_sendfile((int)(intptr_t)ctx, fd, off, len);
}

hd_chain_sink_t hd_chain_sink_fd(int fd, bool use_sendfile)
{
    return (hd_chain_sink_t){.send = hd_fd_send,
                             .sendfile = use_sendfile ? hd_fd_sendfile : NULL,
                             .ctx = (void *)(intptr_t)fd};
}

size_t hd_chain_memory_size(const hd_chain_t *c)
{
    size_t total = 0;

    for (; c != NULL; c = c->next) {
        if (!c->buf->in_file) {
            total += (size_t)(c->buf->last - c->buf->pos);
        }
    }
    return total;
}

hd_chain_t *hd_chain_last(hd_chain_t *c)
{
    while (c != NULL && c->next != NULL) {
        c = c->next;
    }
    return c;
}

hd_buf_t *hd_buf_last(hd_pool_t *pool)
{
    hd_buf_t *b = hd_pcalloc(pool, sizeof(*b));

    b->fd = -1;
    b->memory = 1;
    b->last_buf = 1;
    return b;
}

int hd_chain_write(const hd_chain_sink_t *sink, hd_chain_t **chain, char *scratch,
                   size_t scratch_size, off_t *sent)
{
    struct iovec iov[HD_IOV_MAX];
    hd_chain_t *c = *chain;
    bool use_sendfile = sink->sendfile != NULL;
    int rc = HD_OK;

    if (scratch == NULL) {
        scratch_size = 0;
    }
    for (;;) {
        hd_buf_t *b;
        size_t total;
        ssize_t w;
        int n;

        c = skip_empty(c);
        if (c == NULL) {
            break;
        }
        b = c->buf;
        if (b->in_file && use_sendfile) {
            off_t off = b->file_pos;
            size_t len = (size_t)hd_buf_size(b);

            total = len < MAX_SEND_CHUNK ? len : MAX_SEND_CHUNK;
            w = sink->sendfile(sink->ctx, b->fd, &off, total);
            if (w == 0) {
                /* the file shrank under us: the promised length cannot be sent */
                errno = EIO;
                w = -1;
            }
        } else {
            n = gather(c, use_sendfile, scratch, scratch_size, iov, &total);
            if (n < 0) {
                rc = HD_ERROR;
                break;
            }
            if (n == 0) {
                /* a file buffer with sendfile off and no scratch space */
                errno = EINVAL;
                rc = HD_ERROR;
                break;
            }
            w = sink->send(sink->ctx, iov, n, use_sendfile && file_follows(c, n));
        }
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            rc = would_block() ? HD_AGAIN : HD_ERROR;
            break;
        }
        if (sent != NULL) {
            *sent += w;
        }
        c = hd_chain_consume(c, (size_t)w);
        if ((size_t)w < total) {
            /* a short write on a non-blocking socket: its buffer is full */
            rc = HD_AGAIN;
            break;
        }
    }
    c = skip_empty(c);
    *chain = c;
    if (c == NULL) {
        return rc == HD_ERROR ? HD_ERROR : HD_OK;
    }
    return rc;
}
