/* The open-file cache: hits, misses on change, eviction, reference counts, threads. */
#include "file_cache.h"
#include "test.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/hd-file-cache-XXXXXX";

static const char *path_of(const char *name)
{
    static char buf[PATH_MAX];
    snprintf(buf, sizeof(buf), "%s/%s", dir, name);
    return buf;
}

static void put(const char *name, const char *text)
{
    FILE *f = fopen(path_of(name), "w");
    if (f != NULL) {
        fputs(text, f);
        fclose(f);
    }
}

static bool fd_open(int fd)
{
    return fcntl(fd, F_GETFD) >= 0;
}

/* Opens @p name through the cache the way a request does: stat, then open. */
static int take(const char *name, int cap, int64_t now, hd_cached_file_t **h)
{
    struct stat st;
    const char *p = path_of(name);
    if (stat(p, &st) != 0) {
        return -1;
    }
    return hd_file_cache_open(p, &st, cap, now, h);
}

/* Runs first: the budget is read from RLIMIT_NOFILE at the first insertion. */
static void test_fd_budget(void)
{
    struct rlimit saved, low;
    hd_cached_file_t *h[20];
    int fds[20];
    char name[16];
    int entries;
    uint64_t hits, misses;

    CHECK_INT(getrlimit(RLIMIT_NOFILE, &saved), 0);
    low = saved;
    low.rlim_cur = 64; /* a budget of 16 descriptors */
    CHECK_INT(setrlimit(RLIMIT_NOFILE, &low), 0);
    for (int i = 0; i < 20; i++) {
        snprintf(name, sizeof(name), "b%d", i);
        put(name, name);
        fds[i] = take(name, 32, 100 + i, &h[i]);
        CHECK(fds[i] >= 0);
    }
    hd_file_cache_stats(&entries, &hits, &misses);
    CHECK_INT(entries, 16);
    CHECK_INT(hd_file_cache_process_fds(), 16);
    CHECK(h[15] != NULL && h[16] == NULL); /* beyond the budget: not cached */
    for (int i = 0; i < 20; i++) {
        if (h[i] != NULL) {
            hd_file_cache_release(h[i]);
        } else {
            close(fds[i]);
        }
        snprintf(name, sizeof(name), "b%d", i);
        unlink(path_of(name));
    }
    hd_file_cache_expire(INT64_MAX / 2, 0);
    CHECK_INT(hd_file_cache_process_fds(), 0);
    CHECK_INT(setrlimit(RLIMIT_NOFILE, &saved), 0);
}

static void test_hit_and_change(void)
{
    hd_cached_file_t *h1, *h2, *h3;
    int entries;
    uint64_t hits, misses;

    put("a", "one");
    int fd1 = take("a", 8, 1000, &h1);
    CHECK(fd1 >= 0 && h1 != NULL);
    hd_file_cache_release(h1);
    CHECK(fd_open(fd1)); /* the cache still holds it */
    int fd2 = take("a", 8, 1001, &h2);
    CHECK_INT(fd2, fd1);
    hd_file_cache_release(h2);
    hd_file_cache_stats(&entries, &hits, &misses);
    CHECK_INT(entries, 1);
    CHECK_INT(hits, 1);
    CHECK_INT(misses, 1);

    /* replaced: a new inode, so a new descriptor, and the old one closed */
    put("a.new", "two!");
    char from[PATH_MAX];
    snprintf(from, sizeof(from), "%s", path_of("a.new"));
    CHECK_INT(rename(from, path_of("a")), 0);
    int fd3 = take("a", 8, 1002, &h3);
    CHECK(fd3 >= 0 && h3 != NULL);
    char buf[8] = {0};
    CHECK_INT(pread(fd3, buf, sizeof(buf) - 1, 0), 4);
    CHECK_STR(buf, "two!");
    hd_file_cache_release(h3);
    hd_file_cache_stats(&entries, &hits, &misses);
    CHECK_INT(entries, 1);
    CHECK_INT(misses, 2);
    hd_file_cache_expire(INT64_MAX / 2, 0);
    CHECK(!fd_open(fd3));
    hd_file_cache_stats(&entries, &hits, &misses);
    CHECK_INT(entries, 0);
}

/* An evicted entry stays open while a request still sends it. */
static void test_eviction_waits_for_release(void)
{
    hd_cached_file_t *held, *h;
    int entries;
    uint64_t hits, misses;

    put("e0", "0");
    put("e1", "1");
    put("e2", "2");
    int fd0 = take("e0", 2, 10, &held);       /* kept by "the request" */
    take("e1", 2, 11, &h);
    hd_file_cache_release(h);
    take("e2", 2, 12, &h);                    /* evicts e0, the least recent */
    hd_file_cache_release(h);
    hd_file_cache_stats(&entries, &hits, &misses);
    CHECK_INT(entries, 2);
    CHECK(fd_open(fd0));
    char c = 0;
    CHECK_INT(pread(fd0, &c, 1, 0), 1);
    CHECK_INT(c, '0');
    hd_file_cache_release(held);              /* the last reference closes it */
    CHECK(!fd_open(fd0));
    hd_file_cache_expire(INT64_MAX / 2, 0);
}

/* Capacity 0 is "off": a plain descriptor the caller closes. */
static void test_off(void)
{
    hd_cached_file_t *h = (hd_cached_file_t *)1;
    put("off", "x");
    int fd = take("off", 0, 5, &h);
    CHECK(fd >= 0);
    CHECK(h == NULL);
    close(fd);
}

/* A missing file is an error with errno, and nothing is cached. */
static void test_missing(void)
{
    struct stat st = {0};
    hd_cached_file_t *h;
    int entries;
    uint64_t hits, misses;
    CHECK_INT(hd_file_cache_open(path_of("nope"), &st, 8, 1, &h), -1);
    CHECK(h == NULL);
    hd_file_cache_stats(&entries, &hits, &misses);
    CHECK_INT(entries, 0);
}

/* Idle entries expire; recent ones stay. */
static void test_idle_expiry(void)
{
    hd_cached_file_t *h;
    int entries;
    uint64_t hits, misses;
    put("old", "o");
    put("new", "n");
    take("old", 8, 1000, &h);
    hd_file_cache_release(h);
    take("new", 8, 50000, &h);
    hd_file_cache_release(h);
    hd_file_cache_expire(1000 + HD_FILE_CACHE_IDLE_MS, HD_FILE_CACHE_IDLE_MS);
    hd_file_cache_stats(&entries, &hits, &misses);
    CHECK_INT(entries, 1);
    hd_file_cache_expire(INT64_MAX / 2, 0);
}

/* Released on another thread (event MPM); the owner thread exits with an
 * entry still held: the holder's release closes it. */
typedef struct {
    hd_cached_file_t *h;
    int fd;
} handoff_t;

static void *owner_thread(void *arg)
{
    handoff_t *x = arg;
    x->fd = take("t", 4, 1, &x->h);
    return NULL;
}

static void test_threads(void)
{
    handoff_t x = {NULL, -1};
    pthread_t t;
    put("t", "thread");
    pthread_create(&t, NULL, owner_thread, &x);
    pthread_join(t, NULL);
    CHECK(x.fd >= 0 && x.h != NULL);
    CHECK(fd_open(x.fd)); /* the owner is gone, the request still has it */
    hd_file_cache_release(x.h);
    CHECK(!fd_open(x.fd));
}

int main(void)
{
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_fd_budget);
    RUN(test_hit_and_change);
    RUN(test_eviction_waits_for_release);
    RUN(test_off);
    RUN(test_missing);
    RUN(test_idle_expiry);
    RUN(test_threads);
    const char *names[] = {"a", "e0", "e1", "e2", "off", "old", "new", "t"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        unlink(path_of(names[i]));
    }
    rmdir(dir);
    TEST_DONE();
}
