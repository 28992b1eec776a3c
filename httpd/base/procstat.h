/*
 * Reading the kernel's accounts from /proc: per thread (context switches,
 * CPU, run delay, timeslices) and system-wide (run queue, context switches,
 * interrupts, CPU ticks, load). Reads go through the syscall layer, so they
 * are counted where they are made (the master's sampler). The parsers take
 * text and are pure, for the unit tests.
 */
#ifndef HD_PROCSTAT_H
#define HD_PROCSTAT_H

#include "hd.h"
#include "scoreboard.h"

/** /proc/<pid>/task/<tid>/stat: utime and stime (fields 14, 15) in clock ticks. */
int hd_procstat_parse_stat(const char *text, uint64_t *utime, uint64_t *stime);

/** /proc/.../status: voluntary and nonvoluntary context switches. HD_OK or HD_ERROR. */
int hd_procstat_parse_status(const char *text, uint64_t *vcs, uint64_t *ivcs);

/** /proc/.../schedstat: time on CPU (ns), time waiting on a run queue (ns), timeslices. */
int hd_procstat_parse_schedstat(const char *text, uint64_t *run_ns, uint64_t *delay_ns,
                                uint64_t *slices);

/** /proc/stat: cpu ticks, intr total, ctxt, processes, procs_running, procs_blocked. */
int hd_procstat_parse_system(const char *text, hd_sb_system_t *out);

/** /proc/loadavg: the three load averages into out->load. */
int hd_procstat_parse_loadavg(const char *text, hd_sb_system_t *out);

/**
 * A thread's /proc files, kept open from one sample to the next and read
 * with pread at offset 0: one system call per file and sample.
 */
typedef struct {
    pid_t pid;
    pid_t tid;
    int fd[3];              /**< stat, status, schedstat; -1 when closed */
} hd_procstat_thread_t;

/** Makes @p t empty (no file open). */
void hd_procstat_thread_init(hd_procstat_thread_t *t);

/**
 * Current figures of thread @p tid of process @p pid: vcs, ivcs, utime_us,
 * stime_us, run_delay_us, timeslices (lock fields untouched), through @p t,
 * which (re)opens the files when the thread changed. HD_OK, or HD_ERROR if
 * the thread is gone (the files are closed then).
 */
int hd_procstat_thread_read(hd_procstat_thread_t *t, pid_t pid, pid_t tid, hd_sb_kernel_t *out);

/** Closes @p t's files. */
void hd_procstat_thread_close(hd_procstat_thread_t *t);

/** The same, once: opens, reads and closes. */
int hd_procstat_thread(pid_t pid, pid_t tid, hd_sb_kernel_t *out);

/**
 * System-wide figures from /proc/stat and /proc/loadavg (kept open between
 * calls). HD_OK or HD_ERROR. Not for concurrent use.
 */
int hd_procstat_system(hd_sb_system_t *out);

/** Closes the files hd_procstat_system keeps open (in a new child). */
void hd_procstat_system_close(void);

#endif
