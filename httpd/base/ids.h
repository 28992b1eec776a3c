/*
 * The calling process's and thread's ids, cached: getpid and gettid are real
 * system calls, and logs ask for them on every line.
 */
#ifndef HD_IDS_H
#define HD_IDS_H

#include "hd.h"

/** The process id, cached per thread and refreshed after fork. */
pid_t hd_pid(void);

/** The kernel thread id, cached per thread and refreshed after fork. */
pid_t hd_tid(void);

#endif
