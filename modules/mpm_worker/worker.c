/*
 * The worker MPM, as Apache's worker.c: a master process (httpd/server/mpm_master.c)
 * and children that each run ThreadsPerChild worker threads and one
 * listener thread. The listener accepts a connection only when a worker is
 * idle and hands it over through the child's queue (httpd/server/mpm_fdqueue.c); a
 * worker serves the connection from its first request to its close, waiting
 * for the socket with poll. The master keeps between MinSpareThreads and
 * MaxSpareThreads idle threads, counted across children.
 *
 * Signals reach only the child's main thread (the others block them): it
 * tells the listener and the workers through two pipes, "stop" (graceful:
 * finish the connections, no more keep-alive) and "die" (TERM: drop them).
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
#include "pool.h"
#include "process.h"
#include "scoreboard.h"
#include "sys.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define LOG_NAME "mpm_worker"
#define IDLE_FLUSH_MS 1000
#define IDLE_SLEEP_MS 30000

extern hd_module_t hd_mpm_worker_module;

/* An accepted connection on its way from the listener to a worker. */
typedef struct {
    int fd;
    socklen_t peer_len;
    hd_listen_t *l;
    struct sockaddr_storage peer;
} job_t;

typedef struct {
    hd_server_t *s;
    const hd_mpm_threads_conf_t *conf;
    int slot;
    hd_fdq_t q;
    int stop_pipe[2];         /* readable once the child stops gracefully */
    int die_pipe[2];          /* readable once it must stop at once */
    int main_pipe[2];         /* threads wake the main thread through it */
    int stop;                 /* set by the main thread: the listener leaves */
    int self_stop;            /* set by the listener: MaxConnectionsPerChild reached */
    int workers_left;         /* worker threads still running */
} child_t;

typedef struct {
    child_t *ch;
    int index;
} worker_arg_t;

static hd_mpm_threads_conf_t *conf_of(const hd_server_t *s)
{
    return hd_get_server_config(s, &hd_mpm_worker_module);
}

static int configure(hd_server_t *s)
{
    return hd_mpm_threads_configure(conf_of(s), LOG_NAME);
}

static int query(const hd_server_t *s, hd_mpmq_t what, int *result)
{
    return hd_mpm_threads_query(conf_of(s), s, what, result);
}

/* ---- the child's threads ---- */

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

    /* Buffered logs are flushed after a second without work; then sleep long. */
    int wait_ms = IDLE_FLUSH_MS;
    for (;;) {
        hd_sb_set_state(HD_SB_READY);
        job_t job;
        int rv = hd_fdq_pop(&ch->q, &job, wait_ms);
        hd_modules_flush_due(s);
        if (rv == HD_AGAIN) {
            hd_modules_flush(s);
            wait_ms = IDLE_SLEEP_MS;
            continue;
        }
        wait_ms = IDLE_FLUSH_MS;
        if (rv == HD_DONE) {
            break;
        }
        if (hd_mpm_dying()) {
            hd_close(job.fd);
            continue;
        }
        struct sockaddr_storage local;
        socklen_t local_len;
        const struct sockaddr *la = hd_mpm_local_addr(job.l, job.fd, &local, &local_len);
        hd_conn_t *c = hd_conn_create(s, job.fd, job.l, (struct sockaddr *)&job.peer, job.peer_len,
                                      la, local_len, NULL);
        hd_mpm_serve(c, ch->stop_pipe[0], ch->die_pipe[0]);
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

static int listener_epoll(child_t *ch)
{
    int ep = hd_epoll_create();
    if (ep < 0) {
        return -1;
    }
    for (hd_listen_t *l = ch->s->listeners; l != NULL; l = l->next) {
        struct epoll_event ev = {.events = EPOLLIN | EPOLLEXCLUSIVE, .data.ptr = l};
        if (hd_epoll_ctl(ep, EPOLL_CTL_ADD, l->fd, &ev) < 0) {
            hd_close(ep);
            return -1;
        }
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    if (hd_epoll_ctl(ep, EPOLL_CTL_ADD, ch->stop_pipe[0], &ev) < 0) {
        hd_close(ep);
        return -1;
    }
    return ep;
}

static bool listener_may_go_on(child_t *ch)
{
    return !__atomic_load_n(&ch->stop, __ATOMIC_ACQUIRE) && !hd_mpm_dying();
}

static void *listener_thread(void *arg)
{
    child_t *ch = arg;
    hd_sb_bind_process(ch->slot);
    int ep = listener_epoll(ch);
    if (ep < 0) {
        hd_log_error(HD_LOG_EMERG, LOG_NAME, "AH00158: cannot create the listener set: %s",
                     strerror(errno));
    }
    int accepted = 0;
    int limit = ch->conf->max_conns_per_child;
    while (ep >= 0 && listener_may_go_on(ch)) {
        /* As Apache: take a connection only when a worker can serve it now. */
        if (!hd_fdq_wait_for_idler(&ch->q, 1000)) {
            continue;
        }
        struct epoll_event ev[4];
        int n = hd_epoll_wait(ep, ev, (int)HD_ARRAY_SIZE(ev), 1000);
        for (int i = 0; i < n && listener_may_go_on(ch); i++) {
            if (ev[i].data.ptr == NULL) {
                break; /* the stop pipe */
            }
            job_t job;
            job.l = ev[i].data.ptr;
            job.fd = hd_mpm_accept(job.l, &job.peer, &job.peer_len, LOG_NAME);
            if (job.fd < 0) {
                if (hd_mpm_accept_exhausted(errno)) {
                    hd_poll(NULL, 0, HD_MPM_ACCEPT_BACKOFF_MS);
                }
                continue;
            }
            hd_fdq_push(&ch->q, &job, 1);
            accepted++;
            break; /* one per idle worker */
        }
        if (limit > 0 && accepted >= limit) {
            hd_scoreboard->processes[ch->slot].quiescing = 1;
            __atomic_store_n(&ch->self_stop, 1, __ATOMIC_RELEASE);
            hd_mpm_wake(ch->main_pipe[1]);
            break;
        }
    }
    if (ep >= 0) {
        hd_close(ep);
    }
    /* This thread alone uses the listeners: let them go, so that once every
     * process has, new clients are refused at once instead of queued for nobody. */
    hd_listen_close(ch->s);
    /* Workers finish what was accepted, then leave. */
    hd_fdq_term(&ch->q);
    return NULL;
}

/* ---- the child's main thread ---- */

static bool open_pipes(child_t *ch)
{
    int *pipes[] = {ch->stop_pipe, ch->die_pipe, ch->main_pipe};
    for (size_t i = 0; i < HD_ARRAY_SIZE(pipes); i++) {
        if (hd_pipe2(pipes[i], O_NONBLOCK | O_CLOEXEC) < 0) {
            return false;
        }
    }
    return true;
}

static void close_pipes(child_t *ch)
{
    int *pipes[] = {ch->stop_pipe, ch->die_pipe, ch->main_pipe};
    for (size_t i = 0; i < HD_ARRAY_SIZE(pipes); i++) {
        hd_close(pipes[i][0]);
        hd_close(pipes[i][1]);
    }
}

static void begin_graceful(child_t *ch)
{
    if (__atomic_load_n(&ch->stop, __ATOMIC_ACQUIRE)) {
        return;
    }
    hd_scoreboard->processes[ch->slot].quiescing = 1;
    hd_mpm_begin_stop();
    __atomic_store_n(&ch->stop, 1, __ATOMIC_RELEASE);
    hd_mpm_wake(ch->stop_pipe[1]);
    hd_fdq_interrupt(&ch->q);
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
    pthread_t *threads = calloc((size_t)n + 1, sizeof(*threads));
    worker_arg_t *args = calloc((size_t)n, sizeof(*args));
    if (threads == NULL || args == NULL || !open_pipes(&ch) ||
        hd_fdq_init(&ch.q, sizeof(job_t), (unsigned)n * 2) != HD_OK) {
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
                         "AH00275: pthread_create: unable to create worker thread");
            __atomic_sub_fetch(&ch.workers_left, n - i, __ATOMIC_ACQ_REL);
            break;
        }
        started++;
    }
    bool have_listener = started > 0 &&
                         pthread_create(&threads[n], NULL, listener_thread, &ch) == 0;
    if (!have_listener) {
        hd_fdq_term(&ch.q);
        hd_mpm_begin_die();
    }
    while (__atomic_load_n(&ch.workers_left, __ATOMIC_ACQUIRE) > 0) {
        if (hd_mpm_wait(ch.main_pipe[0], 1000, &wait_mask)) {
            hd_mpm_drain(ch.main_pipe[0]);
        }
        if (hd_child_die) {
            hd_mpm_begin_die();
            begin_graceful(&ch);
            hd_mpm_wake(ch.die_pipe[1]);
            hd_fdq_term(&ch.q);
        } else if (hd_child_graceful || __atomic_load_n(&ch.self_stop, __ATOMIC_ACQUIRE)) {
            begin_graceful(&ch);
        }
    }
    for (int i = 0; i < started; i++) {
        pthread_join(threads[i], NULL);
    }
    if (have_listener) {
        pthread_join(threads[n], NULL);
    }
    hd_modules_flush(s);
    close_pipes(&ch);
    hd_fdq_destroy(&ch.q);
    free(threads);
    free(args);
}

static hd_mpm_exit_t run(hd_server_t *s)
{
    return hd_mpm_threads_run(s, conf_of(s), LOG_NAME, child_main);
}

static const hd_mpm_t worker_mpm = {
    .name = "worker",
    .configure = configure,
    .run = run,
    .query = query,
};

static const hd_command_t worker_commands[] = {
    HD_MPM_THREADS_COMMANDS,
    {.name = NULL},
};

hd_module_t hd_mpm_worker_module = {
    .name = "mpm_worker",
    .source_name = "worker.c",
    .always_loaded = false,
    .commands = worker_commands,
    .create_server_config = hd_mpm_threads_create_conf,
    .mpm = &worker_mpm,
};
