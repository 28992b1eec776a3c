/*
 * Listening sockets. Sockets are non-blocking (children wait for them in
 * epoll and accept4 may find nothing) and carry TCP_NODELAY, which Linux
 * passes on to accepted sockets: one setsockopt per listener instead of one
 * per connection, and no Nagle delay between a header writev and a sendfile.
 */
#include "listen.h"

#include "config.h"
#include "core.h"
#include "log.h"
#include "sys.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <strings.h>

static bool same_addr(const hd_listen_t *a, const hd_listen_t *b)
{
    return a->addr_len == b->addr_len && memcmp(&a->addr, &b->addr, a->addr_len) == 0;
}

/*
 * AcceptFilter: with TCP_DEFER_ACCEPT the kernel hands a connection over only
 * once its first bytes have arrived, so a child's first read finds the
 * request instead of EAGAIN and a poll. Apache's default on Linux, with its
 * 30 s limit for a client that connects and sends nothing. Set on reused
 * sockets too, so a restart applies a changed AcceptFilter.
 */
static void apply_accept_filter(const hd_server_t *s, const hd_listen_t *l)
{
    const char *filter = hd_core_accept_filter(s, l->protocol ? l->protocol : "http");
    int secs = strcasecmp(filter, "none") == 0 ? 0 : 30;
    if (hd_setsockopt(l->fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &secs, sizeof(secs)) < 0) {
        hd_log_error(HD_LOG_WARNING, "core", "AH00076: Failed to enable TCP_DEFER_ACCEPT on %s: %s",
                     l->text, strerror(errno));
    }
}

static int open_one(hd_listen_t *l, int backlog)
{
    int one = 1;
    int fd = hd_socket(l->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        hd_log_error(HD_LOG_CRIT, "core", "AH00015: Unable to open logs: socket for %s: %s",
                     l->text, strerror(errno));
        return HD_ERROR;
    }
    hd_setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    hd_setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (l->addr.ss_family == AF_INET6) {
        hd_setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    }
    if (hd_bind(fd, (const struct sockaddr *)&l->addr, l->addr_len) < 0) {
        int err = errno;
        hd_log_error(HD_LOG_CRIT, "core",
                     "(%d)%s: AH00072: make_sock: could not bind to address %s", err,
                     strerror(err), l->text);
        hd_close(fd);
        return HD_ERROR;
    }
    if (hd_listen(fd, backlog) < 0) {
        hd_log_error(HD_LOG_CRIT, "core", "AH00075: unable to listen for connections on %s: %s",
                     l->text, strerror(errno));
        hd_close(fd);
        return HD_ERROR;
    }
    l->fd = fd;
    return HD_OK;
}

int hd_listen_open(hd_server_t *s, hd_server_t *old)
{
    int backlog = hd_core_sconf(s)->listen_backlog;
    for (hd_listen_t *l = s->listeners; l != NULL; l = l->next) {
        l->fd = -1;
        for (hd_listen_t *o = old ? old->listeners : NULL; o != NULL; o = o->next) {
            if (o->fd >= 0 && same_addr(l, o)) {
                l->fd = o->fd;
                o->fd = -1;
                break;
            }
        }
        if (l->fd < 0 && open_one(l, backlog) != HD_OK) {
            hd_log_error(HD_LOG_ALERT, "core",
                         "AH00016: no listening sockets available, shutting down");
            /* Give reused sockets back so the old configuration still serves. */
            for (hd_listen_t *n = s->listeners; n != NULL && n != l; n = n->next) {
                for (hd_listen_t *o = old ? old->listeners : NULL; o != NULL; o = o->next) {
                    if (o->fd < 0 && same_addr(n, o)) {
                        o->fd = n->fd;
                        n->fd = -1;
                        break;
                    }
                }
                if (n->fd >= 0) {
                    hd_close(n->fd);
                    n->fd = -1;
                }
            }
            return HD_ERROR;
        }
        apply_accept_filter(s, l);
    }
    if (old != NULL) {
        hd_listen_close(old);
    }
    return HD_OK;
}

void hd_listen_close(hd_server_t *s)
{
    for (hd_listen_t *l = s->listeners; l != NULL; l = l->next) {
        if (l->fd >= 0) {
            hd_close(l->fd);
            l->fd = -1;
        }
    }
}

int hd_listen_count(const hd_server_t *s)
{
    int n = 0;
    for (const hd_listen_t *l = s->listeners; l != NULL; l = l->next) {
        n++;
    }
    return n;
}
