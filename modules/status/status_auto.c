/*
 * ?auto: Apache 2.4's machine-readable format, byte for byte — the bare
 * server name, then Apache's keys in Apache's order with Apache's number
 * formats (float arithmetic and APR's %g included) — and then ours, so a
 * parser written for Apache reads the first part and ignores the rest.
 */
#include "status.h"

#include <stdio.h>
#include <string.h>

/* CamelCase names of the syscall kinds, for our keys. */
static const char *const kind_keys[HD_SYS_NKINDS] = {
    [HD_SYS_ACCEPT] = "Accept", [HD_SYS_READ] = "Read",
    [HD_SYS_WRITE] = "Write",   [HD_SYS_SENDFILE] = "Sendfile",
    [HD_SYS_OPEN] = "Open",     [HD_SYS_STAT] = "Stat",
    [HD_SYS_CLOSE] = "Close",   [HD_SYS_EPOLL_WAIT] = "EpollWait",
    [HD_SYS_EPOLL_CTL] = "EpollCtl", [HD_SYS_OTHER] = "Other",
};

static const char *const window_keys[STATUS_NWINDOWS] = {"1s", "10s", "60s", "Start"};

static void put_g(status_out_t *o, const char *key, double d)
{
    char num[64];
    status_apache_g(num, sizeof(num), d);
    status_printf(o, "%s: %s\n", key, num);
}

static void put_u(status_out_t *o, const char *key, uint64_t u)
{
    status_printf(o, "%s: %llu\n", key, (unsigned long long)u);
}

/* Our figures: plain %.6g, a zero before the point. */
static void put_f(status_out_t *o, const char *key, const char *suffix, double d)
{
    status_printf(o, "%s%s: %.6g\n", key, suffix, d);
}

static void apache_part(status_out_t *o, const status_view_t *v)
{
    char buf[128];
    const hd_sb_global_t *g = hd_scoreboard->global;
    uint32_t up = (uint32_t)v->uptime_s;

    status_printf(o, "%s\n", v->server_name);
    status_printf(o, "ServerVersion: %s\n", status_build.version);
    status_printf(o, "ServerMPM: %s\n", v->mpm);
    status_printf(o, "Server Built: %s\n", status_build.built);
    status_apache_time(buf, sizeof(buf), v->now.tv_sec);
    status_printf(o, "CurrentTime: %s\n", buf);
    status_apache_time(buf, sizeof(buf), v->restart_time);
    status_printf(o, "RestartTime: %s\n", buf);
    status_printf(o, "ParentServerConfigGeneration: %d\n", v->config_generation);
    status_printf(o, "ParentServerMPMGeneration: %d\n", v->mpm_generation);
    status_printf(o, "ServerUptimeSeconds: %u\n", up);
    status_apache_uptime(buf, sizeof(buf), up);
    status_printf(o, "ServerUptime:%s\n", buf);
    status_printf(o, "Load1: %.2f\nLoad5: %.2f\nLoad15: %.2f\n", (double)v->system.load[0],
                  (double)v->system.load[1], (double)v->system.load[2]);

    if (v->extended) {
        unsigned long count = (unsigned long)v->work.requests;
        uint64_t kb = v->work.bytes >> 10;
        uint64_t ms = v->work.duration_us / 1000;
        double user = (double)(v->kernel.utime_us + g->master_utime_us) / 1e6;
        double sys = (double)(v->kernel.stime_us + g->master_stime_us) / 1e6;
        status_printf(o, "Total Accesses: %lu\nTotal kBytes: %llu\nTotal Duration: %llu\n", count,
                      (unsigned long long)kb, (unsigned long long)ms);
        put_g(o, "CPUUser", user);
        put_g(o, "CPUSystem", sys);
        /* our workers start no processes of their own (no CGI) */
        put_g(o, "CPUChildrenUser", 0);
        put_g(o, "CPUChildrenSystem", 0);
        if (user + sys > 0 && up > 0) {
            put_g(o, "CPULoad", (user + sys) / up * 100.);
        }
        status_printf(o, "Uptime: %ld\n", (long)up);
        if (up > 0) {
            put_g(o, "ReqPerSec", (float)count / (float)up);
            put_g(o, "BytesPerSec", 1024 * (float)kb / (float)up);
        }
        if (count > 0) {
            put_g(o, "BytesPerReq", 1024 * (float)kb / (float)count);
            put_g(o, "DurationPerReq", (float)ms / (float)count);
        }
    }
    status_printf(o, "BusyWorkers: %d\nGracefulWorkers: %d\nIdleWorkers: %d\n", v->census.busy,
                  v->census.graceful, v->census.idle);
    if (strcmp(v->mpm, "event") == 0) {
        uint64_t conns = 0, writing = 0, keepalive = 0, closing = 0;
        for (int p = 0; p < g->server_limit; p++) {
            const hd_sb_process_t *ps = &hd_scoreboard->processes[p];
            if (ps->pid != 0) {
                conns += ps->connections;
                writing += ps->write_completion;
                keepalive += ps->keep_alive;
                closing += ps->lingering_close;
            }
        }
        status_printf(o, "Processes: %d\nStopping: %d\nConnsTotal: %llu\nConnsAsyncWaitIO: 0\n"
                      "ConnsAsyncWriting: %llu\nConnsAsyncKeepAlive: %llu\n"
                      "ConnsAsyncClosing: %llu\n",
                      v->census.processes, v->census.stopping, (unsigned long long)conns,
                      (unsigned long long)writing, (unsigned long long)keepalive,
                      (unsigned long long)closing);
    }
    status_printf(o, "Scoreboard: %s\n", v->letters);
}

static void window_part(status_out_t *o, const status_rates_t *w, const char *sfx)
{
    char key[64];
    if (!w->valid) {
        return;
    }
    put_f(o, "ReqPerSec", sfx, w->req_per_s);
    put_f(o, "BytesPerSec", sfx, w->bytes_per_s);
    if (w->per_request) {
        put_f(o, "SyscallsPerReq", sfx, w->syscalls);
        for (int k = 0; k < HD_SYS_NKINDS; k++) {
            snprintf(key, sizeof(key), "Syscalls%sPerReq", kind_keys[k]);
            put_f(o, key, sfx, w->sys[k]);
        }
        put_f(o, "CSVoluntaryPerReq", sfx, w->cs_voluntary);
        put_f(o, "CSInvoluntaryPerReq", sfx, w->cs_involuntary);
        put_f(o, "CPUUsPerReq", sfx, w->cpu_us);
        put_f(o, "RunDelayUsPerReq", sfx, w->run_delay_us);
        put_f(o, "AllocCallsPerReq", sfx, w->alloc_calls);
        put_f(o, "AllocBytesPerReq", sfx, w->alloc_bytes);
        put_f(o, "LockWaitsPerReq", sfx, w->lock_waits);
        put_f(o, "DurationUsPerReq", sfx, w->latency_us);
    }
    if (w->has_system) {
        put_f(o, "SystemCSPerSec", sfx, w->sys_ctxt_per_s);
        put_f(o, "SystemIntrPerSec", sfx, w->sys_intr_per_s);
        put_f(o, "SystemCPUUser", sfx, w->sys_cpu_pct[0] + w->sys_cpu_pct[1]);
        put_f(o, "SystemCPUSystem", sfx,
              w->sys_cpu_pct[2] + w->sys_cpu_pct[5] + w->sys_cpu_pct[6]);
        put_f(o, "SystemCPUIdle", sfx, w->sys_cpu_pct[3]);
        put_f(o, "SystemCPUIOWait", sfx, w->sys_cpu_pct[4]);
    }
}

static void our_part(status_out_t *o, const status_view_t *v)
{
    char key[64];
    const hd_sb_global_t *g = hd_scoreboard->global;

    status_printf(o, "ServerGitCommit: %s\n", status_build.git_commit);
    status_printf(o, "ServerBuildType: %s\n", status_build.build_type);
    status_printf(o, "ServerCompiler: %s\n", status_build.compiler);
    status_printf(o, "ServerCFlags: %s\n", status_build.cflags);
    status_printf(o, "ServerCounters: %s\n", status_build.counters ? "on" : "off");
    status_printf(o, "ExtendedStatus: %s\n", v->extended ? "On" : "Off");
    put_u(o, "StartTimeSeconds", (uint64_t)v->start_time.tv_sec);
    put_f(o, "SinceStartSeconds", "", v->since_start_s);
    put_u(o, "MasterPID", (uint64_t)g->master_pid);
    if (strcmp(v->mpm, "event") != 0) {
        status_printf(o, "Processes: %d\nStopping: %d\n", v->census.processes,
                      v->census.stopping);
    }
    put_u(o, "Requests", v->work.requests);
    put_u(o, "Bytes", v->work.bytes);
    put_u(o, "DurationUs", v->work.duration_us);
    for (int c = 0; c < 5; c++) {
        snprintf(key, sizeof(key), "Responses%dxx", c + 1);
        put_u(o, key, v->work.status[c]);
    }
    put_f(o, "LatencyP50Us", "", status_latency_quantile(v->work.latency, 0.5));
    put_f(o, "LatencyP90Us", "", status_latency_quantile(v->work.latency, 0.9));
    put_f(o, "LatencyP99Us", "", status_latency_quantile(v->work.latency, 0.99));
    put_u(o, "Syscalls", v->syscalls);
    for (int k = 0; k < HD_SYS_NKINDS; k++) {
        snprintf(key, sizeof(key), "Syscalls%s", kind_keys[k]);
        put_u(o, key, v->work.sys[k]);
    }
    put_u(o, "MasterSyscalls", v->master_syscalls);
    put_u(o, "CSVoluntary", v->kernel.vcs);
    put_u(o, "CSInvoluntary", v->kernel.ivcs);
    put_u(o, "CPUUserUs", v->kernel.utime_us);
    put_u(o, "CPUSystemUs", v->kernel.stime_us);
    put_u(o, "RunDelayUs", v->kernel.run_delay_us);
    put_u(o, "Timeslices", v->kernel.timeslices);
    put_u(o, "AllocCalls", v->work.pool_allocs);
    put_u(o, "AllocBytes", v->work.pool_bytes);
    put_u(o, "LockWaits", v->kernel.lock_waits);
    put_u(o, "LockWaitUs", v->kernel.lock_wait_us);
    put_u(o, "RunQueue", v->system.procs_running);
    put_u(o, "ProcsBlocked", v->system.procs_blocked);
    put_u(o, "RingSamples", v->ring_samples);
    for (int i = 0; i < STATUS_NWINDOWS; i++) {
        window_part(o, &v->rates[i], window_keys[i]);
    }
}

void status_render_auto(status_out_t *o, const status_view_t *v)
{
    apache_part(o, v);
    our_part(o, v);
}
