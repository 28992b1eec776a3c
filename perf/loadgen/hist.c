/*
 * The log-linear histogram (see hist.h). Bucket i below 256 holds exactly the
 * value i; above, bucket shift * 128 + (v >> shift) holds the 2^shift values
 * that share their top 8 bits, so a bucket's width is under 1/128 of its values.
 */
#include "hist.h"

#include <string.h>

_Static_assert(LG_HIST_BUCKETS == (LG_HIST_MAX_VALUE >> 19) + 19 * LG_HIST_SUB + 1,
               "LG_HIST_BUCKETS must match lg_hist_index(LG_HIST_MAX_VALUE) + 1");

void lg_hist_init(lg_hist_t *h)
{
    memset(h, 0, sizeof(*h));
    h->min = UINT64_MAX;
}

uint64_t lg_hist_low(size_t idx)
{
    unsigned shift;

    if (idx < 2 * LG_HIST_SUB)
        return idx;
    shift = (unsigned)(idx / LG_HIST_SUB) - 1;
    return (uint64_t)(idx - (size_t)shift * LG_HIST_SUB) << shift;
}

uint64_t lg_hist_high(size_t idx)
{
    unsigned shift;

    if (idx < 2 * LG_HIST_SUB)
        return idx;
    shift = (unsigned)(idx / LG_HIST_SUB) - 1;
    return ((uint64_t)(idx - (size_t)shift * LG_HIST_SUB + 1) << shift) - 1;
}

void lg_hist_merge(lg_hist_t *dst, const lg_hist_t *src)
{
    size_t i;

    if (src->total == 0)
        return;
    for (i = 0; i < LG_HIST_BUCKETS; i++)
        dst->counts[i] += src->counts[i];
    dst->total += src->total;
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
    dst->sum += src->sum;
    dst->sumsq += src->sumsq;
}

uint64_t lg_hist_percentile(const lg_hist_t *h, double pct)
{
    uint64_t rank, seen = 0, v;
    double want;
    size_t i;

    if (h->total == 0)
        return 0;
    if (pct <= 0)
        return h->min;
    if (pct >= 100)
        return h->max;
    /* the smallest rank that has at least pct% of the values at or below it */
    want = pct / 100.0 * (double)h->total;
    rank = (uint64_t)want;
    if ((double)rank < want || rank == 0)
        rank++;
    for (i = 0; i < LG_HIST_BUCKETS; i++) {
        seen += h->counts[i];
        if (seen >= rank)
            break;
    }
    if (i == LG_HIST_BUCKETS)
        return h->max;
    v = lg_hist_high(i);
    if (v > h->max)
        v = h->max;
    if (v < h->min)
        v = h->min;
    return v;
}

/* Newton's iteration, so that neither the tool nor its test needs libm. */
static double root(double x)
{
    double r = x > 1 ? x : 1;
    int i;

    for (i = 0; i < 200; i++) {
        double next = 0.5 * (r + x / r);
        if (next >= r)
            break;
        r = next;
    }
    return r;
}

double lg_hist_mean(const lg_hist_t *h)
{
    return h->total ? h->sum / (double)h->total : 0.0;
}

double lg_hist_stddev(const lg_hist_t *h)
{
    double mean, var;

    if (h->total == 0)
        return 0.0;
    mean = h->sum / (double)h->total;
    var = h->sumsq / (double)h->total - mean * mean;
    return var > 0 ? root(var) : 0.0;
}
