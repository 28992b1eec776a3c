/*
 * ?json: everything, in one schema for every MPM (htdocs/manual/
 * status-schema.json, documented in htdocs/manual/status.html). Counts are
 * integers, rates and per-request figures numbers, and a figure that cannot
 * be computed yet (no samples, no requests in the window) is null.
 */
#include "status.h"

#include <string.h>

static const char *const class_names[5] = {"1xx", "2xx", "3xx", "4xx", "5xx"};
static const char *const cpu_names[8] = {"user", "nice", "system", "idle",
                                         "iowait", "irq", "softirq", "steal"};

typedef struct {
    status_out_t *o;
    bool first;
} obj_t;

static void key(obj_t *j, const char *name)
{
    status_puts(j->o, j->first ? "" : ",");
    j->first = false;
    status_put_json_str(j->o, name);
    status_puts(j->o, ":");
}

static void kv_u(obj_t *j, const char *name, uint64_t v)
{
    key(j, name);
    status_printf(j->o, "%llu", (unsigned long long)v);
}

static void kv_i(obj_t *j, const char *name, long long v)
{
    key(j, name);
    status_printf(j->o, "%lld", v);
}

static void kv_d(obj_t *j, const char *name, double v, bool valid)
{
    key(j, name);
    if (valid) {
        status_put_json_num(j->o, v);
    } else {
        status_puts(j->o, "null");
    }
}

/* A Unix time with milliseconds. */
static void kv_t(obj_t *j, const char *name, double v)
{
    key(j, name);
    status_printf(j->o, "%.3f", v);
}

static void kv_s(obj_t *j, const char *name, const char *v)
{
    key(j, name);
    status_put_json_str(j->o, v);
}

static void kv_b(obj_t *j, const char *name, bool v)
{
    key(j, name);
    status_puts(j->o, v ? "true" : "false");
}

static obj_t open_obj(obj_t *parent, const char *name)
{
    if (name != NULL) {
        key(parent, name);
    }
    status_puts(parent->o, "{");
    return (obj_t){parent->o, true};
}

static void close_obj(obj_t *j)
{
    status_puts(j->o, "}");
}

static void syscalls_obj(obj_t *j, const char *name, const uint64_t *sys)
{
    obj_t s = open_obj(j, name);
    uint64_t total = 0;
    for (int k = 0; k < HD_SYS_NKINDS; k++) {
        total += sys[k];
    }
    kv_u(&s, "total", total);
    for (int k = 0; k < HD_SYS_NKINDS; k++) {
        kv_u(&s, hd_sys_kind_names[k], sys[k]);
    }
    close_obj(&s);
}

static void kernel_fields(obj_t *j, const hd_sb_kernel_t *k)
{
    kv_u(j, "cs_voluntary", k->vcs);
    kv_u(j, "cs_involuntary", k->ivcs);
    kv_u(j, "cpu_user_us", k->utime_us);
    kv_u(j, "cpu_system_us", k->stime_us);
    kv_u(j, "run_delay_us", k->run_delay_us);
    kv_u(j, "timeslices", k->timeslices);
    kv_u(j, "lock_waits", k->lock_waits);
    kv_u(j, "lock_wait_us", k->lock_wait_us);
}

static void build_obj(obj_t *top, const status_view_t *v)
{
    obj_t b = open_obj(top, "server");
    kv_s(&b, "name", v->server_name);
    kv_s(&b, "version", status_build.version);
    kv_s(&b, "built", status_build.built);
    kv_s(&b, "git_commit", status_build.git_commit);
    kv_s(&b, "build_type", status_build.build_type);
    kv_s(&b, "compiler", status_build.compiler);
    kv_s(&b, "cflags", status_build.cflags);
    kv_b(&b, "counters", status_build.counters);
    kv_s(&b, "mpm", v->mpm);
    kv_b(&b, "threaded", v->threaded != 0);
    kv_b(&b, "forked", v->forked != 0);
    kv_b(&b, "extended_status", v->extended);
    kv_i(&b, "master_pid", hd_scoreboard->global->master_pid);
    kv_i(&b, "config_generation", v->config_generation);
    kv_i(&b, "mpm_generation", v->mpm_generation);
    kv_i(&b, "server_limit", hd_scoreboard->global->server_limit);
    kv_i(&b, "thread_limit", hd_scoreboard->global->thread_limit);
    close_obj(&b);
}

static void time_obj(obj_t *top, const status_view_t *v)
{
    obj_t t = open_obj(top, "time");
    kv_t(&t, "current", (double)v->now.tv_sec + (double)v->now.tv_nsec / 1e9);
    kv_i(&t, "restart", (long long)v->restart_time);
    kv_t(&t, "start", (double)v->start_time.tv_sec + (double)v->start_time.tv_nsec / 1e9);
    kv_u(&t, "uptime_s", (uint64_t)v->uptime_s);
    kv_d(&t, "since_start_s", v->since_start_s, true);
    close_obj(&t);
}

static void totals_obj(obj_t *top, const status_view_t *v)
{
    const hd_sb_global_t *g = hd_scoreboard->global;
    obj_t t = open_obj(top, "totals");
    kv_u(&t, "requests", v->work.requests);
    kv_u(&t, "bytes", v->work.bytes);
    kv_u(&t, "duration_us", v->work.duration_us);
    obj_t st = open_obj(&t, "responses");
    for (int c = 0; c < 5; c++) {
        kv_u(&st, class_names[c], v->work.status[c]);
    }
    close_obj(&st);
    syscalls_obj(&t, "syscalls", v->work.sys);
    kernel_fields(&t, &v->kernel);
    kv_u(&t, "alloc_calls", v->work.pool_allocs);
    kv_u(&t, "alloc_bytes", v->work.pool_bytes);
    close_obj(&t);

    obj_t m = open_obj(top, "master");
    kv_i(&m, "pid", g->master_pid);
    syscalls_obj(&m, "syscalls", g->master_sys);
    kv_u(&m, "cpu_user_us", g->master_utime_us);
    kv_u(&m, "cpu_system_us", g->master_stime_us);
    close_obj(&m);
}

static void latency_obj(obj_t *top, const status_view_t *v)
{
    obj_t l = open_obj(top, "latency");
    uint64_t cum = 0;
    kv_u(&l, "count", v->work.requests);
    kv_u(&l, "sum_us", v->work.duration_us);
    kv_d(&l, "p50_us", status_latency_quantile(v->work.latency, 0.5), true);
    kv_d(&l, "p90_us", status_latency_quantile(v->work.latency, 0.9), true);
    kv_d(&l, "p99_us", status_latency_quantile(v->work.latency, 0.99), true);
    key(&l, "buckets");
    status_puts(l.o, "[");
    for (int i = 0; i < HD_SB_LAT_BUCKETS; i++) {
        cum += v->work.latency[i];
        status_puts(l.o, i ? "," : "");
        obj_t b = {l.o, true};
        status_puts(l.o, "{");
        kv_d(&b, "le_us", (double)hd_sb_latency_bound_us(i), i < HD_SB_LAT_BUCKETS - 1);
        kv_u(&b, "count", v->work.latency[i]);
        kv_u(&b, "cumulative", cum);
        close_obj(&b);
    }
    status_puts(l.o, "]");
    close_obj(&l);
}

static void rates_obj(obj_t *top, const status_view_t *v)
{
    obj_t rs = open_obj(top, "rates");
    for (int i = 0; i < STATUS_NWINDOWS; i++) {
        const status_rates_t *w = &v->rates[i];
        bool pr = w->per_request;
        obj_t o = open_obj(&rs, status_window_names[i]);
        kv_d(&o, "span_s", w->span_s, w->valid);
        kv_d(&o, "requests", w->requests, w->valid);
        kv_d(&o, "requests_per_s", w->req_per_s, w->valid);
        kv_d(&o, "bytes_per_s", w->bytes_per_s, w->valid);
        obj_t p = open_obj(&o, "per_request");
        obj_t s = open_obj(&p, "syscalls");
        kv_d(&s, "total", w->syscalls, pr);
        for (int k = 0; k < HD_SYS_NKINDS; k++) {
            kv_d(&s, hd_sys_kind_names[k], w->sys[k], pr);
        }
        close_obj(&s);
        kv_d(&p, "cs_voluntary", w->cs_voluntary, pr);
        kv_d(&p, "cs_involuntary", w->cs_involuntary, pr);
        kv_d(&p, "cpu_us", w->cpu_us, pr);
        kv_d(&p, "cpu_user_us", w->cpu_user_us, pr);
        kv_d(&p, "cpu_system_us", w->cpu_system_us, pr);
        kv_d(&p, "run_delay_us", w->run_delay_us, pr);
        kv_d(&p, "timeslices", w->timeslices, pr);
        kv_d(&p, "alloc_calls", w->alloc_calls, pr);
        kv_d(&p, "alloc_bytes", w->alloc_bytes, pr);
        kv_d(&p, "lock_waits", w->lock_waits, pr);
        kv_d(&p, "lock_wait_us", w->lock_wait_us, pr);
        kv_d(&p, "duration_us", w->latency_us, pr);
        close_obj(&p);
        obj_t sy = open_obj(&o, "system");
        kv_d(&sy, "cs_per_s", w->sys_ctxt_per_s, w->has_system);
        kv_d(&sy, "interrupts_per_s", w->sys_intr_per_s, w->has_system);
        kv_d(&sy, "forks_per_s", w->sys_forks_per_s, w->has_system);
        obj_t c = open_obj(&sy, "cpu_pct");
        for (int k = 0; k < 8; k++) {
            kv_d(&c, cpu_names[k], w->sys_cpu_pct[k], w->has_system);
        }
        close_obj(&c);
        close_obj(&sy);
        close_obj(&o);
    }
    close_obj(&rs);
}

static void system_obj(obj_t *top, const status_view_t *v)
{
    obj_t s = open_obj(top, "system");
    kv_u(&s, "procs_running", v->system.procs_running);
    kv_u(&s, "procs_blocked", v->system.procs_blocked);
    kv_u(&s, "context_switches", v->system.ctxt);
    kv_u(&s, "interrupts", v->system.intr);
    kv_u(&s, "forks", v->system.forks);
    obj_t c = open_obj(&s, "cpu_ticks");
    for (int k = 0; k < 8; k++) {
        kv_u(&c, cpu_names[k], v->system.cpu[k]);
    }
    close_obj(&c);
    obj_t l = open_obj(&s, "load");
    kv_d(&l, "1", v->system.load[0], true);
    kv_d(&l, "5", v->system.load[1], true);
    kv_d(&l, "15", v->system.load[2], true);
    close_obj(&l);
    close_obj(&s);
}

static void workers_obj(obj_t *top, const status_view_t *v)
{
    obj_t w = open_obj(top, "workers");
    kv_i(&w, "busy", v->census.busy);
    kv_i(&w, "idle", v->census.idle);
    kv_i(&w, "graceful", v->census.graceful);
    kv_i(&w, "processes", v->census.processes);
    kv_i(&w, "stopping", v->census.stopping);
    kv_s(&w, "scoreboard", v->letters);
    kv_i(&w, "self_slot", v->self_slot);
    close_obj(&w);
}

static void processes_arr(obj_t *top, const status_view_t *v)
{
    const hd_sb_global_t *g = hd_scoreboard->global;
    bool first = true;
    key(top, "processes");
    status_puts(top->o, "[");
    for (int p = 0; p < g->server_limit; p++) {
        const hd_sb_process_t *ps = &hd_scoreboard->processes[p];
        if (ps->pid == 0) {
            continue;
        }
        status_puts(top->o, first ? "" : ",");
        first = false;
        obj_t o = open_obj(top, NULL);
        kv_i(&o, "index", p);
        kv_i(&o, "pid", ps->pid);
        kv_i(&o, "generation", ps->generation);
        kv_b(&o, "quiescing", ps->quiescing != 0);
        kv_u(&o, "connections", ps->connections);
        kv_u(&o, "write_completion", ps->write_completion);
        kv_u(&o, "keep_alive", ps->keep_alive);
        kv_u(&o, "lingering_close", ps->lingering_close);
        syscalls_obj(&o, "listener_syscalls", ps->sys);
        kv_i(&o, "listener_tid", ps->listener_tid);
        obj_t k = open_obj(&o, "listener_kernel");
        kernel_fields(&k, &ps->listener_total);
        close_obj(&k);
        close_obj(&o);
    }
    status_puts(top->o, "]");
}

static void slot_obj(obj_t *parent, const status_view_t *v, int i)
{
    const hd_sb_worker_t *w = &hd_scoreboard->workers[i];
    const hd_sb_counters_t *c = &hd_scoreboard->counters[i];
    int tl = hd_scoreboard->global->thread_limit;
    char state[2] = {w->state, '\0'};
    obj_t o = open_obj(parent, NULL);
    kv_i(&o, "index", i);
    kv_i(&o, "process", i / tl);
    kv_i(&o, "thread", i % tl);
    kv_s(&o, "state", state);
    kv_i(&o, "pid", w->pid);
    kv_i(&o, "tid", w->tid);
    kv_i(&o, "generation", w->generation);
    kv_u(&o, "requests_conn", w->conn_count);
    kv_u(&o, "requests_process", w->access_count);
    kv_u(&o, "bytes_process", w->bytes_served);
    kv_u(&o, "requests", c->work.requests);
    kv_u(&o, "bytes", c->work.bytes);
    kv_u(&o, "duration_us", c->work.duration_us);
    syscalls_obj(&o, "syscalls", c->work.sys);
    kernel_fields(&o, &c->total);
    obj_t cur = open_obj(&o, "thread_now");
    kernel_fields(&cur, &c->current);
    close_obj(&cur);
    kv_u(&o, "alloc_calls", c->work.pool_allocs);
    kv_u(&o, "alloc_bytes", c->work.pool_bytes);
    double since = (double)(v->now.tv_sec - w->last_used.tv_sec) +
                   (double)(v->now.tv_nsec - w->last_used.tv_nsec) / 1e9;
    kv_d(&o, "seconds_since_request", since, w->last_used.tv_sec != 0);
    kv_u(&o, "last_duration_us", w->last_duration_us);
    if (v->extended) {
        char client[sizeof(w->client)], request[sizeof(w->request)];
        STATUS_SLOT_TEXT(client, w->client);
        STATUS_SLOT_TEXT(request, w->request);
        kv_s(&o, "client", client);
        kv_s(&o, "request", request);
    } else {
        key(&o, "client");
        status_puts(o.o, "null");
        key(&o, "request");
        status_puts(o.o, "null");
    }
    close_obj(&o);
}

/* Slots with a process, or that ever served: as Apache lists its workers. */
static void slots_arr(obj_t *top, const status_view_t *v)
{
    bool first = true;
    key(top, "slots");
    status_puts(top->o, "[");
    for (int i = 0; i < v->nslots; i++) {
        const hd_sb_worker_t *w = &hd_scoreboard->workers[i];
        if (w->state == HD_SB_DEAD && hd_scoreboard->counters[i].work.requests == 0) {
            continue;
        }
        status_puts(top->o, first ? "" : ",");
        first = false;
        slot_obj(top, v, i);
    }
    status_puts(top->o, "]");
}

/* Columns of ?json's history: the ring's cumulative counters and gauges. */
typedef enum {
    COL_REQUESTS, COL_BYTES, COL_SYSCALLS, COL_CS_VOLUNTARY, COL_CS_INVOLUNTARY,
    COL_CPU_USER_US, COL_CPU_SYSTEM_US, COL_RUN_DELAY_US, COL_ALLOC_CALLS,
    COL_PROCS_RUNNING, COL_PROCS_BLOCKED, COL_SYSTEM_CS, COL_BUSY, COL_IDLE, NCOLS
} column_t;

static const char *const column_names[NCOLS] = {
    "requests", "bytes", "syscalls", "cs_voluntary", "cs_involuntary", "cpu_user_us",
    "cpu_system_us", "run_delay_us", "alloc_calls", "procs_running", "procs_blocked",
    "system_cs", "busy", "idle",
};

static uint64_t column_value(const hd_sb_sample_t *s, column_t c)
{
    uint64_t sys = 0;
    switch (c) {
    case COL_REQUESTS: return s->work.requests;
    case COL_BYTES: return s->work.bytes;
    case COL_SYSCALLS:
        for (int k = 0; k < HD_SYS_NKINDS; k++) {
            sys += s->work.sys[k];
        }
        return sys;
    case COL_CS_VOLUNTARY: return s->kernel.vcs;
    case COL_CS_INVOLUNTARY: return s->kernel.ivcs;
    case COL_CPU_USER_US: return s->kernel.utime_us;
    case COL_CPU_SYSTEM_US: return s->kernel.stime_us;
    case COL_RUN_DELAY_US: return s->kernel.run_delay_us;
    case COL_ALLOC_CALLS: return s->work.pool_allocs;
    case COL_PROCS_RUNNING: return s->system.procs_running;
    case COL_PROCS_BLOCKED: return s->system.procs_blocked;
    case COL_SYSTEM_CS: return s->system.ctxt;
    case COL_BUSY: return s->busy;
    case COL_IDLE: return s->idle;
    case NCOLS: break;
    }
    return 0;
}

/* The ring as columns, oldest first: compact and easy to plot. */
static void history_obj(obj_t *top, int history)
{
    uint64_t n = hd_sb_ring_count();
    if ((uint64_t)history < n) {
        n = (uint64_t)history;
    }
    obj_t h = open_obj(top, "history");
    kv_i(&h, "interval_s", 1);
    kv_i(&h, "capacity", HD_SB_RING_SIZE - 1);
    kv_u(&h, "samples", n);
    key(&h, "time");
    status_puts(h.o, "[");
    for (uint64_t i = n; i-- > 0;) {
        const hd_sb_sample_t *s = hd_sb_ring_get(i);
        status_printf(h.o, "%s%.3f", i + 1 == n ? "" : ",",
                      s != NULL ? (double)s->real_ms / 1000.0 : 0.0);
    }
    status_puts(h.o, "]");
    for (int c = 0; c < NCOLS; c++) {
        key(&h, column_names[c]);
        status_puts(h.o, "[");
        for (uint64_t i = n; i-- > 0;) {
            const hd_sb_sample_t *s = hd_sb_ring_get(i);
            status_printf(h.o, "%s%llu", i + 1 == n ? "" : ",",
                          (unsigned long long)(s != NULL ? column_value(s, (column_t)c) : 0));
        }
        status_puts(h.o, "]");
    }
    close_obj(&h);
}

void status_render_json(status_out_t *o, const status_view_t *v, int history)
{
    obj_t top = {o, true};
    status_puts(o, "{");
    kv_i(&top, "schema_version", 1);
    build_obj(&top, v);
    time_obj(&top, v);
    totals_obj(&top, v);
    latency_obj(&top, v);
    rates_obj(&top, v);
    system_obj(&top, v);
    workers_obj(&top, v);
    processes_arr(&top, v);
    slots_arr(&top, v);
    history_obj(&top, history);
    status_puts(o, "}\n");
}
