/*
 * Connection I/O: how a connection's bytes reach the socket. The connection
 * state machine reads, writes and closes only through c->io, so another
 * implementation (TLS) can stand between it and the descriptor. The plain
 * one is the counted system calls themselves. A pre_connection hook picks
 * the implementation per connection (by c->listener) and keeps its state in
 * c->io_ctx, which lives outside the connection's pool: the event MPM frees
 * an idle connection's pool and keeps the I/O state (hd_conn_keep_t).
 */
#ifndef HD_CONN_IO_H
#define HD_CONN_IO_H

#include "hd.h"

#include <sys/types.h>
#include <sys/uio.h>

typedef struct hd_conn_io hd_conn_io_t;

struct hd_conn_io {
    const char *name; /**< "plain", "tls": for logs and the status page */
    /** Reads up to @p len bytes: >0 bytes, 0 at end of input, -1 with errno (EAGAIN: none yet). */
    ssize_t (*recv)(hd_conn_t *c, void *buf, size_t len);
    /** Sends gathered memory; @p more: file bytes follow at once. Bytes taken or -1 (errno). */
    ssize_t (*send)(hd_conn_t *c, const struct iovec *iov, int n, bool more);
    /** Sends @p len bytes of file @p fd from *@p off, advancing it; NULL when the
     *  implementation cannot (the writer then reads the file and uses send). */
    ssize_t (*sendfile)(hd_conn_t *c, int fd, off_t *off, size_t len);
    /** No more output will follow (a FIN; TLS: close_notify). HD_OK or HD_ERROR. */
    int (*shutdown)(hd_conn_t *c);
    /** Releases the I/O state and closes the socket. */
    void (*close)(hd_conn_t *c);
    /** True if input was read from the socket but not yet returned by recv, so
     *  waiting for the socket to become readable would wait for nothing. NULL: never. */
    bool (*pending)(const hd_conn_t *c);
};

/** The plain implementation: read, writev/sendmsg, sendfile, shutdown, close. */
extern const hd_conn_io_t hd_conn_io_plain;

#endif
