/*
 * The load generator's latency histogram (perf/loadgen/hist.c): bucket
 * bounds, precision, percentiles, merging. The tool is not part of the
 * server library, so its source is included here, as h2o's unit tests do.
 */
#include "../../perf/loadgen/hist.c"
#include "test.h"

static lg_hist_t h, a, b;

static void test_bounds(void)
{
    size_t prev = 0;
    int bad_bounds = 0, bad_width = 0, bad_order = 0;

    for (uint64_t v = 0; v <= 2000000; v++) {
        size_t i = lg_hist_index(v);
        uint64_t lo = lg_hist_low(i), hi = lg_hist_high(i);

        bad_bounds += lo > v || hi < v;
        /* two significant digits: a bucket is narrower than 1% of its values */
        bad_width += (hi - lo + 1) * 100 > (lo > 100 ? lo : 100);
        bad_order += i < prev;
        prev = i;
    }
    CHECK_INT(bad_bounds, 0);
    CHECK_INT(bad_width, 0);
    CHECK_INT(bad_order, 0);
    /* exact below 256 */
    CHECK_INT(lg_hist_index(0), 0);
    CHECK_INT(lg_hist_index(255), 255);
    CHECK_INT(lg_hist_low(255), 255);
    CHECK_INT(lg_hist_high(255), 255);
    CHECK_INT(lg_hist_index(256), 256);
    CHECK_INT(lg_hist_high(256), 257);
    /* buckets tile the range with no gap or overlap */
    for (size_t i = 0; i + 1 < LG_HIST_BUCKETS; i++) {
        if (lg_hist_low(i + 1) != lg_hist_high(i) + 1) {
            CHECK_INT(lg_hist_low(i + 1), lg_hist_high(i) + 1);
            break;
        }
    }
    CHECK_INT(lg_hist_index(LG_HIST_MAX_VALUE), LG_HIST_BUCKETS - 1);
    CHECK_INT(lg_hist_index(LG_HIST_MAX_VALUE * 50), LG_HIST_BUCKETS - 1);
    CHECK(lg_hist_high(LG_HIST_BUCKETS - 1) >= LG_HIST_MAX_VALUE);
}

static void near(uint64_t got, uint64_t want)
{
    /* within the 1% the buckets promise */
    CHECK(got * 100 >= want * 99 && got * 100 <= want * 101);
    if (!(got * 100 >= want * 99 && got * 100 <= want * 101))
        fprintf(stderr, "  got %llu, want %llu +-1%%\n", (unsigned long long)got,
                (unsigned long long)want);
}

static void test_uniform(void)
{
    lg_hist_init(&h);
    for (uint64_t v = 1; v <= 100000; v++)
        lg_hist_record(&h, v);
    CHECK_INT(h.total, 100000);
    CHECK_INT(h.min, 1);
    CHECK_INT(h.max, 100000);
    near(lg_hist_percentile(&h, 50), 50000);
    near(lg_hist_percentile(&h, 90), 90000);
    near(lg_hist_percentile(&h, 99), 99000);
    near(lg_hist_percentile(&h, 99.9), 99900);
    CHECK_INT(lg_hist_percentile(&h, 100), 100000);
    CHECK_INT(lg_hist_percentile(&h, 0), 1);
    CHECK(lg_hist_mean(&h) > 50000.4 && lg_hist_mean(&h) < 50000.6);
    /* sd of 1..N is sqrt((N^2 - 1) / 12) = 28867.5 */
    CHECK(lg_hist_stddev(&h) > 28867 && lg_hist_stddev(&h) < 28868);
    /* percentiles never decrease */
    for (double p = 1; p < 100; p += 1)
        CHECK(lg_hist_percentile(&h, p) <= lg_hist_percentile(&h, p + 0.5));
}

static void test_small_exact(void)
{
    lg_hist_init(&h);
    lg_hist_record(&h, 10);
    lg_hist_record(&h, 20);
    lg_hist_record(&h, 30);
    lg_hist_record(&h, 40);
    CHECK_INT(lg_hist_percentile(&h, 25), 10);
    CHECK_INT(lg_hist_percentile(&h, 50), 20);
    CHECK_INT(lg_hist_percentile(&h, 50.1), 30);
    CHECK_INT(lg_hist_percentile(&h, 75), 30);
    CHECK_INT(lg_hist_percentile(&h, 99.9), 40);
    CHECK_INT(lg_hist_percentile(&h, 100), 40);
}

static void test_skewed(void)
{
    /* 990 fast answers and 10 slow ones: p99 fast, p99.9 slow */
    lg_hist_init(&h);
    for (int i = 0; i < 990; i++)
        lg_hist_record(&h, 300);
    for (int i = 0; i < 10; i++)
        lg_hist_record(&h, 2000000);
    near(lg_hist_percentile(&h, 50), 300);
    near(lg_hist_percentile(&h, 99), 300);
    near(lg_hist_percentile(&h, 99.1), 2000000);
    CHECK_INT(lg_hist_percentile(&h, 99.9), 2000000);
    CHECK_INT(h.max, 2000000);
}

static void test_merge(void)
{
    lg_hist_init(&h);
    lg_hist_init(&a);
    lg_hist_init(&b);
    for (uint64_t v = 1; v <= 50000; v++) {
        uint64_t x = v * 7919 % 3000000 + 1;

        lg_hist_record(&h, x);
        lg_hist_record(v % 3 ? &a : &b, x);
    }
    lg_hist_merge(&a, &b);
    CHECK_INT(a.total, h.total);
    CHECK_INT(a.min, h.min);
    CHECK_INT(a.max, h.max);
    CHECK(memcmp(a.counts, h.counts, sizeof(h.counts)) == 0);
    CHECK_INT(lg_hist_percentile(&a, 99.9), lg_hist_percentile(&h, 99.9));
    CHECK_INT(lg_hist_percentile(&a, 50), lg_hist_percentile(&h, 50));
    /* merging an empty one changes nothing, not even min */
    lg_hist_init(&b);
    lg_hist_merge(&a, &b);
    CHECK_INT(a.total, h.total);
    CHECK_INT(a.min, h.min);
}

static void test_empty_and_clamped(void)
{
    lg_hist_init(&h);
    CHECK_INT(lg_hist_percentile(&h, 50), 0);
    CHECK_INT(lg_hist_percentile(&h, 100), 0);
    CHECK(lg_hist_mean(&h) == 0.0);
    CHECK(lg_hist_stddev(&h) == 0.0);

    /* beyond 100 s: counted in the last bucket, the exact max kept */
    lg_hist_record(&h, 250000000);
    CHECK_INT(h.counts[LG_HIST_BUCKETS - 1], 1);
    CHECK_INT(h.max, 250000000);
    CHECK_INT(lg_hist_percentile(&h, 100), 250000000);
    CHECK(lg_hist_percentile(&h, 50) >= LG_HIST_MAX_VALUE);

    lg_hist_init(&h);
    lg_hist_record(&h, 1);
    lg_hist_record(&h, 3);
    CHECK(lg_hist_stddev(&h) > 0.999 && lg_hist_stddev(&h) < 1.001);
}

int main(void)
{
    RUN(test_bounds);
    RUN(test_uniform);
    RUN(test_small_exact);
    RUN(test_skewed);
    RUN(test_merge);
    RUN(test_empty_and_clamped);
    TEST_DONE();
}
