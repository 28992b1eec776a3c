/*
 * Directives, limits and spare maintenance of the threaded MPMs, following
 * Apache's worker.c and event.c (worker_check_config, worker_run and
 * perform_idle_server_maintenance), with their messages.
 */
#include "mpm_threads.h"

#include "log.h"
#include "mpm_master.h"
#include "pool.h"
#include "scoreboard.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SERVER_LIMIT 16
#define MAX_SERVER_LIMIT 20000
#define DEFAULT_THREAD_LIMIT 64
#define MAX_THREAD_LIMIT 20000
#define DEFAULT_THREADS_PER_CHILD 25

/* Kept across restarts: these size the scoreboard. */
static int first_server_limit;
static int first_thread_limit;
static bool maxclients_reported;
static bool near_maxclients_reported;
/*
 * What maintain() needs beyond the server: the master's callback takes only
 * the server, and one MPM runs in a process. Set by each run().
 */
static const hd_mpm_threads_conf_t *run_conf;
static const char *run_log_name;

void *hd_mpm_threads_create_conf(hd_pool_t *p, hd_server_t *s)
{
    hd_mpm_threads_conf_t *c = hd_pcalloc(p, sizeof(*c));
    c->start_servers = 3;
    c->min_spare_threads = 3 * DEFAULT_THREADS_PER_CHILD;
    c->max_spare_threads = 10 * DEFAULT_THREADS_PER_CHILD;
    c->threads_per_child = DEFAULT_THREADS_PER_CHILD;
    c->server_limit = DEFAULT_SERVER_LIMIT;
    c->thread_limit = DEFAULT_THREAD_LIMIT;
    c->max_workers = DEFAULT_SERVER_LIMIT * DEFAULT_THREADS_PER_CHILD;
    c->max_conns_per_child = 0;
    c->async_factor = 2 * HD_MPM_FACTOR_SCALE;
    return c;
}

const char *hd_mpm_set_max_workers(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    const char *err = hd_set_int_slot(cmd, mconfig, argc, argv);
    if (err == NULL) {
        ((hd_mpm_threads_conf_t *)mconfig)->max_workers_set = true;
    }
    return err;
}

const char *hd_mpm_set_factor(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    char *end;
    errno = 0;
    double v = strtod(argv[0], &end);
    if (end == argv[0] || *end != '\0' || errno != 0) {
        return "error parsing value";
    }
    if (v <= 0 || v > 1000000) {
        return "AsyncRequestWorkerFactor argument must be a positive number";
    }
    int scaled = (int)(v * HD_MPM_FACTOR_SCALE);
    ((hd_mpm_threads_conf_t *)mconfig)->async_factor =
        scaled < HD_MPM_FACTOR_SCALE ? HD_MPM_FACTOR_SCALE : scaled;
    return NULL;
}

static void limit_checks(hd_mpm_threads_conf_t *c, const char *log)
{
    if (c->server_limit > MAX_SERVER_LIMIT) {
        hd_log_error(HD_LOG_WARNING, log,
                     "AH00300: WARNING: ServerLimit of %d exceeds compile-time limit of %d "
                     "servers, decreasing to %d.", c->server_limit, MAX_SERVER_LIMIT,
                     MAX_SERVER_LIMIT);
        c->server_limit = MAX_SERVER_LIMIT;
    } else if (c->server_limit < 1) {
        hd_log_error(HD_LOG_WARNING, log,
                     "AH00302: WARNING: ServerLimit of %d not allowed, increasing to 1.",
                     c->server_limit);
        c->server_limit = 1;
    }
    if (first_server_limit == 0) {
        first_server_limit = c->server_limit;
    } else if (c->server_limit != first_server_limit) {
        hd_log_error(HD_LOG_WARNING, log,
                     "AH00304: changing ServerLimit to %d from original value of %d not "
                     "allowed during restart", c->server_limit, first_server_limit);
        c->server_limit = first_server_limit;
    }
    if (c->thread_limit > MAX_THREAD_LIMIT) {
        hd_log_error(HD_LOG_WARNING, log,
                     "AH00305: WARNING: ThreadLimit of %d exceeds compile-time limit of %d "
                     "threads, decreasing to %d.", c->thread_limit, MAX_THREAD_LIMIT,
                     MAX_THREAD_LIMIT);
        c->thread_limit = MAX_THREAD_LIMIT;
    } else if (c->thread_limit < 1) {
        hd_log_error(HD_LOG_WARNING, log,
                     "AH00307: WARNING: ThreadLimit of %d not allowed, increasing to 1.",
                     c->thread_limit);
        c->thread_limit = 1;
    }
    if (first_thread_limit == 0) {
        first_thread_limit = c->thread_limit;
    } else if (c->thread_limit != first_thread_limit) {
        hd_log_error(HD_LOG_WARNING, log,
                     "AH00309: changing ThreadLimit to %d from original value of %d not "
                     "allowed during restart", c->thread_limit, first_thread_limit);
        c->thread_limit = first_thread_limit;
    }
}

int hd_mpm_threads_configure(hd_mpm_threads_conf_t *c, const char *log)
{
    limit_checks(c, log);
    if (c->threads_per_child > c->thread_limit) {
        hd_log_error(HD_LOG_WARNING, log,
                     "AH00310: WARNING: ThreadsPerChild of %d exceeds ThreadLimit of %d "
                     "threads, decreasing to %d. To increase, please see the ThreadLimit "
                     "directive.", c->threads_per_child, c->thread_limit, c->thread_limit);
        c->threads_per_child = c->thread_limit;
    } else if (c->threads_per_child < 1) {
        hd_log_error(HD_LOG_WARNING, log,
                     "AH00312: WARNING: ThreadsPerChild of %d not allowed, increasing to 1.",
                     c->threads_per_child);
        c->threads_per_child = 1;
    }
    if (!c->max_workers_set) {
        /* Apache's default: as many as the scoreboard holds. */
        c->max_workers = c->server_limit * c->threads_per_child;
    }
    if (c->max_workers < c->threads_per_child) {
        hd_log_error(HD_LOG_WARNING, log,
                     "AH00314: WARNING: MaxRequestWorkers of %d is less than ThreadsPerChild "
                     "of %d, increasing to %d. MaxRequestWorkers must be at least as large as "
                     "the number of threads in a single server.", c->max_workers,
                     c->threads_per_child, c->threads_per_child);
        c->max_workers = c->threads_per_child;
    }
    c->daemons_limit = c->max_workers / c->threads_per_child;
    if (c->max_workers % c->threads_per_child) {
        int rounded = c->daemons_limit * c->threads_per_child;
        hd_log_error(HD_LOG_WARNING, log,
                     "AH00316: WARNING: MaxRequestWorkers of %d is not an integer multiple of "
                     "ThreadsPerChild of %d, decreasing to nearest multiple %d, for a maximum "
                     "of %d servers.", c->max_workers, c->threads_per_child, rounded,
                     c->daemons_limit);
        c->max_workers = rounded;
    }
    if (c->daemons_limit > c->server_limit) {
        hd_log_error(HD_LOG_WARNING, log,
                     "AH00318: WARNING: MaxRequestWorkers of %d would require %d servers and "
                     "would exceed ServerLimit of %d, decreasing to %d. To increase, please "
                     "see the ServerLimit directive.", c->max_workers, c->daemons_limit,
                     c->server_limit, c->server_limit * c->threads_per_child);
        c->daemons_limit = c->server_limit;
        c->max_workers = c->server_limit * c->threads_per_child;
    }
    if (c->start_servers < 1) {
        hd_log_error(HD_LOG_WARNING, log,
                     "AH00320: WARNING: StartServers of %d not allowed, increasing to 1.",
                     c->start_servers);
        c->start_servers = 1;
    }
    if (c->start_servers > c->daemons_limit) {
        c->start_servers = c->daemons_limit;
    }
    if (c->min_spare_threads < 1) {
        hd_log_error(HD_LOG_WARNING, log,
                     "AH00322: WARNING: MinSpareThreads of %d not allowed, increasing to 1 to "
                     "avoid almost certain server failure. Please read the documentation.",
                     c->min_spare_threads);
        c->min_spare_threads = 1;
    }
    /* Else stopping one child could drop below the minimum and start it again. */
    if (c->max_spare_threads < c->min_spare_threads + c->threads_per_child) {
        hd_log_error(HD_LOG_WARNING, log,
                     "WARNING: MaxSpareThreads of %d is less than MinSpareThreads + "
                     "ThreadsPerChild, increasing to %d.", c->max_spare_threads,
                     c->min_spare_threads + c->threads_per_child);
        c->max_spare_threads = c->min_spare_threads + c->threads_per_child;
    }
    return HD_OK;
}

int hd_mpm_threads_query(const hd_mpm_threads_conf_t *c, const hd_server_t *s, hd_mpmq_t what,
                         int *result)
{
    return hd_mpm_query(s, what, true, c->server_limit, c->thread_limit, c->threads_per_child,
                        result);
}

/* Apache's perform_idle_server_maintenance, as hd_mpm_threads_run describes it. */
static void maintain(hd_server_t *s)
{
    const hd_mpm_threads_conf_t *c = run_conf;
    const char *log = run_log_name;
    int idle = 0, active = 0, children = 0, victim = -1, victim_idle = -1;
    for (int i = 0; i < hd_mpm_slots(); i++) {
        if (!hd_mpm_child_active(s, i)) {
            continue;
        }
        children++;
        int child_idle = 0;
        for (int t = 0; t < c->threads_per_child; t++) {
            char st = hd_sb_worker(i, t)->state;
            /* A thread still starting counts as idle: forking more would not help it. */
            if (st == HD_SB_READY || st == HD_SB_STARTING) {
                child_idle++;
            }
            if (st != HD_SB_DEAD && st != HD_SB_GRACEFUL) {
                active++;
            }
        }
        /* a child that takes no new connections has no spare thread for one */
        if (hd_scoreboard->processes[i].not_accepting) {
            child_idle = 0;
        }
        idle += child_idle;
        if (child_idle >= victim_idle) {
            victim = i;
            victim_idle = child_idle;
        }
    }
    if (idle > c->max_spare_threads && victim >= 0 && children > 1) {
        /* One child a second, as Apache: a burst may come back. */
        hd_mpm_child_quiesce(victim);
        hd_mpm_spawn_rate_reset();
    } else if (idle < c->min_spare_threads) {
        if (children >= c->daemons_limit) {
            if (active >= c->max_workers && idle == 0 && !maxclients_reported) {
                hd_log_error(HD_LOG_ERR, log,
                             "AH00286: server reached MaxRequestWorkers setting, consider "
                             "raising the MaxRequestWorkers setting");
                maxclients_reported = true;
            } else if (idle > 0 && !near_maxclients_reported) {
                hd_log_error(HD_LOG_ERR, log,
                             "AH00287: server is within MinSpareThreads of MaxRequestWorkers, "
                             "consider raising the MaxRequestWorkers setting");
                near_maxclients_reported = true;
            }
            hd_mpm_spawn_rate_reset();
        } else {
            hd_mpm_spawn_spares(s);
        }
    } else {
        hd_mpm_spawn_rate_reset();
    }
}

hd_mpm_exit_t hd_mpm_threads_run(hd_server_t *s, const hd_mpm_threads_conf_t *c,
                                 const char *log_name,
                                 void (*child_main)(hd_server_t *s, int slot))
{
    run_conf = c;
    run_log_name = log_name;
    hd_mpm_master_ops_t ops = {
        .log_name = log_name,
        .server_limit = c->server_limit,
        .thread_limit = c->thread_limit,
        .threads_per_child = c->threads_per_child,
        .start_servers = c->start_servers,
        .daemons_limit = c->daemons_limit,
        .child_main = child_main,
        .maintain = maintain,
    };
    return hd_mpm_master_run(s, &ops);
}
