/*
 * ?metrics: the same figures in the Prometheus text exposition format
 * (version 0.0.4), so a Prometheus server scrapes the server without an
 * exporter. Counters end in _total and use base units (seconds, bytes);
 * the latency histogram is a Prometheus histogram; the windowed rates and
 * per-request costs are gauges with a window label.
 */
#include "status.h"

#include <string.h>
#include <unistd.h>

static const char *const cpu_modes[8] = {"user", "nice", "system", "idle",
                                         "iowait", "irq", "softirq", "steal"};

static void family(status_out_t *o, const char *name, const char *type, const char *help)
{
    status_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value: backslash, quote and newline escaped. */
static void label_value(status_out_t *o, const char *s)
{
    for (; *s != '\0'; s++) {
        if (*s == '\\' || *s == '"') {
            status_printf(o, "\\%c", *s);
        } else if (*s == '\n') {
            status_puts(o, "\\n");
        } else {
            status_putn(o, s, 1);
        }
    }
}

static void sample_u(status_out_t *o, const char *name, const char *labels, uint64_t v)
{
    status_printf(o, "%s%s %llu\n", name, labels, (unsigned long long)v);
}

static void sample_d(status_out_t *o, const char *name, const char *labels, double v)
{
    status_printf(o, "%s%s %.15g\n", name, labels, v);
}

static void counter_u(status_out_t *o, const char *name, const char *help, uint64_t v)
{
    family(o, name, "counter", help);
    sample_u(o, name, "", v);
}

static void gauge_d(status_out_t *o, const char *name, const char *help, double v)
{
    family(o, name, "gauge", help);
    sample_d(o, name, "", v);
}

static void by_kind(status_out_t *o, const char *name, const uint64_t *sys)
{
    for (int k = 0; k < HD_SYS_NKINDS; k++) {
        status_printf(o, "%s{kind=\"%s\"} %llu\n", name, hd_sys_kind_names[k],
                      (unsigned long long)sys[k]);
    }
}

static void info(status_out_t *o, const status_view_t *v)
{
    family(o, "httpd_info", "gauge", "Build identity and MPM of the running server.");
    const char *labels[][2] = {
        {"version", status_build.version},   {"mpm", v->mpm},
        {"git_commit", status_build.git_commit}, {"build_type", status_build.build_type},
        {"compiler", status_build.compiler}, {"cflags", status_build.cflags},
        {"counters", status_build.counters ? "on" : "off"},
    };
    status_puts(o, "httpd_info{");
    for (size_t i = 0; i < HD_ARRAY_SIZE(labels); i++) {
        status_printf(o, "%s%s=\"", i ? "," : "", labels[i][0]);
        label_value(o, labels[i][1]);
        status_puts(o, "\"");
    }
    status_puts(o, "} 1\n");
    gauge_d(o, "httpd_start_time_seconds", "When the server started (Unix time).",
            (double)v->start_time.tv_sec + (double)v->start_time.tv_nsec / 1e9);
    gauge_d(o, "httpd_restart_time_seconds", "When the server last restarted (Unix time).",
            (double)v->restart_time);
    gauge_d(o, "httpd_uptime_seconds", "Seconds since the last restart.", v->uptime_s);
    gauge_d(o, "httpd_config_generation", "Configuration generation (1 at start).",
            v->config_generation);
    gauge_d(o, "httpd_mpm_generation", "MPM generation (restarts).", v->mpm_generation);
}

static void totals(status_out_t *o, const status_view_t *v)
{
    const hd_sb_global_t *g = hd_scoreboard->global;
    static const char *const classes[5] = {"1xx", "2xx", "3xx", "4xx", "5xx"};

    counter_u(o, "httpd_requests_total", "Requests served.", v->work.requests);
    counter_u(o, "httpd_sent_bytes_total", "Bytes sent, response heads included.",
              v->work.bytes);
    family(o, "httpd_responses_total", "counter", "Responses by status class.");
    for (int c = 0; c < 5; c++) {
        status_printf(o, "httpd_responses_total{class=\"%s\"} %llu\n", classes[c],
                      (unsigned long long)v->work.status[c]);
    }
    family(o, "httpd_request_duration_seconds", "histogram",
           "Request duration, first byte read to last byte written.");
    uint64_t cum = 0;
    for (int i = 0; i < HD_SB_LAT_BUCKETS - 1; i++) {
        cum += v->work.latency[i];
        status_printf(o, "httpd_request_duration_seconds_bucket{le=\"%g\"} %llu\n",
                      (double)hd_sb_latency_bound_us(i) / 1e6, (unsigned long long)cum);
    }
    cum += v->work.latency[HD_SB_LAT_BUCKETS - 1];
    status_printf(o, "httpd_request_duration_seconds_bucket{le=\"+Inf\"} %llu\n",
                  (unsigned long long)cum);
    sample_d(o, "httpd_request_duration_seconds_sum", "", (double)v->work.duration_us / 1e6);
    sample_u(o, "httpd_request_duration_seconds_count", "", cum);

    family(o, "httpd_syscalls_total", "counter", "System calls made by the workers, by kind.");
    by_kind(o, "httpd_syscalls_total", v->work.sys);
    family(o, "httpd_master_syscalls_total", "counter",
           "System calls made by the master process, by kind.");
    by_kind(o, "httpd_master_syscalls_total", g->master_sys);
    family(o, "httpd_context_switches_total", "counter", "Context switches of the workers.");
    sample_u(o, "httpd_context_switches_total", "{type=\"voluntary\"}", v->kernel.vcs);
    sample_u(o, "httpd_context_switches_total", "{type=\"involuntary\"}", v->kernel.ivcs);
    family(o, "httpd_cpu_seconds_total", "counter", "CPU time of the workers.");
    sample_d(o, "httpd_cpu_seconds_total", "{mode=\"user\"}", (double)v->kernel.utime_us / 1e6);
    sample_d(o, "httpd_cpu_seconds_total", "{mode=\"system\"}", (double)v->kernel.stime_us / 1e6);
    family(o, "httpd_master_cpu_seconds_total", "counter", "CPU time of the master process.");
    sample_d(o, "httpd_master_cpu_seconds_total", "{mode=\"user\"}",
             (double)g->master_utime_us / 1e6);
    sample_d(o, "httpd_master_cpu_seconds_total", "{mode=\"system\"}",
             (double)g->master_stime_us / 1e6);
    family(o, "httpd_run_delay_seconds_total", "counter",
           "Time the workers were runnable but waited for a CPU.");
    sample_d(o, "httpd_run_delay_seconds_total", "", (double)v->kernel.run_delay_us / 1e6);
    counter_u(o, "httpd_timeslices_total", "Times the workers were scheduled on a CPU.",
              v->kernel.timeslices);
    counter_u(o, "httpd_allocator_calls_total", "malloc calls made by the pools.",
              v->work.pool_allocs);
    counter_u(o, "httpd_allocator_bytes_total", "Bytes the pools asked of malloc.",
              v->work.pool_bytes);
    counter_u(o, "httpd_lock_waits_total", "Times a worker waited on the accept lock or queue.",
              v->kernel.lock_waits);
    family(o, "httpd_lock_wait_seconds_total", "counter",
           "Time workers waited on the accept lock or queue.");
    sample_d(o, "httpd_lock_wait_seconds_total", "", (double)v->kernel.lock_wait_us / 1e6);
}

static void workers(status_out_t *o, const status_view_t *v)
{
    static const struct {
        char letter;
        const char *name;
    } states[] = {
        {'_', "waiting"}, {'S', "starting"}, {'R', "reading"},  {'W', "sending"},
        {'K', "keepalive"}, {'D', "dns"},    {'C', "closing"},  {'L', "logging"},
        {'G', "graceful"}, {'I', "idle_cleanup"}, {'.', "open_slot"},
    };
    family(o, "httpd_workers", "gauge", "Workers of the current generation by activity.");
    sample_u(o, "httpd_workers", "{state=\"busy\"}", (uint64_t)v->census.busy);
    sample_u(o, "httpd_workers", "{state=\"idle\"}", (uint64_t)v->census.idle);
    sample_u(o, "httpd_workers", "{state=\"graceful\"}", (uint64_t)v->census.graceful);
    family(o, "httpd_processes", "gauge", "Child processes, and those told to stop.");
    sample_u(o, "httpd_processes", "{state=\"all\"}", (uint64_t)v->census.processes);
    sample_u(o, "httpd_processes", "{state=\"stopping\"}", (uint64_t)v->census.stopping);
    family(o, "httpd_scoreboard", "gauge", "Scoreboard slots by state letter.");
    for (size_t i = 0; i < HD_ARRAY_SIZE(states); i++) {
        uint64_t n = 0;
        for (const char *p = v->letters; *p != '\0'; p++) {
            n += *p == states[i].letter;
        }
        status_printf(o, "httpd_scoreboard{state=\"%s\"} %llu\n", states[i].name,
                      (unsigned long long)n);
    }
}

static void system_part(status_out_t *o, const status_view_t *v)
{
    long hz = sysconf(_SC_CLK_TCK);
    double tick = hz > 0 ? 1.0 / (double)hz : 0.01;
    family(o, "httpd_system_load_average", "gauge", "System load average.");
    sample_d(o, "httpd_system_load_average", "{period=\"1m\"}", v->system.load[0]);
    sample_d(o, "httpd_system_load_average", "{period=\"5m\"}", v->system.load[1]);
    sample_d(o, "httpd_system_load_average", "{period=\"15m\"}", v->system.load[2]);
    gauge_d(o, "httpd_system_procs_running", "Run queue: runnable tasks (/proc/stat).",
            v->system.procs_running);
    gauge_d(o, "httpd_system_procs_blocked", "Tasks blocked on I/O (/proc/stat).",
            v->system.procs_blocked);
    counter_u(o, "httpd_system_context_switches_total", "Context switches, whole system.",
              v->system.ctxt);
    counter_u(o, "httpd_system_interrupts_total", "Interrupts, whole system.", v->system.intr);
    counter_u(o, "httpd_system_forks_total", "Processes created, whole system.",
              v->system.forks);
    family(o, "httpd_system_cpu_seconds_total", "counter", "CPU time of all CPUs by mode.");
    for (int i = 0; i < 8; i++) {
        status_printf(o, "httpd_system_cpu_seconds_total{mode=\"%s\"} %.15g\n", cpu_modes[i],
                      (double)v->system.cpu[i] * tick);
    }
}

/* One gauge family, a sample per window that has the figure. */
typedef double (*figure_fn)(const status_rates_t *w, int arg);

static void windowed(status_out_t *o, const status_view_t *v, const char *name,
                     const char *help, bool per_request, figure_fn fn, const char *label,
                     const char *const *args, int nargs)
{
    family(o, name, "gauge", help);
    for (int i = 0; i < STATUS_NWINDOWS; i++) {
        const status_rates_t *w = &v->rates[i];
        if (!w->valid || (per_request && !w->per_request)) {
            continue;
        }
        for (int a = 0; a < (nargs > 0 ? nargs : 1); a++) {
            status_printf(o, "%s{window=\"%s\"", name, status_window_names[i]);
            if (nargs > 0) {
                status_printf(o, ",%s=\"%s\"", label, args[a]);
            }
            status_printf(o, "} %.15g\n", fn(w, a));
        }
    }
}

static double f_req(const status_rates_t *w, int a)
{
    return w->req_per_s;
}
static double f_bytes(const status_rates_t *w, int a)
{
    return w->bytes_per_s;
}
static double f_sys(const status_rates_t *w, int a)
{
    return a == 0 ? w->syscalls : w->sys[a - 1];
}
static double f_cs(const status_rates_t *w, int a)
{
    return a == 0 ? w->cs_voluntary : w->cs_involuntary;
}
static double f_cpu(const status_rates_t *w, int a)
{
    return w->cpu_us / 1e6;
}
static double f_delay(const status_rates_t *w, int a)
{
    return w->run_delay_us / 1e6;
}
static double f_allocs(const status_rates_t *w, int a)
{
    return w->alloc_calls;
}
static double f_abytes(const status_rates_t *w, int a)
{
    return w->alloc_bytes;
}
static double f_locks(const status_rates_t *w, int a)
{
    return w->lock_waits;
}

static void rates(status_out_t *o, const status_view_t *v)
{
    const char *kinds[HD_SYS_NKINDS + 1] = {"total"};
    static const char *const cs[2] = {"voluntary", "involuntary"};
    for (int k = 0; k < HD_SYS_NKINDS; k++) {
        kinds[k + 1] = hd_sys_kind_names[k];
    }
    windowed(o, v, "httpd_requests_per_second", "Requests per second over the window.", false,
             f_req, NULL, NULL, 0);
    windowed(o, v, "httpd_sent_bytes_per_second", "Bytes sent per second over the window.",
             false, f_bytes, NULL, NULL, 0);
    windowed(o, v, "httpd_syscalls_per_request", "System calls per request, in total and by kind.",
             true, f_sys, "kind", kinds, HD_SYS_NKINDS + 1);
    windowed(o, v, "httpd_context_switches_per_request", "Workers' context switches per request.",
             true, f_cs, "type", cs, 2);
    windowed(o, v, "httpd_cpu_seconds_per_request", "Workers' CPU time per request.", true,
             f_cpu, NULL, NULL, 0);
    windowed(o, v, "httpd_run_delay_seconds_per_request",
             "Time the workers waited for a CPU, per request.", true, f_delay, NULL, NULL, 0);
    windowed(o, v, "httpd_allocator_calls_per_request", "Pool malloc calls per request.", true,
             f_allocs, NULL, NULL, 0);
    windowed(o, v, "httpd_allocator_bytes_per_request", "Pool malloc bytes per request.", true,
             f_abytes, NULL, NULL, 0);
    windowed(o, v, "httpd_lock_waits_per_request", "Accept lock or queue waits per request.",
             true, f_locks, NULL, NULL, 0);
}

void status_render_metrics(status_out_t *o, const status_view_t *v)
{
    info(o, v);
    totals(o, v);
    workers(o, v);
    system_part(o, v);
    rates(o, v);
}
