/*
 * The plain connection I/O: each call is one counted system call on the
 * socket (sys.h), so syscalls per request stay exact.
 */
#include "conn_io.h"

/* sys.h uses rename() without <stdio.h> */
#include <stdio.h>

#include "buf.h"
#include "request.h"
#include "sys.h"

static ssize_t plain_recv(hd_conn_t *c, void *buf, size_t len)
{
    return hd_read(c->fd, buf, len);
}

static ssize_t plain_send(hd_conn_t *c, const struct iovec *iov, int n, bool more)
{
    return hd_fd_send((void *)(intptr_t)c->fd, iov, n, more);
}

static ssize_t plain_sendfile(hd_conn_t *c, int fd, off_t *off, size_t len)
{
    return hd_sendfile(c->fd, fd, off, len);
}

static int plain_shutdown(hd_conn_t *c)
{
    return hd_shutdown(c->fd, SHUT_WR) == 0 ? HD_OK : HD_ERROR;
}

static void plain_close(hd_conn_t *c)
{
    hd_close(c->fd);
}

const hd_conn_io_t hd_conn_io_plain = {
    .name = "plain",
    .recv = plain_recv,
    .send = plain_send,
    .sendfile = plain_sendfile,
    .shutdown = plain_shutdown,
    .close = plain_close,
    .pending = NULL,
};
