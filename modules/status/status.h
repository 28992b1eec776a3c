/*
 * mod_status internals: the view of the scoreboard one status request
 * renders (status_view.c), the output buffer, and the four renderers:
 * HTML (status_html.c), Apache's ?auto (status_auto.c), JSON
 * (status_json.c) and the Prometheus text format (status_metrics.c).
 */
#ifndef HD_STATUS_H
#define HD_STATUS_H

#include "hd.h"
#include "request.h"
#include "scoreboard.h"

#include <stdarg.h>
#include <string.h>
#include <time.h>

extern hd_module_t hd_status_module;

/** The windows rates are given over. */
enum { STATUS_W1, STATUS_W10, STATUS_W60, STATUS_WSTART, STATUS_NWINDOWS };

/** Names of the windows: "1s", "10s", "60s", "start". */
extern const char *const status_window_names[STATUS_NWINDOWS];

/** What changed over one window. */
typedef struct {
    bool valid;             /**< enough samples to say anything */
    double span_s;          /**< seconds actually covered */
    hd_sb_work_t work;      /**< deltas */
    hd_sb_kernel_t kernel;
    hd_sb_system_t system;  /**< deltas of the system counters (not of the gauges) */
} status_window_t;

/** Figures derived from one window: rates and costs per request. */
typedef struct {
    bool valid;
    bool per_request;       /**< requests > 0: the per-request figures mean something */
    double span_s;
    double requests;
    double req_per_s;
    double bytes_per_s;
    double syscalls;        /**< per request */
    double sys[HD_SYS_NKINDS];
    double cs_voluntary;
    double cs_involuntary;
    double cpu_us;
    double cpu_user_us;
    double cpu_system_us;
    double run_delay_us;
    double timeslices;
    double alloc_calls;
    double alloc_bytes;
    double lock_waits;
    double lock_wait_us;
    double latency_us;      /**< mean duration */
    /* system-wide, per second over the window (valid for ring windows only) */
    bool has_system;
    double sys_ctxt_per_s;
    double sys_intr_per_s;
    double sys_forks_per_s;
    double sys_cpu_pct[8];  /**< user nice system idle iowait irq softirq steal */
} status_rates_t;

/** Everything one status response shows, read once. */
typedef struct {
    hd_request_t *r;
    const char *server_name;
    const char *mpm;
    int threaded;
    int forked;
    int config_generation;
    int mpm_generation;
    struct timespec now;
    time_t restart_time;
    struct timespec start_time;
    double uptime_s;        /**< since the last restart (Apache's) */
    double since_start_s;   /**< since the server started */
    hd_sb_work_t work;      /**< totals */
    hd_sb_kernel_t kernel;
    uint64_t syscalls;      /**< workers' total */
    uint64_t master_syscalls;
    hd_sb_census_t census;
    hd_sb_system_t system;  /**< latest sample */
    char *letters;
    int nslots;
    int self_slot;          /**< slot serving this request, -1 */
    bool extended;
    status_rates_t rates[STATUS_NWINDOWS];
    uint64_t ring_samples;
} status_view_t;

/** Fills @p v from the scoreboard and the ring. */
void status_view_build(status_view_t *v, hd_request_t *r);

/** Derives rates from a window. */
void status_rates(const status_window_t *w, status_rates_t *out);

/** Latency quantile @p q (0..1) in µs from a histogram, interpolated; 0 if empty. */
double status_latency_quantile(const uint64_t *latency, double q);

/** Per-second values between two samples (charts): NAN-free, 0 if no time passed. */
typedef enum {
    SERIES_REQ_PER_S,
    SERIES_RUN_QUEUE,
    SERIES_WORKER_CS_PER_S,
    SERIES_SYSTEM_CS_PER_S,
    SERIES_SYSCALLS_PER_REQ,
    SERIES_CPU_US_PER_REQ
} status_series_t;

double status_series_value(status_series_t what, const hd_sb_sample_t *newer,
                           const hd_sb_sample_t *older);

/**
 * A copy of a slot's text field (client, request) that is a string even if
 * its worker is rewriting it: the reader takes no lock.
 */
#define STATUS_SLOT_TEXT(dst, field)                  \
    do {                                              \
        memcpy((dst), (field), sizeof(field));        \
        (dst)[sizeof(field) - 1] = '\0';              \
    } while (0)

/** Output: chunks from the request pool appended to the body as they fill. */
typedef struct {
    hd_request_t *r;
    char *buf;
    size_t len;
    size_t cap;
} status_out_t;

void status_out_init(status_out_t *o, hd_request_t *r);
void status_puts(status_out_t *o, const char *s);
void status_putn(status_out_t *o, const char *s, size_t n);
void status_printf(status_out_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Text escaped for HTML (& < > " '). */
void status_put_html(status_out_t *o, const char *s);
/** A JSON string, quotes included. */
void status_put_json_str(status_out_t *o, const char *s);
/** A number for JSON: integers without a fraction, "null" for NaN/inf. */
void status_put_json_num(status_out_t *o, double d);
/** Appends what is left to the body. */
void status_out_finish(status_out_t *o);

/** Apache's %g: no leading zero before the point (".5"). */
void status_apache_g(char *buf, size_t size, double d);
/** Apache's DEFAULT_TIME_FORMAT in local time: "Monday, 30-Nov-2026 01:19:26 UTC". */
void status_apache_time(char *buf, size_t size, time_t t);
/** Apache's show_time: " 1 day 2 hours 3 seconds" (leading space, zero parts left out). */
void status_apache_uptime(char *buf, size_t size, uint64_t secs);

/** The build's identity. */
typedef struct {
    const char *version;     /**< "httpd/0.1.0 (Unix)" */
    const char *built;       /**< "Nov 30 2026 01:19:26" */
    const char *git_commit;
    const char *build_type;
    const char *compiler;
    const char *cflags;
    bool counters;           /**< false in an HD_NO_COUNTERS build */
} status_build_t;

extern const status_build_t status_build;

/** Renderers. */
void status_render_auto(status_out_t *o, const status_view_t *v);
void status_render_json(status_out_t *o, const status_view_t *v, int history);
void status_render_metrics(status_out_t *o, const status_view_t *v);
void status_render_html(status_out_t *o, const status_view_t *v, int refresh);

/**
 * The sampler: reads /proc into the slots' kernel figures and the ring.
 * @p in_master: also the master's own figures (false under -X).
 */
void status_sample(bool in_master);

/** Closes the sampler's open /proc files (a new child does not sample). */
void status_sampler_forget(void);

#endif
