/*
 * The counters and mod_status's pieces: /proc parsers, latency buckets,
 * the scoreboard's slots, counters, census and ring, the sampler on this
 * very process, Apache's number and time formats, rates, the output
 * buffer's escaping, and the syscall layer's counted locks.
 */
#include "buf.h"
#include "pool.h"
#include "procstat.h"
#include "request.h"
#include "scoreboard.h"
#include "status/status.h"
#include "sys.h"
#include "test.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

static void test_parse_stat(void)
{
    /* a command name with a space and parentheses: fields follow the last ')' */
    const char *text = "1234 (my (odd) name) S 1 1234 1234 0 -1 4194560 1200 0 0 0 "
                       "157 42 0 0 20 0 1 0 12345 1000000 200 18446744073709551615\n";
    uint64_t u = 0, s = 0;
    CHECK_INT(hd_procstat_parse_stat(text, &u, &s), HD_OK);
    CHECK_INT(u, 157);
    CHECK_INT(s, 42);
    CHECK_INT(hd_procstat_parse_stat("garbage", &u, &s), HD_ERROR);
    CHECK_INT(hd_procstat_parse_stat("1 (x) S 1 2", &u, &s), HD_ERROR);
}

static void test_parse_status_schedstat(void)
{
    const char *status = "Name:\thttpd\nState:\tS (sleeping)\nThreads:\t1\n"
                         "voluntary_ctxt_switches:\t815\nnonvoluntary_ctxt_switches:\t17\n";
    uint64_t a = 0, b = 0, c = 0;
    CHECK_INT(hd_procstat_parse_status(status, &a, &b), HD_OK);
    CHECK_INT(a, 815);
    CHECK_INT(b, 17);
    CHECK_INT(hd_procstat_parse_status("Name:\tx\n", &a, &b), HD_ERROR);
    CHECK_INT(hd_procstat_parse_schedstat("6131021 250001 42\n", &a, &b, &c), HD_OK);
    CHECK_INT(a, 6131021);
    CHECK_INT(b, 250001);
    CHECK_INT(c, 42);
}

static void test_parse_system(void)
{
    const char *text = "cpu  100 5 200 3000 40 1 2 3 0 0\n"
                       "cpu0 50 2 100 1500 20 0 1 1 0 0\n"
                       "intr 987654 0 9 0 0 0\n"
                       "ctxt 5556667\nbtime 1700000000\nprocesses 4242\n"
                       "procs_running 3\nprocs_blocked 1\nsoftirq 1 2 3\n";
    hd_sb_system_t sys;
    memset(&sys, 0, sizeof(sys));
    CHECK_INT(hd_procstat_parse_system(text, &sys), HD_OK);
    CHECK_INT(sys.cpu[0], 100);
    CHECK_INT(sys.cpu[2], 200);
    CHECK_INT(sys.cpu[3], 3000);
    CHECK_INT(sys.cpu[7], 3);
    CHECK_INT(sys.intr, 987654);
    CHECK_INT(sys.ctxt, 5556667);
    CHECK_INT(sys.forks, 4242);
    CHECK_INT(sys.procs_running, 3);
    CHECK_INT(sys.procs_blocked, 1);
    CHECK_INT(hd_procstat_parse_loadavg("0.52 1.25 10.00 2/345 6789\n", &sys), HD_OK);
    CHECK(sys.load[0] > 0.51f && sys.load[0] < 0.53f);
    CHECK(sys.load[2] > 9.99f && sys.load[2] < 10.01f);
    CHECK_INT(hd_procstat_parse_system("nope", &sys), HD_ERROR);
}

static void test_latency_buckets(void)
{
    CHECK_INT(hd_sb_latency_bucket(0), 0);
    CHECK_INT(hd_sb_latency_bucket(4), 0);
    CHECK_INT(hd_sb_latency_bucket(5), 1);
    CHECK_INT(hd_sb_latency_bucket(8), 1);
    CHECK_INT(hd_sb_latency_bucket(9), 2);
    CHECK_INT(hd_sb_latency_bucket(1000), 8); /* (512, 1024] */
    CHECK_INT(hd_sb_latency_bound_us(8), 1024);
    CHECK_INT(hd_sb_latency_bucket(UINT64_MAX), HD_SB_LAT_BUCKETS - 1);
    for (uint64_t us = 1; us < 100000000; us = us * 3 + 1) {
        int b = hd_sb_latency_bucket(us);
        /* every duration is within its bucket's bounds */
        CHECK(us <= hd_sb_latency_bound_us(b));
        CHECK(b == 0 || us > hd_sb_latency_bound_us(b - 1));
    }
}

static void test_scoreboard_counts(void)
{
    CHECK_INT(hd_scoreboard_create(2, 2), HD_OK);
    hd_sb_worker_t *slot = hd_sb_worker(1, 1);
    CHECK_INT(slot - hd_scoreboard->workers, 3);
    CHECK(slot->state == HD_SB_DEAD);
    slot->pid = getpid();
    hd_sb_bind_worker(slot);
    uint64_t allocs_at_bind HD_UNUSED = hd_pool_stats()->sys_allocs;
    CHECK(hd_sb_current() == slot);
    CHECK_INT(hd_sb_current_index(), 3);
    hd_sb_set_state(HD_SB_BUSY_READ);
    CHECK(slot->state == 'R');

    hd_sb_counters_t *c = &hd_scoreboard->counters[3];
    struct stat st;
    hd_stat("/", &st);
    hd_stat("/", &st);
    int fd = hd_open("/dev/null", O_RDONLY, 0);
    hd_close(fd);
#ifndef HD_NO_COUNTERS
    CHECK_INT(c->work.sys[HD_SYS_STAT], 2);
    CHECK_INT(c->work.sys[HD_SYS_OPEN], 1);
    CHECK_INT(c->work.sys[HD_SYS_CLOSE], 1);
#endif
    /* a large allocation goes to malloc: counted in the slot at the next request */
    hd_pool_t *p = hd_pool_create();
    hd_palloc(p, 100000);
    hd_sb_request_done(200, 1000, 3);
    hd_sb_request_done(404, 500, 700);
    hd_sb_request_done(503, 0, 70000000);
    hd_pool_destroy(p);
    CHECK_INT(c->work.requests, 3);
    CHECK_INT(c->work.bytes, 1500);
    CHECK_INT(c->work.duration_us, 70000703);
    CHECK_INT(slot->access_count, 3);
#ifndef HD_NO_COUNTERS
    CHECK_INT(c->work.status[1], 1);
    CHECK_INT(c->work.status[3], 1);
    CHECK_INT(c->work.status[4], 1);
    CHECK_INT(c->work.latency[0], 1);
    CHECK_INT(c->work.latency[hd_sb_latency_bucket(700)], 1);
    CHECK_INT(c->work.latency[HD_SB_LAT_BUCKETS - 1], 1);
    CHECK_INT(c->work.pool_allocs, hd_pool_stats()->sys_allocs - allocs_at_bind);
    CHECK(c->work.pool_allocs >= 1);
    CHECK(c->work.pool_bytes >= 100000);
#endif

    /* a new process in the slot (the MPM clears it) keeps adding to the counters */
    memset(slot, 0, sizeof(*slot));
    hd_sb_bind_worker(slot);
    hd_sb_request_done(200, 10, 1);
    CHECK_INT(slot->access_count, 1);
    CHECK_INT(c->work.requests, 4);

    hd_sb_work_t w;
    hd_sb_kernel_t k;
    hd_sb_sum(&w, &k);
    CHECK_INT(w.requests, 4);
    CHECK_INT(w.bytes, 1510);

    /* a listener thread's calls count for its process */
    hd_sb_bind_process(1);
    hd_stat("/", &st);
#ifndef HD_NO_COUNTERS
    CHECK_INT(hd_scoreboard->processes[1].sys[HD_SYS_STAT], 1);
    hd_sb_sum(&w, &k);
    CHECK_INT(w.sys[HD_SYS_STAT], 3);
#endif
    hd_sb_bind_worker(NULL);
    CHECK(hd_sb_current() == NULL);
    hd_sb_request_done(200, 1, 1); /* no slot: nothing happens */
    CHECK_INT(c->work.requests, 4);
}

static void test_census_and_letters(void)
{
    /* the scoreboard of the test above: 2 processes of 2 workers */
    hd_scoreboard->global->running_generation = 1;
    hd_scoreboard->processes[0].pid = 100;
    hd_scoreboard->processes[0].generation = 1;
    hd_scoreboard->processes[1].pid = 101;
    hd_scoreboard->processes[1].generation = 1;
    hd_scoreboard->processes[1].quiescing = 1;
    hd_sb_worker(0, 0)->state = HD_SB_READY;
    hd_sb_worker(0, 1)->state = HD_SB_BUSY_WRITE;
    hd_sb_worker(1, 0)->state = HD_SB_READY;       /* quiescing process: not counted */
    hd_sb_worker(1, 1)->state = HD_SB_BUSY_KEEPALIVE;
    hd_sb_census_t cs;
    hd_sb_census(&cs);
    CHECK_INT(cs.idle, 1);
    CHECK_INT(cs.busy, 1);
    CHECK_INT(cs.processes, 2);
    CHECK_INT(cs.stopping, 1);
    char letters[8];
    hd_sb_letters(letters, sizeof(letters));
    CHECK_STR(letters, "_W_K");
    hd_scoreboard->processes[1].quiescing = 0;
}

static hd_sb_sample_t sample_at(uint64_t i)
{
    hd_sb_sample_t s;
    memset(&s, 0, sizeof(s));
    s.mono_ms = (int64_t)i * 1000;
    s.work.requests = i * 10;
    s.work.sys[HD_SYS_READ] = i * 20;
    s.kernel.vcs = i * 5;
    s.system.ctxt = i * 1000;
    s.system.cpu[0] = i * 50;
    s.system.cpu[3] = i * 50;
    return s;
}

static void test_ring(void)
{
    CHECK_INT(hd_sb_ring_count(), 0);
    CHECK(hd_sb_ring_get(0) == NULL);
    for (uint64_t i = 1; i <= 3; i++) {
        hd_sb_sample_t s = sample_at(i);
        hd_sb_ring_push(&s);
    }
    CHECK_INT(hd_sb_ring_count(), 3);
    CHECK_INT(hd_sb_ring_get(0)->work.requests, 30);
    CHECK_INT(hd_sb_ring_get(2)->work.requests, 10);
    CHECK(hd_sb_ring_get(3) == NULL);
    /* wrap around: the newest stay, one slot is kept free for the writer */
    for (uint64_t i = 4; i <= HD_SB_RING_SIZE + 10; i++) {
        hd_sb_sample_t s = sample_at(i);
        hd_sb_ring_push(&s);
    }
    CHECK_INT(hd_sb_ring_count(), HD_SB_RING_SIZE - 1);
    CHECK_INT(hd_sb_ring_get(0)->work.requests, (HD_SB_RING_SIZE + 10) * 10);
    CHECK_INT(hd_sb_ring_get(HD_SB_RING_SIZE - 2)->work.requests, 12 * 10);
    CHECK(hd_sb_ring_get(HD_SB_RING_SIZE - 1) == NULL);
    CHECK(hd_sb_ring_get(HD_SB_RING_SIZE) == NULL);
}

static void test_growth_keeps_totals(void)
{
    hd_sb_work_t before, after;
    hd_sb_kernel_t k;
    hd_sb_sum(&before, &k);
    uint64_t head = hd_scoreboard->ring->head;
    CHECK_INT(hd_scoreboard_create(4, 2), HD_OK);
    CHECK_INT(hd_sb_nslots(), 8);
    hd_sb_sum(&after, &k);
    CHECK_INT(after.requests, before.requests);
    CHECK_INT(after.sys[HD_SYS_STAT], before.sys[HD_SYS_STAT]);
    CHECK_INT(hd_scoreboard->ring->head, head);
    CHECK_INT(hd_sb_ring_get(0)->work.requests, (HD_SB_RING_SIZE + 10) * 10);
    /* smaller limits keep the mapping */
    hd_scoreboard_t *sb = hd_scoreboard;
    hd_sb_global_t *g = sb->global;
    CHECK_INT(hd_scoreboard_create(1, 1), HD_OK);
    CHECK(hd_scoreboard->global == g);
}

static void test_sampler_reads_this_process(void)
{
    hd_sb_worker_t *slot = hd_sb_worker(0, 0);
    memset(slot, 0, sizeof(*slot));
    slot->pid = getpid();
    slot->tid = hd_gettid();
    slot->state = HD_SB_READY;
    slot->lock_waits = 3;
    uint64_t head = hd_scoreboard->ring->head;
    status_sample(false);
    /* burn a little CPU and switch a few times */
    volatile uint64_t x = 0;
    for (int i = 0; i < 20000000; i++) {
        x += (uint64_t)i;
    }
    for (int i = 0; i < 5; i++) {
        hd_poll(NULL, 0, 1);
    }
    status_sample(false);
    const hd_sb_counters_t *c = &hd_scoreboard->counters[0];
    CHECK_INT(hd_scoreboard->ring->head, head + 2);
    CHECK(c->seen_pid == getpid());
    CHECK(c->current.vcs >= 5);              /* the polls slept */
    CHECK(c->total.vcs >= 5);
    CHECK(c->total.vcs <= c->current.vcs);   /* counted once, from this thread's own totals */
    CHECK_INT(c->total.lock_waits, 3);
    CHECK(hd_scoreboard->global->system.ctxt > 0);
    CHECK(hd_scoreboard->global->system.procs_running >= 1);
    /* a different thread in the slot: its figures start from its own zero */
    slot->tid = slot->tid + 1000000;
    status_sample(false);
    CHECK(c->seen_pid == 0); /* no such thread: forgotten */
}

static void test_apache_formats(void)
{
    char b[64];
    status_apache_g(b, sizeof(b), 0.5);
    CHECK_STR(b, ".5");
    status_apache_g(b, sizeof(b), 0);
    CHECK_STR(b, "0");
    status_apache_g(b, sizeof(b), 60.6);
    CHECK_STR(b, "60.6");
    status_apache_g(b, sizeof(b), -0.25);
    CHECK_STR(b, "-.25");
    status_apache_g(b, sizeof(b), 229581);
    CHECK_STR(b, "229581");
    status_apache_g(b, sizeof(b), 1234567);
    CHECK_STR(b, "1.23457e+06");
    status_apache_g(b, sizeof(b), (float)303 / (float)5);
    CHECK_STR(b, "60.6");
    status_apache_uptime(b, sizeof(b), 0);
    CHECK_STR(b, "");
    status_apache_uptime(b, sizeof(b), 1);
    CHECK_STR(b, " 1 second");
    status_apache_uptime(b, sizeof(b), 3661);
    CHECK_STR(b, " 1 hour 1 minute 1 second");
    status_apache_uptime(b, sizeof(b), 2 * 86400 + 120);
    CHECK_STR(b, " 2 days 2 minutes");
    status_apache_time(b, sizeof(b), 0);
    CHECK(strstr(b, "1970") != NULL || strstr(b, "1969") != NULL);
    CHECK(strchr(b, ',') != NULL);
}

static void test_rates(void)
{
    hd_sb_sample_t newer = sample_at(11), older = sample_at(1);
    status_window_t w;
    memset(&w, 0, sizeof(w));
    w.valid = true;
    w.span_s = 10;
    w.work.requests = newer.work.requests - older.work.requests;
    w.work.sys[HD_SYS_READ] = 200;
    w.work.sys[HD_SYS_WRITE] = 100;
    w.kernel.vcs = 50;
    w.kernel.utime_us = 1000;
    w.system.cpu[0] = 25;
    w.system.cpu[3] = 75;
    status_rates_t r;
    status_rates(&w, &r);
    CHECK(r.valid && r.per_request && r.has_system);
    CHECK(r.req_per_s == 10.0);
    CHECK(r.syscalls == 3.0);
    CHECK(r.sys[HD_SYS_READ] == 2.0);
    CHECK(r.cs_voluntary == 0.5);
    CHECK(r.cpu_us == 10.0);
    CHECK(r.sys_cpu_pct[0] == 25.0);
    w.work.requests = 0;
    status_rates(&w, &r);
    CHECK(r.valid && !r.per_request);
    CHECK(status_series_value(SERIES_REQ_PER_S, &newer, &older) == 10.0);
    CHECK(status_series_value(SERIES_SYSCALLS_PER_REQ, &newer, &older) == 2.0);
    CHECK(status_series_value(SERIES_SYSTEM_CS_PER_S, &newer, &older) == 1000.0);

    uint64_t lat[HD_SB_LAT_BUCKETS] = {0};
    CHECK(status_latency_quantile(lat, 0.5) == 0);
    lat[hd_sb_latency_bucket(100)] = 10; /* (64, 128] */
    double q = status_latency_quantile(lat, 0.5);
    CHECK(q > 64 && q <= 128);
}

static char *body_text(hd_request_t *r)
{
    size_t n = 0;
    for (hd_chain_t *l = r->body; l != NULL; l = l->next) {
        n += (size_t)(l->buf->last - l->buf->pos);
    }
    char *s = hd_palloc(r->pool, n + 1), *p = s;
    for (hd_chain_t *l = r->body; l != NULL; l = l->next) {
        memcpy(p, l->buf->pos, (size_t)(l->buf->last - l->buf->pos));
        p += l->buf->last - l->buf->pos;
    }
    *p = '\0';
    return s;
}

static void test_output(void)
{
    hd_pool_t *p = hd_pool_create();
    hd_request_t r;
    memset(&r, 0, sizeof(r));
    r.pool = p;
    status_out_t o;
    status_out_init(&o, &r);
    status_put_html(&o, "<a href=\"x\">&'</a>");
    status_puts(&o, "|");
    status_put_json_str(&o, "q\"\\\n\x01\xc3");
    status_puts(&o, "|");
    status_put_json_num(&o, 3.0);
    status_puts(&o, ",");
    status_put_json_num(&o, 0.25);
    /* more than a chunk: the text continues in the next one */
    for (int i = 0; i < 3000; i++) {
        status_printf(&o, "%04d", i % 10000);
    }
    status_out_finish(&o);
    char *s = body_text(&r);
    const char *want = "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;|"
                       "\"q\\\"\\\\\\u000a\\u0001\\u00c3\"|3,0.25";
    CHECK(strncmp(s, want, strlen(want)) == 0);
    CHECK_INT(strlen(s), strlen(want) + 12000);
    CHECK(strncmp(s + strlen(want) + 4 * 2999, "2999", 4) == 0);
    CHECK(r.body != NULL && r.body->next != NULL);
    hd_pool_destroy(p);
}

static hd_mutex_t lock_m = HD_MUTEX_INIT;
static hd_cond_t lock_c = HD_COND_INIT;
static long lock_total;
static int lock_ready;
static uint64_t waiter_calls;

static void *adder(void *arg)
{
    for (int i = 0; i < 20000; i++) {
        hd_mutex_lock(&lock_m);
        lock_total++;
        hd_mutex_unlock(&lock_m);
    }
    return NULL;
}

static void *waiter(void *arg)
{
    uint64_t before = hd_sys_counters[HD_SYS_OTHER];
    hd_mutex_lock(&lock_m);
    while (!lock_ready) {
        hd_cond_wait_until(&lock_c, &lock_m, NULL);
    }
    hd_mutex_unlock(&lock_m);
    waiter_calls = hd_sys_counters[HD_SYS_OTHER] - before;
    return NULL;
}

static void test_counted_locks(void)
{
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        pthread_create(&t[i], NULL, adder, NULL);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
    }
    CHECK_INT(lock_total, 80000);
    CHECK(hd_mutex_trylock(&lock_m));
    CHECK(!hd_mutex_trylock(&lock_m));
    hd_mutex_unlock(&lock_m);

    /* a waiter sleeps in the kernel, and that futex call is counted */
    pthread_t w;
    pthread_create(&w, NULL, waiter, NULL);
    hd_poll(NULL, 0, 30);
    hd_mutex_lock(&lock_m);
    lock_ready = 1;
    hd_cond_signal(&lock_c);
    hd_mutex_unlock(&lock_m);
    pthread_join(w, NULL);
#ifndef HD_NO_COUNTERS
    CHECK(waiter_calls >= 1);
#endif

    struct timespec start, until, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    until = start;
    until.tv_nsec += 30 * 1000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    hd_mutex_lock(&lock_m);
    int rv = hd_cond_wait_until(&lock_c, &lock_m, &until);
    hd_mutex_unlock(&lock_m);
    clock_gettime(CLOCK_MONOTONIC, &end);
    CHECK_INT(rv, ETIMEDOUT);
    long ms = (end.tv_sec - start.tv_sec) * 1000 + (end.tv_nsec - start.tv_nsec) / 1000000;
    CHECK(ms >= 29);
    hd_cond_broadcast(&lock_c); /* no waiter: no system call, no harm */
}

int main(void)
{
    RUN(test_parse_stat);
    RUN(test_parse_status_schedstat);
    RUN(test_parse_system);
    RUN(test_latency_buckets);
    RUN(test_scoreboard_counts);
    RUN(test_census_and_letters);
    RUN(test_ring);
    RUN(test_growth_keeps_totals);
    RUN(test_sampler_reads_this_process);
    RUN(test_apache_formats);
    RUN(test_rates);
    RUN(test_output);
    RUN(test_counted_locks);
    TEST_DONE();
}
