/*
 * A small poller in the manner of redis's ae and nginx's event actions:
 * add, modify, delete and wait on file descriptors, with epoll behind one
 * file so that another backend is one file more. And timeout queues, as
 * Apache event.c's timeout_queue: one FIFO list per timeout value, so that
 * appending, removing and finding the next expiry are O(1) and the loop's
 * wait ends at the earliest head.
 */
#ifndef HD_POLLER_H
#define HD_POLLER_H

#include "hd.h"

/** Event bits for hd_poller_add/mod and in hd_poll_event_t.events. */
#define HD_POLL_IN 0x01u
#define HD_POLL_OUT 0x02u
#define HD_POLL_ERR 0x04u       /**< reported only: error or hang-up */
#define HD_POLL_ONESHOT 0x10u   /**< disarmed after one event until hd_poller_mod */
#define HD_POLL_EXCLUSIVE 0x20u /**< one waiter of several is woken (listening sockets) */
#define HD_POLL_EDGE 0x40u      /**< reported once per change of readiness */

typedef struct {
    int fd;
} hd_poller_t;

typedef struct {
    uint64_t data;
    unsigned events;
} hd_poll_event_t;

/** Creates the poller. HD_OK, or HD_ERROR with errno set. */
int hd_poller_open(hd_poller_t *p);
void hd_poller_close(hd_poller_t *p);

/** Starts watching @p fd for @p events; @p data comes back with its events. 0 or -1. */
int hd_poller_add(hd_poller_t *p, int fd, unsigned events, uint64_t data);
/** Changes (or re-arms, for ONESHOT) what @p fd is watched for. 0 or -1. */
int hd_poller_mod(hd_poller_t *p, int fd, unsigned events, uint64_t data);
/** Stops watching @p fd (closing it does that too). 0 or -1. */
int hd_poller_del(hd_poller_t *p, int fd);

/**
 * Waits up to @p timeout_ms (-1: no limit) and fills at most @p max events.
 * Returns their number, 0 on timeout, -1 on error (EINTR included).
 */
int hd_poller_wait(hd_poller_t *p, hd_poll_event_t *ev, int max, int timeout_ms);

/** An entry of a timeout queue; embed it in the object that waits. */
typedef struct hd_timer hd_timer_t;
struct hd_timer {
    hd_timer_t *prev;
    hd_timer_t *next;
    int64_t deadline_ms;       /**< monotonic */
    struct hd_tq *queue;       /**< NULL when in no queue */
};

/**
 * Timers ordered by deadline, the next to expire at the head. Used as a FIFO
 * of timers with the same timeout value, where each new deadline is the
 * latest and goes in at the tail at once; a deadline set sooner (a
 * RequestReadTimeout limit) walks back from the tail to its place.
 */
typedef struct hd_tq {
    hd_timer_t head;           /**< sentinel */
    unsigned count;
} hd_tq_t;

void hd_tq_init(hd_tq_t *q);

/** Inserts @p t (in no queue) with @p deadline_ms: after every timer due no later. */
void hd_tq_append(hd_tq_t *q, hd_timer_t *t, int64_t deadline_ms);

/** Removes @p t from its queue; nothing if it is in none. */
void hd_tq_remove(hd_timer_t *t);

/** The oldest timer of @p q, or NULL. */
static inline hd_timer_t *hd_tq_first(const hd_tq_t *q)
{
    return q->count > 0 ? q->head.next : NULL;
}

#endif
