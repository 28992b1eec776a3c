/*
 * The two reports: a summary for people on a terminal, and JSON holding
 * every figure for scripts (perf/ harnesses merge the histogram buckets
 * across rounds, so the buckets are given with their bounds).
 */
#include "loadgen.h"

#include <stdlib.h>
#include <string.h>

/* The percentiles reported everywhere, and their JSON names. */
static const double pcts[] = { 50, 90, 99, 99.9 };
static const char *const pct_names[] = { "p50", "p90", "p99", "p99_9" };
#define NPCTS (sizeof(pcts) / sizeof(pcts[0]))

typedef struct {
    const lg_config_t *cfg;
    const lg_stats_t *st;
    size_t *order;      /* URLs, slowest on average first */
    double elapsed;     /* seconds */
    double rps;
    bool achieved;      /* open loop: the intended rate was kept */
} view_t;

static double avg_ms(uint64_t sum_ns, uint64_t n)
{
    return n ? (double)sum_ns / (double)n / 1e6 : 0.0;
}

static double avg_us(uint64_t sum_ns, uint64_t n)
{
    return n ? (double)sum_ns / (double)n / 1e3 : 0.0;
}

static uint64_t errors_of(const lg_url_stats_t *u)
{
    uint64_t n = 0;

    for (int i = 0; i < LG_ERR_NKINDS; i++)
        n += u->errors[i];
    return n;
}

static const lg_stats_t *sort_st;

static int slower_first(const void *a, const void *b)
{
    const lg_url_stats_t *x = &sort_st->urls[*(const size_t *)a];
    const lg_url_stats_t *y = &sort_st->urls[*(const size_t *)b];
    double ax = x->responses ? (double)x->sum_total / (double)x->responses : -1;
    double ay = y->responses ? (double)y->sum_total / (double)y->responses : -1;

    if (ax != ay)
        return ax < ay ? 1 : -1;
    return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static void make_view(view_t *v, const lg_config_t *cfg, const lg_stats_t *st)
{
    v->cfg = cfg;
    v->st = st;
    v->elapsed = (double)st->elapsed_ns / 1e9;
    v->rps = v->elapsed > 0 ? (double)st->total.responses / v->elapsed : 0.0;
    v->achieved = cfg->rate > 0 && v->rps >= 0.99 * cfg->rate &&
                  st->behind * 100 <= st->scheduled;
    v->order = malloc((cfg->nurls ? cfg->nurls : 1) * sizeof(*v->order));
    if (v->order == NULL)
        exit(2);
    for (size_t i = 0; i < cfg->nurls; i++)
        v->order[i] = i;
    sort_st = st;
    qsort(v->order, cfg->nurls, sizeof(*v->order), slower_first);
}

/* ---- for people ---------------------------------------------------------- */

static void fmt_us(char *buf, size_t n, uint64_t us)
{
    if (us < 1000)
        snprintf(buf, n, "%llu us", (unsigned long long)us);
    else if (us < 1000000)
        snprintf(buf, n, "%.2f ms", (double)us / 1e3);
    else
        snprintf(buf, n, "%.2f s", (double)us / 1e6);
}

static void text_latency(FILE *f, const lg_hist_t *h)
{
    char b[32];

    if (h->total == 0) {
        fprintf(f, "  latency     none (no responses)\n");
        return;
    }
    fmt_us(b, sizeof(b), h->min);
    fprintf(f, "  latency     min %s", b);
    fmt_us(b, sizeof(b), (uint64_t)lg_hist_mean(h));
    fprintf(f, ", mean %s", b);
    fmt_us(b, sizeof(b), (uint64_t)lg_hist_stddev(h));
    fprintf(f, " (sd %s)\n             ", b);
    for (size_t i = 0; i < NPCTS; i++) {
        fmt_us(b, sizeof(b), lg_hist_percentile(h, pcts[i]));
        fprintf(f, " p%g %s,", pcts[i], b);
    }
    fmt_us(b, sizeof(b), h->max);
    fprintf(f, " max %s\n", b);
}

static void text_timeline(FILE *f, const lg_stats_t *st, double elapsed)
{
    size_t n = (size_t)elapsed + 1, shown;

    if (n > st->nseconds)
        n = st->nseconds;
    shown = n > 20 ? 20 : n;
    fprintf(f, "  by second   responses:");
    for (size_t i = 0; i < shown; i++)
        fprintf(f, " %llu", (unsigned long long)st->timeline[i].responses);
    fprintf(f, "%s\n              mean ms:", n > shown ? " ..." : "");
    for (size_t i = 0; i < shown; i++) {
        const lg_second_t *s = &st->timeline[i];

        fprintf(f, " %.1f", s->responses ? (double)s->sum_us / (double)s->responses / 1e3 : 0.0);
    }
    fprintf(f, "%s\n", n > shown ? " ..." : "");
}

static void text_urls(FILE *f, const view_t *v)
{
    const lg_config_t *cfg = v->cfg;
    size_t shown = cfg->nurls > 40 ? 40 : cfg->nurls, rank = 0;

    fprintf(f, "\n  per URL, slowest on average first (* the %d slowest); averages in ms from\n"
               "  the start of the request to: connected, request written, first byte (read),\n"
               "  complete (close); total is from the intended send time\n",
            LG_SLOWEST);
    fprintf(f, "    %9s %8s %7s %6s %6s %8s %8s %8s %8s %8s %8s %8s  %s\n", "requests", "found",
            "missed", "other", "errors", "connect", "write", "read", "close", "total", "p50",
            "p99", "path");
    for (size_t k = 0; k < shown; k++) {
        const lg_url_stats_t *u = &v->st->urls[v->order[k]];
        uint64_t n = u->responses;
        bool slow = n > 0 && rank < LG_SLOWEST;

        if (slow)
            rank++;
        fprintf(f, "  %c %9llu %8llu %7llu %6llu %6llu %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f "
                   "%8.3f  %s\n",
                slow ? '*' : ' ', (unsigned long long)u->requests,
                (unsigned long long)u->found, (unsigned long long)u->missed,
                (unsigned long long)u->other, (unsigned long long)errors_of(u),
                avg_ms(u->sum_connect, n), avg_ms(u->sum_write, n), avg_ms(u->sum_read, n),
                avg_ms(u->sum_close, n), avg_ms(u->sum_total, n),
                u->hist ? (double)lg_hist_percentile(u->hist, 50) / 1e3 : 0.0,
                u->hist ? (double)lg_hist_percentile(u->hist, 99) / 1e3 : 0.0,
                cfg->urls[v->order[k]].path);
    }
    if (shown < cfg->nurls)
        fprintf(f, "    ... %zu more URLs (see --json)\n", cfg->nurls - shown);
}

void lg_report_text(FILE *f, const lg_config_t *cfg, const lg_stats_t *st)
{
    const lg_url_stats_t *t = &st->total;
    static const char *const srcs[] = { "argument", "-u", "--docroot" };
    view_t v;
    uint64_t nsys = 0, errs = errors_of(t);

    make_view(&v, cfg, st);
    fprintf(f, "hd_loadgen %s  %s\n", LG_VERSION, cfg->target);
    fprintf(f, "  %s, %d connection%s, %d thread%s, %s, %g s", cfg->rate > 0 ? "open loop" :
            "closed loop", cfg->connections, cfg->connections == 1 ? "" : "s", cfg->threads,
            cfg->threads == 1 ? "" : "s", cfg->keepalive ? "keep-alive" : "no keep-alive",
            cfg->duration);
    if (cfg->max_requests)
        fprintf(f, " or %llu requests", (unsigned long long)cfg->max_requests);
    fprintf(f, ", timeout %g s, %zu URL%s (%s)\n\n", cfg->timeout, cfg->nurls,
            cfg->nurls == 1 ? "" : "s", srcs[cfg->url_source]);

    fprintf(f, "  requests    %llu in %.2f s: %.1f responses/s, %.2f MiB/s\n",
            (unsigned long long)t->requests, v.elapsed, v.rps,
            v.elapsed > 0 ? (double)t->bytes / v.elapsed / 1048576.0 : 0.0);
    fprintf(f, "  responses   %llu: found (2xx) %llu, missed (404) %llu, other %llu\n"
               "              1xx %llu, 2xx %llu, 3xx %llu, 4xx %llu, 5xx %llu\n",
            (unsigned long long)t->responses, (unsigned long long)t->found,
            (unsigned long long)t->missed, (unsigned long long)t->other,
            (unsigned long long)t->classes[1], (unsigned long long)t->classes[2],
            (unsigned long long)t->classes[3], (unsigned long long)t->classes[4],
            (unsigned long long)t->classes[5]);
    fprintf(f, "  errors      %llu:", (unsigned long long)errs);
    for (int i = 0; i < LG_ERR_NKINDS; i++)
        fprintf(f, "%s %s %llu", i ? "," : "", lg_err_names[i],
                (unsigned long long)t->errors[i]);
    fprintf(f, "\n  connections %llu opened, %llu requests retried on a new one, "
               "%llu idle ones closed by the server\n",
            (unsigned long long)st->sys[LG_SYS_CONNECT], (unsigned long long)st->reconnects,
            (unsigned long long)st->idle_closes);
    if (cfg->rate > 0) {
        fprintf(f, "  rate        intended %.1f/s, achieved %.1f/s: %s\n", cfg->rate, v.rps,
                v.achieved ? "target achieved" : "target NOT achieved");
        fprintf(f, "              %llu due, %llu sent, %llu never sent; "
                   "latest start %.3f ms after due\n",
                (unsigned long long)st->scheduled, (unsigned long long)t->requests,
                (unsigned long long)st->behind, (double)st->max_wait_ns / 1e6);
    }
    text_latency(f, &st->hist);
    if (cfg->rate > 0)
        text_timeline(f, st, v.elapsed);
    for (int i = 0; i < LG_SYS_NKINDS; i++)
        nsys += st->sys[i];
    if (t->requests)
        fprintf(f, "  client      %.2f system calls per request (read %.2f, write %.2f, "
                   "epoll_wait %.2f)\n",
                (double)nsys / (double)t->requests,
                (double)st->sys[LG_SYS_READ] / (double)t->requests,
                (double)st->sys[LG_SYS_WRITE] / (double)t->requests,
                (double)st->sys[LG_SYS_EPOLL_WAIT] / (double)t->requests);
    text_urls(f, &v);
    free(v.order);
}

/* ---- for scripts ------------------------------------------------------------ */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;

        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void json_latency(FILE *f, const lg_hist_t *h)
{
    fprintf(f, "{\"count\": %llu, \"min\": %llu, \"mean\": %.3f, \"stddev\": %.3f",
            (unsigned long long)h->total, (unsigned long long)(h->total ? h->min : 0),
            lg_hist_mean(h), lg_hist_stddev(h));
    for (size_t i = 0; i < NPCTS; i++)
        fprintf(f, ", \"%s\": %llu", pct_names[i],
                (unsigned long long)lg_hist_percentile(h, pcts[i]));
    fprintf(f, ", \"max\": %llu}", (unsigned long long)h->max);
}

/* Non-empty buckets as [index, lowest us, highest us, count]. */
static void json_buckets(FILE *f, const lg_hist_t *h)
{
    bool first = true;

    fputc('[', f);
    for (size_t i = 0; h && i < LG_HIST_BUCKETS; i++) {
        if (h->counts[i] == 0)
            continue;
        fprintf(f, "%s[%zu, %llu, %llu, %llu]", first ? "" : ", ", i,
                (unsigned long long)lg_hist_low(i), (unsigned long long)lg_hist_high(i),
                (unsigned long long)h->counts[i]);
        first = false;
    }
    fputc(']', f);
}

static void json_counts(FILE *f, const lg_url_stats_t *u)
{
    fprintf(f, "\"requests\": %llu, \"responses\": %llu, \"hits\": %llu, \"found\": %llu, "
               "\"missed\": %llu, \"other\": %llu, ",
            (unsigned long long)u->requests, (unsigned long long)u->responses,
            (unsigned long long)u->responses, (unsigned long long)u->found,
            (unsigned long long)u->missed, (unsigned long long)u->other);
    fprintf(f, "\"status_classes\": {\"1xx\": %llu, \"2xx\": %llu, \"3xx\": %llu, "
               "\"4xx\": %llu, \"5xx\": %llu, \"invalid\": %llu}, ",
            (unsigned long long)u->classes[1], (unsigned long long)u->classes[2],
            (unsigned long long)u->classes[3], (unsigned long long)u->classes[4],
            (unsigned long long)u->classes[5], (unsigned long long)u->classes[0]);
    fprintf(f, "\"errors\": {\"total\": %llu", (unsigned long long)errors_of(u));
    for (int i = 0; i < LG_ERR_NKINDS; i++)
        fprintf(f, ", \"%s\": %llu", lg_err_names[i], (unsigned long long)u->errors[i]);
    fprintf(f, "}, \"connects\": %llu, \"bytes\": %llu, ", (unsigned long long)u->connects,
            (unsigned long long)u->bytes);
    fprintf(f, "\"avg_us\": {\"wait\": %.3f, \"connect\": %.3f, \"write\": %.3f, "
               "\"read\": %.3f, \"close\": %.3f, \"total\": %.3f}",
            avg_us(u->sum_wait, u->responses), avg_us(u->sum_connect, u->responses),
            avg_us(u->sum_write, u->responses), avg_us(u->sum_read, u->responses),
            avg_us(u->sum_close, u->responses), avg_us(u->sum_total, u->responses));
}

static void json_config(FILE *f, const lg_config_t *cfg)
{
    static const char *const srcs[] = { "argument", "file", "docroot" };

    fprintf(f, "  \"config\": {\"target\": ");
    json_str(f, cfg->target);
    fprintf(f, ", \"host\": ");
    json_str(f, cfg->host);
    fprintf(f, ", \"mode\": \"%s\", \"rate\": ", cfg->rate > 0 ? "open" : "closed");
    if (cfg->rate > 0)
        fprintf(f, "%.3f", cfg->rate);
    else
        fputs("null", f);
    fprintf(f, ", \"connections\": %d, \"threads\": %d, \"keepalive\": %s, "
               "\"duration_s\": %.3f, \"max_requests\": ",
            cfg->connections, cfg->threads, cfg->keepalive ? "true" : "false", cfg->duration);
    if (cfg->max_requests)
        fprintf(f, "%llu", (unsigned long long)cfg->max_requests);
    else
        fputs("null", f);
    fprintf(f, ", \"timeout_s\": %.3f, \"hard_limit_s\": %.3f, \"seed\": %llu, "
               "\"url_source\": \"%s\", \"url_file\": ",
            cfg->timeout, cfg->duration + LG_HARD_EXTRA_S, (unsigned long long)cfg->seed,
            srcs[cfg->url_source]);
    if (cfg->url_file)
        json_str(f, cfg->url_file);
    else
        fputs("null", f);
    fputs(", \"docroot\": ", f);
    if (cfg->docroot)
        json_str(f, cfg->docroot);
    else
        fputs("null", f);
    fputs(", \"headers\": [", f);
    for (size_t i = 0; i < cfg->nheaders; i++) {
        if (i)
            fputs(", ", f);
        json_str(f, cfg->headers[i]);
    }
    fputs("],\n    \"urls\": [", f);
    for (size_t i = 0; i < cfg->nurls; i++) {
        fputs(i ? ", {\"path\": " : "{\"path\": ", f);
        json_str(f, cfg->urls[i].path);
        fprintf(f, ", \"weight\": %.15g}", cfg->urls[i].weight);
    }
    fputs("]},\n", f);
}

int lg_report_json(FILE *f, const lg_config_t *cfg, const lg_stats_t *st)
{
    const lg_url_stats_t *t = &st->total;
    view_t v;
    size_t rank = 0, nsec;
    uint64_t nsys = 0;

    make_view(&v, cfg, st);
    fprintf(f, "{\n  \"tool\": \"hd_loadgen\", \"version\": \"%s\",\n", LG_VERSION);
    json_config(f, cfg);
    fprintf(f, "  \"elapsed_s\": %.6f, \"run_s\": %.6f,\n", v.elapsed,
            (double)st->run_ns / 1e9);
    fprintf(f, "  \"totals\": {\"rps\": %.3f, \"bytes_per_s\": %.1f, \"reconnects\": %llu, "
               "\"idle_closes\": %llu, \"connections_opened\": %llu, ",
            v.rps, v.elapsed > 0 ? (double)t->bytes / v.elapsed : 0.0,
            (unsigned long long)st->reconnects, (unsigned long long)st->idle_closes,
            (unsigned long long)st->sys[LG_SYS_CONNECT]);
    json_counts(f, t);
    fputs("},\n", f);
    fprintf(f, "  \"status\": {\"found\": %llu, \"missed\": %llu, \"other\": %llu},\n",
            (unsigned long long)t->found, (unsigned long long)t->missed,
            (unsigned long long)t->other);
    fprintf(f, "  \"errors\": {\"total\": %llu", (unsigned long long)errors_of(t));
    for (int i = 0; i < LG_ERR_NKINDS; i++)
        fprintf(f, ", \"%s\": %llu", lg_err_names[i], (unsigned long long)t->errors[i]);
    fputs("},\n", f);

    fprintf(f, "  \"rate\": {\"mode\": \"%s\", \"intended\": ", cfg->rate > 0 ? "open" : "closed");
    if (cfg->rate > 0)
        fprintf(f, "%.3f, \"achieved\": %.3f, \"target_achieved\": %s, \"scheduled\": %llu, "
                   "\"sent\": %llu, \"behind\": %llu, \"max_start_delay_us\": %.3f}",
                cfg->rate, v.rps, v.achieved ? "true" : "false",
                (unsigned long long)st->scheduled, (unsigned long long)t->requests,
                (unsigned long long)st->behind, (double)st->max_wait_ns / 1e3);
    else
        fprintf(f, "null, \"achieved\": %.3f, \"target_achieved\": null}", v.rps);
    fputs(",\n  \"latency_us\": ", f);
    json_latency(f, &st->hist);
    fprintf(f, ",\n  \"histogram\": {\"unit\": \"us\", \"scheme\": \"log-linear\", "
               "\"sub_bucket_bits\": %d, \"max_value\": %llu, \"nbuckets\": %d, "
               "\"buckets\": ",
            LG_HIST_SUB_BITS, LG_HIST_MAX_VALUE, LG_HIST_BUCKETS);
    json_buckets(f, &st->hist);
    fputs("},\n  \"timeline\": [", f);
    nsec = (size_t)v.elapsed + 1;
    if (nsec > st->nseconds)
        nsec = st->nseconds;
    for (size_t i = 0; i < nsec; i++) {
        const lg_second_t *s = &st->timeline[i];

        fprintf(f, "%s{\"second\": %zu, \"responses\": %llu, \"errors\": %llu, "
                   "\"mean_us\": %.1f, \"max_us\": %llu}",
                i ? ",\n    " : "\n    ", i, (unsigned long long)s->responses,
                (unsigned long long)s->errors,
                s->responses ? (double)s->sum_us / (double)s->responses : 0.0,
                (unsigned long long)s->max_us);
    }
    fputs("],\n  \"client_syscalls\": {", f);
    for (int i = 0; i < LG_SYS_NKINDS; i++) {
        nsys += st->sys[i];
        fprintf(f, "\"%s\": %llu, ", lg_sys_names[i], (unsigned long long)st->sys[i]);
    }
    fprintf(f, "\"total\": %llu, \"per_request\": %.3f},\n", (unsigned long long)nsys,
            t->requests ? (double)nsys / (double)t->requests : 0.0);

    fputs("  \"urls\": [", f);
    for (size_t k = 0; k < cfg->nurls; k++) {
        const lg_url_stats_t *u = &st->urls[v.order[k]];
        lg_hist_t empty;

        fputs(k ? ",\n    {\"path\": " : "\n    {\"path\": ", f);
        json_str(f, cfg->urls[v.order[k]].path);
        fprintf(f, ", \"weight\": %.15g, \"slowest_rank\": ", cfg->urls[v.order[k]].weight);
        if (u->responses && rank < LG_SLOWEST)
            fprintf(f, "%zu", ++rank);
        else
            fputs("null", f);
        fputs(", ", f);
        json_counts(f, u);
        fputs(", \"latency_us\": ", f);
        if (u->hist == NULL)
            lg_hist_init(&empty);
        json_latency(f, u->hist ? u->hist : &empty);
        fputs(", \"histogram\": ", f);
        json_buckets(f, u->hist);
        fputc('}', f);
    }
    fputs("]\n}\n", f);
    free(v.order);
    return ferror(f) ? -1 : 0;
}
