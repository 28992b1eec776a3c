/*
 * The scoreboard: one shared mapping with a global record and one slot per
 * worker (a process under prefork, a thread under worker/event). Each worker
 * writes only its own slot, with plain stores; readers (the master, status
 * pages) accept a slightly stale view.
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

typedef struct {
    /* written by the worker */
    volatile char state;
    int generation;
    pid_t pid;
    pid_t tid;
    uint64_t access_count;
    uint64_t bytes_served;
    uint64_t conn_count;            /**< requests on the current connection */
    uint64_t sys[HD_SYS_NKINDS];    /**< syscall counters, see sys.h */
    uint64_t pool_sys_allocs;
    uint64_t pool_sys_bytes;
    uint64_t lock_waits;            /**< times the worker waited for the accept lock or queue */
    uint64_t lock_wait_us;          /**< time spent waiting there */
    struct timespec last_used;
    char client[48];
    char request[128];
} __attribute__((aligned(64))) hd_sb_worker_t;

typedef struct {
    pid_t pid;
    int generation;
    volatile int quiescing;         /**< process was told to finish and exit */
} hd_sb_process_t;

typedef struct {
    int server_limit;               /**< processes */
    int thread_limit;               /**< workers per process */
    volatile int running_generation;
    time_t restart_time;
    struct timespec start_time;
    uint64_t dead_access_count;     /**< requests of exited workers' slots reused */
    uint64_t dead_bytes_served;
} hd_sb_global_t;

typedef struct {
    hd_sb_global_t *global;
    hd_sb_process_t *processes;     /**< server_limit entries */
    hd_sb_worker_t *workers;        /**< server_limit * thread_limit entries */
    size_t size;
} hd_scoreboard_t;

/** The scoreboard of this server (NULL until created). */
extern hd_scoreboard_t *hd_scoreboard;

/**
 * Creates (or re-creates, when the limits grew) the shared scoreboard for
 * @p server_limit processes of @p thread_limit workers. HD_OK or HD_ERROR.
 */
int hd_scoreboard_create(int server_limit, int thread_limit);

/** Slot of worker @p thread of process @p proc. */
static inline hd_sb_worker_t *hd_sb_worker(int proc, int thread)
{
    return &hd_scoreboard->workers[proc * hd_scoreboard->global->thread_limit + thread];
}

/** Makes the calling thread own @p slot: binds its syscall counters to it. */
void hd_sb_bind_worker(hd_sb_worker_t *slot);
/** The calling thread's slot, or NULL. */
hd_sb_worker_t *hd_sb_current(void);
/** Sets the calling worker's state (no-op without a slot). */
void hd_sb_set_state(char state);

/**
 * Records a finished request in the calling worker's slot (no syscall):
 * counts, bytes, status class, duration.
 */
void hd_sb_request_done(int status, uint64_t bytes, uint64_t duration_us);

/** Renders the state letters of every slot into @p out (size workers + 1). */
void hd_sb_letters(char *out, size_t size);

#endif
