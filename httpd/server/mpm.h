/*
 * The MPM interface: one small struct of function pointers. Each
 * modules/mpm_* supplies one instance; nothing else is MPM-specific.
 */
#ifndef HD_MPM_H
#define HD_MPM_H

#include "hd.h"

/** What hd_mpm_t.run returned: why the master loop ended. */
typedef enum {
    HD_MPM_STOP,            /**< TERM: stop now */
    HD_MPM_RESTART,         /**< HUP: children killed, re-read config, start again */
    HD_MPM_GRACEFUL,        /**< USR1: re-read config, old children finish their requests */
    HD_MPM_GRACEFUL_STOP,   /**< WINCH: children finish their requests, then exit */
    HD_MPM_FAILED           /**< could not run */
} hd_mpm_exit_t;

/** Questions for query(), as Apache's AP_MPMQ_*. */
typedef enum {
    HD_MPMQ_IS_THREADED,
    HD_MPMQ_IS_FORKED,
    HD_MPMQ_MAX_DAEMONS,       /**< ServerLimit */
    HD_MPMQ_MAX_THREADS,       /**< threads per child */
    HD_MPMQ_GENERATION,
    HD_MPMQ_MAX_WORKERS        /**< scoreboard slots needed */
} hd_mpmq_t;

struct hd_mpm {
    const char *name;                             /**< "prefork" */
    /** Checks and adjusts the MPM's directives (warnings logged). HD_OK/HD_ERROR. */
    int (*configure)(hd_server_t *s);
    /**
     * Runs the server until a signal asks it to stop or restart. Listeners
     * are open and the scoreboard exists. On a restart the master calls run
     * again with the new configuration; children of the old generation are
     * told to finish (graceful) or killed (restart) by run itself.
     */
    hd_mpm_exit_t (*run)(hd_server_t *s);
    /** Answers a query; HD_OK or HD_DECLINED. */
    int (*query)(const hd_server_t *s, hd_mpmq_t what, int *result);
};

#endif
