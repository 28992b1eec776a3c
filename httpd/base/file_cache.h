/*
 * Open-file cache: keeps the descriptors of recently served files open, one
 * small table per thread, so a file served again costs no open and no close.
 *
 * It never serves stale content: the caller has just stat()ed the path (map
 * to storage does that for every request), and a cached descriptor is used
 * only while that stat names the same file unchanged (device, inode, size,
 * mtime and ctime to the nanosecond, mode, owner). A file replaced, written,
 * truncated or chmod'ed is opened again, as without the cache.
 *
 * Descriptors are reference counted, because a response may still be
 * sending a file when its entry is evicted, and under the event MPM the
 * response may finish (and release the file) on another thread. Lookups and
 * evictions are done by the owning thread only; releases are atomic.
 */
#ifndef HD_FILE_CACHE_H
#define HD_FILE_CACHE_H

#include "hd.h"

#include <stdint.h>
#include <sys/stat.h>

typedef struct hd_cached_file hd_cached_file_t;

/** Entries per thread without an OpenFileCache directive (and with "On"). */
#define HD_FILE_CACHE_DEFAULT 32

/** Most entries per thread OpenFileCache accepts. */
#define HD_FILE_CACHE_MAX 1024

/** An entry no request used for this long is closed (at a lookup or an idle point). */
#define HD_FILE_CACHE_IDLE_MS 60000

/**
 * An open descriptor for @p path, which the caller found to be @p st a
 * moment ago: a cached one when it is still the same file, else a fresh
 * open(2) that is cached in place of the least recently used entry (a
 * response still sending that one keeps its descriptor until it is done).
 * @p capacity is the table size for this thread (OpenFileCache); 0 opens
 * without caching (and @p st is not read). @p now_ms is a monotonic time
 * for the idle expiry.
 * Returns the fd and sets @p *handle (to NULL when not cached), or -1 with
 * errno set. Give the handle back with hd_file_cache_release().
 */
int hd_file_cache_open(const char *path, const struct stat *st, int capacity, int64_t now_ms,
                       hd_cached_file_t **handle);

/**
 * Gives back a descriptor taken with hd_file_cache_open(), from any thread:
 * it is closed when neither a request nor a cache holds it any more. A
 * NULL handle does nothing.
 */
void hd_file_cache_release(hd_cached_file_t *handle);

/**
 * Closes this thread's entries that no request has used for @p idle_ms (a
 * deleted file's space is given back), or all idle ones with 0. Called
 * while the thread has nothing else to do.
 */
void hd_file_cache_expire(int64_t now_ms, int64_t idle_ms);

/**
 * Descriptors the caches of this process hold (entries, and evicted ones a
 * response still sends). At most a quarter of RLIMIT_NOFILE, as read at the
 * first insertion: beyond that, files are served without caching.
 */
int hd_file_cache_process_fds(void);

/** Entries in this thread's table and how many lookups hit: for tests. */
void hd_file_cache_stats(int *entries, uint64_t *hits, uint64_t *misses);

#endif
