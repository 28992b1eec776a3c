/*
 * The scoreboard in one anonymous shared mapping, created by the master
 * before children are forked so that every process sees the same pages:
 * global record, process records, worker slots, the slots' counters and the
 * ring of samples, each part starting on a cache line.
 */
#include "scoreboard.h"

#include "ids.h"
#include "log.h"
#include "pool.h"
#include "sys.h"

#include <errno.h>
#include <string.h>

#define LINE_UP(n) (((n) + 63) & ~(size_t)63)

hd_scoreboard_t *hd_scoreboard;
bool hd_sb_extended_status;
static hd_scoreboard_t the_scoreboard;

static __thread hd_sb_worker_t *current_slot;
static __thread hd_sb_counters_t *current_counters;
/* The pools' counters when last published: only what is new is added. */
static __thread uint64_t pool_seen_allocs;
static __thread uint64_t pool_seen_bytes;

/* Totals of the old mapping go to the new one's retired record. */
static void carry_over(hd_scoreboard_t *old, hd_scoreboard_t *sb)
{
    hd_sb_global_t *g = sb->global;
    g->start_time = old->global->start_time;
    g->running_generation = old->global->running_generation;
    g->dead_access_count = old->global->dead_access_count;
    g->dead_bytes_served = old->global->dead_bytes_served;
    g->master_pid = old->global->master_pid;
    /* the creator was counting there: go on from its figures */
    memcpy(g->master_sys, old->global->master_sys, sizeof(g->master_sys));
    g->master_utime_us = old->global->master_utime_us;
    g->master_stime_us = old->global->master_stime_us;
    g->system = old->global->system;
    g->retired = old->global->retired;
    int n = old->global->server_limit * old->global->thread_limit;
    for (int i = 0; i < n; i++) {
        hd_sb_work_add(&g->retired.work, &old->counters[i].work);
        hd_sb_kernel_add(&g->retired.total, &old->counters[i].total);
    }
    for (int p = 0; p < old->global->server_limit; p++) {
        for (int k = 0; k < HD_SYS_NKINDS; k++) {
            g->retired.work.sys[k] += old->processes[p].sys[k];
        }
        hd_sb_kernel_add(&g->retired.total, &old->processes[p].listener_total);
    }
    memcpy(sb->ring, old->ring, sizeof(*sb->ring));
}

int hd_scoreboard_create(int server_limit, int thread_limit)
{
    if (hd_scoreboard != NULL && hd_scoreboard->global->server_limit >= server_limit &&
        hd_scoreboard->global->thread_limit >= thread_limit) {
        return HD_OK;
    }
    size_t nslots = (size_t)server_limit * (size_t)thread_limit;
    size_t global = LINE_UP(sizeof(hd_sb_global_t));
    size_t procs = LINE_UP(sizeof(hd_sb_process_t) * (size_t)server_limit);
    size_t workers = LINE_UP(sizeof(hd_sb_worker_t) * nslots);
    size_t counters = LINE_UP(sizeof(hd_sb_counters_t) * nslots);
    size_t ring = LINE_UP(sizeof(hd_sb_ring_t));
    size_t size = global + procs + workers + counters + ring;
    char *base = hd_mmap_shared(size);
    if (base == MAP_FAILED) {
        hd_log_error(HD_LOG_EMERG, "core", "AH00004: Unable to create scoreboard (%zu bytes): %s",
                     size, strerror(errno));
        return HD_ERROR;
    }
    /* a fresh anonymous mapping is zeroed by the kernel */
    hd_scoreboard_t sb = {
        .global = (hd_sb_global_t *)base,
        .processes = (hd_sb_process_t *)(base + global),
        .workers = (hd_sb_worker_t *)(base + global + procs),
        .counters = (hd_sb_counters_t *)(base + global + procs + workers),
        .ring = (hd_sb_ring_t *)(base + global + procs + workers + counters),
        .size = size,
    };
    sb.global->server_limit = server_limit;
    sb.global->thread_limit = thread_limit;
    for (size_t i = 0; i < nslots; i++) {
        sb.workers[i].state = HD_SB_DEAD;
    }
    clock_gettime(CLOCK_REALTIME, &sb.global->start_time);
    sb.global->restart_time = sb.global->start_time.tv_sec;
    sb.global->master_pid = hd_getpid();
    if (hd_scoreboard != NULL) {
        /* Limits grew on a restart: carry totals over, drop the old mapping. */
        carry_over(hd_scoreboard, &sb);
        hd_munmap(hd_scoreboard->global, hd_scoreboard->size);
    } else {
        memcpy(sb.global->master_sys, hd_sys_counters, sizeof(sb.global->master_sys));
    }
    /*
     * The creator (the master) counts its own calls in shared memory from
     * now on, where status pages read them live; a child forked later counts
     * privately until it binds a slot (hd_fork).
     */
    hd_sys_bind_counters(sb.global->master_sys);
    current_slot = NULL;
    current_counters = NULL;
    the_scoreboard = sb;
    hd_scoreboard = &the_scoreboard;
    return HD_OK;
}

void hd_sb_bind_worker(hd_sb_worker_t *slot)
{
    if (slot == NULL || hd_scoreboard == NULL) {
        current_slot = NULL;
        current_counters = NULL;
        hd_sys_bind_counters(NULL);
        return;
    }
    current_slot = slot;
    current_counters = &hd_scoreboard->counters[slot - hd_scoreboard->workers];
    hd_sys_bind_counters(current_counters->work.sys);
    /* what the thread's pools took before (or inherited across fork) is not the slot's */
    const hd_pool_stats_t *ps = hd_pool_stats();
    pool_seen_allocs = ps->sys_allocs;
    pool_seen_bytes = ps->sys_bytes;
}

void hd_sb_bind_process(int proc)
{
    current_slot = NULL;
    current_counters = NULL;
    hd_sys_bind_counters(hd_scoreboard != NULL ? hd_scoreboard->processes[proc].sys : NULL);
    if (hd_scoreboard != NULL) {
        hd_scoreboard->processes[proc].listener_tid = hd_tid();
    }
}

hd_sb_worker_t *hd_sb_current(void)
{
    return current_slot;
}

int hd_sb_current_index(void)
{
    return current_slot != NULL ? (int)(current_slot - hd_scoreboard->workers) : -1;
}

void hd_sb_set_state(char state)
{
    if (current_slot != NULL) {
        current_slot->state = state;
    }
}

static void copy_text(char *dst, size_t size, const char *src)
{
    size_t n = src != NULL ? strnlen(src, size - 1) : 0;
    if (n > 0) {
        memcpy(dst, src, n);
    }
    dst[n] = '\0';
}

void hd_sb_request_start(const struct timespec *start, bool first_on_conn, const char *client,
                         const char *request_line)
{
    hd_sb_worker_t *slot = current_slot;
    if (slot == NULL) {
        return;
    }
    slot->last_used = *start;
    if (first_on_conn) {
        slot->conn_count = 0;
    }
    if (hd_sb_extended_status) {
        copy_text(slot->client, sizeof(slot->client), client);
        copy_text(slot->request, sizeof(slot->request), request_line != NULL ? request_line : "-");
    }
}

void hd_sb_request_done(int status, uint64_t bytes, uint64_t duration_us)
{
    hd_sb_worker_t *slot = current_slot;
    if (slot == NULL) {
        return;
    }
    hd_sb_work_t *w = &current_counters->work;
    slot->access_count++;
    slot->bytes_served += bytes;
    slot->conn_count++;
    slot->last_duration_us = duration_us;
    w->requests++;
    w->bytes += bytes;
    w->duration_us += duration_us;
#ifndef HD_NO_COUNTERS
    unsigned cls = (unsigned)status / 100 - 1;
    if (cls < 5) {
        w->status[cls]++;
    }
    w->latency[hd_sb_latency_bucket(duration_us)]++;
    /* allocations between requests (a new connection's pool) land on the next one */
    const hd_pool_stats_t *ps = hd_pool_stats();
    w->pool_allocs += ps->sys_allocs - pool_seen_allocs;
    w->pool_bytes += ps->sys_bytes - pool_seen_bytes;
    pool_seen_allocs = ps->sys_allocs;
    pool_seen_bytes = ps->sys_bytes;
#else
    (void)status;
#endif
}

void hd_sb_letters(char *out, size_t size)
{
    size_t n = 0;
    if (hd_scoreboard != NULL) {
        size_t total = (size_t)hd_sb_nslots();
        for (; n < total && n + 1 < size; n++) {
            out[n] = hd_scoreboard->workers[n].state;
        }
    }
    if (size > 0) {
        out[n] = '\0';
    }
}

void hd_sb_work_add(hd_sb_work_t *a, const hd_sb_work_t *b)
{
    /* every field is a uint64_t: add them as an array */
    uint64_t *pa = (uint64_t *)a;
    const uint64_t *pb = (const uint64_t *)b;
    for (size_t i = 0; i < sizeof(*a) / sizeof(uint64_t); i++) {
        pa[i] += pb[i];
    }
}

void hd_sb_kernel_add(hd_sb_kernel_t *a, const hd_sb_kernel_t *b)
{
    uint64_t *pa = (uint64_t *)a;
    const uint64_t *pb = (const uint64_t *)b;
    for (size_t i = 0; i < sizeof(*a) / sizeof(uint64_t); i++) {
        pa[i] += pb[i];
    }
}

void hd_sb_sum(hd_sb_work_t *work, hd_sb_kernel_t *kernel)
{
    *work = hd_scoreboard->global->retired.work;
    *kernel = hd_scoreboard->global->retired.total;
    int n = hd_sb_nslots();
    for (int i = 0; i < n; i++) {
        hd_sb_work_add(work, &hd_scoreboard->counters[i].work);
        hd_sb_kernel_add(kernel, &hd_scoreboard->counters[i].total);
    }
    /* a process's threads without a slot (listeners) serve the requests too */
    for (int p = 0; p < hd_scoreboard->global->server_limit; p++) {
        for (int k = 0; k < HD_SYS_NKINDS; k++) {
            work->sys[k] += hd_scoreboard->processes[p].sys[k];
        }
        hd_sb_kernel_add(kernel, &hd_scoreboard->processes[p].listener_total);
    }
}

/*
 * Apache's rule: only live processes of the running generation that were
 * not told to stop count; a process record without a pid (an MPM that does
 * not fill them) falls back to the slot's own pid.
 */
void hd_sb_census(hd_sb_census_t *out)
{
    const hd_sb_global_t *g = hd_scoreboard->global;
    memset(out, 0, sizeof(*out));
    for (int p = 0; p < g->server_limit; p++) {
        const hd_sb_process_t *ps = &hd_scoreboard->processes[p];
        if (ps->pid != 0) {
            out->processes++;
            out->stopping += ps->quiescing != 0;
        }
        for (int t = 0; t < g->thread_limit; t++) {
            const hd_sb_worker_t *w = hd_sb_worker(p, t);
            pid_t pid = ps->pid != 0 ? ps->pid : w->pid;
            bool current = ps->pid != 0 ? ps->generation == g->running_generation
                                        : w->generation == g->running_generation;
            if (pid == 0 || ps->quiescing || !current) {
                continue;
            }
            switch (w->state) {
            case HD_SB_READY:
                out->idle++;
                break;
            case HD_SB_GRACEFUL:
                out->graceful++;
                break;
            case HD_SB_DEAD:
            case HD_SB_STARTING:
            case HD_SB_IDLE_KILL:
                break;
            default:
                out->busy++;
            }
        }
    }
}

void hd_sb_ring_push(const hd_sb_sample_t *sample)
{
    hd_sb_ring_t *ring = hd_scoreboard->ring;
    uint64_t head = ring->head;
    ring->samples[head % HD_SB_RING_SIZE] = *sample;
    /* readers must not see the new head before the sample it covers */
    __atomic_store_n(&ring->head, head + 1, __ATOMIC_RELEASE);
}

uint64_t hd_sb_ring_count(void)
{
    uint64_t head = __atomic_load_n(&hd_scoreboard->ring->head, __ATOMIC_ACQUIRE);
    return head < HD_SB_RING_SIZE - 1 ? head : HD_SB_RING_SIZE - 1;
}

const hd_sb_sample_t *hd_sb_ring_get(uint64_t ago)
{
    hd_sb_ring_t *ring = hd_scoreboard->ring;
    uint64_t head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
    /* one slot short of full: the master may be writing the oldest one */
    if (ago + 1 > head || ago + 1 >= HD_SB_RING_SIZE) {
        return NULL;
    }
    return &ring->samples[(head - 1 - ago) % HD_SB_RING_SIZE];
}
