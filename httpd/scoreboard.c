/*
 * The scoreboard in one anonymous shared mapping, created by the master
 * before children are forked so that every process sees the same pages.
 */
#include "scoreboard.h"

#include "log.h"
#include "sys.h"

#include <errno.h>
#include <string.h>

hd_scoreboard_t *hd_scoreboard;
static hd_scoreboard_t the_scoreboard;
static __thread hd_sb_worker_t *current_slot;

int hd_scoreboard_create(int server_limit, int thread_limit)
{
    if (hd_scoreboard != NULL && hd_scoreboard->global->server_limit >= server_limit &&
        hd_scoreboard->global->thread_limit >= thread_limit) {
        return HD_OK;
    }
    size_t global = (sizeof(hd_sb_global_t) + 63) & ~(size_t)63;
    size_t procs = ((sizeof(hd_sb_process_t) * (size_t)server_limit) + 63) & ~(size_t)63;
    size_t workers = sizeof(hd_sb_worker_t) * (size_t)server_limit * (size_t)thread_limit;
    size_t size = global + procs + workers;
    char *base = hd_mmap_shared(size);
    if (base == MAP_FAILED) {
        hd_log_error(HD_LOG_EMERG, "core", "AH00004: Unable to create scoreboard (%zu bytes): %s",
                     size, strerror(errno));
        return HD_ERROR;
    }
    memset(base, 0, size);
    hd_scoreboard_t sb = {
        .global = (hd_sb_global_t *)base,
        .processes = (hd_sb_process_t *)(base + global),
        .workers = (hd_sb_worker_t *)(base + global + procs),
        .size = size,
    };
    sb.global->server_limit = server_limit;
    sb.global->thread_limit = thread_limit;
    for (size_t i = 0; i < (size_t)server_limit * (size_t)thread_limit; i++) {
        sb.workers[i].state = HD_SB_DEAD;
    }
    clock_gettime(CLOCK_REALTIME, &sb.global->start_time);
    sb.global->restart_time = sb.global->start_time.tv_sec;
    if (hd_scoreboard != NULL) {
        /* Limits grew on a restart: carry totals over, drop the old mapping. */
        sb.global->start_time = hd_scoreboard->global->start_time;
        sb.global->running_generation = hd_scoreboard->global->running_generation;
        hd_munmap(hd_scoreboard->global, hd_scoreboard->size);
    }
    the_scoreboard = sb;
    hd_scoreboard = &the_scoreboard;
    return HD_OK;
}

void hd_sb_bind_worker(hd_sb_worker_t *slot)
{
    current_slot = slot;
    hd_sys_bind_counters(slot ? slot->sys : NULL);
}

hd_sb_worker_t *hd_sb_current(void)
{
    return current_slot;
}

void hd_sb_set_state(char state)
{
    if (current_slot != NULL) {
        current_slot->state = state;
    }
}

void hd_sb_request_done(int status, uint64_t bytes, uint64_t duration_us)
{
    hd_sb_worker_t *slot = current_slot;
    if (slot == NULL) {
        return;
    }
    slot->access_count++;
    slot->bytes_served += bytes;
    slot->conn_count++;
    (void)status;
    (void)duration_us;
}

void hd_sb_letters(char *out, size_t size)
{
    size_t n = 0;
    if (hd_scoreboard != NULL) {
        size_t total = (size_t)hd_scoreboard->global->server_limit *
                       (size_t)hd_scoreboard->global->thread_limit;
        for (; n < total && n + 1 < size; n++) {
            out[n] = hd_scoreboard->workers[n].state;
        }
    }
    if (size > 0) {
        out[n] = '\0';
    }
}
