/*
 * The event MPM, as Apache's event.c: like worker, a master process and
 * children of ThreadsPerChild threads, but a connection holds a thread only
 * while hd_conn_process runs. When it returns a want (read, write, idle
 * between requests, lingering), the thread parks the connection: in the
 * timeout queue of that want, its socket watched by the child's epoll set
 * (edge-triggered, added once: no epoll_ctl per request). It is handed to a
 * thread again when the socket is ready, or ended when its queue says it
 * timed out.
 *
 * The listener is a role, not a thread (leader/followers): a thread with no
 * job and nobody polling becomes the poller, waits in epoll, accepts, expires
 * timeouts, queues what it found and then serves jobs like the others. So
 * while threads are busy nobody sleeps in epoll to be woken per event (each
 * such wake-up is a context switch, which a listener thread pays per
 * request); events gather until a thread is free and come in one batch.
 * No more threads are woken than there are CPUs (hd_fdq_set_wake_limit);
 * the main thread wakes another one if the queue stalls behind long jobs.
 *
 * Timeouts: one FIFO queue per timeout value (KeepAliveTimeout, Timeout for
 * reads, Timeout for writes, the linger time), so each deadline appended is
 * the latest of its queue; the poller's wait ends at the earliest head and
 * expiry costs O(1) per connection.
 *
 * Memory: an idle connection beyond the first few of the child gives its
 * pool (the hd_conn_t and its input buffer, a pool block) back and keeps only
 * its econn_t record (under 200 bytes, the I/O state kept with it); a thread rebuilds the hd_conn_t when
 * the next request arrives.
 *
 * A child takes new connections only while it has fewer than ThreadsPerChild
 * + AsyncRequestWorkerFactor x idle threads (Apache's connections_above_limit);
 * otherwise its listening sockets leave the epoll set until a connection
 * closes.
 */
#include "config.h"
#include "connection.h"
#include "ids.h"
#include "listen.h"
#include "log.h"
#include "module.h"
#include "mpm.h"
#include "mpm_common.h"
#include "mpm_fdqueue.h"
#include "mpm_master.h"
#include "mpm_threads.h"
#include "poller.h"
#include "pool.h"
#include "process.h"
#include "scoreboard.h"
#include "sys.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define LOG_NAME "mpm_event"
#define EVENTS_PER_WAIT 256
#define ACCEPTS_PER_EVENT 64
#define MAX_JOBS (EVENTS_PER_WAIT + ACCEPTS_PER_EVENT)
#define RECORDS_PER_CHUNK 256
/* Idle connections a child keeps whole (per worker thread): re-creating the
 * hd_conn_t of a connection that is busy again at once would be wasted. */
#define WHOLE_IDLE_PER_THREAD 2
/* Jobs queued (or nobody polling) this long with no job taken: wake a thread. */
#define STALL_CHECK_MS 100
#define IDLE_FLUSH_MS 1000
#define IDLE_SLEEP_MS 30000

/*
 * What epoll hands back: a connection's record index and generation, or a
 * special index for the wake-up pipe and the listening sockets. The
 * generation makes an event that outlived its connection harmless: the
 * record may be free, or another connection's, by the time it is read.
 */
#define IDX_SPECIAL 0xFFFFFF00u
#define IDX_WAKE 0xFFFFFFFFu
#define IDX_LISTENER(i) (0xFFFFFFFEu - (uint32_t)(i))
#define EV_DATA(idx, gen) (((uint64_t)(gen) << 32) | (idx))

extern hd_module_t hd_mpm_event_module;

typedef enum { Q_KEEPALIVE, Q_READ, Q_WRITE, Q_LINGER, Q_COUNT } queue_t;
typedef enum { JOB_READY, JOB_TIMEOUT } job_kind_t;

typedef union {
    struct sockaddr sa;
    struct sockaddr_in in;
    struct sockaddr_in6 in6;
} addr_t;

/*
 * A connection of the child, whole (c) or released (c NULL, idle). It is
 * parked (its timer in a queue) while it waits for the socket; otherwise a
 * thread owns it, and an event that comes meanwhile sets pending, so the
 * owner runs it again instead of parking it (the socket is edge-triggered:
 * that event will not come twice).
 */
typedef struct econn econn_t;
struct econn {
    hd_timer_t timer;
    hd_conn_t *c;
    hd_listen_t *l;
    econn_t *next_free;
    uint32_t idx;              /* in the child's record table */
    uint32_t gen;              /* +1 each time the record is reused */
    int fd;
    hd_conn_keep_t keep;       /* what outlives the pool while released */
    bool released;
    uint8_t queue;             /* queue_t while parked */
    bool pending;              /* an event came while not parked (tq_lock) */
    bool registered;           /* the fd is in the epoll set */
    bool want_out;             /* ... with EPOLLOUT */
    bool lingering;
    socklen_t peer_len;
    socklen_t local_len;       /* 0: the listener's address */
    addr_t peer;
    addr_t local;
};

typedef struct {
    econn_t *e;
    job_kind_t kind;
} job_t;

typedef struct {
    econn_t records[RECORDS_PER_CHUNK];
} chunk_t;

typedef struct {
    hd_server_t *s;
    const hd_mpm_threads_conf_t *conf;
    int slot;
    hd_poller_t poller;
    hd_fdq_t q;
    pthread_mutex_t tq_lock;        /* the timeout queues, pending, sleep_until, whole_idle */
    hd_tq_t queues[Q_COUNT];
    int64_t sleep_until;            /* when the poller's wait ends; 0 while it is awake */
    int whole_idle;                 /* parked idle connections that kept their hd_conn_t */
    int wake_pipe[2];               /* wakes the poller */
    int main_pipe[2];               /* wakes the main thread */
    int stop;                       /* main -> poller: stop gracefully */
    int self_stop;                  /* poller -> main: MaxConnectionsPerChild reached */
    int accept_paused;              /* poller -> workers: wake me when a connection closes */
    bool listeners_released;        /* poller: stopping, its listening sockets closed */
    uint64_t shed;                  /* idle keep-alive connections closed for new clients */
    int workers_left;
    int conns;                      /* open connections */
    int lingering;
    /* the poller's own state: only the thread holding the role touches it */
    bool accepting;
    bool stopping;
    bool done;                      /* stopped: the queue is terminated */
    int accepted;
    int64_t accept_pause_until;     /* out of descriptors: no accept before then */
    chunk_t **chunks;               /* the record table, grown by the poller */
    int nchunks;
    econn_t *free_local;
    /* records freed by any thread: a lock-free stack the poller takes whole */
    econn_t *free_shared;
    hd_listen_t **listeners;
    int nlisteners;
} child_t;

typedef struct {
    child_t *ch;
    int index;
} worker_arg_t;

static hd_mpm_threads_conf_t *conf_of(const hd_server_t *s)
{
    return hd_get_server_config(s, &hd_mpm_event_module);
}

static int configure(hd_server_t *s)
{
    return hd_mpm_threads_configure(conf_of(s), LOG_NAME);
}

static int query(const hd_server_t *s, hd_mpmq_t what, int *result)
{
    return hd_mpm_threads_query(conf_of(s), s, what, result);
}

static int64_t now_ms(void)
{
    return hd_now_mono_us() / 1000;
}

/* ---- connection records ---- */

static bool add_chunk(child_t *ch)
{
    if ((uint64_t)(ch->nchunks + 1) * RECORDS_PER_CHUNK >= IDX_SPECIAL) {
        return false;
    }
    chunk_t **tab = realloc(ch->chunks, sizeof(*tab) * (size_t)(ch->nchunks + 1));
    if (tab == NULL) {
        return false;
    }
    ch->chunks = tab;
    chunk_t *k = calloc(1, sizeof(*k));
    if (k == NULL) {
        return false;
    }
    tab[ch->nchunks] = k;
    for (int i = RECORDS_PER_CHUNK - 1; i >= 0; i--) {
        k->records[i].idx = (uint32_t)(ch->nchunks * RECORDS_PER_CHUNK + i);
        k->records[i].next_free = ch->free_local;
        ch->free_local = &k->records[i];
    }
    ch->nchunks++;
    return true;
}

/* The poller's: a record for a new connection. */
static econn_t *record_alloc(child_t *ch)
{
    if (ch->free_local == NULL) {
        ch->free_local = __atomic_exchange_n(&ch->free_shared, NULL, __ATOMIC_ACQUIRE);
    }
    if (ch->free_local == NULL && !add_chunk(ch)) {
        return NULL;
    }
    econn_t *e = ch->free_local;
    ch->free_local = e->next_free;
    uint32_t idx = e->idx, gen = e->gen + 1;
    memset(e, 0, sizeof(*e));
    e->idx = idx;
    e->gen = gen;
    return e;
}

static void record_free(child_t *ch, econn_t *e)
{
    econn_t *head = __atomic_load_n(&ch->free_shared, __ATOMIC_RELAXED);
    do {
        e->next_free = head;
    } while (!__atomic_compare_exchange_n(&ch->free_shared, &head, e, true, __ATOMIC_RELEASE,
                                          __ATOMIC_RELAXED));
}

/* The record an event names, or NULL if that connection is gone (poller). */
static econn_t *record_of(child_t *ch, uint64_t data)
{
    uint32_t idx = (uint32_t)data, gen = (uint32_t)(data >> 32);
    if (idx >= (uint32_t)ch->nchunks * RECORDS_PER_CHUNK) {
        return NULL;
    }
    econn_t *e = &ch->chunks[idx / RECORDS_PER_CHUNK]->records[idx % RECORDS_PER_CHUNK];
    return e->gen == gen ? e : NULL;
}

/* ---- connections ---- */

static void close_conn(child_t *ch, econn_t *e)
{
    if (e->c != NULL) {
        hd_conn_close(e->c);
    } else {
        hd_conn_close_kept(e->fd, &e->keep);
    }
    if (e->lingering) {
        __atomic_sub_fetch(&ch->lingering, 1, __ATOMIC_RELAXED);
    }
    __atomic_sub_fetch(&ch->conns, 1, __ATOMIC_RELEASE);
    record_free(ch, e);
    if (__atomic_load_n(&ch->accept_paused, __ATOMIC_RELAXED) &&
        __atomic_exchange_n(&ch->accept_paused, 0, __ATOMIC_ACQ_REL)) {
        hd_mpm_wake(ch->wake_pipe[1]); /* room again: the poller may accept */
    }
}

/* Builds the hd_conn_t of a new or released connection. */
static void make_whole(child_t *ch, econn_t *e)
{
    const struct sockaddr *local = e->local_len > 0 ? &e->local.sa
                                                    : (const struct sockaddr *)&e->l->addr;
    socklen_t local_len = e->local_len > 0 ? e->local_len : e->l->addr_len;
    e->c = hd_conn_create(ch->s, e->fd, e->l, &e->peer.sa, e->peer_len, local, local_len,
                          e->released ? &e->keep : NULL);
    e->released = false;
    e->c->mpm_data = e;
}

/* Gives back the pool of an idle connection; only the record remains. */
static void release(econn_t *e)
{
    hd_conn_release(e->c, &e->keep);
    e->released = true;
    e->c = NULL;
}

/* Watches the socket (tq_lock held): once, edge-triggered; EPOLLOUT from the first write wait. */
static int watch(child_t *ch, econn_t *e, bool out)
{
    unsigned events = HD_POLL_IN | HD_POLL_EDGE | (out || e->want_out ? HD_POLL_OUT : 0);
    int rv = 0;
    if (!e->registered) {
        rv = hd_poller_add(&ch->poller, e->fd, events, EV_DATA(e->idx, e->gen));
        e->registered = rv == 0;
        e->want_out = out;
    } else if (out && !e->want_out) {
        rv = hd_poller_mod(&ch->poller, e->fd, events, EV_DATA(e->idx, e->gen));
        e->want_out = rv == 0;
    }
    return rv;
}

/*
 * Parks @p e after hd_conn_process returned @p w (a thread's last step), or
 * closes it. Returns false if an event came while the thread ran it: the
 * caller runs it again.
 */
static bool park(child_t *ch, econn_t *e, hd_conn_want_t w)
{
    hd_conn_t *c = e->c;
    int64_t deadline = c->deadline_ms;
    queue_t qi;
    switch (w) {
    case HD_WANT_CLOSE:
        close_conn(ch, e);
        return true;
    case HD_WANT_IDLE:
        if (hd_mpm_stopping()) {
            int grace = hd_mpm_idle_grace_left_ms();
            if (grace == 0) {
                close_conn(ch, e);
                return true;
            }
            int64_t end = now_ms() + grace;
            deadline = deadline < end ? deadline : end;
        }
        qi = Q_KEEPALIVE;
        break;
    case HD_WANT_WRITE:
        qi = Q_WRITE;
        break;
    case HD_WANT_READ:
    default:
        qi = Q_READ;
        if (c->state == HD_CONN_LINGER) {
            qi = Q_LINGER;
            if (!e->lingering) {
                e->lingering = true;
                __atomic_add_fetch(&ch->lingering, 1, __ATOMIC_RELAXED);
            }
        }
        break;
    }
    pthread_mutex_lock(&ch->tq_lock);
    if (e->pending) {
        e->pending = false;
        pthread_mutex_unlock(&ch->tq_lock);
        return false;
    }
    if (qi == Q_KEEPALIVE) {
        if (ch->whole_idle >= ch->conf->threads_per_child * WHOLE_IDLE_PER_THREAD) {
            release(e);
        } else {
            ch->whole_idle++;
        }
    }
    e->queue = (uint8_t)qi;
    hd_tq_append(&ch->queues[qi], &e->timer, deadline);
    /* Watched under the lock: the poller cannot time it out half-parked. */
    int rv = watch(ch, e, qi == Q_WRITE);
    bool wake = ch->sleep_until != 0 && deadline < ch->sleep_until;
    if (wake) {
        ch->sleep_until = deadline;
    }
    if (rv < 0) {
        hd_tq_remove(&e->timer);
        if (qi == Q_KEEPALIVE && e->c != NULL) {
            ch->whole_idle--;
        }
    }
    pthread_mutex_unlock(&ch->tq_lock);
    hd_sb_set_state(HD_SB_READY);
    if (rv < 0) {
        hd_log_error(HD_LOG_ERR, LOG_NAME, "cannot watch a connection: %s", strerror(errno));
        close_conn(ch, e);
    } else if (wake) {
        hd_mpm_wake(ch->wake_pipe[1]);
    }
    return true;
}

/* Takes @p e out of its timeout queue (tq_lock held). */
static void unpark(child_t *ch, econn_t *e)
{
    if (e->queue == Q_KEEPALIVE && e->c != NULL) {
        ch->whole_idle--;
    }
    hd_tq_remove(&e->timer);
}

/* ---- worker threads ---- */

static int poll_once(child_t *ch, job_t *jobs);

static void run_job(child_t *ch, job_t *job)
{
    econn_t *e = job->e;
    if (hd_mpm_dying()) {
        close_conn(ch, e);
        return;
    }
    if (e->c == NULL) {
        make_whole(ch, e);
    }
    hd_conn_want_t w = job->kind == JOB_TIMEOUT ? hd_conn_timed_out(e->c) : hd_conn_process(e->c);
    while (!park(ch, e, w)) {
        w = hd_conn_process(e->c);
    }
}

static void *worker_thread(void *arg)
{
    worker_arg_t *wa = arg;
    child_t *ch = wa->ch;
    hd_server_t *s = ch->s;
    hd_sb_worker_t *slot = hd_sb_worker(ch->slot, wa->index);
    memset(slot, 0, sizeof(*slot));
    slot->pid = hd_pid();
    slot->tid = hd_tid();
    slot->generation = s->generation;
    hd_sb_bind_worker(slot);

    static __thread job_t jobs[MAX_JOBS];
    /* Buffered logs are flushed after a second without work; then sleep long. */
    int wait_ms = IDLE_FLUSH_MS;
    for (;;) {
        hd_sb_set_state(HD_SB_READY);
        job_t job;
        int rv = hd_fdq_pop_or_poll(&ch->q, &job, wait_ms);
        if (rv == HD_OK) {
            run_job(ch, &job);
            hd_modules_flush_due(s);
            wait_ms = IDLE_FLUSH_MS;
        } else if (rv == HD_DECLINED) {
            int n = poll_once(ch, jobs);
            hd_fdq_poll_done(&ch->q, jobs, n > 0 ? (unsigned)n : 0);
            if (n < 0) {
                hd_modules_flush(s);
            }
        } else if (rv == HD_AGAIN) {
            hd_modules_flush(s);
            wait_ms = IDLE_SLEEP_MS;
        } else {
            break;
        }
    }
    hd_modules_flush(s);
    hd_sb_set_state(HD_SB_DEAD);
    hd_sb_bind_worker(NULL);
    hd_pool_recycler_drain();
    if (__atomic_sub_fetch(&ch->workers_left, 1, __ATOMIC_ACQ_REL) == 0) {
        hd_mpm_wake(ch->main_pipe[1]);
    }
    return NULL;
}

/* ---- the poller role ---- */

/* Apache's connections_above_limit: too many connections for the idle threads. */
static bool above_limit(child_t *ch)
{
    int idle = hd_fdq_idle(&ch->q) + 1; /* the poller itself is idle */
    int conns = __atomic_load_n(&ch->conns, __ATOMIC_RELAXED) -
                __atomic_load_n(&ch->lingering, __ATOMIC_RELAXED);
    int limit = ch->conf->threads_per_child +
                (int)((int64_t)idle * ch->conf->async_factor / HD_MPM_FACTOR_SCALE);
    return conns >= limit;
}

static econn_t *of_timer(hd_timer_t *t);

/*
 * Whether no child of the server can take a new client: every child the
 * server may run is running and at its connection limit. Until then a full
 * child leaves new clients to the others (and the master starts more); only
 * then does it give up idle keep-alive connections for them.
 */
static bool server_full(const child_t *ch)
{
    int running = 0;
    for (int i = 0; i < hd_scoreboard->global->server_limit; i++) {
        const hd_sb_process_t *p = &hd_scoreboard->processes[i];
        if (p->pid == 0 || p->quiescing) {
            continue;
        }
        running++;
        if (i != ch->slot && !p->not_accepting) {
            return false;
        }
    }
    return running >= ch->conf->daemons_limit;
}

/* At the limit: whether a new client may take an idle keep-alive connection's place. */
static bool may_shed(const child_t *ch)
{
    return __atomic_load_n(&ch->queues[Q_KEEPALIVE].count, __ATOMIC_RELAXED) > 0 &&
           server_full(ch);
}

/*
 * Closes the child's oldest idle keep-alive connection to make room for a
 * new client (nginx drains its reusable connections the same way; Apache's
 * event MPM kills keep-alive connections when its workers are busy): an idle
 * client loses only a connection it can open again, while a new client that
 * waits behind a full child would get no answer at all.
 */
static bool shed_keepalive(child_t *ch)
{
    econn_t *e = NULL;
    pthread_mutex_lock(&ch->tq_lock);
    hd_timer_t *t = hd_tq_first(&ch->queues[Q_KEEPALIVE]);
    if (t != NULL) {
        e = of_timer(t);
        unpark(ch, e);
    }
    pthread_mutex_unlock(&ch->tq_lock);
    if (e == NULL) {
        return false;
    }
    close_conn(ch, e);
    ch->shed++;
    return true;
}

static void set_accepting(child_t *ch, bool on)
{
    for (int i = 0; i < ch->nlisteners; i++) {
        int fd = ch->listeners[i]->fd;
        if (on) {
            hd_poller_add(&ch->poller, fd, HD_POLL_IN | HD_POLL_EXCLUSIVE,
                          EV_DATA(IDX_LISTENER(i), 0));
        } else {
            hd_poller_del(&ch->poller, fd);
        }
    }
}

/* Accepts from @p l while the child has room; appends the jobs to @p jobs. */
static int accept_some(child_t *ch, hd_listen_t *l, job_t *jobs, int room)
{
    int n = 0;
    int limit = ch->conf->max_conns_per_child;
    while (n < room && (limit == 0 || ch->accepted < limit)) {
        /* full: a new client takes an idle keep-alive connection's place, if it may */
        bool full = above_limit(ch);
        if (full && !may_shed(ch)) {
            break;
        }
        econn_t *e = record_alloc(ch);
        if (e == NULL) {
            break;
        }
        struct sockaddr_storage peer;
        socklen_t peer_len;
        int fd = hd_mpm_accept(l, &peer, &peer_len, LOG_NAME);
        if (fd < 0) {
            if (hd_mpm_accept_exhausted(errno)) {
                ch->accept_pause_until = now_ms() + HD_MPM_ACCEPT_BACKOFF_MS;
            }
            record_free(ch, e);
            break;
        }
        if (full) {
            shed_keepalive(ch);
        }
        e->fd = fd;
        e->l = l;
        e->peer_len = peer_len < sizeof(e->peer) ? peer_len : (socklen_t)sizeof(e->peer);
        memcpy(&e->peer, &peer, e->peer_len);
        struct sockaddr_storage local;
        socklen_t local_len;
        const struct sockaddr *la = hd_mpm_local_addr(l, fd, &local, &local_len);
        if (la == (const struct sockaddr *)&local) {
            e->local_len = local_len < sizeof(e->local) ? local_len : (socklen_t)sizeof(e->local);
            memcpy(&e->local, &local, e->local_len);
        }
        __atomic_add_fetch(&ch->conns, 1, __ATOMIC_RELAXED);
        ch->accepted++;
        jobs[n++] = (job_t){.e = e, .kind = JOB_READY};
    }
    return n;
}

/* Milliseconds until the earliest deadline (tq_lock held), capped at @p cap. */
static int next_timeout(child_t *ch, int64_t now, int cap)
{
    int64_t first = now + cap;
    for (int i = 0; i < Q_COUNT; i++) {
        hd_timer_t *t = hd_tq_first(&ch->queues[i]);
        if (t != NULL && t->deadline_ms < first) {
            first = t->deadline_ms;
        }
    }
    ch->sleep_until = first;
    return first > now ? (int)(first - now) : 0;
}

static econn_t *of_timer(hd_timer_t *t)
{
    return (econn_t *)((char *)t - offsetof(econn_t, timer));
}

/* Ends the connections whose deadline passed. */
static void expire(child_t *ch, int64_t now)
{
    econn_t *ended = NULL, *timed_out = NULL;
    bool grace_over = hd_mpm_stopping() && hd_mpm_idle_grace_left_ms() == 0;
    pthread_mutex_lock(&ch->tq_lock);
    for (int i = 0; i < Q_COUNT; i++) {
        hd_timer_t *t;
        while ((t = hd_tq_first(&ch->queues[i])) != NULL &&
               (t->deadline_ms <= now || (i == Q_KEEPALIVE && grace_over))) {
            econn_t *e = of_timer(t);
            unpark(ch, e);
            /* Idle and lingering ones just close; a read or write may owe a 408. */
            econn_t **list = (i == Q_READ || i == Q_WRITE) ? &timed_out : &ended;
            e->next_free = *list;
            *list = e;
        }
    }
    pthread_mutex_unlock(&ch->tq_lock);
    while (ended != NULL) {
        econn_t *e = ended;
        ended = e->next_free;
        close_conn(ch, e);
    }
    job_t jobs[64];
    int n = 0;
    while (timed_out != NULL) {
        econn_t *e = timed_out;
        timed_out = e->next_free;
        jobs[n++] = (job_t){.e = e, .kind = JOB_TIMEOUT};
        if (n == (int)HD_ARRAY_SIZE(jobs)) {
            hd_fdq_push(&ch->q, jobs, (unsigned)n);
            n = 0;
        }
    }
    hd_fdq_push(&ch->q, jobs, (unsigned)n);
}

/* Apache's ConnsTotal, ConnsAsyncWriting ... of this child (tq_lock held). */
static void publish(child_t *ch)
{
    hd_sb_process_t *p = &hd_scoreboard->processes[ch->slot];
    p->connections = (uint32_t)__atomic_load_n(&ch->conns, __ATOMIC_RELAXED);
    p->write_completion = ch->queues[Q_WRITE].count;
    p->keep_alive = ch->queues[Q_KEEPALIVE].count;
    p->lingering_close = ch->queues[Q_LINGER].count;
}

/* TERM: every parked connection closes now. */
static void close_parked(child_t *ch)
{
    pthread_mutex_lock(&ch->tq_lock);
    for (int i = 0; i < Q_COUNT; i++) {
        hd_timer_t *t;
        while ((t = hd_tq_first(&ch->queues[i])) != NULL) {
            econn_t *e = of_timer(t);
            unpark(ch, e);
            close_conn(ch, e);
        }
    }
    pthread_mutex_unlock(&ch->tq_lock);
}

/* Stops the child once it is stopping and its last connection is gone. */
static void check_stop(child_t *ch)
{
    int limit = ch->conf->max_conns_per_child;
    bool told = __atomic_load_n(&ch->stop, __ATOMIC_ACQUIRE);
    if (!ch->stopping && (told || (limit > 0 && ch->accepted >= limit))) {
        ch->stopping = true;
        if (!told) {
            hd_scoreboard->processes[ch->slot].quiescing = 1;
            __atomic_store_n(&ch->self_stop, 1, __ATOMIC_RELEASE);
            hd_mpm_wake(ch->main_pipe[1]);
        }
    }
    if (hd_mpm_dying()) {
        close_parked(ch);
        ch->done = true;
    } else if (ch->stopping && __atomic_load_n(&ch->conns, __ATOMIC_ACQUIRE) == 0) {
        ch->done = true;
    }
    if (ch->done) {
        pthread_mutex_lock(&ch->tq_lock);
        publish(ch);
        pthread_mutex_unlock(&ch->tq_lock);
        hd_fdq_term(&ch->q);
    }
}

/* Hands the ready connections of @p ev to jobs (tq_lock held); returns their number. */
static int take_ready(child_t *ch, const hd_poll_event_t *ev, int n, job_t *jobs)
{
    int njobs = 0;
    for (int i = 0; i < n; i++) {
        if ((uint32_t)ev[i].data >= IDX_SPECIAL) {
            continue;
        }
        econn_t *e = record_of(ch, ev[i].data);
        if (e == NULL) {
            continue; /* the connection this event was for is gone */
        }
        if (e->timer.queue != NULL) {
            unpark(ch, e);
            jobs[njobs++] = (job_t){.e = e, .kind = JOB_READY};
        } else {
            e->pending = true; /* a thread has it: it runs it again */
        }
    }
    return njobs;
}

/*
 * One turn of the poller: wait for events (up to the next deadline), end
 * the timed-out connections, and return the ready and the new ones in
 * @p jobs (their number; -1 if the wait timed out with nothing to do).
 */
static int poll_once(child_t *ch, job_t *jobs)
{
    static __thread hd_poll_event_t ev[EVENTS_PER_WAIT];
    if (!ch->done) {
        check_stop(ch);
    }
    if (ch->done) {
        return -1;
    }
    /* At its limit a child tells the master (its idle threads are no spares),
     * and takes new clients only when no child can, in exchange for idle
     * keep-alive connections (may_shed). */
    bool full = !ch->stopping && above_limit(ch);
    hd_scoreboard->processes[ch->slot].not_accepting = full;
    bool want = !ch->stopping && now_ms() >= ch->accept_pause_until && (!full || may_shed(ch));
    if (want != ch->accepting) {
        set_accepting(ch, want);
        ch->accepting = want;
    }
    if (ch->stopping && !ch->listeners_released) {
        /* the poller alone uses the listeners, and they left the epoll set:
         * let them go, so new clients are refused instead of queued for nobody */
        hd_listen_close(ch->s);
        ch->listeners_released = true;
    }
    /* Accepting paused: a closing connection wakes the poller. */
    __atomic_store_n(&ch->accept_paused, !ch->accepting && !ch->stopping, __ATOMIC_RELEASE);
    int cap = ch->stopping || !ch->accepting ? 100 : 1000;
    pthread_mutex_lock(&ch->tq_lock);
    int timeout = next_timeout(ch, now_ms(), cap);
    publish(ch);
    pthread_mutex_unlock(&ch->tq_lock);

    int n = hd_poller_wait(&ch->poller, ev, EVENTS_PER_WAIT, timeout);
    pthread_mutex_lock(&ch->tq_lock);
    ch->sleep_until = 0;
    int njobs = take_ready(ch, ev, n, jobs);
    pthread_mutex_unlock(&ch->tq_lock);
    for (int i = 0; i < n; i++) {
        uint32_t idx = (uint32_t)ev[i].data;
        if (idx == IDX_WAKE) {
            hd_mpm_drain(ch->wake_pipe[0]);
        } else if (idx >= IDX_SPECIAL && ch->accepting) {
            hd_listen_t *l = ch->listeners[IDX_LISTENER(0) - idx];
            int room = MAX_JOBS - njobs;
            njobs += accept_some(ch, l, jobs + njobs,
                                 room < ACCEPTS_PER_EVENT ? room : ACCEPTS_PER_EVENT);
        }
    }
    expire(ch, now_ms());
    check_stop(ch);
    return n > 0 ? njobs : -1;
}

/* ---- the child's main thread ---- */

static bool child_setup(child_t *ch)
{
    if (hd_poller_open(&ch->poller) != HD_OK ||
        hd_pipe2(ch->wake_pipe, O_NONBLOCK | O_CLOEXEC) < 0 ||
        hd_pipe2(ch->main_pipe, O_NONBLOCK | O_CLOEXEC) < 0) {
        return false;
    }
    if (hd_poller_add(&ch->poller, ch->wake_pipe[0], HD_POLL_IN, EV_DATA(IDX_WAKE, 0)) < 0) {
        return false;
    }
    for (hd_listen_t *l = ch->s->listeners; l != NULL; l = l->next) {
        ch->nlisteners++;
    }
    ch->listeners = calloc((size_t)ch->nlisteners + 1, sizeof(*ch->listeners));
    if (ch->listeners == NULL || ch->nlisteners >= (int)(0xFFFFFFFEu - IDX_SPECIAL)) {
        return false;
    }
    int i = 0;
    for (hd_listen_t *l = ch->s->listeners; l != NULL; l = l->next, i++) {
        ch->listeners[i] = l;
    }
    set_accepting(ch, true);
    ch->accepting = true;
    pthread_mutex_init(&ch->tq_lock, NULL);
    for (int q = 0; q < Q_COUNT; q++) {
        hd_tq_init(&ch->queues[q]);
    }
    if (hd_fdq_init(&ch->q, sizeof(job_t), 256) != HD_OK) {
        return false;
    }
    /*
     * Jobs are short and never block on a socket: more running threads
     * than CPUs only add wake-ups and lock contention. Queued jobs wait
     * for a running thread; a stalled one is noticed (STALL_CHECK_MS).
     */
    hd_fdq_set_wake_limit(&ch->q, ch->conf->threads_per_child, hd_mpm_ncpus());
    return true;
}

static void child_cleanup(child_t *ch)
{
    for (int i = 0; i < ch->nchunks; i++) {
        free(ch->chunks[i]);
    }
    free(ch->chunks);
    free(ch->listeners);
    hd_poller_close(&ch->poller);
    hd_close(ch->wake_pipe[0]);
    hd_close(ch->wake_pipe[1]);
    hd_close(ch->main_pipe[0]);
    hd_close(ch->main_pipe[1]);
    hd_fdq_destroy(&ch->q);
    pthread_mutex_destroy(&ch->tq_lock);
}

static void begin_graceful(child_t *ch)
{
    if (__atomic_load_n(&ch->stop, __ATOMIC_ACQUIRE)) {
        return;
    }
    hd_scoreboard->processes[ch->slot].quiescing = 1;
    hd_mpm_begin_stop();
    __atomic_store_n(&ch->stop, 1, __ATOMIC_RELEASE);
    hd_mpm_wake(ch->wake_pipe[1]);
}

static void child_main(hd_server_t *s, int slot)
{
    child_t ch = {.s = s, .conf = conf_of(s), .slot = slot};
    int n = ch.conf->threads_per_child;
    hd_module_t *m;
    HD_FOR_EACH_LOADED_MODULE(s, m)
    {
        if (m->child_init != NULL) {
            m->child_init(s);
        }
    }
    pthread_t *threads = calloc((size_t)n, sizeof(*threads));
    worker_arg_t *args = calloc((size_t)n, sizeof(*args));
    if (threads == NULL || args == NULL || !child_setup(&ch)) {
        hd_log_error(HD_LOG_EMERG, LOG_NAME, "AH00274: cannot set up the child: %s",
                     strerror(errno));
        exit(1);
    }
    sigset_t wait_mask;
    hd_mpm_block_signals(&wait_mask);
    ch.workers_left = n;
    int started = 0;
    for (int i = 0; i < n; i++) {
        args[i] = (worker_arg_t){.ch = &ch, .index = i};
        if (pthread_create(&threads[i], NULL, worker_thread, &args[i]) != 0) {
            hd_log_error(HD_LOG_ALERT, LOG_NAME,
                         "AH00480: pthread_create: unable to create worker thread");
            __atomic_sub_fetch(&ch.workers_left, n - i, __ATOMIC_ACQ_REL);
            break;
        }
        started++;
    }
    if (started == 0) {
        hd_fdq_term(&ch.q);
    }
    uint64_t pops = 0;
    while (__atomic_load_n(&ch.workers_left, __ATOMIC_ACQUIRE) > 0) {
        if (hd_mpm_wait(ch.main_pipe[0], STALL_CHECK_MS, &wait_mask)) {
            hd_mpm_drain(ch.main_pipe[0]);
        }
        if (hd_child_die) {
            hd_mpm_begin_die();
            begin_graceful(&ch);
            hd_mpm_wake(ch.wake_pipe[1]);
        } else if (hd_child_graceful || __atomic_load_n(&ch.self_stop, __ATOMIC_ACQUIRE)) {
            begin_graceful(&ch);
        }
        /* Every thread stuck in a long job with work waiting: wake one more. */
        hd_fdq_kick_if_stalled(&ch.q, &pops);
    }
    for (int i = 0; i < started; i++) {
        pthread_join(threads[i], NULL);
    }
    hd_modules_flush(s);
    child_cleanup(&ch);
    free(threads);
    free(args);
}

static hd_mpm_exit_t run(hd_server_t *s)
{
    return hd_mpm_threads_run(s, conf_of(s), LOG_NAME, child_main);
}

static const hd_mpm_t event_mpm = {
    .name = "event",
    .configure = configure,
    .run = run,
    .query = query,
};

static const hd_command_t event_commands[] = {
    HD_MPM_THREADS_COMMANDS,
    {"AsyncRequestWorkerFactor", hd_mpm_set_factor, 0, HD_TAKE1, HD_CTX_MAIN, HD_CONF_SERVER,
     "factor", "2",
     "Connections a child takes per idle worker, beyond ThreadsPerChild (limits each child)"},
    {.name = NULL},
};

hd_module_t hd_mpm_event_module = {
    .name = "mpm_event",
    .source_name = "event.c",
    .always_loaded = false,
    .commands = event_commands,
    .create_server_config = hd_mpm_threads_create_conf,
    .mpm = &event_mpm,
};
