/*
 * The listener-to-workers queue. One mutex per child: the listener takes it
 * once per batch of ready connections, a worker once per element. The
 * counted locks of the syscall layer (sys.h) make no system call while
 * nobody sleeps, and count the futex calls they make.
 */
#include "mpm_fdqueue.h"

#include "request.h"
#include "scoreboard.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int hd_fdq_init(hd_fdq_t *q, size_t elem_size, unsigned cap)
{
    memset(q, 0, sizeof(*q));
    q->elem_size = elem_size;
    q->cap = cap > 0 ? cap : 16;
    q->ring = malloc(q->cap * elem_size);
    if (q->ring == NULL) {
        return HD_ERROR;
    }
    q->lock = (hd_mutex_t)HD_MUTEX_INIT;
    q->not_empty = (hd_cond_t)HD_COND_INIT;
    q->idler = (hd_cond_t)HD_COND_INIT;
    return HD_OK;
}

void hd_fdq_destroy(hd_fdq_t *q)
{
    free(q->ring);
    q->ring = NULL;
}

/* Takes the lock; a contended lock counts as a wait in the caller's slot. */
static void lock(hd_fdq_t *q, hd_sb_worker_t *slot)
{
    if (hd_mutex_trylock(&q->lock)) {
        return;
    }
    int64_t t0 = hd_now_mono_us();
    hd_mutex_lock(&q->lock);
    if (slot != NULL) {
        slot->lock_waits++;
        slot->lock_wait_us += (uint64_t)(hd_now_mono_us() - t0);
    }
}

static void grow(hd_fdq_t *q, unsigned need)
{
    unsigned cap = q->cap;
    while (cap < need) {
        cap *= 2;
    }
    char *ring = malloc((size_t)cap * q->elem_size);
    if (ring == NULL) {
        abort(); /* as the pools do: out of memory is not recoverable here */
    }
    /* unroll the old ring to the start of the new one */
    for (unsigned i = 0; i < q->count; i++) {
        unsigned at = (q->head + i) % q->cap;
        memcpy(ring + (size_t)i * q->elem_size, q->ring + (size_t)at * q->elem_size,
               q->elem_size);
    }
    free(q->ring);
    q->ring = ring;
    q->cap = cap;
    q->head = 0;
}

void hd_fdq_set_wake_limit(hd_fdq_t *q, int threads, int max_running)
{
    hd_mutex_lock(&q->lock);
    q->threads = threads;
    q->max_running = max_running;
    hd_mutex_unlock(&q->lock);
}

/* Waiting workers to wake for @p n new elements (lock held). */
static int to_wake(const hd_fdq_t *q, unsigned n)
{
    int sleepers = q->waiting - q->pending;
    int wake = sleepers < (int)n ? sleepers : (int)n;
    if (q->max_running > 0) {
        int room = q->max_running - (q->threads - sleepers);
        wake = wake < room ? wake : room;
        if (wake < 1 && sleepers == q->threads && n > 0) {
            wake = 1; /* nobody runs: someone must */
        }
    }
    return wake > 0 ? wake : 0;
}

static void wake(hd_fdq_t *q, int n)
{
    for (int i = 0; i < n; i++) {
        q->pending++;
        hd_cond_signal(&q->not_empty);
    }
}

void hd_fdq_kick_if_stalled(hd_fdq_t *q, uint64_t *last_pops)
{
    hd_mutex_lock(&q->lock);
    bool work = q->count > 0 || (q->threads > 0 && !q->polling);
    if (work && q->pops == *last_pops && q->waiting > q->pending) {
        wake(q, 1);
    }
    *last_pops = q->pops;
    hd_mutex_unlock(&q->lock);
}

/* Appends @p n elements (lock held); the ring grows if needed. */
static void append(hd_fdq_t *q, const void *elems, unsigned n)
{
    if (q->count + n > q->cap) {
        grow(q, q->count + n);
    }
    for (unsigned i = 0; i < n; i++) {
        unsigned at = (q->head + q->count + i) % q->cap;
        memcpy(q->ring + (size_t)at * q->elem_size, (const char *)elems + (size_t)i * q->elem_size,
               q->elem_size);
    }
    q->count += n;
}

void hd_fdq_push(hd_fdq_t *q, const void *elems, unsigned n)
{
    if (n == 0) {
        return;
    }
    lock(q, NULL);
    append(q, elems, n);
    wake(q, to_wake(q, n));
    hd_mutex_unlock(&q->lock);
}

static void deadline_in(struct timespec *ts, int ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

/* Takes the head element (lock held, count > 0). */
static void take(hd_fdq_t *q, void *elem)
{
    memcpy(elem, q->ring + (size_t)q->head * q->elem_size, q->elem_size);
    q->head = (q->head + 1) % q->cap;
    q->count--;
    q->pops++;
    /* More queued than the running workers take at once: one more helps. */
    if (q->count > 0 && q->max_running > 0) {
        wake(q, to_wake(q, q->count) > 0 ? 1 : 0);
    }
}

/* Waits for an element or the end (lock held); false on timeout. */
static bool wait_some(hd_fdq_t *q, hd_sb_worker_t *slot, int timeout_ms, bool poll_role)
{
    struct timespec until;
    deadline_in(&until, timeout_ms);
    int rv = 0;
    q->waiting++;
    if (q->listener_waiting) {
        hd_cond_signal(&q->idler);
    }
    while (q->count == 0 && !q->terminated && rv != ETIMEDOUT && !(poll_role && !q->polling)) {
        rv = hd_cond_wait_until(&q->not_empty, &q->lock, &until);
    }
    q->waiting--;
    if (q->pending > 0) {
        q->pending--; /* (a timeout may take another's: only a heuristic) */
    }
    /* waiting here for work is being idle, not waiting for a lock: not counted */
    return rv != ETIMEDOUT;
}

int hd_fdq_pop(hd_fdq_t *q, void *elem, int timeout_ms)
{
    hd_sb_worker_t *slot = hd_sb_current();
    lock(q, slot);
    if (q->count == 0 && !q->terminated) {
        wait_some(q, slot, timeout_ms, false);
    }
    if (q->count == 0) {
        bool done = q->terminated;
        hd_mutex_unlock(&q->lock);
        return done ? HD_DONE : HD_AGAIN;
    }
    take(q, elem);
    hd_mutex_unlock(&q->lock);
    return HD_OK;
}

int hd_fdq_pop_or_poll(hd_fdq_t *q, void *elem, int timeout_ms)
{
    hd_sb_worker_t *slot = hd_sb_current();
    lock(q, slot);
    int rv;
    for (bool waited = false;; waited = true) {
        if (q->count > 0) {
            take(q, elem);
            rv = HD_OK;
            break;
        }
        if (q->terminated) {
            rv = HD_DONE;
            break;
        }
        if (!q->polling) {
            q->polling = true;
            rv = HD_DECLINED;
            break;
        }
        if (waited) {
            rv = HD_AGAIN; /* timed out: the caller may flush its buffers */
            break;
        }
        wait_some(q, slot, timeout_ms, true);
    }
    hd_mutex_unlock(&q->lock);
    return rv;
}

void hd_fdq_poll_done(hd_fdq_t *q, const void *elems, unsigned n)
{
    lock(q, NULL);
    append(q, elems, n);
    if (n > 1) {
        wake(q, to_wake(q, n - 1));
    }
    q->polling = false;
    hd_mutex_unlock(&q->lock);
}

int hd_fdq_idle(hd_fdq_t *q)
{
    hd_mutex_lock(&q->lock);
    int idle = q->waiting - q->pending;
    hd_mutex_unlock(&q->lock);
    return idle;
}

bool hd_fdq_wait_for_idler(hd_fdq_t *q, int timeout_ms)
{
    lock(q, NULL);
    if (q->waiting - (int)q->count <= 0 && !q->terminated) {
        struct timespec until;
        deadline_in(&until, timeout_ms);
        q->listener_waiting = 1;
        hd_cond_wait_until(&q->idler, &q->lock, &until);
        q->listener_waiting = 0;
    }
    bool idle = q->waiting - (int)q->count > 0 && !q->terminated;
    hd_mutex_unlock(&q->lock);
    return idle;
}

void hd_fdq_term(hd_fdq_t *q)
{
    hd_mutex_lock(&q->lock);
    q->terminated = true;
    hd_cond_broadcast(&q->not_empty);
    hd_cond_broadcast(&q->idler);
    hd_mutex_unlock(&q->lock);
}

void hd_fdq_interrupt(hd_fdq_t *q)
{
    hd_mutex_lock(&q->lock);
    hd_cond_broadcast(&q->idler);
    hd_mutex_unlock(&q->lock);
}
