/*
 * Per-thread open-file cache (see file_cache.h for what makes it safe).
 * A table is a small array scanned by hash: at a few dozen entries that is
 * cheaper than any structure that needs allocation per lookup, and eviction
 * (least recently used among entries no request holds) only runs on a miss.
 */
#include "file_cache.h"

#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct hd_cached_file {
    int refs;               /* the table's reference + one per request; atomic */
    int fd;
    uint64_t hash;
    int64_t last_used_ms;
    struct stat id;         /* what the descriptor was opened as */
    char path[];
};

typedef struct {
    hd_cached_file_t **e;
    int n;
    int cap;
    int64_t last_sweep_ms;
    uint64_t hits;
    uint64_t misses;
} table_t;

#define SWEEP_EVERY_MS 1000

/*
 * Descriptors all of a process's tables may hold together: a quarter of
 * RLIMIT_NOFILE, so that connections (and the listener's accept) never
 * find the limit taken by files kept for later. Beyond it, files are
 * served uncached. Read once, at the first insertion.
 */
static int fd_budget = -1;
static int fds_cached; /* atomic */

static __thread table_t *my_table;
static pthread_key_t table_key;
static pthread_once_t table_key_once = PTHREAD_ONCE_INIT;

static void unref(hd_cached_file_t *f)
{
    if (__atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        hd_close(f->fd);
        free(f);
        __atomic_sub_fetch(&fds_cached, 1, __ATOMIC_RELAXED);
    }
}

static int budget(void)
{
    int b = __atomic_load_n(&fd_budget, __ATOMIC_RELAXED);
    if (b < 0) {
        struct rlimit rl;
        b = 256;
        if (hd_getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
            b = rl.rlim_cur / 4 > INT_MAX ? INT_MAX : (int)(rl.rlim_cur / 4);
        }
        __atomic_store_n(&fd_budget, b, __ATOMIC_RELAXED);
    }
    return b;
}

static void drop_table(table_t *t)
{
    for (int i = 0; i < t->n; i++) {
        unref(t->e[i]);
    }
    free(t->e);
    free(t);
}

/* Thread exit: the entries still used by requests close with their last release. */
static void table_destructor(void *p)
{
    drop_table(p);
    my_table = NULL;
}

static void make_key(void)
{
    pthread_key_create(&table_key, table_destructor);
}

static table_t *table_for(int cap)
{
    table_t *t = my_table;
    if (t != NULL && t->cap == cap) {
        return t;
    }
    /* first use in this thread, or OpenFileCache changed by a restart */
    pthread_once(&table_key_once, make_key);
    if (t != NULL) {
        drop_table(t);
        my_table = NULL;
        pthread_setspecific(table_key, NULL);
    }
    t = calloc(1, sizeof(*t));
    if (t == NULL) {
        return NULL;
    }
    t->e = calloc((size_t)cap, sizeof(*t->e));
    if (t->e == NULL) {
        free(t);
        return NULL;
    }
    t->cap = cap;
    my_table = t;
    pthread_setspecific(table_key, t);
    return t;
}

static uint64_t hash_path(const char *s)
{
    uint64_t h = 14695981039346656037ull; /* FNV-1a */
    for (; *s != '\0'; s++) {
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    }
    return h;
}

/* Same file, unchanged since it was opened: anything that alters content,
 * length or access changes one of these. */
static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
           a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec &&
           a->st_mode == b->st_mode && a->st_uid == b->st_uid && a->st_gid == b->st_gid;
}

static void remove_at(table_t *t, int i)
{
    unref(t->e[i]);
    t->e[i] = t->e[--t->n];
}

static void sweep(table_t *t, int64_t now_ms, int64_t idle_ms)
{
    for (int i = 0; i < t->n;) {
        hd_cached_file_t *f = t->e[i];
        if (now_ms - f->last_used_ms >= idle_ms &&
            __atomic_load_n(&f->refs, __ATOMIC_ACQUIRE) == 1) {
            remove_at(t, i);
        } else {
            i++;
        }
    }
    t->last_sweep_ms = now_ms;
}

/* Makes room for one entry: the least recently used one goes (a request
 * still sending it keeps the descriptor until it releases it). */
static void make_room(table_t *t)
{
    if (t->n < t->cap) {
        return;
    }
    int victim = 0;
    for (int i = 1; i < t->n; i++) {
        if (t->e[i]->last_used_ms < t->e[victim]->last_used_ms) {
            victim = i;
        }
    }
    remove_at(t, victim);
}

static int open_file(const char *path)
{
    return hd_open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0);
}

int hd_file_cache_open(const char *path, const struct stat *st, int capacity, int64_t now_ms,
                       hd_cached_file_t **handle)
{
    *handle = NULL;
    table_t *t = capacity > 0 ? table_for(capacity) : NULL;
    if (t == NULL) {
        return open_file(path);
    }
    if (now_ms - t->last_sweep_ms >= SWEEP_EVERY_MS) {
        sweep(t, now_ms, HD_FILE_CACHE_IDLE_MS);
    }
    uint64_t h = hash_path(path);
    for (int i = 0; i < t->n; i++) {
        hd_cached_file_t *f = t->e[i];
        if (f->hash != h || strcmp(f->path, path) != 0) {
            continue;
        }
        if (same_file(&f->id, st)) {
            __atomic_add_fetch(&f->refs, 1, __ATOMIC_RELAXED);
            f->last_used_ms = now_ms;
            t->hits++;
            *handle = f;
            return f->fd;
        }
        remove_at(t, i); /* changed or replaced: open it again */
        break;
    }
    t->misses++;
    int fd = open_file(path);
    if (fd < 0 && errno == EMFILE && t->n > 0) {
        /* out of descriptors: this thread's idle entries go first */
        sweep(t, now_ms, 0);
        fd = open_file(path);
    }
    if (fd < 0) {
        return -1;
    }
    /*
     * The path may have been replaced between the caller's stat and this
     * open; such a descriptor is served (as it would be without a cache)
     * but not kept, so a later stat can never be paired with another file.
     */
    struct stat now_st;
    if (hd_fstat(fd, &now_st) != 0 || !same_file(&now_st, st)) {
        return fd;
    }
    size_t len = strlen(path);
    bool full = t->n >= t->cap;
    if (!full && __atomic_load_n(&fds_cached, __ATOMIC_RELAXED) >= budget()) {
        return fd; /* the process's budget is spent: serve it uncached */
    }
    hd_cached_file_t *f = malloc(sizeof(*f) + len + 1);
    if (f == NULL) {
        return fd;
    }
    make_room(t);
    __atomic_add_fetch(&fds_cached, 1, __ATOMIC_RELAXED);
    f->refs = 2;
    f->fd = fd;
    f->hash = h;
    f->last_used_ms = now_ms;
    f->id = now_st;
    memcpy(f->path, path, len + 1);
    t->e[t->n++] = f;
    *handle = f;
    return fd;
}

void hd_file_cache_release(hd_cached_file_t *handle)
{
    if (handle != NULL) {
        unref(handle);
    }
}

void hd_file_cache_expire(int64_t now_ms, int64_t idle_ms)
{
    if (my_table != NULL) {
        sweep(my_table, now_ms, idle_ms);
    }
}

void hd_file_cache_stats(int *entries, uint64_t *hits, uint64_t *misses)
{
    table_t *t = my_table;
    *entries = t ? t->n : 0;
    *hits = t ? t->hits : 0;
    *misses = t ? t->misses : 0;
}

int hd_file_cache_process_fds(void)
{
    return __atomic_load_n(&fds_cached, __ATOMIC_RELAXED);
}
