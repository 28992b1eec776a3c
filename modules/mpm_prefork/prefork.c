/*
 * The prefork MPM: a master process and children that each serve one
 * connection at a time, as Apache's prefork.c. Children wait for the
 * listeners in their own epoll set with EPOLLEXCLUSIVE, so the kernel wakes
 * one child per connection (accept is serialised without a lock).
 *
 * The master (httpd/server/mpm_master.c, shared with worker and event) keeps
 * between MinSpareServers and MaxSpareServers idle children, checked once a
 * second by maintain_spares below, replaces a child that dies unexpectedly
 * at once, and turns signals into restarts.
 */
#include "config.h"
#include "connection.h"
#include "core.h"
#include "ids.h"
#include "listen.h"
#include "log.h"
#include "module.h"
#include "mpm.h"
#include "mpm_common.h"
#include "mpm_master.h"
#include "pool.h"
#include "process.h"
#include "scoreboard.h"
#include "sys.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define HARD_SERVER_LIMIT 20000

typedef struct {
    int start_servers;
    int min_spare;
    int max_spare;
    int max_workers;
    int server_limit;
    int max_conns_per_child;
} prefork_conf_t;

extern hd_module_t hd_mpm_prefork_module;

/* ServerLimit of the first start: the scoreboard's size, fixed until a full stop. */
static int first_server_limit;

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
    if (first_server_limit == 0) {
        first_server_limit = c->server_limit;
    } else if (c->server_limit != first_server_limit) {
        hd_log_error(HD_LOG_WARNING, "mpm_prefork",
                     "AH00169: changing ServerLimit to %d from original value of %d not allowed "
                     "during restart", c->server_limit, first_server_limit);
        c->server_limit = first_server_limit;
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
    /* One connection per process: a thread and a scoreboard slot per child. */
    return hd_mpm_query(s, what, false, conf_of(s)->server_limit, 1, 1, result);
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

/* Accepts and serves one connection from @p l; false if there was none. */
static bool serve_one(hd_server_t *s, hd_listen_t *l)
{
    struct sockaddr_storage peer, local;
    socklen_t peer_len, local_len;
    int fd = hd_mpm_accept(l, &peer, &peer_len, "mpm_prefork");
    if (fd < 0) {
        if (hd_mpm_accept_exhausted(errno)) {
            hd_poll(NULL, 0, HD_MPM_ACCEPT_BACKOFF_MS);
        }
        return false;
    }
    const struct sockaddr *la = hd_mpm_local_addr(l, fd, &local, &local_len);
    hd_conn_t *c = hd_conn_create(s, fd, l, (struct sockaddr *)&peer, peer_len, la, local_len, NULL);
    hd_mpm_serve(c, -1, -1);
    return true;
}

static void child_main(hd_server_t *s, int slot_index)
{
    const prefork_conf_t *conf = conf_of(s);
    hd_sb_worker_t *slot = hd_sb_worker(slot_index, 0);
    memset(slot, 0, sizeof(*slot));
    slot->pid = hd_pid();
    slot->tid = hd_tid();
    slot->generation = s->generation;
    slot->state = HD_SB_STARTING;
    hd_sb_bind_worker(slot);

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
            hd_scoreboard->processes[slot_index].quiescing = 1;
            break;
        }
        hd_sb_set_state(HD_SB_READY);
        /*
         * The kernel's exclusive wake-up stands in for Apache's accept
         * mutex: there is no lock to contend for, and the time a child
         * waits here for a connection is idle time, not a lock wait.
         */
        struct epoll_event ev[8];
        int n = hd_epoll_wait(ep, ev, (int)HD_ARRAY_SIZE(ev), 1000);
        hd_modules_flush_due(s);
        if (n == 0) {
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
    /* no more accepting: a socket no process listens on refuses new clients at once */
    hd_close(ep);
    hd_listen_close(s);
    hd_modules_flush(s);
}

/* ---- the master ---- */

/* Logged once, as Apache's prefork does. */
static bool maxclients_reported;

static void maintain_spares(hd_server_t *s)
{
    const prefork_conf_t *c = conf_of(s);
    int idle = 0, idle_slot = -1, children = 0;
    for (int i = 0; i < hd_mpm_slots(); i++) {
        if (!hd_mpm_child_active(s, i)) {
            continue;
        }
        children++;
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
        hd_mpm_child_quiesce(idle_slot);
        hd_mpm_spawn_rate_reset();
    } else if (idle < c->min_spare) {
        if (children >= c->max_workers && idle == 0 && !maxclients_reported) {
            hd_log_error(HD_LOG_ERR, "mpm_prefork",
                         "AH00161: server reached MaxRequestWorkers setting, consider raising the "
                         "MaxRequestWorkers setting");
            maxclients_reported = true;
        }
        /* Apache's rule: 1, 2, 4 ... 32 children a second while short of spares. */
        hd_mpm_spawn_spares(s);
    } else {
        hd_mpm_spawn_rate_reset();
    }
}

static hd_mpm_exit_t run(hd_server_t *s)
{
    const prefork_conf_t *c = conf_of(s);
    hd_mpm_master_ops_t ops = {
        .log_name = "mpm_prefork",
        .server_limit = c->server_limit,
        .thread_limit = 1,
        .threads_per_child = 1,
        .start_servers = c->start_servers,
        .daemons_limit = c->max_workers,
        .child_main = child_main,
        .maintain = maintain_spares,
    };
    return hd_mpm_master_run(s, &ops);
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
     "number", "256",
     "Upper limit of MaxRequestWorkers for the life of the server (scoreboard size)"},
    {"MaxConnectionsPerChild", hd_set_int_slot, P(max_conns_per_child), HD_TAKE1, HD_CTX_MAIN,
     HD_CONF_SERVER, "number", "0",
     "Connections a child serves before it exits and is replaced (0: no limit)"},
    {"MaxRequestsPerChild", hd_set_int_slot, P(max_conns_per_child), HD_TAKE1, HD_CTX_MAIN,
     HD_CONF_SERVER, "number", "0", "Deprecated name of MaxConnectionsPerChild"},
    {.name = NULL},
};

hd_module_t hd_mpm_prefork_module = {
    .name = "mpm_prefork",
    .source_name = "prefork.c",
    .always_loaded = false,
    .commands = prefork_commands,
    .create_server_config = create_server_config,
    .mpm = &prefork_mpm,
};
