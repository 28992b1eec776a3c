/*
 * hd_loadgen: the command line, the threads and the merge of their figures.
 * See htdocs/manual/loadgen.html for how to use it.
 */
#include "loadgen.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define MAX_THREADS 256
#define MAX_CONNECTIONS 100000

const char *const lg_err_names[LG_ERR_NKINDS] = {
    "connect", "write", "read", "timeout", "parse", "aborted"
};

const char *const lg_sys_names[LG_SYS_NKINDS] = {
    "read", "write", "epoll_wait", "epoll_ctl", "socket", "connect", "close", "other"
};

volatile int lg_stop;

uint64_t lg_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void lg_usage(FILE *f)
{
    fputs("Usage: hd_loadgen [options] http://127.0.0.1:PORT[/path]\n"
          "Loads an HTTP/1.1 server on a loopback address and reports throughput and\n"
          "latency: overall, per status class, per URL.\n"
          "\n"
          "  -c, --connections N   connections in all (default 10)\n"
          "  -t, --threads N       threads, each with its own share of connections (default 1)\n"
          "  -d, --duration T      how long to send: 10, 10s, 500ms, 2m (default 10s)\n"
          "  -n, --requests N      stop after N requests (whichever of -d and -n comes first)\n"
          "  -R, --rate R          open loop: R requests/s in all, latency from the intended\n"
          "                        send time (default: closed loop)\n"
          "  -T, --timeout T       time allowed per request (default 5s)\n"
          "  -u, --urls FILE       URL list: lines \"weight /path\", \"/path weight\" or\n"
          "                        \"/path\", # comments\n"
          "      --docroot DIR     the server's DocumentRoot: load every .html/.htm file under\n"
          "                        DIR + the URL's path (e.g. --docroot htdocs .../manual/)\n"
          "      --no-keepalive    a new connection per request (Connection: close)\n"
          "  -H, --header 'N: V'   add a request header (repeatable)\n"
          "      --json FILE       write every figure as JSON to FILE (\"-\": stdout, and the\n"
          "                        summary goes to stderr)\n"
          "      --seed N          seed for the choice of URLs (default 1)\n"
          "  -q, --quiet           no summary\n"
          "  -h, --help            this text\n"
          "\n"
          "A run never lasts more than its duration + 5 s. Exit status: 0 when done,\n"
          "1 for bad arguments, 2 if it could not run, 3 if no request got a response.\n",
          f);
}

void lg_bad_args(const char *fmt, ...)
{
    va_list ap;

    fputs("hd_loadgen: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\n\n", stderr);
    lg_usage(stderr);
    exit(1);
}

static uint64_t parse_count(const char *opt, const char *s, uint64_t min, uint64_t max)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (*s == '-' || end == s || *end || errno || v < min || v > max)
        lg_bad_args("%s wants a whole number from %llu to %llu, not '%s'", opt,
                    (unsigned long long)min, (unsigned long long)max, s);
    return v;
}

/* "10", "10s", "250ms", "2m", "1h" in seconds. */
static double parse_seconds(const char *opt, const char *s, double max)
{
    char *end;
    double v, mult = 1;

    errno = 0;
    v = strtod(s, &end);
    if (end == s || errno || !isfinite(v))
        goto bad;
    if (strcmp(end, "ms") == 0)
        mult = 0.001;
    else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
        mult = 60;
    else if (strcmp(end, "h") == 0)
        mult = 3600;
    else if (*end && strcmp(end, "s") != 0)
        goto bad;
    v *= mult;
    if (v <= 0 || v > max)
        goto bad;
    return v;
bad:
    lg_bad_args("%s wants a time above 0 and at most %.0f s (like 10, 10s, 500ms, 2m), "
                "not '%s'", opt, max, s);
}

static void raise_fd_limit(int connections)
{
    struct rlimit rl;
    rlim_t need = (rlim_t)connections + 32;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= need)
        return;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need)
        lg_bad_args("-c %d needs %llu file descriptors, the hard limit is %llu (ulimit -Hn)",
                    connections, (unsigned long long)need, (unsigned long long)rl.rlim_max);
    rl.rlim_cur = need;
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
        lg_bad_args("-c %d needs %llu file descriptors and the limit could not be raised",
                    connections, (unsigned long long)need);
}

void lg_parse_args(lg_config_t *cfg, int argc, char **argv)
{
    enum { O_DOCROOT = 256, O_NO_KEEPALIVE, O_JSON, O_SEED };
    static const struct option longopts[] = {
        { "connections", required_argument, NULL, 'c' },
        { "threads", required_argument, NULL, 't' },
        { "duration", required_argument, NULL, 'd' },
        { "requests", required_argument, NULL, 'n' },
        { "rate", required_argument, NULL, 'R' },
        { "timeout", required_argument, NULL, 'T' },
        { "urls", required_argument, NULL, 'u' },
        { "header", required_argument, NULL, 'H' },
        { "docroot", required_argument, NULL, O_DOCROOT },
        { "no-keepalive", no_argument, NULL, O_NO_KEEPALIVE },
        { "json", required_argument, NULL, O_JSON },
        { "seed", required_argument, NULL, O_SEED },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    char err[4200];
    int opt;

    memset(cfg, 0, sizeof(*cfg));
    cfg->connections = 10;
    cfg->threads = 1;
    cfg->duration = 10;
    cfg->timeout = 5;
    cfg->keepalive = true;
    cfg->seed = 1;
    cfg->headers = calloc((size_t)argc, sizeof(*cfg->headers));
    if (cfg->headers == NULL)
        exit(2);

    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":c:t:d:n:R:T:u:H:qh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'c':
            cfg->connections = (int)parse_count("-c", optarg, 1, MAX_CONNECTIONS);
            break;
        case 't':
            cfg->threads = (int)parse_count("-t", optarg, 1, MAX_THREADS);
            break;
        case 'd':
            cfg->duration = parse_seconds("-d", optarg, 7 * 86400);
            break;
        case 'n':
            cfg->max_requests = parse_count("-n", optarg, 1, UINT64_MAX / 2);
            break;
        case 'R': {
            char *end;

            errno = 0;
            cfg->rate = strtod(optarg, &end);
            if (end == optarg || *end || errno || !isfinite(cfg->rate) || cfg->rate <= 0 ||
                cfg->rate > 1e8)
                lg_bad_args("-R wants a rate in requests/s above 0 and at most 1e8, not '%s'",
                            optarg);
            break;
        }
        case 'T':
            cfg->timeout = parse_seconds("-T", optarg, 3600);
            break;
        case 'u':
            cfg->url_file = optarg;
            break;
        case 'H':
            if (strchr(optarg, ':') == NULL || optarg[0] == ':' || strpbrk(optarg, "\r\n"))
                lg_bad_args("-H wants 'Name: value', not '%s'", optarg);
            cfg->headers[cfg->nheaders++] = optarg;
            break;
        case O_DOCROOT:
            cfg->docroot = optarg;
            break;
        case O_NO_KEEPALIVE:
            cfg->keepalive = false;
            break;
        case O_JSON:
            cfg->json_path = optarg;
            break;
        case O_SEED:
            cfg->seed = parse_count("--seed", optarg, 0, UINT64_MAX - 1);
            break;
        case 'q':
            cfg->quiet = true;
            break;
        case 'h':
            lg_usage(stdout);
            exit(0);
        case ':':
            lg_bad_args("option %s needs a value", argv[optind - 1]);
        default:
            if (optopt)
                lg_bad_args("unknown option -%c", optopt);
            lg_bad_args("unknown option %s", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        lg_bad_args("missing the target URL (http://127.0.0.1:PORT[/path])");
    if (argc - optind > 1)
        lg_bad_args("one target URL only; also got '%s'", argv[optind + 1]);
    if (cfg->threads > cfg->connections)
        lg_bad_args("-t %d threads need at least as many connections (-c %d)", cfg->threads,
                    cfg->connections);
    cfg->target = argv[optind];
    if (lg_parse_target(cfg, cfg->target, err, sizeof(err)))
        lg_bad_args("%s", err);
    if (lg_load_urls(cfg, err, sizeof(err)))
        lg_bad_args("%s", err);
    raise_fd_limit(cfg->connections);
}

void lg_stats_init(lg_stats_t *st, const lg_config_t *cfg)
{
    memset(st, 0, sizeof(*st));
    lg_hist_init(&st->hist);
    st->urls = calloc(cfg->nurls, sizeof(*st->urls));
    st->nseconds = (size_t)ceil(cfg->duration) + LG_HARD_EXTRA_S + 1;
    st->timeline = calloc(st->nseconds, sizeof(*st->timeline));
    if (st->urls == NULL || st->timeline == NULL) {
        fprintf(stderr, "hd_loadgen: out of memory\n");
        exit(2);
    }
}

static void add_url_stats(lg_url_stats_t *d, const lg_url_stats_t *s)
{
    d->requests += s->requests;
    d->responses += s->responses;
    d->found += s->found;
    d->missed += s->missed;
    d->other += s->other;
    for (int i = 0; i < 6; i++)
        d->classes[i] += s->classes[i];
    for (int i = 0; i < LG_ERR_NKINDS; i++)
        d->errors[i] += s->errors[i];
    d->connects += s->connects;
    d->bytes += s->bytes;
    d->sum_wait += s->sum_wait;
    d->sum_connect += s->sum_connect;
    d->sum_write += s->sum_write;
    d->sum_read += s->sum_read;
    d->sum_close += s->sum_close;
    d->sum_total += s->sum_total;
}

void lg_stats_merge(lg_stats_t *dst, const lg_stats_t *src, const lg_config_t *cfg)
{
    lg_hist_merge(&dst->hist, &src->hist);
    for (size_t i = 0; i < cfg->nurls; i++) {
        lg_url_stats_t *d = &dst->urls[i];
        const lg_url_stats_t *s = &src->urls[i];

        add_url_stats(d, s);
        add_url_stats(&dst->total, s);
        if (s->hist) {
            if (d->hist == NULL) {
                d->hist = malloc(sizeof(*d->hist));
                if (d->hist == NULL)
                    exit(2);
                lg_hist_init(d->hist);
            }
            lg_hist_merge(d->hist, s->hist);
        }
    }
    for (size_t i = 0; i < dst->nseconds && i < src->nseconds; i++) {
        dst->timeline[i].responses += src->timeline[i].responses;
        dst->timeline[i].errors += src->timeline[i].errors;
        dst->timeline[i].sum_us += src->timeline[i].sum_us;
        if (src->timeline[i].max_us > dst->timeline[i].max_us)
            dst->timeline[i].max_us = src->timeline[i].max_us;
    }
    dst->reconnects += src->reconnects;
    dst->idle_closes += src->idle_closes;
    dst->scheduled += src->scheduled;
    dst->behind += src->behind;
    if (src->max_wait_ns > dst->max_wait_ns)
        dst->max_wait_ns = src->max_wait_ns;
    for (int i = 0; i < LG_SYS_NKINDS; i++)
        dst->sys[i] += src->sys[i];
    if (src->elapsed_ns > dst->elapsed_ns)
        dst->elapsed_ns = src->elapsed_ns;
    if (src->run_ns > dst->run_ns)
        dst->run_ns = src->run_ns;
}

void lg_stats_free(lg_stats_t *st, const lg_config_t *cfg)
{
    for (size_t i = 0; st->urls && i < cfg->nurls; i++)
        free(st->urls[i].hist);
    free(st->urls);
    free(st->timeline);
}

static pthread_barrier_t start_line;

static void *thread_main(void *arg)
{
    lg_thread_t *t = arg;

    /* every thread starts the clock at the same t0, set once all exist */
    pthread_barrier_wait(&start_line);
    lg_thread_run(t);
    return NULL;
}

static void on_signal(int sig)
{
    (void)sig;
    lg_stop = 1;
}

int main(int argc, char **argv)
{
    lg_config_t cfg;
    lg_thread_t *th;
    pthread_t *tid;
    lg_stats_t all;
    struct sigaction sa;
    FILE *text;
    int rc = 0, nt;

    lg_parse_args(&cfg, argc, argv);
    nt = cfg.threads;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    th = calloc((size_t)nt, sizeof(*th));
    tid = calloc((size_t)nt, sizeof(*tid));
    if (th == NULL || tid == NULL)
        return 2;
    pthread_barrier_init(&start_line, NULL, (unsigned)nt + 1);
    for (int i = 0; i < nt; i++) {
        th[i].cfg = &cfg;
        th[i].index = i;
        th[i].connections = cfg.connections / nt + (i < cfg.connections % nt);
        if (cfg.max_requests) {
            th[i].max_requests = cfg.max_requests / (uint64_t)nt +
                                 ((uint64_t)i < cfg.max_requests % (uint64_t)nt);
            if (th[i].max_requests == 0)
                th[i].connections = 0;
        }
        lg_stats_init(&th[i].stats, &cfg);
        if (pthread_create(&tid[i], NULL, thread_main, &th[i]) != 0) {
            fprintf(stderr, "hd_loadgen: cannot create thread %d\n", i);
            exit(2);
        }
    }
    {
        uint64_t t0 = lg_now();

        for (int i = 0; i < nt; i++)
            th[i].t0 = t0;
    }
    pthread_barrier_wait(&start_line);

    lg_stats_init(&all, &cfg);
    for (int i = 0; i < nt; i++) {
        pthread_join(tid[i], NULL);
        if (th[i].fatal) {
            fprintf(stderr, "hd_loadgen: thread %d: %s\n", i, th[i].fatal);
            rc = 2;
        }
        lg_stats_merge(&all, &th[i].stats, &cfg);
        lg_stats_free(&th[i].stats, &cfg);
    }

    text = cfg.json_path && strcmp(cfg.json_path, "-") == 0 ? stderr : stdout;
    if (!cfg.quiet)
        lg_report_text(text, &cfg, &all);
    if (cfg.json_path) {
        bool to_stdout = strcmp(cfg.json_path, "-") == 0;
        FILE *f = to_stdout ? stdout : fopen(cfg.json_path, "w");

        if (f == NULL || lg_report_json(f, &cfg, &all) < 0 ||
            (!to_stdout && fclose(f) != 0) || (to_stdout && fflush(f) != 0)) {
            fprintf(stderr, "hd_loadgen: cannot write %s: %s\n", cfg.json_path,
                    strerror(errno));
            rc = 2;
        }
    }
    if (rc == 0 && all.total.responses == 0)
        rc = 3;
    lg_stats_free(&all, &cfg);
    lg_config_free(&cfg);
    free(th);
    free(tid);
    return rc;
}
