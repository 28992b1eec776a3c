/*
 * The prefork MPM: a master process and children that each serve one
 * connection at a time, as Apache's prefork.c. Children wait for the
 * listeners in their own epoll set with EPOLLEXCLUSIVE, so the kernel wakes
 * one child per connection (accept is serialised without a lock).
 *
 * The master keeps between MinSpareServers and MaxSpareServers idle children,
 * checked once a second, replaces a child that dies unexpectedly at once, and
 * turns signals into restarts: children of an older generation are told to
 * finish (graceful) or killed (restart) only once the new configuration has
 * been read successfully, so a broken configuration leaves them serving.
 */
#include "config.h"
#include "connection.h"
#include "core.h"
#include "log.h"
#include "module.h"
#include "mpm.h"
#include "pool.h"
#include "process.h"
#include "scoreboard.h"
#include "sys.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define HARD_SERVER_LIMIT 20000
#define MAX_SPAWN_RATE 32

typedef struct {
    int start_servers;
    int min_spare;
    int max_spare;
    int max_workers;
    int server_limit;
    int max_conns_per_child;
} prefork_conf_t;

typedef struct {
    pid_t pid;
    int generation;
    bool quiescing;
} child_t;

extern hd_module_t hd_mpm_prefork_module;

static child_t *children;      /* server_limit entries, indexed by scoreboard slot */
static int children_size;
static int spawn_rate = 1;
static hd_mpm_exit_t last_exit = HD_MPM_STOP;
static bool started;

static prefork_conf_t *conf_of(const hd_server_t *s)
{
    return hd_get_server_config(s, &hd_mpm_prefork_module);
}

static void *create_server_config(hd_pool_t *p, hd_server_t *s)
{
    prefork_conf_t *c = hd_pcalloc(p, sizeof(*c));
    c->start_servers = 5;
    c->min_spare = 5;
    c->max_spare = 10;
    c->max_workers = 256;
    c->server_limit = 256;
    c->max_conns_per_child = 0;
    return c;
}

static int configure(hd_server_t *s)
{
    prefork_conf_t *c = conf_of(s);
    if (c->server_limit > HARD_SERVER_LIMIT) {
        hd_log_error(HD_LOG_WARNING, "mpm_prefork",
                     "AH00167: ServerLimit of %d exceeds compile-time limit of %d servers, "
                     "decreasing to %d.", c->server_limit, HARD_SERVER_LIMIT, HARD_SERVER_LIMIT);
        c->server_limit = HARD_SERVER_LIMIT;
    } else if (c->server_limit < 1) {
        hd_log_error(HD_LOG_WARNING, "mpm_prefork",
                     "AH00168: ServerLimit of %d not allowed, increasing to 1.", c->server_limit);
        c->server_limit = 1;
    }
    if (children != NULL && c->server_limit != children_size) {
        hd_log_error(HD_LOG_WARNING, "mpm_prefork",
                     "AH00169: changing ServerLimit to %d from original value of %d not allowed "
                     "during restart", c->server_limit, children_size);
        c->server_limit = children_size;
    }
    if (c->max_workers > c->server_limit) {
        hd_log_error(HD_LOG_WARNING, "mpm_prefork",
                     "AH00170: MaxRequestWorkers of %d exceeds ServerLimit value of %d servers, "
                     "decreasing MaxRequestWorkers to %d. To increase, please see the ServerLimit "
                     "directive.", c->max_workers, c->server_limit, c->server_limit);
        c->max_workers = c->server_limit;
    } else if (c->max_workers < 1) {
        hd_log_error(HD_LOG_WARNING, "mpm_prefork",
                     "AH00171: MaxRequestWorkers of %d not allowed, increasing to 1.",
                     c->max_workers);
        c->max_workers = 1;
    }
    if (c->start_servers < 1) {
        c->start_servers = 1;
    }
    if (c->start_servers > c->max_workers) {
        c->start_servers = c->max_workers;
    }
    if (c->min_spare < 1) {
        hd_log_error(HD_LOG_WARNING, "mpm_prefork",
                     "AH00172: MinSpareServers of %d not allowed, increasing to 1.", c->min_spare);
        c->min_spare = 1;
    }
    if (c->max_spare < c->min_spare + 1) {
        c->max_spare = c->min_spare + 1;
    }
    return HD_OK;
}

static int query(const hd_server_t *s, hd_mpmq_t what, int *result)
{
    const prefork_conf_t *c = conf_of(s);
    switch (what) {
    case HD_MPMQ_IS_THREADED:
        *result = 0;
        return HD_OK;
    case HD_MPMQ_IS_FORKED:
        *result = 1;
        return HD_OK;
    case HD_MPMQ_MAX_DAEMONS:
        *result = c->server_limit;
        return HD_OK;
    case HD_MPMQ_MAX_THREADS:
        *result = 1;
        return HD_OK;
    case HD_MPMQ_GENERATION:
        *result = s->generation;
        return HD_OK;
    case HD_MPMQ_MAX_WORKERS:
        *result = c->server_limit;
        return HD_OK;
    }
    return HD_DECLINED;
}

/* ---- the child ---- */

static int make_listener_epoll(hd_server_t *s)
{
    int ep = hd_epoll_create();
    if (ep < 0) {
        return -1;
    }
    for (hd_listen_t *l = s->listeners; l != NULL; l = l->next) {
        struct epoll_event ev = {.events = EPOLLIN | EPOLLEXCLUSIVE, .data.ptr = l};
        if (hd_epoll_ctl(ep, EPOLL_CTL_ADD, l->fd, &ev) < 0) {
            hd_close(ep);
            return -1;
        }
    }
    return ep;
}

static bool is_wildcard(const hd_listen_t *l)
{
    if (l->addr.ss_family == AF_INET) {
        return ((const struct sockaddr_in *)&l->addr)->sin_addr.s_addr == htonl(INADDR_ANY);
    }
    return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)&l->addr)->sin6_addr);
}

/* Accepts and serves one connection from @p l; false if there was none. */
static bool serve_one(hd_server_t *s, hd_listen_t *l)
{
    struct sockaddr_storage peer, local;
    socklen_t peer_len = sizeof(peer), local_len = l->addr_len;
    int fd = hd_accept4(l->fd, (struct sockaddr *)&peer, &peer_len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
        if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
            hd_log_error(HD_LOG_ERR, "mpm_prefork", "AH00069: accept: %s", strerror(errno));
        }
        return false;
    }
    memcpy(&local, &l->addr, l->addr_len);
    if (is_wildcard(l)) {
        local_len = sizeof(local);
        hd_getsockname(fd, (struct sockaddr *)&local, &local_len);
    }
    hd_conn_t *c = hd_conn_create(s, fd, (struct sockaddr *)&peer, peer_len,
                                  (struct sockaddr *)&local, local_len);
    hd_conn_serve(c, hd_modules_flush);
    return true;
}

static void child_main(hd_server_t *s, int slot_index)
{
    const prefork_conf_t *conf = conf_of(s);
    hd_sb_worker_t *slot = hd_sb_worker(slot_index, 0);
    memset(slot, 0, sizeof(*slot));
    slot->pid = getpid();
    slot->tid = getpid();
    slot->generation = s->generation;
    slot->state = HD_SB_STARTING;
    hd_sb_bind_worker(slot);
    hd_scoreboard->processes[slot_index].pid = getpid();
    hd_scoreboard->processes[slot_index].generation = s->generation;
    hd_scoreboard->processes[slot_index].quiescing = 0;

    hd_module_t *m;
    HD_FOR_EACH_LOADED_MODULE(s, m)
    {
        if (m->child_init != NULL) {
            m->child_init(s);
        }
    }
    int ep = make_listener_epoll(s);
    if (ep < 0) {
        hd_log_error(HD_LOG_EMERG, "mpm_prefork", "AH00158: cannot create the listener set: %s",
                     strerror(errno));
        return;
    }
    int served = 0;
    while (!hd_child_die && !hd_child_graceful) {
        if (conf->max_conns_per_child > 0 && served >= conf->max_conns_per_child) {
            break;
        }
        hd_sb_set_state(HD_SB_READY);
        struct epoll_event ev[8];
        int n = hd_epoll_wait(ep, ev, (int)HD_ARRAY_SIZE(ev), 1000);
        if (n == 0) {
            hd_modules_flush(s);
            continue;
        }
        for (int i = 0; i < n && !hd_child_die; i++) {
            if (serve_one(s, ev[i].data.ptr)) {
                served++;
                break; /* one connection at a time; look at the flags again */
            }
        }
    }
    hd_sb_set_state(HD_SB_GRACEFUL);
    hd_modules_flush(s);
    hd_close(ep);
}

static void child_exit_flush(void)
{
    hd_pool_recycler_drain();
}

static int find_free_slot(int limit)
{
    for (int i = 0; i < limit; i++) {
        if (children[i].pid == 0) {
            return i;
        }
    }
    return -1;
}

static int spawn_child(hd_server_t *s, int slot)
{
    hd_sb_worker(slot, 0)->state = HD_SB_STARTING;
    pid_t pid = hd_fork();
    if (pid < 0) {
        hd_log_error(HD_LOG_ERR, "mpm_prefork", "AH00159: fork: Unable to fork new process: %s",
                     strerror(errno));
        hd_sb_worker(slot, 0)->state = HD_SB_DEAD;
        return HD_ERROR;
    }
    if (pid == 0) {
        hd_child_die = 0;
        hd_child_graceful = 0;
        hd_stop_keepalive = 0;
        hd_child_signals_install();
        child_main(s, slot);
        hd_sb_worker(slot, 0)->state = HD_SB_DEAD;
        child_exit_flush();
        _exit(0);
    }
    children[slot].pid = pid;
    children[slot].generation = s->generation;
    children[slot].quiescing = false;
    hd_scoreboard->processes[slot].pid = pid;
    hd_scoreboard->processes[slot].generation = s->generation;
    return HD_OK;
}

/* ---- the master ---- */

static void signal_children(int sig, bool (*which)(const child_t *, int), int generation)
{
    for (int i = 0; i < children_size; i++) {
        if (children[i].pid > 0 && which(&children[i], generation)) {
            if (sig == SIGUSR1) {
                children[i].quiescing = true;
                hd_scoreboard->processes[i].quiescing = 1;
            }
            hd_kill(children[i].pid, sig);
        }
    }
}

static bool older(const child_t *c, int generation)
{
    return c->generation != generation;
}

static bool any(const child_t *c, int generation)
{
    return true;
}

static int count_children(void)
{
    int n = 0;
    for (int i = 0; i < children_size; i++) {
        n += children[i].pid > 0;
    }
    return n;
}

/* Reaps exited children; replaces current ones that died unexpectedly. */
static void reap_children(hd_server_t *s, bool replace)
{
    int status;
    pid_t pid;
    while ((pid = hd_waitpid(-1, &status, WNOHANG)) > 0) {
        for (int i = 0; i < children_size; i++) {
            if (children[i].pid != pid) {
                continue;
            }
            bool unexpected = !children[i].quiescing &&
                              (WIFSIGNALED(status) || WEXITSTATUS(status) != 0);
            if (WIFSIGNALED(status) && WTERMSIG(status) != SIGTERM) {
                hd_log_error(HD_LOG_NOTICE, "mpm_prefork",
                             "AH00052: child pid %ld exit signal %s (%d)", (long)pid,
                             strsignal(WTERMSIG(status)), WTERMSIG(status));
            }
            bool current = children[i].generation == s->generation;
            children[i].pid = 0;
            hd_scoreboard->processes[i].pid = 0;
            hd_sb_worker(i, 0)->state = HD_SB_DEAD;
            if (replace && unexpected && current && !hd_sig_stop && !hd_sig_graceful_stop) {
                spawn_child(s, i);
            }
            break;
        }
    }
}

/* Stops every child: TERM, then KILL after a few seconds. */
static void stop_children(hd_server_t *s, bool (*which)(const child_t *, int), int generation)
{
    signal_children(SIGTERM, which, generation);
    for (int waited = 0; waited < 40; waited++) {
        reap_children(s, false);
        bool left = false;
        for (int i = 0; i < children_size; i++) {
            left |= children[i].pid > 0 && which(&children[i], generation);
        }
        if (!left) {
            return;
        }
        if (waited == 30) {
            signal_children(SIGKILL, which, generation);
        }
        hd_master_wait(100);
    }
}

static void maintain_spares(hd_server_t *s)
{
    const prefork_conf_t *c = conf_of(s);
    int idle = 0, total = 0, idle_slot = -1;
    for (int i = 0; i < children_size; i++) {
        if (children[i].pid == 0 || children[i].generation != s->generation ||
            children[i].quiescing) {
            continue;
        }
        total++;
        char st = hd_sb_worker(i, 0)->state;
        if (st == HD_SB_READY || st == HD_SB_STARTING) {
            idle++;
            if (st == HD_SB_READY) {
                idle_slot = i;
            }
        }
    }
    if (idle > c->max_spare && idle_slot >= 0) {
        /* One a second, as Apache: a burst may come back. */
        children[idle_slot].quiescing = true;
        hd_kill(children[idle_slot].pid, SIGUSR1);
        spawn_rate = 1;
    } else if (idle < c->min_spare && total < c->max_workers) {
        /* Apache's rule: 1, 2, 4 ... 32 children a second while short of spares. */
        int n = spawn_rate;
        for (int i = 0; i < n && count_children() < c->server_limit && total < c->max_workers;
             i++, total++) {
            int slot = find_free_slot(c->server_limit);
            if (slot < 0 || spawn_child(s, slot) != HD_OK) {
                break;
            }
        }
        if (spawn_rate < MAX_SPAWN_RATE) {
            spawn_rate *= 2;
        }
    } else {
        spawn_rate = 1;
    }
}

static hd_mpm_exit_t run_one_process(hd_server_t *s)
{
    children_size = 1;
    hd_scoreboard_create(1, 1);
    hd_child_signals_install();
    hd_child_die = hd_child_graceful = 0;
    hd_stop_keepalive = 0;
    child_main(s, 0);
    return HD_MPM_STOP;
}

static hd_mpm_exit_t run(hd_server_t *s)
{
    prefork_conf_t *c = conf_of(s);
    if (s->one_process) {
        return run_one_process(s);
    }
    if (!started) {
        if (hd_scoreboard_create(c->server_limit, 1) != HD_OK) {
            return HD_MPM_FAILED;
        }
        children = calloc((size_t)c->server_limit, sizeof(*children));
        if (children == NULL) {
            return HD_MPM_FAILED;
        }
        children_size = c->server_limit;
        hd_master_signals_install();
        started = true;
    }
    hd_scoreboard->global->running_generation = s->generation;

    /* Old children go now that the new configuration is known to be good. */
    if (last_exit == HD_MPM_RESTART) {
        stop_children(s, older, s->generation);
        hd_scoreboard->global->restart_time = time(NULL);
    } else if (last_exit == HD_MPM_GRACEFUL) {
        signal_children(SIGUSR1, older, s->generation);
        hd_scoreboard->global->restart_time = time(NULL);
    }
    int current = 0;
    for (int i = 0; i < children_size; i++) {
        current += children[i].pid > 0 && children[i].generation == s->generation;
    }
    for (int i = current; i < c->start_servers; i++) {
        int slot = find_free_slot(c->server_limit);
        if (slot < 0) {
            break;
        }
        spawn_child(s, slot);
    }
    hd_log_error(HD_LOG_NOTICE, "mpm_prefork",
                 "AH00163: httpd/" HD_VERSION " configured -- resuming normal operations");

    int64_t next_maintenance = hd_now_mono_us() + 1000000;
    for (;;) {
        int64_t left = (next_maintenance - hd_now_mono_us()) / 1000;
        if (left > 0 && !hd_sig_stop && !hd_sig_restart && !hd_sig_graceful &&
            !hd_sig_graceful_stop && !hd_sig_child) {
            hd_master_wait((int)left);
        }
        hd_sig_child = 0;
        reap_children(s, true);
        if (hd_sig_stop) {
            hd_sig_stop = 0;
            hd_log_error(HD_LOG_NOTICE, "mpm_prefork", "AH00169: caught SIGTERM, shutting down");
            stop_children(s, any, s->generation);
            last_exit = HD_MPM_STOP;
            return HD_MPM_STOP;
        }
        if (hd_sig_graceful_stop) {
            hd_sig_graceful_stop = 0;
            hd_log_error(HD_LOG_NOTICE, "mpm_prefork",
                         "AH00492: caught SIGWINCH, shutting down gracefully");
            signal_children(SIGUSR1, any, s->generation);
            while (count_children() > 0 && !hd_sig_stop) {
                hd_master_wait(200);
                reap_children(s, false);
            }
            if (hd_sig_stop) {
                stop_children(s, any, s->generation);
            }
            last_exit = HD_MPM_GRACEFUL_STOP;
            return HD_MPM_GRACEFUL_STOP;
        }
        if (hd_sig_restart) {
            hd_sig_restart = 0;
            hd_log_error(HD_LOG_NOTICE, "mpm_prefork", "AH00171: SIGHUP received.  Attempting to restart");
            last_exit = HD_MPM_RESTART;
            return HD_MPM_RESTART;
        }
        if (hd_sig_graceful) {
            hd_sig_graceful = 0;
            hd_log_error(HD_LOG_NOTICE, "mpm_prefork", "AH00164: Graceful restart requested, doing restart");
            last_exit = HD_MPM_GRACEFUL;
            return HD_MPM_GRACEFUL;
        }
        if (hd_now_mono_us() >= next_maintenance) {
            hd_modules_master_tick(s);
            maintain_spares(s);
            next_maintenance = hd_now_mono_us() + 1000000;
        }
    }
}

static const hd_mpm_t prefork_mpm = {
    .name = "prefork",
    .configure = configure,
    .run = run,
    .query = query,
};

#define P(field) offsetof(prefork_conf_t, field)

static const hd_command_t prefork_commands[] = {
    {"StartServers", hd_set_int_slot, P(start_servers), HD_TAKE1, HD_CTX_MAIN, HD_CONF_SERVER,
     "number", "5", "Number of child processes to create at startup"},
    {"MinSpareServers", hd_set_int_slot, P(min_spare), HD_TAKE1, HD_CTX_MAIN, HD_CONF_SERVER,
     "number", "5", "Minimum number of idle children kept ready to serve requests"},
    {"MaxSpareServers", hd_set_int_slot, P(max_spare), HD_TAKE1, HD_CTX_MAIN, HD_CONF_SERVER,
     "number", "10", "Maximum number of idle children; more are stopped, one a second"},
    {"MaxRequestWorkers", hd_set_int_slot, P(max_workers), HD_TAKE1, HD_CTX_MAIN, HD_CONF_SERVER,
     "number", "256", "Maximum number of connections served at the same time"},
    {"MaxClients", hd_set_int_slot, P(max_workers), HD_TAKE1, HD_CTX_MAIN, HD_CONF_SERVER,
     "number", "256", "Deprecated name of MaxRequestWorkers"},
    {"ServerLimit", hd_set_int_slot, P(server_limit), HD_TAKE1, HD_CTX_MAIN, HD_CONF_SERVER,
     "number", "256", "Upper limit of MaxRequestWorkers for the life of the server (scoreboard size)"},
    {"MaxConnectionsPerChild", hd_set_int_slot, P(max_conns_per_child), HD_TAKE1, HD_CTX_MAIN,
     HD_CONF_SERVER, "number", "0",
     "Connections a child serves before it exits and is replaced (0: no limit)"},
    {"MaxRequestsPerChild", hd_set_int_slot, P(max_conns_per_child), HD_TAKE1, HD_CTX_MAIN,
     HD_CONF_SERVER, "number", "0", "Deprecated name of MaxConnectionsPerChild"},
    {NULL},
};

hd_module_t hd_mpm_prefork_module = {
    .name = "mpm_prefork",
    .source_name = "prefork.c",
    .always_loaded = false,
    .commands = prefork_commands,
    .create_server_config = create_server_config,
    .mpm = &prefork_mpm,
};
