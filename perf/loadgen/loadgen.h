/*
 * hd_loadgen: the project's HTTP/1.1 load generator (perf/). The pieces:
 *   loadgen.c  command line, threads, merging their figures
 *   urls.c     the target, the URL list (argument, file or document root),
 *              the pre-built request bytes
 *   conn.c     one thread's epoll loop: connections, schedule, timing
 *   resp.c     reading responses
 *   hist.c     the latency histogram
 *   report.c   the summary for people and the JSON for scripts
 * It is a client: it calls the system directly, not through httpd/base/sys.h,
 * and counts its own system calls so that its cost can be shown.
 */
#ifndef LG_LOADGEN_H
#define LG_LOADGEN_H

#include "hist.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

/** The version printed in the summary and the JSON. */
#define LG_VERSION "0.1"
/** Seconds a run may last beyond its duration, whatever else happens. */
#define LG_HARD_EXTRA_S 5
/** The number of slowest URLs marked in the summary. */
#define LG_SLOWEST 5

/** One URL of the list, with its request already in bytes. */
typedef struct {
    char *path;      /**< the request target, percent-encoded ("/manual/a%20b.html") */
    double weight;   /**< relative share of the requests (above 0) */
    char *req;       /**< the whole request: line, headers, empty line */
    size_t req_len;  /**< its length */
} lg_url_t;

/** Where the URL list came from. */
typedef enum { LG_SRC_ARGUMENT, LG_SRC_FILE, LG_SRC_DOCROOT } lg_url_source_t;

/** The run as the command line asked for it. */
typedef struct {
    const char *target;              /**< the URL argument as given */
    char host[300];                  /**< the Host header: "127.0.0.1:8080", "[::1]:8080" */
    char path[4096];                 /**< the URL argument's path ("" if none) */
    struct sockaddr_storage addr;    /**< where to connect */
    socklen_t addrlen;               /**< its length */
    lg_url_t *urls;                  /**< the URL list */
    size_t nurls;                    /**< its length */
    double *cumw;                    /**< cumulative weights, for picking a URL */
    double total_weight;             /**< cumw[nurls - 1] */
    lg_url_source_t url_source;      /**< argument, -u file or --docroot */
    const char *url_file;            /**< -u FILE */
    const char *docroot;             /**< --docroot DIR */
    const char **headers;            /**< -H lines, in order */
    size_t nheaders;                 /**< their number */
    int connections;                 /**< -c */
    int threads;                     /**< -t */
    double rate;                     /**< -R requests/s in all; 0: closed loop */
    double duration;                 /**< -d seconds */
    uint64_t max_requests;           /**< -n; 0: no limit */
    double timeout;                  /**< -T seconds per request */
    bool keepalive;                  /**< false with --no-keepalive */
    uint64_t seed;                   /**< --seed, for the choice of URLs */
    const char *json_path;           /**< --json FILE or "-"; NULL: none */
    bool quiet;                      /**< -q: no summary */
} lg_config_t;

/** Kinds of failed request. */
typedef enum {
    LG_ERR_CONNECT, /**< the connection could not be made */
    LG_ERR_WRITE,   /**< sending the request failed */
    LG_ERR_READ,    /**< the connection failed or closed before the response ended */
    LG_ERR_TIMEOUT, /**< no complete response within -T */
    LG_ERR_PARSE,   /**< the response was not valid HTTP/1.x */
    LG_ERR_ABORTED, /**< still running at the hard end of the run */
    LG_ERR_NKINDS
} lg_err_t;

/** Names of the error kinds ("connect", ...). */
extern const char *const lg_err_names[LG_ERR_NKINDS];

/** Kinds of system call the load generator makes, counted to show its cost. */
typedef enum {
    LG_SYS_READ,
    LG_SYS_WRITE,
    LG_SYS_EPOLL_WAIT,
    LG_SYS_EPOLL_CTL,
    LG_SYS_SOCKET,
    LG_SYS_CONNECT,
    LG_SYS_CLOSE,
    LG_SYS_OTHER,
    LG_SYS_NKINDS
} lg_sys_t;

/** Names of the system call kinds ("read", ...). */
extern const char *const lg_sys_names[LG_SYS_NKINDS];

/** Figures of one URL (or of all: the totals). Times are sums in nanoseconds. */
typedef struct {
    uint64_t requests;             /**< requests started */
    uint64_t responses;            /**< complete responses */
    uint64_t found;                /**< 2xx */
    uint64_t missed;               /**< 404 */
    uint64_t other;                /**< any other status */
    uint64_t classes[6];           /**< by status class: [1] 1xx .. [5] 5xx, [0] other */
    uint64_t errors[LG_ERR_NKINDS];/**< failed requests by kind */
    uint64_t connects;             /**< responses whose request opened its connection */
    uint64_t bytes;                /**< response bytes, headers included */
    uint64_t sum_wait;             /**< intended send time to start */
    uint64_t sum_connect;          /**< start to connected (0 on a reused connection) */
    uint64_t sum_write;            /**< start to request fully written */
    uint64_t sum_read;             /**< start to first response byte */
    uint64_t sum_close;            /**< start to response complete */
    uint64_t sum_total;            /**< intended send time to response complete */
    lg_hist_t *hist;               /**< latency in us from the intended time; NULL until used */
} lg_url_stats_t;

/** One second of the run. */
typedef struct {
    uint64_t responses;  /**< responses completed in this second */
    uint64_t errors;     /**< requests failed in this second */
    uint64_t sum_us;     /**< their latencies summed */
    uint64_t max_us;     /**< the largest */
} lg_second_t;

/** The figures of one thread, then of the whole run once merged. */
typedef struct {
    lg_hist_t hist;                /**< latency from the intended send time, us */
    lg_url_stats_t total;          /**< all URLs together (hist unused) */
    lg_url_stats_t *urls;          /**< per URL, as cfg->urls */
    lg_second_t *timeline;         /**< per second since the start */
    size_t nseconds;               /**< its length */
    uint64_t reconnects;           /**< requests retried on a new connection */
    uint64_t idle_closes;          /**< idle keep-alive connections the server closed */
    uint64_t scheduled;            /**< open loop: requests due within the run */
    uint64_t behind;               /**< open loop: due but never sent (no free connection) */
    uint64_t max_wait_ns;          /**< open loop: the latest start after an intended time */
    uint64_t sys[LG_SYS_NKINDS];   /**< system calls made */
    uint64_t elapsed_ns;           /**< the rate window: start to the later of the end of
                                        sending and the last response */
    uint64_t run_ns;               /**< start to the end of the run, failures included */
} lg_stats_t;

/** The command line and everything derived from it; exits 1 with usage if wrong. */
void lg_parse_args(lg_config_t *cfg, int argc, char **argv);

/** Frees what lg_parse_args allocated. */
void lg_config_free(lg_config_t *cfg);

/** Prints the usage to @p f. */
void lg_usage(FILE *f);

/** Reports a wrong argument (one line) and the usage on stderr, and exits 1. */
void lg_bad_args(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/**
 * Parses the target URL into cfg->host, path and addr; refuses anything but
 * http:// to a loopback address. NULL on success, else what is wrong.
 */
const char *lg_parse_target(lg_config_t *cfg, const char *url, char *err, size_t errlen);

/** Builds cfg->urls from the argument, -u or --docroot; NULL or what is wrong. */
const char *lg_load_urls(lg_config_t *cfg, char *err, size_t errlen);

/** Allocates the per-URL and per-second parts of @p st for @p cfg. */
void lg_stats_init(lg_stats_t *st, const lg_config_t *cfg);

/** Adds @p src into @p dst (both made by lg_stats_init for the same config). */
void lg_stats_merge(lg_stats_t *dst, const lg_stats_t *src, const lg_config_t *cfg);

/** Frees what lg_stats_init allocated. */
void lg_stats_free(lg_stats_t *st, const lg_config_t *cfg);

/** What one thread is given. */
typedef struct {
    const lg_config_t *cfg; /**< the run */
    int index;              /**< 0 .. threads-1 */
    int connections;        /**< its share of -c */
    uint64_t max_requests;  /**< its share of -n (0: none) */
    uint64_t t0;            /**< the common start, CLOCK_MONOTONIC ns */
    lg_stats_t stats;       /**< its figures, filled by lg_thread_run */
    const char *fatal;      /**< set if the thread could not run at all */
} lg_thread_t;

/** Runs one thread's share of the load until its end (conn.c). */
void lg_thread_run(lg_thread_t *t);

/** Set by SIGINT/SIGTERM: stop sending, finish, report. */
extern volatile int lg_stop;

/** CLOCK_MONOTONIC in nanoseconds. */
uint64_t lg_now(void);

/** Prints the summary for people. */
void lg_report_text(FILE *f, const lg_config_t *cfg, const lg_stats_t *st);

/** Writes every figure as JSON; -1 if writing failed. */
int lg_report_json(FILE *f, const lg_config_t *cfg, const lg_stats_t *st);

#endif
