/*
 * Child-side pieces shared by the MPMs.
 */
#include "mpm_common.h"

#include "connection.h"
#include "listen.h"
#include "log.h"
#include "process.h"
#include "request.h"
#include "sys.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Monotonic ms when the graceful stop began; 0 while serving. */
static int64_t stop_ms;
static int dying;

/* Out of descriptors or memory: one line when it starts, one when it ends (per process). */
static hd_log_episode_t accept_shortage;

int hd_mpm_accept(hd_listen_t *l, struct sockaddr_storage *peer, socklen_t *peer_len,
                  const char *log_name)
{
    *peer_len = sizeof(*peer);
    int fd = hd_accept4(l->fd, (struct sockaddr *)peer, peer_len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
        hd_log_episode_end(&accept_shortage, HD_LOG_ERR, log_name, "AH00069: accept");
        return fd;
    }
    switch (errno) {
    case EAGAIN:
    case EINTR:
    case ECONNABORTED:
    case EPROTO:
        break;
    case EMFILE:
    case ENFILE:
    case ENOBUFS:
    case ENOMEM: {
        int err = errno;
        hd_log_episode_fail(&accept_shortage, HD_LOG_ERR, log_name,
                            "AH00069: accept: (client socket) %s", strerror(err));
        errno = err;
        break;
    }
    default: {
        int err = errno;
        hd_log_error(HD_LOG_ERR, log_name, "AH00069: accept: %s", strerror(err));
        errno = err;
        break;
    }
    }
    return -1;
}

bool hd_mpm_accept_exhausted(int err)
{
    return err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM;
}

static bool is_wildcard(const hd_listen_t *l)
{
    if (l->addr.ss_family == AF_INET) {
        return ((const struct sockaddr_in *)&l->addr)->sin_addr.s_addr == htonl(INADDR_ANY);
    }
    return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)&l->addr)->sin6_addr);
}

const struct sockaddr *hd_mpm_local_addr(hd_listen_t *l, int fd, struct sockaddr_storage *buf,
                                         socklen_t *len)
{
    if (!is_wildcard(l)) {
        *len = l->addr_len;
        return (const struct sockaddr *)&l->addr;
    }
    *len = sizeof(*buf);
    if (hd_getsockname(fd, (struct sockaddr *)buf, len) < 0) {
        *len = l->addr_len;
        return (const struct sockaddr *)&l->addr;
    }
    return (const struct sockaddr *)buf;
}

void hd_mpm_begin_stop(void)
{
    if (__atomic_load_n(&stop_ms, __ATOMIC_ACQUIRE) == 0) {
        int64_t now = hd_now_mono_us() / 1000;
        __atomic_store_n(&stop_ms, now > 0 ? now : 1, __ATOMIC_RELEASE);
        __atomic_store_n(&hd_stop_keepalive, 1, __ATOMIC_RELAXED);
    }
}

void hd_mpm_begin_die(void)
{
    __atomic_store_n(&dying, 1, __ATOMIC_RELEASE);
}

bool hd_mpm_dying(void)
{
    return __atomic_load_n(&dying, __ATOMIC_ACQUIRE) != 0;
}

bool hd_mpm_stopping(void)
{
    return __atomic_load_n(&stop_ms, __ATOMIC_ACQUIRE) != 0;
}

int hd_mpm_idle_grace_left_ms(void)
{
    int64_t since = __atomic_load_n(&stop_ms, __ATOMIC_ACQUIRE);
    int64_t left = since + HD_MPM_IDLE_GRACE_MS - hd_now_mono_us() / 1000;
    return left > 0 ? (int)left : 0;
}

void hd_mpm_serve(hd_conn_t *c, int stop_fd, int die_fd)
{
    hd_server_t *s = c->server;
    bool signalled_here = stop_fd < 0 && die_fd < 0;
    hd_conn_want_t w = hd_conn_process(c);
    while (w != HD_WANT_CLOSE) {
        if (signalled_here) {
            /* prefork: the handlers only set the flags */
            if (hd_child_die) {
                hd_mpm_begin_die();
            } else if (hd_child_graceful) {
                hd_mpm_begin_stop();
                /* one thread: nothing else uses the listeners; let them go now,
                 * so new clients are refused instead of queued for nobody */
                hd_listen_close(s);
            }
        }
        if (hd_mpm_dying()) {
            break;
        }
        bool stopping = hd_mpm_stopping();
        int left = hd_conn_timeout_ms(c);
        /* every wait is sliced, so buffered logs get flushed within a second */
        int slice = left > 1000 ? 1000 : left;
        if (w == HD_WANT_IDLE) {
            if (stopping) {
                int grace = hd_mpm_idle_grace_left_ms();
                if (grace == 0) {
                    break;
                }
                slice = grace < slice ? grace : slice;
            }
        }
        /* Once stopping, the stop pipe stays readable: it has told us already. */
        struct pollfd pfd[3] = {{.fd = c->fd, .events = w == HD_WANT_WRITE ? POLLOUT : POLLIN}};
        nfds_t nfds = 1;
        if (die_fd >= 0) {
            pfd[nfds++] = (struct pollfd){.fd = die_fd, .events = POLLIN};
        }
        if (stop_fd >= 0 && !stopping) {
            pfd[nfds++] = (struct pollfd){.fd = stop_fd, .events = POLLIN};
        }
        int n = hd_poll(pfd, nfds, slice);
        hd_modules_flush_due(s);
        if (n > 0 && pfd[0].revents != 0) {
            w = hd_conn_process(c);
        } else if (n > 0) {
            continue; /* a pipe: look at the flags again */
        } else if (n == 0) {
            if (slice < left) {
                continue;
            }
            w = hd_conn_timed_out(c);
        } else if (errno != EINTR) {
            break;
        }
    }
    hd_conn_close(c);
}

void hd_mpm_block_signals(sigset_t *wait_mask)
{
    static const int sigs[] = {SIGTERM, SIGINT, SIGUSR1, SIGHUP, SIGWINCH};
    sigset_t block;
    sigemptyset(&block);
    for (size_t i = 0; i < HD_ARRAY_SIZE(sigs); i++) {
        sigaddset(&block, sigs[i]);
    }
    hd_sigprocmask(SIG_BLOCK, &block, wait_mask);
    for (size_t i = 0; i < HD_ARRAY_SIZE(sigs); i++) {
        sigdelset(wait_mask, sigs[i]);
    }
}

bool hd_mpm_wait(int fd, int timeout_ms, const sigset_t *wait_mask)
{
    struct timespec ts = {.tv_sec = timeout_ms / 1000, .tv_nsec = (timeout_ms % 1000) * 1000000L};
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    int n = hd_ppoll(&pfd, fd >= 0 ? 1 : 0, &ts, wait_mask);
    return n > 0 && (pfd.revents & POLLIN);
}

/* Parses a CPU list such as "0-3,6,8-9". */
static int count_cpus(const char *s)
{
    int n = 0;
    while (*s >= '0' && *s <= '9') {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (*end == '-') {
            b = strtol(end + 1, &end, 10);
        }
        n += b >= a ? (int)(b - a + 1) : 1;
        s = *end == ',' ? end + 1 : end;
    }
    return n;
}

int hd_mpm_ncpus(void)
{
    static int ncpus;
    if (ncpus == 0) {
        char buf[256];
        int fd = hd_open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC, 0);
        ssize_t len = fd >= 0 ? hd_read(fd, buf, sizeof(buf) - 1) : -1;
        if (fd >= 0) {
            hd_close(fd);
        }
        buf[len > 0 ? len : 0] = '\0';
        int n = count_cpus(buf);
        ncpus = n > 0 ? n : 1;
    }
    return ncpus;
}

void hd_mpm_wake(int fd)
{
    char b = 1;
    while (hd_write(fd, &b, 1) < 0 && errno == EINTR) {
    }
}

void hd_mpm_drain(int fd)
{
    char buf[64];
    while (hd_read(fd, buf, sizeof(buf)) > 0) {
    }
}
