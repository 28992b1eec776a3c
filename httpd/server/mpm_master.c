/*
 * The master process of every MPM. The master serves nothing: it forks
 * children, reaps them, replaces one that died unexpectedly at once, and
 * turns signals into restarts and stops. Children of an older generation are
 * told to finish (graceful) or are stopped (restart) only once the new
 * configuration has been read successfully, so a broken configuration leaves
 * them serving: main.c calls run again with the old configuration (same
 * generation) when the new one fails, and then no child is older.
 *
 * Signal handlers only set flags (process.c); the loop below waits in
 * hd_master_wait with the signals unblocked and acts on the flags.
 */
#include "mpm_master.h"

#include "buildmark.h"
#include "config.h"
#include "connection.h"
#include "ids.h"
#include "listen.h"
#include "log.h"
#include "pool.h"
#include "process.h"
#include "scoreboard.h"
#include "sys.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_SPAWN_RATE 32
#define TERM_GRACE_TICKS 30 /* x 100 ms before TERM becomes KILL */
#define KILL_WAIT_TICKS 10
/* Children that die of a signal are replaced at once, but not in a loop. */
#define MAX_QUICK_REPLACEMENTS 3

typedef struct {
    pid_t pid;
    int generation;
    bool quiescing;
} child_t;

static child_t *children; /* server_limit entries, indexed by scoreboard slot */
static int children_size;
static const hd_mpm_master_ops_t *ops;
static int spawn_rate = 1;
static int remaining_to_start; /* a graceful restart's new children not yet started */
static int quick_replacements;
static hd_mpm_exit_t last_exit = HD_MPM_STOP;

int hd_mpm_query(const hd_server_t *s, hd_mpmq_t what, bool threaded, int server_limit,
                 int thread_limit, int threads_per_child, int *result)
{
    switch (what) {
    case HD_MPMQ_IS_THREADED:
        *result = threaded;
        return HD_OK;
    case HD_MPMQ_IS_FORKED:
        *result = 1;
        return HD_OK;
    case HD_MPMQ_MAX_DAEMONS:
        *result = server_limit;
        return HD_OK;
    case HD_MPMQ_MAX_THREADS:
        *result = threads_per_child;
        return HD_OK;
    case HD_MPMQ_GENERATION:
        *result = s->generation;
        return HD_OK;
    case HD_MPMQ_MAX_WORKERS:
        *result = server_limit * thread_limit;
        return HD_OK;
    }
    return HD_DECLINED;
}

int hd_mpm_slots(void)
{
    return children_size;
}

bool hd_mpm_child_active(const hd_server_t *s, int slot)
{
    const child_t *c = &children[slot];
    return c->pid > 0 && c->generation == s->generation && !c->quiescing &&
           !hd_scoreboard->processes[slot].quiescing;
}

int hd_mpm_child_count(void)
{
    int n = 0;
    for (int i = 0; i < children_size; i++) {
        n += children[i].pid > 0;
    }
    return n;
}

void hd_mpm_raise_nofile(const char *log_name)
{
    struct rlimit rl;
    if (hd_getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= rl.rlim_max) {
        return;
    }
    rlim_t was = rl.rlim_cur;
    rl.rlim_cur = rl.rlim_max;
    if (hd_setrlimit(RLIMIT_NOFILE, &rl) == 0) {
        hd_log_error(HD_LOG_INFO, log_name, "open files limit raised from %llu to %llu",
                     (unsigned long long)was, (unsigned long long)rl.rlim_max);
    }
}

static void mark_slots(int slot, char state)
{
    int n = hd_scoreboard->global->thread_limit;
    for (int t = 0; t < n; t++) {
        hd_sb_worker(slot, t)->state = state;
    }
}

static void run_child(hd_server_t *s, int slot)
{
    hd_child_die = 0;
    hd_child_graceful = 0;
    __atomic_store_n(&hd_stop_keepalive, 0, __ATOMIC_RELAXED);
    hd_child_signals_install();
    hd_scoreboard->processes[slot].pid = hd_pid();
    hd_scoreboard->processes[slot].generation = s->generation;
    hd_scoreboard->processes[slot].quiescing = 0;
    hd_scoreboard->processes[slot].not_accepting = 0;
    ops->child_main(s, slot);
    mark_slots(slot, HD_SB_DEAD);
    hd_pool_recycler_drain();
    _exit(0);
}

static int spawn_child(hd_server_t *s, int slot)
{
    for (int t = 0; t < ops->threads_per_child; t++) {
        hd_sb_worker(slot, t)->state = HD_SB_STARTING;
    }
    pid_t pid = hd_fork();
    if (pid < 0) {
        hd_log_error(HD_LOG_ERR, ops->log_name, "AH00159: fork: Unable to fork new process: %s",
                     strerror(errno));
        mark_slots(slot, HD_SB_DEAD);
        return HD_ERROR;
    }
    if (pid == 0) {
        run_child(s, slot);
    }
    children[slot].pid = pid;
    children[slot].generation = s->generation;
    children[slot].quiescing = false;
    hd_scoreboard->processes[slot].pid = pid;
    hd_scoreboard->processes[slot].generation = s->generation;
    hd_scoreboard->processes[slot].quiescing = 0;
    hd_scoreboard->processes[slot].not_accepting = 0;
    return HD_OK;
}

static int current_children(const hd_server_t *s)
{
    int n = 0;
    for (int i = 0; i < children_size; i++) {
        n += children[i].pid > 0 && children[i].generation == s->generation;
    }
    return n;
}

static int find_free_slot(void)
{
    for (int i = 0; i < children_size; i++) {
        if (children[i].pid == 0) {
            return i;
        }
    }
    return -1;
}

/* Starts up to @p n children of the current generation; returns how many started. */
static int spawn_some(hd_server_t *s, int n)
{
    int started = 0;
    int room = ops->daemons_limit - current_children(s);
    while (started < n && started < room) {
        int slot = find_free_slot();
        if (slot < 0 || spawn_child(s, slot) != HD_OK) {
            break;
        }
        started++;
    }
    return started;
}

int hd_mpm_spawn_spares(hd_server_t *s)
{
    int n = spawn_some(s, spawn_rate);
    if (n > 0 && spawn_rate >= 8) {
        hd_log_error(HD_LOG_INFO, ops->log_name,
                     "AH00162: server seems busy, (you may need to increase StartServers, or "
                     "Min/MaxSpare settings), spawning %d children, there are %d children",
                     n, current_children(s));
    }
    if (spawn_rate < MAX_SPAWN_RATE) {
        spawn_rate *= 2;
    }
    return n;
}

void hd_mpm_spawn_rate_reset(void)
{
    spawn_rate = 1;
}

void hd_mpm_child_quiesce(int slot)
{
    if (children[slot].pid > 0) {
        children[slot].quiescing = true;
        hd_scoreboard->processes[slot].quiescing = 1;
        hd_kill(children[slot].pid, SIGUSR1);
    }
}

static void signal_children(int sig, bool older_only, int generation)
{
    for (int i = 0; i < children_size; i++) {
        if (children[i].pid <= 0 || (older_only && children[i].generation == generation)) {
            continue;
        }
        if (sig == SIGUSR1) {
            children[i].quiescing = true;
            hd_scoreboard->processes[i].quiescing = 1;
        }
        hd_kill(children[i].pid, sig);
    }
}

/* Reaps exited children; replaces current ones that died unexpectedly. */
static void reap_children(hd_server_t *s, bool replace)
{
    int status;
    pid_t pid;
    while ((pid = hd_waitpid(-1, &status, WNOHANG)) > 0) {
        int i;
        for (i = 0; i < children_size && children[i].pid != pid; i++) {
        }
        if (i == children_size) {
            continue;
        }
        bool signaled = WIFSIGNALED(status);
        bool unexpected = !children[i].quiescing && !hd_scoreboard->processes[i].quiescing &&
                          (signaled || WEXITSTATUS(status) != 0);
        if (signaled && WTERMSIG(status) != SIGTERM) {
            hd_log_error(HD_LOG_NOTICE, ops->log_name,
                         "AH00052: child pid %ld exit signal %s (%d)", (long)pid,
                         strsignal(WTERMSIG(status)), WTERMSIG(status));
        }
        bool current = children[i].generation == s->generation;
        children[i].pid = 0;
        children[i].quiescing = false;
        hd_scoreboard->processes[i].pid = 0;
        hd_scoreboard->processes[i].quiescing = 0;
        hd_scoreboard->processes[i].not_accepting = 0;
        mark_slots(i, HD_SB_DEAD);
        if (!replace || hd_sig_stop || hd_sig_graceful_stop) {
            continue;
        }
        if (remaining_to_start > 0) {
            /* A graceful restart: a new child takes each slot an old one frees. */
            remaining_to_start -= spawn_some(s, 1);
        } else if (unexpected && current && quick_replacements < MAX_QUICK_REPLACEMENTS) {
            quick_replacements++;
            spawn_some(s, 1);
        }
    }
}

/* Stops children (all, or those older than @p generation): TERM, then KILL. */
static void stop_children(hd_server_t *s, bool older_only, int generation)
{
    signal_children(SIGTERM, older_only, generation);
    for (int waited = 0; waited < TERM_GRACE_TICKS + KILL_WAIT_TICKS; waited++) {
        reap_children(s, false);
        bool left = false;
        for (int i = 0; i < children_size; i++) {
            left |= children[i].pid > 0 &&
                    (!older_only || children[i].generation != generation);
        }
        if (!left) {
            return;
        }
        if (waited == TERM_GRACE_TICKS) {
            signal_children(SIGKILL, older_only, generation);
        }
        hd_master_wait(100);
    }
}

static hd_mpm_exit_t run_one_process(hd_server_t *s)
{
    if (hd_scoreboard_create(1, ops->thread_limit) != HD_OK) {
        return HD_MPM_FAILED;
    }
    hd_mpm_raise_nofile(ops->log_name);
    hd_child_signals_install();
    hd_child_die = hd_child_graceful = 0;
    __atomic_store_n(&hd_stop_keepalive, 0, __ATOMIC_RELAXED);
    hd_scoreboard->processes[0].pid = hd_pid();
    hd_scoreboard->processes[0].generation = s->generation;
    ops->child_main(s, 0);
    return HD_MPM_STOP;
}

static bool first_run(const hd_mpm_master_ops_t *o)
{
    if (hd_scoreboard_create(o->server_limit, o->thread_limit) != HD_OK) {
        return false;
    }
    children = calloc((size_t)o->server_limit, sizeof(*children));
    if (children == NULL) {
        return false;
    }
    children_size = o->server_limit;
    hd_mpm_raise_nofile(o->log_name);
    hd_master_signals_install();
    return true;
}

static bool any_signal(void)
{
    return hd_sig_stop || hd_sig_restart || hd_sig_graceful || hd_sig_graceful_stop ||
           hd_sig_child;
}

static hd_mpm_exit_t graceful_stop(hd_server_t *s)
{
    hd_log_error(HD_LOG_NOTICE, ops->log_name,
                 "AH00492: caught SIGWINCH, shutting down gracefully");
    /* As Apache: the listeners close now (the children close their copies as
     * they are told to finish), so a new client is refused at once rather
     * than accepted by the kernel and never answered. */
    hd_listen_close(s);
    signal_children(SIGUSR1, false, s->generation);
    int64_t next_tick = hd_now_mono_us() + 1000000;
    while (hd_mpm_child_count() > 0 && !hd_sig_stop) {
        hd_master_wait(200);
        reap_children(s, false);
        if (hd_now_mono_us() >= next_tick) {
            hd_modules_master_tick(s);
            next_tick = hd_now_mono_us() + 1000000;
        }
    }
    if (hd_sig_stop) {
        stop_children(s, false, s->generation);
    }
    return HD_MPM_GRACEFUL_STOP;
}

/* Acts on a pending signal; returns true (with *how) when run must return. */
static bool handle_signals(hd_server_t *s, hd_mpm_exit_t *how)
{
    if (hd_sig_stop) {
        hd_sig_stop = 0;
        hd_log_error(HD_LOG_NOTICE, ops->log_name, "AH00169: caught SIGTERM, shutting down");
        stop_children(s, false, s->generation);
        *how = HD_MPM_STOP;
        return true;
    }
    if (hd_sig_graceful_stop) {
        hd_sig_graceful_stop = 0;
        *how = graceful_stop(s);
        return true;
    }
    if (hd_sig_restart) {
        hd_sig_restart = 0;
        hd_log_error(HD_LOG_NOTICE, ops->log_name,
                     "AH00171: SIGHUP received.  Attempting to restart");
        *how = HD_MPM_RESTART;
        return true;
    }
    if (hd_sig_graceful) {
        hd_sig_graceful = 0;
        hd_log_error(HD_LOG_NOTICE, ops->log_name,
                     "AH00164: Graceful restart requested, doing restart");
        *how = HD_MPM_GRACEFUL;
        return true;
    }
    return false;
}

hd_mpm_exit_t hd_mpm_master_run(hd_server_t *s, const hd_mpm_master_ops_t *o)
{
    ops = o;
    if (s->one_process) {
        return run_one_process(s);
    }
    if (children == NULL && !first_run(o)) {
        return HD_MPM_FAILED;
    }
    hd_scoreboard->global->running_generation = s->generation;

    /* Old children go now that the new configuration is known to be good. */
    if (last_exit == HD_MPM_RESTART) {
        stop_children(s, true, s->generation);
        hd_scoreboard->global->restart_time = time(NULL);
    } else if (last_exit == HD_MPM_GRACEFUL) {
        signal_children(SIGUSR1, true, s->generation);
        hd_scoreboard->global->restart_time = time(NULL);
    }
    remaining_to_start = 0;
    int wanted = o->start_servers - current_children(s);
    if (wanted > 0) {
        remaining_to_start = wanted - spawn_some(s, wanted);
    }
    spawn_rate = 1;
    hd_log_error(HD_LOG_NOTICE, o->log_name,
                 "AH00163: " HD_SERVER_BASEPRODUCT "/" HD_VERSION
                 " (Unix) MPM %s configured -- resuming normal operations",
                 s->mpm->name);
    hd_log_error(HD_LOG_INFO, o->log_name, "AH00293: Server built: %s", hd_server_built);

    int64_t next_tick = hd_now_mono_us() + 1000000;
    hd_mpm_exit_t how;
    for (;;) {
        int64_t left = (next_tick - hd_now_mono_us()) / 1000;
        if (left > 0 && !any_signal()) {
            hd_master_wait((int)left);
        }
        hd_sig_child = 0;
        reap_children(s, true);
        if (handle_signals(s, &how)) {
            last_exit = how;
            return how;
        }
        if (hd_now_mono_us() < next_tick) {
            continue;
        }
        next_tick = hd_now_mono_us() + 1000000;
        quick_replacements = 0;
        hd_modules_master_tick(s);
        if (remaining_to_start > 0) {
            /* The children just started are not idle yet: no maintenance now. */
            remaining_to_start -= spawn_some(s, remaining_to_start);
            if (current_children(s) >= o->daemons_limit) {
                remaining_to_start = 0;
            }
            continue;
        }
        o->maintain(s);
    }
}
