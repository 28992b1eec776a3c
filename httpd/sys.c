/*
 * The syscall layer's out-of-line parts: kind names, the per-thread counter
 * pointer and a write loop for blocking descriptors.
 */
/* sys.h uses rename() without <stdio.h> */
#include <stdio.h>

#include "sys.h"

#include <errno.h>

const char *const hd_sys_kind_names[HD_SYS_NKINDS] = {
    [HD_SYS_ACCEPT] = "accept",       [HD_SYS_READ] = "read",
    [HD_SYS_WRITE] = "write",         [HD_SYS_SENDFILE] = "sendfile",
    [HD_SYS_OPEN] = "open",           [HD_SYS_STAT] = "stat",
    [HD_SYS_CLOSE] = "close",         [HD_SYS_EPOLL_WAIT] = "epoll_wait",
    [HD_SYS_EPOLL_CTL] = "epoll_ctl", [HD_SYS_OTHER] = "other",
};

static __thread uint64_t private_counters[HD_SYS_NKINDS];

/*
 * C cannot initialise a thread-local pointer with the address of another
 * thread-local object, so the pointer starts at a process-wide array and the
 * main thread is moved to its private one by a constructor. Threads the
 * server starts call hd_sys_bind_counters() (with a scoreboard slot or NULL)
 * before their first system call; until then they count in the shared array,
 * which is only a fallback and never read as anyone's figure.
 */
static uint64_t unbound_counters[HD_SYS_NKINDS];

__thread uint64_t *hd_sys_counters = unbound_counters;

__attribute__((constructor)) static void bind_main_thread(void)
{
    hd_sys_counters = private_counters;
}

void hd_sys_bind_counters(uint64_t *counters)
{
    hd_sys_counters = counters != NULL ? counters : private_counters;
}

ssize_t hd_write_full(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    size_t left = n;

    while (left > 0) {
        ssize_t w = hd_write(fd, p, left);

        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        if (w == 0) {
            /* no progress and no error: give up rather than spin */
            errno = EIO;
            return -1;
        }
        p += w;
        left -= (size_t)w;
    }
    return (ssize_t)n;
}
