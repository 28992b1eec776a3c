/*
 * What the two threaded MPMs (worker and event) share: their directives with
 * Apache's defaults, the rules by which those constrain each other (with
 * Apache's warnings), query(), and run() with the master's spare-thread
 * maintenance.
 */
#ifndef HD_MPM_THREADS_H
#define HD_MPM_THREADS_H

#include "config.h"
#include "hd.h"
#include "mpm.h"

/** AsyncRequestWorkerFactor is kept in sixteenths. */
#define HD_MPM_FACTOR_SCALE 16

typedef struct {
    int start_servers;        /**< StartServers (3) */
    int min_spare_threads;    /**< MinSpareThreads (75) */
    int max_spare_threads;    /**< MaxSpareThreads (250) */
    int threads_per_child;    /**< ThreadsPerChild (25) */
    int max_workers;          /**< MaxRequestWorkers (ServerLimit x ThreadsPerChild = 400) */
    int server_limit;         /**< ServerLimit (16) */
    int thread_limit;         /**< ThreadLimit (64) */
    int max_conns_per_child;  /**< MaxConnectionsPerChild (0: no limit) */
    int async_factor;         /**< AsyncRequestWorkerFactor x HD_MPM_FACTOR_SCALE (event: 2) */
    bool max_workers_set;     /**< MaxRequestWorkers was given */
    int daemons_limit;        /**< computed: MaxRequestWorkers / ThreadsPerChild */
} hd_mpm_threads_conf_t;

/** A configuration with Apache's defaults (create_server_config of both modules). */
void *hd_mpm_threads_create_conf(hd_pool_t *p, hd_server_t *s);

/**
 * Applies Apache's rules to @p c, logging a warning for each value adjusted
 * under @p log_name. ServerLimit and ThreadLimit keep their first values
 * across restarts. HD_OK.
 */
int hd_mpm_threads_configure(hd_mpm_threads_conf_t *c, const char *log_name);

/** query() of a threaded MPM. */
int hd_mpm_threads_query(const hd_mpm_threads_conf_t *c, const hd_server_t *s, hd_mpmq_t what,
                         int *result);

/**
 * run() of a threaded MPM: the master loop (hd_mpm_master_run) with children
 * of @p c->threads_per_child threads running @p child_main, and once a second
 * the spare-thread maintenance: one child is stopped when more than
 * MaxSpareThreads are idle across the current generation's children, children
 * are started (at the doubling spawn rate) when fewer than MinSpareThreads are.
 */
hd_mpm_exit_t hd_mpm_threads_run(hd_server_t *s, const hd_mpm_threads_conf_t *c,
                                 const char *log_name,
                                 void (*child_main)(hd_server_t *s, int slot));

/** AsyncRequestWorkerFactor: a positive number (may have a fraction). */
const char *hd_mpm_set_factor(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[]);
/** MaxRequestWorkers / MaxClients: an int, and notes that it was given. */
const char *hd_mpm_set_max_workers(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[]);

#define HD_MPM_T(field) offsetof(hd_mpm_threads_conf_t, field)

/** The directives both threaded MPMs take, for their command tables. */
#define HD_MPM_THREADS_COMMANDS                                                                   \
    {"StartServers", hd_set_int_slot, HD_MPM_T(start_servers), HD_TAKE1, HD_CTX_MAIN,            \
     HD_CONF_SERVER, "number", "3", "Number of child processes to create at startup"},           \
    {"MinSpareThreads", hd_set_int_slot, HD_MPM_T(min_spare_threads), HD_TAKE1, HD_CTX_MAIN,     \
     HD_CONF_SERVER, "number", "75",                                                             \
     "Minimum number of idle threads, across all children, kept ready to serve requests"},      \
    {"MaxSpareThreads", hd_set_int_slot, HD_MPM_T(max_spare_threads), HD_TAKE1, HD_CTX_MAIN,     \
     HD_CONF_SERVER, "number", "250",                                                            \
     "Maximum number of idle threads; above it a child is stopped, one a second"},               \
    {"ThreadsPerChild", hd_set_int_slot, HD_MPM_T(threads_per_child), HD_TAKE1, HD_CTX_MAIN,     \
     HD_CONF_SERVER, "number", "25", "Number of worker threads in each child process"},          \
    {"ThreadLimit", hd_set_int_slot, HD_MPM_T(thread_limit), HD_TAKE1, HD_CTX_MAIN,              \
     HD_CONF_SERVER, "number", "64",                                                             \
     "Upper limit of ThreadsPerChild for the life of the server (scoreboard size)"},             \
    {"MaxRequestWorkers", hd_mpm_set_max_workers, HD_MPM_T(max_workers), HD_TAKE1, HD_CTX_MAIN,  \
     HD_CONF_SERVER, "number", "400",                                                            \
     "Maximum number of worker threads, all children together (a multiple of ThreadsPerChild)"},\
    {"MaxClients", hd_mpm_set_max_workers, HD_MPM_T(max_workers), HD_TAKE1, HD_CTX_MAIN,         \
     HD_CONF_SERVER, "number", "400", "Deprecated name of MaxRequestWorkers"},                   \
    {"ServerLimit", hd_set_int_slot, HD_MPM_T(server_limit), HD_TAKE1, HD_CTX_MAIN,              \
     HD_CONF_SERVER, "number", "16",                                                             \
     "Upper limit of child processes for the life of the server (scoreboard size)"},             \
    {"MaxConnectionsPerChild", hd_set_int_slot, HD_MPM_T(max_conns_per_child), HD_TAKE1,         \
     HD_CTX_MAIN, HD_CONF_SERVER, "number", "0",                                                 \
     "Connections a child accepts before it finishes them and exits (0: no limit)"},             \
    {"MaxRequestsPerChild", hd_set_int_slot, HD_MPM_T(max_conns_per_child), HD_TAKE1,            \
     HD_CTX_MAIN, HD_CONF_SERVER, "number", "0", "Deprecated name of MaxConnectionsPerChild"}

#endif
