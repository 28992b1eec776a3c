/*
 * One thread's load: its connections, one epoll instance, and the schedule.
 *
 * Closed loop: a connection sends its next request as soon as the previous
 * response is complete. Open loop: request i of this thread is due at
 * t0 + (index + i * threads) / rate; a free connection takes the oldest due
 * request, and when none is free the request waits, its latency still
 * counted from the time it was due, so that a stalled server shows as
 * latency instead of as fewer requests (no coordinated omission).
 *
 * Cost: each request is one send() of pre-built bytes and usually one
 * read() into a per-thread scratch buffer; sockets are registered once,
 * edge-triggered for both directions, so no epoll_ctl is needed per request.
 */
#include "loadgen.h"
#include "resp.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#define SCRATCH_SIZE (256 * 1024)
#define MAX_EVENTS 256
/* how often in-flight requests are checked against -T */
#define SCAN_NS 50000000ull

enum { C_IDLE, C_CONNECTING, C_WRITING, C_READING };

typedef struct {
    int fd;              /* -1: no connection */
    uint8_t state;
    bool fresh;          /* this request opened the connection */
    bool retried;        /* already retried once on a new connection */
    uint32_t url;
    size_t wpos;         /* request bytes sent */
    uint64_t t_intended, t_start, t_connect, t_write, t_first;
    lg_resp_t resp;
    size_t carry_len;    /* an incomplete line kept between reads */
    char *carry;         /* allocated the first time a line is cut */
} conn_t;

typedef struct {
    const lg_config_t *cfg;
    lg_stats_t *st;
    int ep;
    conn_t *conns;
    int nconns;
    int *idle;           /* ring of free connections, least recently used first */
    int idle_head;
    int nidle;
    int inflight;
    uint64_t t0, t_end, t_hard, timeout_ns;
    uint64_t last;            /* the last request finished, well or not */
    uint64_t last_ok;         /* the last response completed */
    uint64_t send_stop;       /* when sending stopped */
    uint64_t limit, issued;
    bool open_loop, sending;
    double first_ns, step_ns; /* open loop: this thread's schedule */
    uint64_t seq;             /* open loop: due requests taken */
    uint64_t rng;
    char *scratch;
    bool no_pwait2;
} loop_t;

#define SYS(lp, kind) ((lp)->st->sys[(kind)]++)

static uint64_t next_rand(loop_t *lp)
{
    /* xorshift64*: cheap, and enough to spread requests over URLs */
    lp->rng ^= lp->rng >> 12;
    lp->rng ^= lp->rng << 25;
    lp->rng ^= lp->rng >> 27;
    return lp->rng * 2685821657736338717ull;
}

static uint32_t pick_url(loop_t *lp)
{
    const lg_config_t *cfg = lp->cfg;
    double x;
    size_t lo = 0, hi = cfg->nurls - 1;

    if (cfg->nurls == 1)
        return 0;
    /* 53 random bits make a uniform double in [0, 1) */
    x = (double)(next_rand(lp) >> 11) * (1.0 / 9007199254740992.0) * cfg->total_weight;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (cfg->cumw[mid] > x)
            hi = mid;
        else
            lo = mid + 1;
    }
    return (uint32_t)lo;
}

static lg_second_t *second_of(loop_t *lp, uint64_t now)
{
    uint64_t s = (now - lp->t0) / 1000000000ull;

    if (s >= lp->st->nseconds)
        s = lp->st->nseconds - 1;
    return &lp->st->timeline[s];
}

static void close_fd(loop_t *lp, conn_t *c)
{
    if (c->fd >= 0) {
        /* closing the only descriptor also removes it from the epoll set */
        close(c->fd);
        SYS(lp, LG_SYS_CLOSE);
        c->fd = -1;
    }
    c->carry_len = 0;
}

static void release(loop_t *lp, conn_t *c, uint64_t now)
{
    c->state = C_IDLE;
    lp->inflight--;
    lp->idle[(lp->idle_head + lp->nidle++) % lp->nconns] = (int)(c - lp->conns);
    if (now > lp->last)
        lp->last = now;
}

static void fail(loop_t *lp, conn_t *c, lg_err_t kind, uint64_t now)
{
    lp->st->urls[c->url].errors[kind]++;
    second_of(lp, now)->errors++;
    close_fd(lp, c);
    release(lp, c, now);
}

static void complete(loop_t *lp, conn_t *c, uint64_t now)
{
    lg_url_stats_t *u = &lp->st->urls[c->url];
    uint64_t lat = now - c->t_intended, us = lat / 1000;
    lg_second_t *sec = second_of(lp, now);
    int status = c->resp.status, cls = status / 100;

    lg_hist_record(&lp->st->hist, us);
    if (u->hist == NULL) {
        /* once per URL and thread, so that a long list costs memory only where used */
        u->hist = malloc(sizeof(*u->hist));
        if (u->hist == NULL) {
            fprintf(stderr, "hd_loadgen: out of memory\n");
            exit(2);
        }
        lg_hist_init(u->hist);
    }
    lg_hist_record(u->hist, us);
    u->responses++;
    u->classes[cls >= 1 && cls <= 5 ? cls : 0]++;
    if (cls == 2)
        u->found++;
    else if (status == 404)
        u->missed++;
    else
        u->other++;
    u->bytes += c->resp.bytes;
    if (c->fresh) {
        u->connects++;
        u->sum_connect += c->t_connect - c->t_start;
    }
    if (c->t_write == 0)
        c->t_write = c->t_first;
    u->sum_wait += c->t_start - c->t_intended;
    u->sum_write += c->t_write - c->t_start;
    u->sum_read += c->t_first - c->t_start;
    u->sum_close += now - c->t_start;
    u->sum_total += lat;
    lp->last_ok = now;
    sec->responses++;
    sec->sum_us += us;
    if (us > sec->max_us)
        sec->max_us = us;

    if (c->resp.close || !lp->cfg->keepalive)
        close_fd(lp, c);
    else
        c->carry_len = 0;
    release(lp, c, now);
}

static void send_request(loop_t *lp, conn_t *c);
static void open_and_send(loop_t *lp, conn_t *c);

/* A reused connection that died before any answer: the server closed it while
 * the request was on its way, a normal keep-alive race. Retry once, fresh. */
static bool retry(loop_t *lp, conn_t *c)
{
    if (c->fresh || c->retried || c->t_first != 0)
        return false;
    close_fd(lp, c);
    c->retried = true;
    c->wpos = 0;
    lg_resp_init(&c->resp);
    lp->st->reconnects++;
    open_and_send(lp, c);
    return true;
}

static void send_request(loop_t *lp, conn_t *c)
{
    const lg_url_t *u = &lp->cfg->urls[c->url];
    ssize_t n;

    for (;;) {
        n = send(c->fd, u->req + c->wpos, u->req_len - c->wpos, MSG_NOSIGNAL);
        SYS(lp, LG_SYS_WRITE);
        if (n >= 0) {
            c->wpos += (size_t)n;
            if (c->wpos == u->req_len) {
                c->t_write = lg_now();
                c->state = C_READING;
                return;
            }
            continue;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            c->state = C_WRITING;   /* the edge-triggered EPOLLOUT resumes it */
            return;
        }
        if (!retry(lp, c))
            fail(lp, c, c->t_connect == 0 ? LG_ERR_CONNECT : LG_ERR_WRITE, lg_now());
        return;
    }
}

static void open_and_send(loop_t *lp, conn_t *c)
{
    const lg_config_t *cfg = lp->cfg;
    struct epoll_event ev;
    int fd, one = 1;

    c->fresh = true;
    c->t_connect = 0;
    fd = socket(cfg->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    SYS(lp, LG_SYS_SOCKET);
    if (fd < 0) {
        fail(lp, c, LG_ERR_CONNECT, lg_now());
        return;
    }
    c->fd = fd;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    SYS(lp, LG_SYS_OTHER);
    ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    ev.data.ptr = c;
    SYS(lp, LG_SYS_EPOLL_CTL);
    if (epoll_ctl(lp->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
        fail(lp, c, LG_ERR_CONNECT, lg_now());
        return;
    }
    SYS(lp, LG_SYS_CONNECT);
    if (connect(fd, (const struct sockaddr *)&cfg->addr, cfg->addrlen) == 0) {
        c->t_connect = lg_now();
        send_request(lp, c);
    } else if (errno == EINPROGRESS) {
        c->state = C_CONNECTING;
    } else {
        fail(lp, c, LG_ERR_CONNECT, lg_now());
    }
}

static void start(loop_t *lp, conn_t *c, uint64_t intended, uint64_t now)
{
    c->url = pick_url(lp);
    c->t_intended = intended;
    c->t_start = now;
    c->t_write = c->t_first = 0;
    c->retried = false;
    c->wpos = 0;
    c->carry_len = 0;
    lg_resp_init(&c->resp);
    lp->st->urls[c->url].requests++;
    lp->issued++;
    lp->inflight++;
    if (now - intended > lp->st->max_wait_ns)
        lp->st->max_wait_ns = now - intended;
    if (c->fd < 0) {
        open_and_send(lp, c);
    } else {
        c->fresh = false;
        c->state = C_WRITING;
        send_request(lp, c);
    }
}

/* Keeps an incomplete line for the next read. */
static bool keep_carry(conn_t *c, const char *p, size_t n)
{
    if (n && c->carry == NULL) {
        c->carry = malloc(LG_RESP_MAX_LINE + 1);
        if (c->carry == NULL)
            return false;
    }
    if (n)
        memmove(c->carry, p, n);
    c->carry_len = n;
    return true;
}

static void on_readable(loop_t *lp, conn_t *c, uint32_t ev)
{
    for (;;) {
        size_t have = c->carry_len, room = SCRATCH_SIZE - have, used;
        ssize_t n;
        uint64_t now;
        int rc;

        if (have)
            memcpy(lp->scratch, c->carry, have);
        n = read(c->fd, lp->scratch + have, room);
        SYS(lp, LG_SYS_READ);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        now = lg_now();
        if (c->state == C_IDLE) {
            /* the server closed an idle keep-alive connection (or spoke out of turn) */
            if (n == 0)
                lp->st->idle_closes++;
            close_fd(lp, c);
            return;
        }
        if (n <= 0) {
            if (n == 0 && lg_resp_eof(&c->resp) == LG_RESP_DONE) {
                c->resp.close = true;
                complete(lp, c, now);
            } else if (!retry(lp, c)) {
                fail(lp, c, LG_ERR_READ, now);
            }
            return;
        }
        if (c->t_first == 0)
            c->t_first = now;
        if (c->state == C_WRITING)
            c->state = C_READING;   /* answered before the request was all sent */
        rc = lg_resp_feed(&c->resp, lp->scratch, have + (size_t)n, &used);
        if (rc == LG_RESP_DONE) {
            if (used < have + (size_t)n)
                c->resp.close = true;   /* bytes beyond the response: do not reuse */
            if ((ev & EPOLLRDHUP) && !c->resp.close) {
                /* closed right after the answer without saying so: do not reuse */
                lp->st->idle_closes++;
                c->resp.close = true;
            }
            complete(lp, c, now);
            return;
        }
        if (rc == LG_RESP_ERROR || !keep_carry(c, lp->scratch + used, have + (size_t)n - used)) {
            fail(lp, c, LG_ERR_PARSE, now);
            return;
        }
        /*
         * A short read emptied the socket, and edge-triggered, the next data
         * wakes us; but a FIN that came with this data will not wake us
         * again, so when the peer has closed, read on to the end.
         */
        if ((size_t)n < room && !(ev & (EPOLLRDHUP | EPOLLHUP)))
            return;
    }
}

static void on_event(loop_t *lp, conn_t *c, uint32_t ev)
{
    const uint32_t in = EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP;

    switch (c->state) {
    case C_CONNECTING:
        if (ev & (EPOLLERR | EPOLLHUP)) {
            fail(lp, c, LG_ERR_CONNECT, lg_now());
        } else if (ev & EPOLLOUT) {
            c->t_connect = lg_now();
            c->state = C_WRITING;
            send_request(lp, c);
        }
        break;
    case C_WRITING:
        if (ev & EPOLLOUT)
            send_request(lp, c);
        if (c->state != C_IDLE && c->fd >= 0 && (ev & in))
            on_readable(lp, c, ev);
        break;
    case C_READING:
        if (ev & in)
            on_readable(lp, c, ev);
        break;
    default:
        if (c->fd >= 0 && (ev & in))
            on_readable(lp, c, ev);
        break;
    }
}

static uint64_t due(const loop_t *lp)
{
    return lp->t0 + (uint64_t)(lp->first_ns + (double)lp->seq * lp->step_ns);
}

static void stop_sending(loop_t *lp, uint64_t now)
{
    lp->sending = false;
    lp->send_stop = now;
    if (lp->open_loop) {
        uint64_t end = now < lp->t_end ? now : lp->t_end, sched = 0;
        double span = (double)(end - lp->t0) - lp->first_ns;

        /* requests due before the end, whether or not a connection was free */
        if (span > 0) {
            sched = (uint64_t)(span / lp->step_ns);
            if (lp->first_ns + (double)sched * lp->step_ns < (double)(end - lp->t0))
                sched++;
        }
        if (lp->limit && sched > lp->limit)
            sched = lp->limit;
        if (sched < lp->seq)
            sched = lp->seq;
        lp->st->scheduled = sched;
        lp->st->behind = sched - lp->seq;
    }
}

static void dispatch(loop_t *lp, uint64_t now)
{
    while (lp->sending) {
        uint64_t intended = now;
        conn_t *c;

        if (lg_stop || now >= lp->t_end || (lp->limit && lp->issued >= lp->limit)) {
            stop_sending(lp, now);
            return;
        }
        if (lp->nidle == 0)
            return;
        if (lp->open_loop) {
            intended = due(lp);
            if (intended >= lp->t_end) {
                stop_sending(lp, now);
                return;
            }
            if (intended > now)
                return;
            lp->seq++;
        }
        /*
         * The least recently used connection: requests spread over all of
         * them, so none sits idle long enough for the server to time it out
         * (under prefork an idle keep-alive connection holds a whole process).
         */
        c = &lp->conns[lp->idle[lp->idle_head]];
        lp->idle_head = (lp->idle_head + 1) % lp->nconns;
        lp->nidle--;
        start(lp, c, intended, now);
        now = lg_now();
    }
}

static void scan_timeouts(loop_t *lp, uint64_t now, lg_err_t kind, uint64_t limit_ns)
{
    for (int i = 0; i < lp->nconns; i++) {
        conn_t *c = &lp->conns[i];

        if (c->state != C_IDLE && now - c->t_start >= limit_ns)
            fail(lp, c, kind, now);
    }
}

static int wait_events(loop_t *lp, struct epoll_event *evs, uint64_t wait_ns)
{
    int n;

    SYS(lp, LG_SYS_EPOLL_WAIT);
    if (!lp->no_pwait2) {
        struct timespec ts = { (time_t)(wait_ns / 1000000000ull),
                               (long)(wait_ns % 1000000000ull) };

        n = epoll_pwait2(lp->ep, evs, MAX_EVENTS, &ts, NULL);
        if (n >= 0 || errno != ENOSYS)
            return n;
        lp->no_pwait2 = true;
    }
    /* older kernels: milliseconds, rounded up so that we never wake early and spin */
    return epoll_wait(lp->ep, evs, MAX_EVENTS, (int)((wait_ns + 999999) / 1000000));
}

static void loop(loop_t *lp)
{
    struct epoll_event evs[MAX_EVENTS];
    uint64_t next_scan = lp->t0 + SCAN_NS;

    for (;;) {
        uint64_t now = lg_now(), wake;
        int n;

        if (now >= lp->t_hard) {
            if (lp->sending)
                stop_sending(lp, now);
            scan_timeouts(lp, now, LG_ERR_ABORTED, 0);
            break;
        }
        if (now >= next_scan) {
            scan_timeouts(lp, now, LG_ERR_TIMEOUT, lp->timeout_ns);
            next_scan = now + SCAN_NS;
        }
        dispatch(lp, now);
        if (!lp->sending && lp->inflight == 0)
            break;
        wake = lp->t_hard;
        if (lp->inflight && next_scan < wake)
            wake = next_scan;
        if (lp->sending) {
            if (lp->t_end < wake)
                wake = lp->t_end;
            if (lp->open_loop && lp->nidle && due(lp) < wake)
                wake = due(lp);
        }
        if (!lp->sending && lg_stop && lp->inflight && now + SCAN_NS < wake)
            wake = now + SCAN_NS;
        now = lg_now();
        n = wait_events(lp, evs, wake > now ? wake - now : 0);
        if (n < 0 && errno != EINTR) {
            perror("hd_loadgen: epoll_wait");
            break;
        }
        for (int i = 0; i < n; i++)
            on_event(lp, evs[i].data.ptr, evs[i].events);
    }
}

void lg_thread_run(lg_thread_t *t)
{
    const lg_config_t *cfg = t->cfg;
    loop_t lp;

    memset(&lp, 0, sizeof(lp));
    lp.ep = -1;
    if (t->connections == 0)
        return;     /* -n smaller than -t: nothing left for this thread */
    lp.cfg = cfg;
    lp.st = &t->stats;
    lp.nconns = t->connections;
    lp.conns = calloc((size_t)lp.nconns, sizeof(*lp.conns));
    lp.idle = calloc((size_t)lp.nconns, sizeof(*lp.idle));
    lp.scratch = malloc(SCRATCH_SIZE);
    lp.ep = epoll_create1(EPOLL_CLOEXEC);
    if (lp.conns == NULL || lp.idle == NULL || lp.scratch == NULL || lp.ep < 0) {
        t->fatal = lp.ep < 0 ? "epoll_create1 failed" : "out of memory";
        goto out;
    }
    for (int i = 0; i < lp.nconns; i++) {
        lp.conns[i].fd = -1;
        lp.idle[i] = i;
    }
    lp.nidle = lp.nconns;
    lp.t0 = t->t0;
    lp.last = lp.last_ok = lp.send_stop = t->t0;
    lp.t_end = t->t0 + (uint64_t)(cfg->duration * 1e9);
    lp.t_hard = lp.t_end + LG_HARD_EXTRA_S * 1000000000ull;
    lp.timeout_ns = (uint64_t)(cfg->timeout * 1e9);
    lp.limit = t->max_requests;
    lp.sending = true;
    lp.rng = (cfg->seed + 1) * 0x9E3779B97F4A7C15ull + (uint64_t)t->index * 0xBF58476D1CE4E5B9ull;
    if (lp.rng == 0)
        lp.rng = 1;
    if (cfg->rate > 0) {
        lp.open_loop = true;
        lp.first_ns = (double)t->index * 1e9 / cfg->rate;
        lp.step_ns = (double)cfg->threads * 1e9 / cfg->rate;
    }

    loop(&lp);
    /* requests stuck until their timeout must not dilute the rate */
    t->stats.elapsed_ns = (lp.last_ok > lp.send_stop ? lp.last_ok : lp.send_stop) - t->t0;
    t->stats.run_ns = lp.last - t->t0;

out:
    for (int i = 0; lp.conns && i < lp.nconns; i++) {
        close_fd(&lp, &lp.conns[i]);
        free(lp.conns[i].carry);
    }
    if (lp.ep >= 0)
        close(lp.ep);
    free(lp.conns);
    free(lp.idle);
    free(lp.scratch);
}
