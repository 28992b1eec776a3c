/*
 * A log-linear latency histogram in the manner of HdrHistogram: values are
 * exact below 256 and keep 128 sub-buckets per power of two above, so any
 * recorded value is known to better than 1% (two significant digits) over
 * the whole range 1 us .. 100 s, in a fixed array of counts. Percentiles come
 * from the counts, never from stored samples, and two histograms merge by
 * adding their counts, so a harness can combine rounds or threads exactly.
 */
#ifndef LG_HIST_H
#define LG_HIST_H

#include <stddef.h>
#include <stdint.h>

/** log2 of the sub-buckets per power of two (128: 2 significant digits). */
#define LG_HIST_SUB_BITS 7
/** Sub-buckets per power of two. */
#define LG_HIST_SUB (1u << LG_HIST_SUB_BITS)
/** The largest value kept apart from others (100 s in us); larger ones are clamped. */
#define LG_HIST_MAX_VALUE 100000000ull
/** Number of buckets: lg_hist_index(LG_HIST_MAX_VALUE) + 1. */
#define LG_HIST_BUCKETS 2623

/** A histogram of values (microseconds, by convention). */
typedef struct {
    uint64_t counts[LG_HIST_BUCKETS]; /**< count per bucket */
    uint64_t total;                   /**< values recorded */
    uint64_t min;                     /**< smallest value recorded, exact (UINT64_MAX: none) */
    uint64_t max;                     /**< largest value recorded, exact, even when clamped */
    double sum;                       /**< sum of the values, for the mean */
    double sumsq;                     /**< sum of their squares, for the deviation */
} lg_hist_t;

/** Empties @p h. */
void lg_hist_init(lg_hist_t *h);

/** The bucket that holds value @p v (values above LG_HIST_MAX_VALUE share the last). */
static inline size_t lg_hist_index(uint64_t v)
{
    unsigned shift;

    if (v > LG_HIST_MAX_VALUE)
        v = LG_HIST_MAX_VALUE;
    if (v < 2 * LG_HIST_SUB)
        return (size_t)v;
    shift = (unsigned)(63 - __builtin_clzll(v)) - LG_HIST_SUB_BITS;
    return (size_t)shift * LG_HIST_SUB + (size_t)(v >> shift);
}

/** The smallest value that falls in bucket @p idx. */
uint64_t lg_hist_low(size_t idx);

/** The largest value that falls in bucket @p idx. */
uint64_t lg_hist_high(size_t idx);

/** Adds one value @p v to @p h. */
static inline void lg_hist_record(lg_hist_t *h, uint64_t v)
{
    h->counts[lg_hist_index(v)]++;
    h->total++;
    if (v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
    h->sum += (double)v;
    h->sumsq += (double)v * (double)v;
}

/** Adds every count of @p src to @p dst. */
void lg_hist_merge(lg_hist_t *dst, const lg_hist_t *src);

/**
 * The value at percentile @p pct (0..100): the highest value equivalent to
 * the bucket holding that rank, kept within the exact min and max. 0 when empty.
 */
uint64_t lg_hist_percentile(const lg_hist_t *h, double pct);

/** The mean of the recorded values (0 when empty). */
double lg_hist_mean(const lg_hist_t *h);

/** The population standard deviation of the recorded values (0 when empty). */
double lg_hist_stddev(const lg_hist_t *h);

#endif
