/*
 * The sampler, run by the master once a second (master_tick): reads each
 * live worker's thread figures from /proc, adds what changed since the last
 * look to the slot's totals, reads the system-wide figures and pushes one
 * sample of everything onto the ring. Nothing here runs in a request path
 * (except under -X, where there is no master: see mod_status.c).
 */
#include "status.h"

#include "procstat.h"
#include "scoreboard.h"
#include "sys.h"

#include <stdlib.h>
#include <string.h>

/* The master's open /proc files, one reader per slot (private memory). */
static hd_procstat_thread_t *readers;
static int nreaders;
static hd_procstat_thread_t self_reader = {0, 0, {-1, -1, -1}};
static pid_t master_pid;

static bool readers_fit(int n)
{
    if (n <= nreaders) {
        return true;
    }
    hd_procstat_thread_t *r = realloc(readers, sizeof(*r) * (size_t)n);
    if (r == NULL) {
        return false;
    }
    for (int i = nreaders; i < n; i++) {
        hd_procstat_thread_init(&r[i]);
    }
    readers = r;
    nreaders = n;
    return true;
}

void status_sampler_forget(void)
{
    for (int i = 0; i < nreaders; i++) {
        hd_procstat_thread_close(&readers[i]);
    }
    free(readers);
    readers = NULL;
    nreaders = 0;
    hd_procstat_thread_close(&self_reader);
    hd_procstat_system_close();
}

/* Adds cur - prev to total, field by field; a counter that went back restarted. */
static void add_delta(hd_sb_kernel_t *total, const hd_sb_kernel_t *cur,
                      const hd_sb_kernel_t *prev)
{
    uint64_t *t = (uint64_t *)total;
    const uint64_t *c = (const uint64_t *)cur;
    const uint64_t *p = (const uint64_t *)prev;
    for (size_t i = 0; i < sizeof(*total) / sizeof(uint64_t); i++) {
        t[i] += c[i] >= p[i] ? c[i] - p[i] : c[i];
    }
}

/* Where one thread's kernel figures accumulate (a slot's, or a listener's). */
typedef struct {
    hd_sb_kernel_t *total;
    hd_sb_kernel_t *current;
    pid_t *seen_pid;
    pid_t *seen_tid;
} track_t;

/* Adds what thread (pid, tid) did since the last look; 0 pid: it is gone. */
static void sample_thread(track_t t, pid_t pid, pid_t tid, hd_procstat_thread_t *reader,
                          uint64_t lock_waits, uint64_t lock_wait_us)
{
    hd_sb_kernel_t cur;
    static const hd_sb_kernel_t zero;

    if (pid == 0) {
        /* whatever thread comes next starts from its own zero */
        *t.seen_pid = 0;
        *t.seen_tid = 0;
        if (reader != NULL) {
            hd_procstat_thread_close(reader);
        }
        return;
    }
    int rv = reader != NULL ? hd_procstat_thread_read(reader, pid, tid, &cur)
                            : hd_procstat_thread(pid, tid, &cur);
    if (rv != HD_OK) {
        *t.seen_pid = 0;
        *t.seen_tid = 0;
        return;
    }
    cur.lock_waits = lock_waits;
    cur.lock_wait_us = lock_wait_us;
    bool same = *t.seen_pid == pid && *t.seen_tid == tid;
    add_delta(t.total, &cur, same ? t.current : &zero);
    *t.current = cur;
    *t.seen_pid = pid;
    *t.seen_tid = tid;
}

static void sample_slot(int i)
{
    hd_sb_worker_t *w = &hd_scoreboard->workers[i];
    hd_sb_counters_t *c = &hd_scoreboard->counters[i];
    bool gone = w->pid == 0 || w->state == HD_SB_DEAD;
    track_t t = {&c->total, &c->current, &c->seen_pid, &c->seen_tid};
    sample_thread(t, gone ? 0 : w->pid, w->tid != 0 ? w->tid : w->pid,
                  i < nreaders ? &readers[i] : NULL, w->lock_waits, w->lock_wait_us);
}

/* A process's thread without a worker slot (the worker MPM's listener). */
static void sample_listener(int p)
{
    hd_sb_process_t *ps = &hd_scoreboard->processes[p];
    pid_t tid = ps->listener_tid;
    track_t t = {&ps->listener_total, &ps->listener_current, &ps->listener_seen_pid,
                 &ps->listener_seen_tid};
    sample_thread(t, tid != 0 ? ps->pid : 0, tid, NULL, 0, 0);
}

static int64_t clock_ms(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void status_sample(bool in_master)
{
    if (hd_scoreboard == NULL) {
        return;
    }
    hd_sb_global_t *g = hd_scoreboard->global;
    int n = hd_sb_nslots();
    readers_fit(n); /* without memory: open, read, close each time */
    for (int i = 0; i < n; i++) {
        sample_slot(i);
    }
    for (int p = 0; p < hd_scoreboard->global->server_limit; p++) {
        sample_listener(p);
    }

    if (in_master) {
        hd_sb_kernel_t self;
        if (master_pid == 0) {
            master_pid = hd_getpid();
        }
        pid_t me = master_pid;
        if (hd_procstat_thread_read(&self_reader, me, me, &self) == HD_OK) {
            g->master_utime_us = self.utime_us;
            g->master_stime_us = self.stime_us;
        }
        g->master_pid = me;
    }
    hd_sb_system_t sys;
    memset(&sys, 0, sizeof(sys));
    if (hd_procstat_system(&sys) == HD_OK) {
        g->system = sys;
    }

    hd_sb_sample_t s;
    memset(&s, 0, sizeof(s));
    s.mono_ms = clock_ms(CLOCK_MONOTONIC);
    s.real_ms = clock_ms(CLOCK_REALTIME);
    hd_sb_sum(&s.work, &s.kernel);
    s.system = g->system;
    hd_sb_census_t census;
    hd_sb_census(&census);
    s.busy = (uint16_t)(census.busy > 65535 ? 65535 : census.busy);
    s.idle = (uint16_t)(census.idle > 65535 ? 65535 : census.idle);
    hd_sb_ring_push(&s);
}
