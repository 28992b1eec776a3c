/*
 * The epoll backend of the poller, and the timeout queues.
 */
#include "poller.h"

#include "sys.h"

#include <errno.h>

int hd_poller_open(hd_poller_t *p)
{
    p->fd = hd_epoll_create();
    return p->fd < 0 ? HD_ERROR : HD_OK;
}

void hd_poller_close(hd_poller_t *p)
{
    if (p->fd >= 0) {
        hd_close(p->fd);
        p->fd = -1;
    }
}

static uint32_t to_epoll(unsigned events)
{
    uint32_t e = 0;
    if (events & HD_POLL_IN) {
        e |= EPOLLIN;
    }
    if (events & HD_POLL_OUT) {
        e |= EPOLLOUT;
    }
    if (events & HD_POLL_ONESHOT) {
        e |= EPOLLONESHOT;
    }
    if (events & HD_POLL_EXCLUSIVE) {
        e |= EPOLLEXCLUSIVE;
    }
    if (events & HD_POLL_EDGE) {
        e |= EPOLLET;
    }
    return e;
}

int hd_poller_add(hd_poller_t *p, int fd, unsigned events, uint64_t data)
{
    struct epoll_event ev = {.events = to_epoll(events), .data.u64 = data};
    return hd_epoll_ctl(p->fd, EPOLL_CTL_ADD, fd, &ev);
}

int hd_poller_mod(hd_poller_t *p, int fd, unsigned events, uint64_t data)
{
    struct epoll_event ev = {.events = to_epoll(events), .data.u64 = data};
    return hd_epoll_ctl(p->fd, EPOLL_CTL_MOD, fd, &ev);
}

int hd_poller_del(hd_poller_t *p, int fd)
{
    struct epoll_event ev = {0};
    return hd_epoll_ctl(p->fd, EPOLL_CTL_DEL, fd, &ev);
}

int hd_poller_wait(hd_poller_t *p, hd_poll_event_t *out, int max, int timeout_ms)
{
    struct epoll_event ev[256];
    if (max > (int)HD_ARRAY_SIZE(ev)) {
        max = (int)HD_ARRAY_SIZE(ev);
    }
    int n = hd_epoll_wait(p->fd, ev, max, timeout_ms);
    for (int i = 0; i < n; i++) {
        unsigned e = 0;
        if (ev[i].events & EPOLLIN) {
            e |= HD_POLL_IN;
        }
        if (ev[i].events & EPOLLOUT) {
            e |= HD_POLL_OUT;
        }
        if (ev[i].events & (EPOLLERR | EPOLLHUP)) {
            e |= HD_POLL_ERR;
        }
        out[i].data = ev[i].data.u64;
        out[i].events = e;
    }
    return n;
}

void hd_tq_init(hd_tq_t *q)
{
    q->head.next = q->head.prev = &q->head;
    q->head.queue = q;
    q->count = 0;
}

void hd_tq_append(hd_tq_t *q, hd_timer_t *t, int64_t deadline_ms)
{
    hd_timer_t *after = q->head.prev;

    /* the sentinel's deadline is never compared: the walk stops there */
    while (after != &q->head && after->deadline_ms > deadline_ms) {
        after = after->prev;
    }
    t->deadline_ms = deadline_ms;
    t->queue = q;
    t->prev = after;
    t->next = after->next;
    after->next->prev = t;
    after->next = t;
    q->count++;
}

void hd_tq_remove(hd_timer_t *t)
{
    if (t->queue == NULL) {
        return;
    }
    t->prev->next = t->next;
    t->next->prev = t->prev;
    t->queue->count--;
    t->queue = NULL;
    t->next = t->prev = NULL;
}
