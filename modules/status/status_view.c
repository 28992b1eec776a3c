/*
 * One status request reads the scoreboard once into a view: totals summed
 * over every slot, the census of states, and rates over the last 1 s, 10 s
 * and 60 s (differences between samples of the ring) and since start. Every
 * renderer formats the same view, so the four formats never disagree.
 */
#include "status.h"

#include "config.h"
#include "core.h"
#include "mpm.h"
#include "pool.h"

#include <string.h>

const char *const status_window_names[STATUS_NWINDOWS] = {"1s", "10s", "60s", "start"};

static const int window_seconds[STATUS_NWINDOWS - 1] = {1, 10, 60};

static uint64_t sub(uint64_t a, uint64_t b)
{
    return a >= b ? a - b : 0;
}

static void work_sub(hd_sb_work_t *d, const hd_sb_work_t *a, const hd_sb_work_t *b)
{
    uint64_t *pd = (uint64_t *)d;
    const uint64_t *pa = (const uint64_t *)a, *pb = (const uint64_t *)b;
    for (size_t i = 0; i < sizeof(*d) / sizeof(uint64_t); i++) {
        pd[i] = sub(pa[i], pb[i]);
    }
}

static void kernel_sub(hd_sb_kernel_t *d, const hd_sb_kernel_t *a, const hd_sb_kernel_t *b)
{
    uint64_t *pd = (uint64_t *)d;
    const uint64_t *pa = (const uint64_t *)a, *pb = (const uint64_t *)b;
    for (size_t i = 0; i < sizeof(*d) / sizeof(uint64_t); i++) {
        pd[i] = sub(pa[i], pb[i]);
    }
}

static void system_sub(hd_sb_system_t *d, const hd_sb_system_t *a, const hd_sb_system_t *b)
{
    *d = *a; /* the gauges (run queue, blocked, load) are the newer sample's */
    d->ctxt = sub(a->ctxt, b->ctxt);
    d->intr = sub(a->intr, b->intr);
    d->forks = sub(a->forks, b->forks);
    for (int i = 0; i < 8; i++) {
        d->cpu[i] = sub(a->cpu[i], b->cpu[i]);
    }
}

static void ring_window(int seconds, status_window_t *w)
{
    memset(w, 0, sizeof(*w));
    uint64_t n = hd_sb_ring_count();
    if (n < 2) {
        return;
    }
    uint64_t ago = (uint64_t)seconds < n - 1 ? (uint64_t)seconds : n - 1;
    const hd_sb_sample_t *newer = hd_sb_ring_get(0);
    const hd_sb_sample_t *older = hd_sb_ring_get(ago);
    if (newer == NULL || older == NULL || newer->mono_ms <= older->mono_ms) {
        return;
    }
    w->valid = true;
    w->span_s = (double)(newer->mono_ms - older->mono_ms) / 1000.0;
    work_sub(&w->work, &newer->work, &older->work);
    kernel_sub(&w->kernel, &newer->kernel, &older->kernel);
    system_sub(&w->system, &newer->system, &older->system);
}

static uint64_t sys_total(const uint64_t *sys)
{
    uint64_t t = 0;
    for (int k = 0; k < HD_SYS_NKINDS; k++) {
        t += sys[k];
    }
    return t;
}

void status_rates(const status_window_t *w, status_rates_t *out)
{
    memset(out, 0, sizeof(*out));
    if (!w->valid || w->span_s <= 0) {
        return;
    }
    out->valid = true;
    out->span_s = w->span_s;
    double req = (double)w->work.requests;
    out->requests = req;
    out->req_per_s = req / w->span_s;
    out->bytes_per_s = (double)w->work.bytes / w->span_s;
    if (req > 0) {
        out->per_request = true;
        out->syscalls = (double)sys_total(w->work.sys) / req;
        for (int k = 0; k < HD_SYS_NKINDS; k++) {
            out->sys[k] = (double)w->work.sys[k] / req;
        }
        out->cs_voluntary = (double)w->kernel.vcs / req;
        out->cs_involuntary = (double)w->kernel.ivcs / req;
        out->cpu_user_us = (double)w->kernel.utime_us / req;
        out->cpu_system_us = (double)w->kernel.stime_us / req;
        out->cpu_us = out->cpu_user_us + out->cpu_system_us;
        out->run_delay_us = (double)w->kernel.run_delay_us / req;
        out->timeslices = (double)w->kernel.timeslices / req;
        out->alloc_calls = (double)w->work.pool_allocs / req;
        out->alloc_bytes = (double)w->work.pool_bytes / req;
        out->lock_waits = (double)w->kernel.lock_waits / req;
        out->lock_wait_us = (double)w->kernel.lock_wait_us / req;
        out->latency_us = (double)w->work.duration_us / req;
    }
    uint64_t ticks = 0;
    for (int i = 0; i < 8; i++) {
        ticks += w->system.cpu[i];
    }
    if (ticks > 0) {
        out->has_system = true;
        out->sys_ctxt_per_s = (double)w->system.ctxt / w->span_s;
        out->sys_intr_per_s = (double)w->system.intr / w->span_s;
        out->sys_forks_per_s = (double)w->system.forks / w->span_s;
        for (int i = 0; i < 8; i++) {
            out->sys_cpu_pct[i] = 100.0 * (double)w->system.cpu[i] / (double)ticks;
        }
    }
}

double status_latency_quantile(const uint64_t *latency, double q)
{
    uint64_t total = 0;
    for (int i = 0; i < HD_SB_LAT_BUCKETS; i++) {
        total += latency[i];
    }
    if (total == 0) {
        return 0;
    }
    double rank = q * (double)total, seen = 0;
    for (int i = 0; i < HD_SB_LAT_BUCKETS; i++) {
        if (latency[i] > 0 && seen + (double)latency[i] >= rank) {
            double lo = i == 0 ? 0 : (double)hd_sb_latency_bound_us(i - 1);
            if (i == HD_SB_LAT_BUCKETS - 1) {
                return lo;
            }
            double hi = (double)hd_sb_latency_bound_us(i);
            return lo + (hi - lo) * (rank - seen) / (double)latency[i];
        }
        seen += (double)latency[i];
    }
    return (double)hd_sb_latency_bound_us(HD_SB_LAT_BUCKETS - 2);
}

double status_series_value(status_series_t what, const hd_sb_sample_t *newer,
                           const hd_sb_sample_t *older)
{
    double dt = (double)(newer->mono_ms - older->mono_ms) / 1000.0;
    double req = (double)sub(newer->work.requests, older->work.requests);
    if (dt <= 0) {
        return 0;
    }
    switch (what) {
    case SERIES_REQ_PER_S:
        return req / dt;
    case SERIES_RUN_QUEUE:
        return newer->system.procs_running;
    case SERIES_WORKER_CS_PER_S:
        return (double)(sub(newer->kernel.vcs, older->kernel.vcs) +
                        sub(newer->kernel.ivcs, older->kernel.ivcs)) / dt;
    case SERIES_SYSTEM_CS_PER_S:
        return (double)sub(newer->system.ctxt, older->system.ctxt) / dt;
    case SERIES_SYSCALLS_PER_REQ:
        return req > 0 ? (double)sub(sys_total(newer->work.sys), sys_total(older->work.sys)) / req
                       : 0;
    case SERIES_CPU_US_PER_REQ:
        return req > 0 ? (double)(sub(newer->kernel.utime_us, older->kernel.utime_us) +
                                  sub(newer->kernel.stime_us, older->kernel.stime_us)) / req
                       : 0;
    }
    return 0;
}

/* Apache's server name for a request: the Host asked for, without its port. */
static const char *host_without_port(hd_pool_t *p, const char *host)
{
    const char *end = host[0] == '[' ? strchr(host, ']') : strrchr(host, ':');
    if (host[0] == '[') {
        return end != NULL ? hd_pstrndup(p, host, (size_t)(end - host) + 1) : host;
    }
    if (end == NULL || end[1] == '\0' || strspn(end + 1, "0123456789") != strlen(end + 1)) {
        return host;
    }
    return hd_pstrndup(p, host, (size_t)(end - host));
}

void status_view_build(status_view_t *v, hd_request_t *r)
{
    hd_server_t *s = r->server;
    const hd_sb_global_t *g = hd_scoreboard->global;
    memset(v, 0, sizeof(*v));
    v->r = r;
    v->server_name = r->hostname != NULL && r->hostname[0] != '\0'
                         ? host_without_port(r->pool, r->hostname)
                         : hd_core_sconf(s)->server_name;
    v->mpm = s->mpm != NULL ? s->mpm->name : "none";
    if (s->mpm != NULL) {
        s->mpm->query(s, HD_MPMQ_IS_THREADED, &v->threaded);
        s->mpm->query(s, HD_MPMQ_IS_FORKED, &v->forked);
    }
    /* Apache counts configurations from 1, MPM restarts from 0 */
    v->config_generation = s->generation + 1;
    v->mpm_generation = g->running_generation;
    clock_gettime(CLOCK_REALTIME, &v->now);
    v->restart_time = g->restart_time;
    v->start_time = g->start_time;
    v->uptime_s = v->now.tv_sec > g->restart_time ? (double)(v->now.tv_sec - g->restart_time) : 0;
    v->since_start_s = (double)(v->now.tv_sec - g->start_time.tv_sec) +
                       (double)(v->now.tv_nsec - g->start_time.tv_nsec) / 1e9;

    hd_sb_sum(&v->work, &v->kernel);
    v->syscalls = sys_total(v->work.sys);
    v->master_syscalls = sys_total(g->master_sys);
    hd_sb_census(&v->census);
    v->system = g->system;
    v->nslots = hd_sb_nslots();
    v->letters = hd_palloc(r->pool, (size_t)v->nslots + 1);
    hd_sb_letters(v->letters, (size_t)v->nslots + 1);
    v->self_slot = hd_sb_current_index();
    v->extended = hd_sb_extended_status;
    v->ring_samples = hd_sb_ring_count();

    for (int i = 0; i < STATUS_WSTART; i++) {
        status_window_t w;
        ring_window(window_seconds[i], &w);
        status_rates(&w, &v->rates[i]);
    }
    status_window_t all = {.valid = v->since_start_s > 0, .span_s = v->since_start_s,
                           .work = v->work, .kernel = v->kernel};
    status_rates(&all, &v->rates[STATUS_WSTART]);
}
