/*
 * The cache is invalidated in a forked child through a generation number
 * that only the child's atfork handler changes; a thread's first call after
 * that re-reads both ids (counted as "other" syscalls).
 */
#include "ids.h"

#include "sys.h"

#include <pthread.h>

static unsigned fork_generation = 1;
static __thread unsigned ids_generation;
static __thread pid_t cached_pid;
static __thread pid_t cached_tid;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void forked_child(void)
{
    fork_generation++;
}

static void register_atfork(void)
{
    pthread_atfork(NULL, NULL, forked_child);
}

static void refresh(void)
{
    pthread_once(&atfork_once, register_atfork);
    if (ids_generation != fork_generation) {
        cached_pid = hd_getpid();
        cached_tid = hd_gettid();
        ids_generation = fork_generation;
    }
}

pid_t hd_pid(void)
{
    refresh();
    return cached_pid;
}

pid_t hd_tid(void)
{
    refresh();
    return cached_tid;
}
