/*
 * The error log: Apache's format and levels. One process-wide file, opened
 * by the master and inherited; written with one write() per message (O_APPEND),
 * so lines from processes and threads do not interleave.
 */
#ifndef HD_LOG_H
#define HD_LOG_H

#include "hd.h"

#include <stdarg.h>

typedef enum {
    HD_LOG_EMERG,
    HD_LOG_ALERT,
    HD_LOG_CRIT,
    HD_LOG_ERR,
    HD_LOG_WARNING,
    HD_LOG_NOTICE,
    HD_LOG_INFO,
    HD_LOG_DEBUG,
    HD_LOG_TRACE1,
    HD_LOG_TRACE8 = HD_LOG_TRACE1 + 7
} hd_log_level_t;

/** Parses "warn", "error", "trace3" ...; returns the level or -1. */
int hd_log_level_parse(const char *name);
/** Name of @p level ("error"). */
const char *hd_log_level_name(int level);

/**
 * Opens @p path (absolute; "/dev/stderr" or "stderr" for standard error) as
 * the error log, replacing the current one; @p level is the LogLevel. Returns
 * HD_OK, or HD_ERROR with the reason written to stderr.
 */
int hd_log_open(const char *path, int level);

/** Sets the level only. */
void hd_log_set_level(int level);
/** Current level. */
int hd_log_get_level(void);

/**
 * Logs a message: "[Mon Nov 30 00:52:07.123456 2026] [module:level] [pid N:tid T] message".
 * @p module is the module name ("core", "mpm_prefork").
 */
void hd_log_error(int level, const char *module, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/** The same with "[client ip:port]" after the pid (none when @p ip is NULL). */
void hd_log_client_error(int level, const char *module, const char *ip, unsigned port,
                         const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/**
 * hd_log_client_error for the client of request @p r (may be NULL). A macro so
 * that this layer needs no request record: it expands where request.h is known.
 */
#define hd_log_rerror(r, level, module, ...)                                                  \
    hd_log_client_error((level), (module), (r) != NULL && (r)->c != NULL ? (r)->c->client_ip : NULL, \
                        (r) != NULL && (r)->c != NULL ? (unsigned)(r)->c->client_port : 0u,      \
                        __VA_ARGS__)
void hd_log_verror(int level, const char *module, const char *client, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

/**
 * An episode: a run of the same failure (the descriptor limit reached, say)
 * that is logged once when it begins and once when it ends, with a count,
 * instead of once per failure. One may be shared by a process's threads.
 */
typedef struct {
    bool active;
    uint64_t count;     /**< failures since the episode began */
    int64_t since_us;   /**< when it began (monotonic) */
    int64_t last_us;    /**< the latest failure */
} hd_log_episode_t;

/** An episode is over once its kind of failure has not happened for this long. */
#define HD_LOG_EPISODE_QUIET_US 5000000

/**
 * A failure of @p ep's kind: the first of an episode is logged (with a note
 * that the next ones are only counted), the others counted.
 */
void hd_log_episode_fail(hd_log_episode_t *ep, int level, const char *module, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/**
 * Ends @p ep if one is under way and its last failure is HD_LOG_EPISODE_QUIET_US
 * old (a success between failures does not end it), logging "@p what: N
 * failures in S s".
 */
void hd_log_episode_end_slow(hd_log_episode_t *ep, int level, const char *module,
                             const char *what);

/** The check on the success path: a test of one flag when no episode is under way. */
static inline void hd_log_episode_end(hd_log_episode_t *ep, int level, const char *module,
                                      const char *what)
{
    if (__builtin_expect(__atomic_load_n(&ep->active, __ATOMIC_RELAXED), 0)) {
        hd_log_episode_end_slow(ep, level, module, what);
    }
}

/** File descriptor of the error log (for stderr redirection when detached). */
int hd_log_fd(void);

#endif
