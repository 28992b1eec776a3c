/*
 * The queue between a child's listener thread and its worker threads, after
 * Apache's mpm_fdqueue.c: a ring of fixed-size elements under one mutex per
 * child, a condition variable the workers wait on, and the count of idle
 * workers that the listener consults before it accepts (worker) or to
 * decide whether the child takes more connections (event).
 */
#ifndef HD_MPM_FDQUEUE_H
#define HD_MPM_FDQUEUE_H

#include "hd.h"
#include "sys.h"

#include <pthread.h>

typedef struct {
    hd_mutex_t lock;
    hd_cond_t not_empty;   /**< workers wait here */
    hd_cond_t idler;       /**< the listener waits here for an idle worker */
    char *ring;
    size_t elem_size;
    unsigned cap;
    unsigned head;
    unsigned count;
    int waiting;                /**< workers blocked in hd_fdq_pop */
    int pending;                /**< of which signalled and not yet running */
    int listener_waiting;       /**< the listener is in hd_fdq_wait_for_idler */
    int threads;                /**< workers using the queue (hd_fdq_set_wake_limit) */
    int max_running;            /**< wake no worker beyond this many running, 0: no limit */
    uint64_t pops;              /**< elements taken so far */
    bool polling;               /**< a worker holds the poller role (hd_fdq_pop_or_poll) */
    bool terminated;
} hd_fdq_t;

/** Prepares @p q for elements of @p elem_size bytes, room for @p cap at first. HD_OK/HD_ERROR. */
int hd_fdq_init(hd_fdq_t *q, size_t elem_size, unsigned cap);

/** Frees the ring (no thread may use @p q any more). */
void hd_fdq_destroy(hd_fdq_t *q);

/**
 * Bounds the workers woken for queued elements: with @p max_running of the
 * @p threads workers not waiting, a push wakes no more (those running take
 * the elements in turn). For short, non-blocking jobs (event); 0 wakes a
 * worker per element (worker, whose jobs are whole connections).
 */
void hd_fdq_set_wake_limit(hd_fdq_t *q, int threads, int max_running);

/**
 * Wakes one more waiting worker if no element was taken since @p *last_pops
 * (updated) while elements are queued or nobody polls: the running workers
 * are stuck in long jobs.
 */
void hd_fdq_kick_if_stalled(hd_fdq_t *q, uint64_t *last_pops);

/** Appends @p n elements (the ring grows if needed) and wakes as many idle workers. */
void hd_fdq_push(hd_fdq_t *q, const void *elems, unsigned n);

/**
 * Takes the oldest element into @p elem, waiting while the queue is empty.
 * Returns HD_OK; HD_AGAIN when @p timeout_ms passed with nothing (the caller
 * may flush its buffers and call again); HD_DONE once the queue is
 * terminated and empty. Waits are counted, with their length, in the
 * calling thread's scoreboard slot (lock_waits, lock_wait_us).
 */
int hd_fdq_pop(hd_fdq_t *q, void *elem, int timeout_ms);

/**
 * hd_fdq_pop for workers that also poll (event): when the queue is empty
 * and no worker polls, returns HD_DECLINED at once: the caller now holds the
 * poller role, polls (pushing what it finds) and calls hd_fdq_poll_done.
 */
int hd_fdq_pop_or_poll(hd_fdq_t *q, void *elem, int timeout_ms);

/**
 * Gives the poller role back after queuing @p n elements (0 or more) the
 * poll found: the poller takes one of them itself next, so at most n - 1
 * workers are woken (one event at a time costs no wake-up at all).
 */
void hd_fdq_poll_done(hd_fdq_t *q, const void *elems, unsigned n);

/** Workers waiting and not yet woken: idle. A snapshot. */
int hd_fdq_idle(hd_fdq_t *q);

/**
 * The listener of the worker MPM: waits up to @p timeout_ms until a worker
 * is idle and no element is waiting for it (Apache's wait_for_idler), so an
 * accepted connection never waits in the queue. True if one is.
 */
bool hd_fdq_wait_for_idler(hd_fdq_t *q, int timeout_ms);

/** Ends the queue: workers take what is left, then pop returns HD_DONE. */
void hd_fdq_term(hd_fdq_t *q);

/** Wakes a listener waiting in hd_fdq_wait_for_idler (it returns and looks at its flags). */
void hd_fdq_interrupt(hd_fdq_t *q);

#endif
