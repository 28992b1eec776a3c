/*
 * Buffers and chains, shaped like nginx's ngx_buf_t: a buffer is a memory
 * range or a file range, and a chain links them so the writer can turn a
 * response into one writev, or a header writev and a sendfile.
 */
#ifndef HD_BUF_H
#define HD_BUF_H

#include "hd.h"

#include <sys/uio.h>

struct hd_buf {
    char *start;      /**< start of the memory block */
    char *pos;        /**< first byte not yet consumed/sent */
    char *last;       /**< one past the last byte of data */
    char *end;        /**< one past the end of the memory block */
    int fd;           /**< file, when in_file */
    off_t file_pos;   /**< next file byte to send, when in_file */
    off_t file_last;  /**< one past the last file byte, when in_file */
    unsigned in_file : 1;
    unsigned memory : 1;
    unsigned flush : 1;
    unsigned last_buf : 1;
};

struct hd_chain {
    hd_buf_t *buf;
    hd_chain_t *next;
};

/** A memory buffer with room for @p size bytes. */
hd_buf_t *hd_buf_create(hd_pool_t *pool, size_t size);

/** A memory buffer pointing at existing bytes (not copied). */
hd_buf_t *hd_buf_wrap(hd_pool_t *pool, const void *data, size_t len);

/** A buffer for bytes [@p off, @p off + @p len) of the open file @p fd. */
hd_buf_t *hd_buf_file(hd_pool_t *pool, int fd, off_t off, off_t len);

/** Bytes left in @p b (memory or file). */
static inline off_t hd_buf_size(const hd_buf_t *b)
{
    return b->in_file ? b->file_last - b->file_pos : (off_t)(b->last - b->pos);
}

/** Appends @p b at the end of the chain *@p head; returns the new link. */
hd_chain_t *hd_chain_append(hd_pool_t *pool, hd_chain_t **head, hd_buf_t *b);

/** Total bytes left in the chain. */
off_t hd_chain_size(const hd_chain_t *c);

/**
 * Marks @p sent bytes of the chain as consumed, advancing pos/file_pos;
 * returns the first link that still has bytes (NULL when all were sent).
 */
hd_chain_t *hd_chain_consume(hd_chain_t *c, size_t sent);

/**
 * Where hd_chain_write sends: a plain descriptor (hd_chain_sink_fd), or a
 * connection's I/O layer (TLS). Both calls return bytes taken, or -1 with
 * errno (EAGAIN when full), like writev and sendfile.
 */
typedef struct {
    /** Sends gathered memory; @p more: a file's bytes follow at once (cork them together). */
    ssize_t (*send)(void *ctx, const struct iovec *iov, int n, bool more);
    /** Sends file bytes from *@p off, advancing it; NULL: file bytes are read
     *  into the scratch space and sent with send. */
    ssize_t (*sendfile)(void *ctx, int fd, off_t *off, size_t len);
    void *ctx;
} hd_chain_sink_t;

/** A sink for the socket or pipe @p fd: writev (sendmsg with MSG_MORE before a
 *  file), and sendfile when @p use_sendfile. */
hd_chain_sink_t hd_chain_sink_fd(int fd, bool use_sendfile);

/** The plain descriptor's send: @p ctx is the descriptor (intptr_t). */
ssize_t hd_fd_send(void *ctx, const struct iovec *iov, int n, bool more);
/** The plain descriptor's sendfile: @p ctx is the socket (intptr_t). */
ssize_t hd_fd_sendfile(void *ctx, int fd, off_t *off, size_t len);

/**
 * Writes as much of the chain as @p sink takes without blocking: runs of
 * memory buffers in one send (up to IOV_MAX), file buffers with the sink's
 * sendfile when it has one, else read into @p scratch and sent with the
 * memory around them. Returns the chain left to send (NULL when done)
 * through *@p chain, and HD_OK (all sent), HD_AGAIN (sink full) or HD_ERROR
 * (errno set). Adds the bytes sent to *@p sent.
 */
int hd_chain_write(const hd_chain_sink_t *sink, hd_chain_t **chain, char *scratch,
                   size_t scratch_size, off_t *sent);

/** Bytes of memory (not file) buffers left in the chain. */
size_t hd_chain_memory_size(const hd_chain_t *c);

/** The last link of the chain, or NULL for an empty chain. */
hd_chain_t *hd_chain_last(hd_chain_t *c);

/** A buffer with no bytes that marks the end of a body (last_buf). */
hd_buf_t *hd_buf_last(hd_pool_t *pool);

#endif
