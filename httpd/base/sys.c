/*
 * The syscall layer's out-of-line parts: kind names, the per-thread counter
 * pointer, a write loop for blocking descriptors, and counted locks.
 */
/* sys.h uses rename() without <stdio.h> */
#include <stdio.h>

#include "sys.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>

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

static long futex_wait(uint32_t *addr, uint32_t val, const struct timespec *until)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    /* WAIT_BITSET takes an absolute CLOCK_MONOTONIC time, as the MPMs' deadlines are */
    return syscall(SYS_futex, addr, FUTEX_WAIT_BITSET_PRIVATE, val, until, NULL,
                   FUTEX_BITSET_MATCH_ANY);
}

static void futex_wake(uint32_t *addr, int n)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

static uint32_t cas(uint32_t *p, uint32_t expected, uint32_t desired)
{
    __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_ACQUIRE,
                                __ATOMIC_RELAXED);
    return expected; /* the value that was there */
}

bool hd_mutex_trylock(hd_mutex_t *m)
{
    return cas(&m->state, 0, 1) == 0;
}

/* Takes the mutex marked as contended: whoever unlocks it must wake. */
static void lock_contended(hd_mutex_t *m)
{
    while (__atomic_exchange_n(&m->state, 2, __ATOMIC_ACQUIRE) != 0) {
        futex_wait(&m->state, 2, NULL);
    }
}

void hd_mutex_lock(hd_mutex_t *m)
{
    uint32_t c = cas(&m->state, 0, 1);
    if (c == 0) {
        return;
    }
    if (c != 2) {
        c = __atomic_exchange_n(&m->state, 2, __ATOMIC_ACQUIRE);
    }
    while (c != 0) {
        futex_wait(&m->state, 2, NULL);
        c = __atomic_exchange_n(&m->state, 2, __ATOMIC_ACQUIRE);
    }
}

void hd_mutex_unlock(hd_mutex_t *m)
{
    if (__atomic_fetch_sub(&m->state, 1, __ATOMIC_RELEASE) != 1) {
        __atomic_store_n(&m->state, 0, __ATOMIC_RELEASE);
        futex_wake(&m->state, 1);
    }
}

int hd_cond_wait_until(hd_cond_t *c, hd_mutex_t *m, const struct timespec *until)
{
    uint32_t seq = __atomic_load_n(&c->seq, __ATOMIC_SEQ_CST);
    __atomic_fetch_add(&c->waiters, 1, __ATOMIC_SEQ_CST);
    hd_mutex_unlock(m);
    long r = futex_wait(&c->seq, seq, until);
    int timed_out = r < 0 && errno == ETIMEDOUT;
    __atomic_fetch_sub(&c->waiters, 1, __ATOMIC_SEQ_CST);
    /* other waiters may be queued on the mutex behind us: take it as contended */
    lock_contended(m);
    return timed_out ? ETIMEDOUT : 0;
}

void hd_cond_signal(hd_cond_t *c)
{
    __atomic_fetch_add(&c->seq, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&c->waiters, __ATOMIC_SEQ_CST) > 0) {
        futex_wake(&c->seq, 1);
    }
}

void hd_cond_broadcast(hd_cond_t *c)
{
    __atomic_fetch_add(&c->seq, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&c->waiters, __ATOMIC_SEQ_CST) > 0) {
        futex_wake(&c->seq, INT_MAX);
    }
}
