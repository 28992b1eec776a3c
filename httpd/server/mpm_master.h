/*
 * The master process shared by every MPM (Apache's mpm_common.c and the
 * server_main_loop each MPM repeats): a table of children indexed by
 * scoreboard slot, spawning and reaping, replacement of a child that died
 * unexpectedly, generations across restarts, graceful restart, graceful stop,
 * stop with TERM then KILL, and a tick once a second that runs the modules'
 * master_tick and the MPM's spare maintenance.
 *
 * An MPM supplies an hd_mpm_master_ops_t and calls hd_mpm_master_run from its
 * run(); its maintenance callback uses the helpers below to count, start and
 * stop children.
 */
#ifndef HD_MPM_MASTER_H
#define HD_MPM_MASTER_H

#include "hd.h"
#include "mpm.h"

/** What an MPM gives the master; filled by the MPM on every run (values may change). */
typedef struct {
    const char *log_name;     /**< module name for the error log: "mpm_worker" */
    int server_limit;         /**< child slots (fixed by the first run) */
    int thread_limit;         /**< scoreboard slots per child (fixed by the first run) */
    int threads_per_child;    /**< slots a child uses (set to STARTING when it is forked) */
    int start_servers;        /**< children of a new generation */
    int daemons_limit;        /**< children of the current generation at most */
    /** Runs in a new child (or in the single process of -X) until it should exit. */
    void (*child_main)(hd_server_t *s, int slot);
    /** Once a second in the master: keep the spare capacity (start or stop children). */
    void (*maintain)(hd_server_t *s);
} hd_mpm_master_ops_t;

/**
 * The master loop: returns when a signal asks for a stop or a restart, as
 * hd_mpm_t.run does. Called again with the new configuration after a restart;
 * children of the older generation are then told to finish (graceful) or are
 * stopped (restart).
 */
hd_mpm_exit_t hd_mpm_master_run(hd_server_t *s, const hd_mpm_master_ops_t *ops);

/**
 * query() of any MPM, whose children run @p threads_per_child threads in
 * @p thread_limit scoreboard slots each (1 and 1 for prefork); only
 * HD_MPMQ_IS_THREADED tells the process model from a threaded one. HD_OK, or
 * HD_DECLINED for a question it does not know.
 */
int hd_mpm_query(const hd_server_t *s, hd_mpmq_t what, bool threaded, int server_limit,
                 int thread_limit, int threads_per_child, int *result);

/** Number of child slots (the table's size). */
int hd_mpm_slots(void);

/**
 * True if @p slot holds a child of the current generation that was not told
 * to finish (and did not say it is finishing, see the scoreboard's quiescing).
 */
bool hd_mpm_child_active(const hd_server_t *s, int slot);

/** Children alive, of any generation. */
int hd_mpm_child_count(void);

/** Tells the child in @p slot to finish its connections and exit (SIGUSR1). */
void hd_mpm_child_quiesce(int slot);

/**
 * Starts up to the current spawn rate of children in free slots below the
 * daemons limit, then doubles the rate (1, 2, 4 ... 32 a second, as Apache).
 * Returns the number started.
 */
int hd_mpm_spawn_spares(hd_server_t *s);

/** Resets the spawn rate to 1 (nothing was missing this second). */
void hd_mpm_spawn_rate_reset(void);

/**
 * Raises the soft limit of open files to the hard limit, so that a child
 * with many connections does not run out of descriptors.
 */
void hd_mpm_raise_nofile(const char *log_name);

#endif
