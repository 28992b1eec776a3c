/*
 * The scoreboard: one shared mapping with a global record, one record per
 * process, one slot per worker (a process under prefork, a thread under
 * worker/event), the workers' cumulative counters and the master's ring of
 * once-a-second samples. Each worker writes only its own slot and counters,
 * with plain stores; the master alone writes the kernel figures and the
 * ring; readers (status pages) accept a slightly stale view.
 */
#ifndef HD_SCOREBOARD_H
#define HD_SCOREBOARD_H

#include "hd.h"
#include "sys.h"

#include <time.h>

/** Apache's state letters. */
typedef enum {
    HD_SB_DEAD = '.',        /**< open slot, no current process */
    HD_SB_STARTING = 'S',
    HD_SB_READY = '_',       /**< waiting for connection */
    HD_SB_BUSY_READ = 'R',
    HD_SB_BUSY_WRITE = 'W',
    HD_SB_BUSY_KEEPALIVE = 'K',
    HD_SB_BUSY_DNS = 'D',
    HD_SB_CLOSING = 'C',
    HD_SB_BUSY_LOG = 'L',
    HD_SB_GRACEFUL = 'G',
    HD_SB_IDLE_KILL = 'I'
} hd_sb_state_t;

/**
 * A worker's slot. The MPM may clear it when a new process or thread takes
 * it; what must outlive that is in hd_sb_counters_t.
 */
typedef struct {
    /* written by the worker */
    volatile char state;
    int generation;
    pid_t pid;
    pid_t tid;
    uint64_t access_count;          /**< requests of the current process/thread */
    uint64_t bytes_served;
    uint64_t conn_count;            /**< requests on the current connection */
    uint64_t lock_waits;            /**< times the worker waited for a contended lock (not for work) */
    uint64_t lock_wait_us;          /**< time spent waiting there */
    struct timespec last_used;      /**< when the current or last request started */
    uint64_t last_duration_us;      /**< duration of the last finished request */
    char client[48];                /**< ExtendedStatus: client of the current/last request */
    char request[128];              /**< ExtendedStatus: its request line */
} __attribute__((aligned(64))) hd_sb_worker_t;

/**
 * Latency histogram buckets: bucket i < HD_SB_LAT_BUCKETS - 1 counts
 * requests of at most hd_sb_latency_bound_us(i) = 2^(i+2) µs (4 µs .. 67 s);
 * the last one counts the rest.
 */
#define HD_SB_LAT_BUCKETS 26

/** Upper bound in µs of latency bucket @p i (UINT64_MAX for the last). */
static inline uint64_t hd_sb_latency_bound_us(int i)
{
    return i < HD_SB_LAT_BUCKETS - 1 ? (uint64_t)4 << i : UINT64_MAX;
}

/** The bucket a request of @p us microseconds falls in. */
static inline int hd_sb_latency_bucket(uint64_t us)
{
    if (us <= 4) {
        return 0;
    }
    int b = 64 - __builtin_clzll(us - 1) - 2; /* ceil(log2(us)) - 2 */
    return b < HD_SB_LAT_BUCKETS - 1 ? b : HD_SB_LAT_BUCKETS - 1;
}

/** What a worker counts itself, per request and per system call. */
typedef struct {
    uint64_t sys[HD_SYS_NKINDS];        /**< system calls by kind (sys.h) */
    uint64_t requests;
    uint64_t bytes;                     /**< bytes sent, heads included */
    uint64_t duration_us;               /**< sum of request durations */
    uint64_t status[5];                 /**< responses by class: 1xx .. 5xx */
    uint64_t latency[HD_SB_LAT_BUCKETS];
    uint64_t pool_allocs;               /**< malloc calls made by the pools */
    uint64_t pool_bytes;                /**< bytes asked of malloc by the pools */
} hd_sb_work_t;

/** What the master reads from the kernel (and the MPM's lock counts), per slot. */
typedef struct {
    uint64_t vcs;                       /**< voluntary context switches */
    uint64_t ivcs;                      /**< involuntary context switches */
    uint64_t utime_us;                  /**< CPU in user mode */
    uint64_t stime_us;                  /**< CPU in kernel mode */
    uint64_t run_delay_us;              /**< time runnable but waiting for a CPU */
    uint64_t timeslices;                /**< times it was scheduled on a CPU */
    uint64_t lock_waits;                /**< from the slot: contended lock waits */
    uint64_t lock_wait_us;
} hd_sb_kernel_t;

/**
 * A slot's counters, kept for the life of the scoreboard: a new process or
 * thread in the slot goes on adding to them, so totals never go back.
 */
typedef struct {
    hd_sb_work_t work;                  /**< written by the slot's worker */
    /* written by the master's sampler; on their own cache lines */
    hd_sb_kernel_t total __attribute__((aligned(64))); /**< since the scoreboard exists */
    hd_sb_kernel_t current;             /**< of the thread now in the slot (its own totals) */
    pid_t seen_pid;                     /**< the thread `current` belongs to, 0: none */
    pid_t seen_tid;
} __attribute__((aligned(64))) hd_sb_counters_t;

/** System-wide figures of one sample (/proc/stat, /proc/loadavg). */
typedef struct {
    uint64_t ctxt;                      /**< context switches since boot */
    uint64_t intr;                      /**< interrupts since boot */
    uint64_t forks;                     /**< processes created since boot */
    uint64_t cpu[8];  /**< ticks: user nice system idle iowait irq softirq steal */
    uint32_t procs_running;             /**< the run queue */
    uint32_t procs_blocked;
    float load[3];
} hd_sb_system_t;

/** One sample of the ring: cumulative figures at one moment. */
typedef struct {
    int64_t mono_ms;                    /**< CLOCK_MONOTONIC */
    int64_t real_ms;                    /**< CLOCK_REALTIME */
    hd_sb_work_t work;                  /**< sums over every slot (and retired totals) */
    hd_sb_kernel_t kernel;
    hd_sb_system_t system;
    uint16_t busy;
    uint16_t idle;
} hd_sb_sample_t;

/** Samples kept: at one a second, 17 minutes. */
#define HD_SB_RING_SIZE 1024

typedef struct {
    volatile uint64_t head;             /**< samples ever written; the next goes at head % size */
    hd_sb_sample_t samples[HD_SB_RING_SIZE];
} hd_sb_ring_t;

typedef struct {
    pid_t pid;
    int generation;
    volatile int quiescing;         /**< process was told to finish and exit */
    /** the event MPM's child takes no new connections now (at its connection
     *  limit): its idle threads cannot serve a new client, so the master
     *  does not count them as spare (Apache's not_accepting) */
    volatile int not_accepting;
    /* for the event MPM (Apache's ?auto Conns* keys); 0 elsewhere */
    uint32_t connections;
    uint32_t write_completion;
    uint32_t keep_alive;
    uint32_t lingering_close;
    /** system calls of the process's threads that own no worker slot (listener) */
    uint64_t sys[HD_SYS_NKINDS] __attribute__((aligned(64)));
    /**
     * That thread's kernel figures (the worker MPM's listener): it binds
     * with hd_sb_bind_process and the master samples it like a slot.
     */
    pid_t listener_tid;
    hd_sb_kernel_t listener_total __attribute__((aligned(64))); /**< since the scoreboard exists */
    hd_sb_kernel_t listener_current;    /**< of the thread now listening */
    pid_t listener_seen_pid;            /**< whom listener_current belongs to, 0: none */
    pid_t listener_seen_tid;
} __attribute__((aligned(64))) hd_sb_process_t;

typedef struct {
    int server_limit;               /**< processes */
    int thread_limit;               /**< workers per process */
    volatile int running_generation;
    time_t restart_time;
    struct timespec start_time;
    uint64_t dead_access_count;     /**< requests of exited workers' slots reused */
    uint64_t dead_bytes_served;
    /* written by the master */
    pid_t master_pid;
    uint64_t master_sys[HD_SYS_NKINDS]; /**< the master's own system calls (live) */
    uint64_t master_utime_us;
    uint64_t master_stime_us;
    hd_sb_system_t system;          /**< latest system-wide sample */
    hd_sb_counters_t retired;       /**< totals carried over from a previous scoreboard */
} hd_sb_global_t;

typedef struct {
    hd_sb_global_t *global;
    hd_sb_process_t *processes;     /**< server_limit entries */
    hd_sb_worker_t *workers;        /**< server_limit * thread_limit entries */
    hd_sb_counters_t *counters;     /**< one per worker slot, same index */
    hd_sb_ring_t *ring;
    size_t size;
} hd_scoreboard_t;

/** The scoreboard of this server (NULL until created). */
extern hd_scoreboard_t *hd_scoreboard;

/**
 * ExtendedStatus: when true, workers copy each request's line and client
 * into their slot (hd_sb_request_start). Set by mod_status.
 */
extern bool hd_sb_extended_status;

/**
 * Creates (or re-creates, when the limits grew) the shared scoreboard for
 * @p server_limit processes of @p thread_limit workers, and makes the
 * calling thread (the master) count its system calls in the global record.
 * HD_OK or HD_ERROR.
 */
int hd_scoreboard_create(int server_limit, int thread_limit);

/** Number of worker slots. */
static inline int hd_sb_nslots(void)
{
    return hd_scoreboard->global->server_limit * hd_scoreboard->global->thread_limit;
}

/** Slot of worker @p thread of process @p proc. */
static inline hd_sb_worker_t *hd_sb_worker(int proc, int thread)
{
    return &hd_scoreboard->workers[proc * hd_scoreboard->global->thread_limit + thread];
}

/**
 * Makes the calling thread own @p slot: its system calls, requests and pool
 * allocations count in the slot's counters from now on. NULL unbinds.
 */
void hd_sb_bind_worker(hd_sb_worker_t *slot);

/**
 * For a thread of process @p proc that owns no worker slot (a listener):
 * its system calls count in hd_scoreboard->processes[proc].sys. One such
 * thread per process.
 */
void hd_sb_bind_process(int proc);

/** The calling thread's slot, or NULL. */
hd_sb_worker_t *hd_sb_current(void);
/** Index of the calling thread's slot, or -1. */
int hd_sb_current_index(void);
/** Sets the calling worker's state (no-op without a slot). */
void hd_sb_set_state(char state);

/**
 * A request head was read: notes when it started (@p start, CLOCK_REALTIME),
 * resets the per-connection count on a connection's first request, and with
 * ExtendedStatus copies @p client and @p request_line into the calling
 * worker's slot.
 */
void hd_sb_request_start(const struct timespec *start, bool first_on_conn, const char *client,
                         const char *request_line);

/**
 * Records a finished request in the calling worker's slot (no syscall):
 * counts, bytes, status class, latency bucket, pool allocations.
 */
void hd_sb_request_done(int status, uint64_t bytes, uint64_t duration_us);

/** Renders the state letters of every slot into @p out (size workers + 1). */
void hd_sb_letters(char *out, size_t size);

/** Sums of every slot's counters, the processes' listener calls and the retired totals. */
void hd_sb_sum(hd_sb_work_t *work, hd_sb_kernel_t *kernel);

/** Adds @p b to @p a, field by field. */
void hd_sb_work_add(hd_sb_work_t *a, const hd_sb_work_t *b);
void hd_sb_kernel_add(hd_sb_kernel_t *a, const hd_sb_kernel_t *b);

/** Workers by state, as Apache counts them (current generation, live processes only). */
typedef struct {
    int busy;
    int idle;
    int graceful;
    int processes;      /**< live processes */
    int stopping;       /**< of which told to finish */
} hd_sb_census_t;

void hd_sb_census(hd_sb_census_t *out);

/** Appends a sample to the ring (the master's sampler). */
void hd_sb_ring_push(const hd_sb_sample_t *sample);

/**
 * The sample @p ago seconds (samples) before the newest; NULL if the ring
 * holds fewer. ago = 0 is the newest.
 */
const hd_sb_sample_t *hd_sb_ring_get(uint64_t ago);

/** Samples that hd_sb_ring_get can return (at most HD_SB_RING_SIZE - 1). */
uint64_t hd_sb_ring_count(void);

#endif
