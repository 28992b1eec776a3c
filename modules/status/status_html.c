/*
 * The HTML status page, for a person: who the server is, what it does now
 * and what each request costs (cards, then the table over 1 s, 10 s, 60 s
 * and since start), the last ten minutes as inline SVG charts, totals, the
 * scoreboard with its legend, and one row per worker. No script, no
 * external resource: it renders the same from a file or behind a proxy.
 */
#include "status.h"

#include "pool.h"

#include <stdio.h>
#include <string.h>

#define CHART_SECONDS 600
#define CHART_W 460
#define CHART_H 150
#define PAD_L 48
#define PAD_R 10
#define PAD_T 24
#define PAD_B 22

static const char *const kind_short[HD_SYS_NKINDS] = {
    [HD_SYS_ACCEPT] = "acpt", [HD_SYS_READ] = "rd",  [HD_SYS_WRITE] = "wr",
    [HD_SYS_SENDFILE] = "sf", [HD_SYS_OPEN] = "op", [HD_SYS_STAT] = "st",
    [HD_SYS_CLOSE] = "cl",  [HD_SYS_EPOLL_WAIT] = "ew", [HD_SYS_EPOLL_CTL] = "ec",
    [HD_SYS_OTHER] = "oth",
};

static const char style[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:1.2em 2em;color:#1d2430;background:#fff}"
    "h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.15em;margin:1.4em 0 .5em;"
    "border-bottom:1px solid #d8dde6;padding-bottom:.2em}"
    ".id{color:#4a5568;margin:.2em 0}.id b{color:#1d2430}"
    ".cards{display:flex;flex-wrap:wrap;gap:.6em;margin:1em 0}"
    ".card{border:1px solid #d8dde6;border-radius:6px;padding:.5em .8em;min-width:9em}"
    ".card .v{font-size:1.6em;font-weight:600}.card .k{color:#4a5568;font-size:.85em}"
    "table{border-collapse:collapse;font-variant-numeric:tabular-nums}"
    "th,td{padding:.15em .6em;text-align:right;border-bottom:1px solid #edf0f4;"
    "white-space:nowrap}"
    ".wide{overflow-x:auto}"
    "th{background:#f3f5f8;font-weight:600}td.l,th.l{text-align:left}"
    "tr.sub td{color:#4a5568;font-size:.9em}"
    ".charts{display:flex;flex-wrap:wrap;gap:1em}"
    "svg{border:1px solid #d8dde6;border-radius:6px;background:#fbfcfd}"
    "svg text{font:11px system-ui,sans-serif;fill:#4a5568}"
    "pre.sb{font-size:15px;letter-spacing:.1em;background:#f3f5f8;padding:.5em;"
    "display:inline-block}"
    ".legend code{background:#f3f5f8;padding:0 .3em;font-weight:bold}"
    "td.req{text-align:left;font-family:monospace;max-width:28em;overflow:hidden;"
    "white-space:nowrap;text-overflow:ellipsis}"
    "footer{margin-top:2em;color:#4a5568}";

/* A number for people: 3 significant figures, grouped when large. */
static void num(char *buf, size_t size, double d)
{
    double a = d < 0 ? -d : d;
    if (a == 0) {
        snprintf(buf, size, "0");
    } else if (a >= 1e9) {
        snprintf(buf, size, "%.2fG", d / 1e9);
    } else if (a >= 1e6) {
        snprintf(buf, size, "%.2fM", d / 1e6);
    } else if (a >= 100) {
        snprintf(buf, size, "%.0f", d);
    } else if (a >= 10) {
        snprintf(buf, size, "%.1f", d);
    } else {
        snprintf(buf, size, "%.2f", d);
    }
}

static void bytes_h(char *buf, size_t size, double b)
{
    if (b < 5 * 1024) {
        snprintf(buf, size, "%.0f B", b);
    } else if (b < 1024 * 1024 * 5) {
        snprintf(buf, size, "%.1f kB", b / 1024);
    } else if (b < 1024.0 * 1024 * 1024 * 5) {
        snprintf(buf, size, "%.1f MB", b / 1024 / 1024);
    } else {
        snprintf(buf, size, "%.1f GB", b / 1024 / 1024 / 1024);
    }
}

static void us_h(char *buf, size_t size, double us)
{
    if (us < 1000) {
        snprintf(buf, size, "%.0f µs", us);
    } else if (us < 1e6) {
        snprintf(buf, size, "%.1f ms", us / 1e3);
    } else {
        snprintf(buf, size, "%.2f s", us / 1e6);
    }
}

static void card(status_out_t *o, const char *key, const char *value, const char *note)
{
    status_printf(o, "<div class=\"card\"><div class=\"v\">%s</div><div class=\"k\">%s", value,
                  key);
    if (note != NULL) {
        status_printf(o, " <small>(%s)</small>", note);
    }
    status_puts(o, "</div></div>\n");
}

static void header(status_out_t *o, const status_view_t *v)
{
    char now[96], restart[96], up[128];
    status_apache_time(now, sizeof(now), v->now.tv_sec);
    status_apache_time(restart, sizeof(restart), v->restart_time);
    status_apache_uptime(up, sizeof(up), (uint64_t)v->uptime_s);
    status_puts(o, "<h1>Server status for ");
    status_put_html(o, v->server_name);
    status_puts(o, "</h1>\n<p class=\"id\"><b>");
    status_put_html(o, status_build.version);
    status_printf(o, "</b> &middot; MPM <b>%s</b> (%s) &middot; commit <b>", v->mpm,
                  v->threaded ? "threaded" : "one worker per process");
    status_put_html(o, status_build.git_commit);
    status_puts(o, "</b> &middot; ");
    status_put_html(o, status_build.build_type);
    status_puts(o, " &middot; ");
    status_put_html(o, status_build.compiler);
    status_puts(o, " <code>");
    status_put_html(o, status_build.cflags);
    status_printf(o, "</code> &middot; built %s &middot; counters <b>%s</b></p>\n",
                  status_build.built, status_build.counters ? "on" : "compiled out");
    status_printf(o, "<p class=\"id\">Current time %s &middot; restarted %s &middot; "
                  "up%s &middot; generation %d/%d &middot; load %.2f %.2f %.2f &middot; "
                  "master pid %d &middot; ExtendedStatus %s</p>\n",
                  now, restart, up[0] ? up : " 0 seconds", v->config_generation,
                  v->mpm_generation, (double)v->system.load[0], (double)v->system.load[1],
                  (double)v->system.load[2], (int)hd_scoreboard->global->master_pid,
                  v->extended ? "On" : "Off");
}

/* The figures a person looks at first: the last 10 s if known, else since start. */
static void cards(status_out_t *o, const status_view_t *v)
{
    const status_rates_t *w = &v->rates[STATUS_W10];
    const char *note = "last 10 s";
    char b[64];
    if (!w->valid) {
        w = &v->rates[STATUS_WSTART];
        note = "since start";
    }
    status_puts(o, "<div class=\"cards\">\n");
    num(b, sizeof(b), w->req_per_s);
    card(o, "requests/s", b, note);
    if (w->per_request) {
        num(b, sizeof(b), w->syscalls);
        card(o, "syscalls/request", b, note);
        num(b, sizeof(b), w->cs_voluntary + w->cs_involuntary);
        card(o, "context switches/request", b, note);
        us_h(b, sizeof(b), w->cpu_us);
        card(o, "CPU/request", b, note);
        us_h(b, sizeof(b), w->run_delay_us);
        card(o, "run delay/request", b, note);
        num(b, sizeof(b), w->alloc_calls);
        card(o, "mallocs/request", b, note);
    } else {
        card(o, "per request", "&ndash;", "no requests yet");
    }
    snprintf(b, sizeof(b), "%d / %d", v->census.busy, v->census.idle);
    card(o, "busy / idle workers", b, NULL);
    snprintf(b, sizeof(b), "%u", v->system.procs_running);
    card(o, "run queue", b, "system");
    status_puts(o, "</div>\n");
}

typedef void (*cell_fn)(char *buf, size_t size, const status_rates_t *w, int arg);

static void rate_row(status_out_t *o, const status_view_t *v, const char *label, bool sub,
                     bool per_request, cell_fn fn, int arg)
{
    char b[64];
    status_printf(o, "<tr%s><td class=\"l\">%s</td>", sub ? " class=\"sub\"" : "", label);
    for (int i = 0; i < STATUS_NWINDOWS; i++) {
        const status_rates_t *w = &v->rates[i];
        if (!w->valid || (per_request && !w->per_request)) {
            status_puts(o, "<td>&ndash;</td>");
            continue;
        }
        fn(b, sizeof(b), w, arg);
        status_printf(o, "<td>%s</td>", b);
    }
    status_puts(o, "</tr>\n");
}

static void c_req(char *b, size_t n, const status_rates_t *w, int a)
{
    num(b, n, w->req_per_s);
}

static void c_bytes(char *b, size_t n, const status_rates_t *w, int a)
{
    bytes_h(b, n, w->bytes_per_s);
    strncat(b, "/s", n - strlen(b) - 1);
}

static void c_sys(char *b, size_t n, const status_rates_t *w, int a)
{
    num(b, n, a < 0 ? w->syscalls : w->sys[a]);
}

static void c_field(char *b, size_t n, const status_rates_t *w, int a)
{
    const double f[] = {w->cs_voluntary, w->cs_involuntary, w->timeslices, w->alloc_calls,
                        w->lock_waits};
    num(b, n, f[a]);
}

static void c_time(char *b, size_t n, const status_rates_t *w, int a)
{
    const double f[] = {w->cpu_us, w->cpu_user_us, w->cpu_system_us, w->run_delay_us,
                        w->latency_us, w->lock_wait_us};
    us_h(b, n, f[a]);
}

static void c_abytes(char *b, size_t n, const status_rates_t *w, int a)
{
    bytes_h(b, n, w->alloc_bytes);
}

static void c_system(char *b, size_t n, const status_rates_t *w, int a)
{
    if (a == 0) {
        num(b, n, w->sys_ctxt_per_s);
    } else if (a == 1) {
        num(b, n, w->sys_intr_per_s);
    } else {
        /* user+nice, system+irq+softirq, idle, iowait */
        const double f[] = {w->sys_cpu_pct[0] + w->sys_cpu_pct[1],
                            w->sys_cpu_pct[2] + w->sys_cpu_pct[5] + w->sys_cpu_pct[6],
                            w->sys_cpu_pct[3], w->sys_cpu_pct[4]};
        snprintf(b, n, "%.1f%%", f[a - 2]);
    }
}

static void rates_table(status_out_t *o, const status_view_t *v)
{
    status_puts(o, "<h2>Rates and cost per request</h2>\n<table><tr><th class=\"l\"></th>");
    for (int i = 0; i < STATUS_NWINDOWS; i++) {
        const status_rates_t *w = &v->rates[i];
        if (i == STATUS_WSTART) {
            status_puts(o, "<th>since start</th>");
        } else if (w->valid) {
            status_printf(o, "<th>last %.0f s</th>", w->span_s);
        } else {
            status_printf(o, "<th>last %s</th>", status_window_names[i]);
        }
    }
    status_puts(o, "</tr>\n");
    rate_row(o, v, "requests/s", false, false, c_req, 0);
    rate_row(o, v, "bytes/s", false, false, c_bytes, 0);
    rate_row(o, v, "syscalls/request", false, true, c_sys, -1);
    for (int k = 0; k < HD_SYS_NKINDS; k++) {
        char label[48];
        snprintf(label, sizeof(label), "&nbsp;&nbsp;%s", hd_sys_kind_names[k]);
        rate_row(o, v, label, true, true, c_sys, k);
    }
    rate_row(o, v, "voluntary cs/request", false, true, c_field, 0);
    rate_row(o, v, "involuntary cs/request", false, true, c_field, 1);
    rate_row(o, v, "CPU/request", false, true, c_time, 0);
    rate_row(o, v, "&nbsp;&nbsp;user", true, true, c_time, 1);
    rate_row(o, v, "&nbsp;&nbsp;system", true, true, c_time, 2);
    rate_row(o, v, "run delay/request", false, true, c_time, 3);
    rate_row(o, v, "timeslices/request", false, true, c_field, 2);
    rate_row(o, v, "mallocs/request", false, true, c_field, 3);
    rate_row(o, v, "malloc bytes/request", false, true, c_abytes, 0);
    rate_row(o, v, "lock waits/request", false, true, c_field, 4);
    rate_row(o, v, "mean duration", false, true, c_time, 4);
    status_puts(o, "<tr><th class=\"l\" colspan=\"5\">system</th></tr>\n");
    static const char *const sys_rows[] = {"context switches/s", "interrupts/s", "CPU user",
                                           "CPU system", "CPU idle", "CPU iowait"};
    for (int i = 0; i < 6; i++) {
        status_printf(o, "<tr><td class=\"l\">%s</td>", sys_rows[i]);
        for (int w = 0; w < STATUS_NWINDOWS; w++) {
            char b[64];
            if (!v->rates[w].has_system) {
                status_puts(o, "<td>&ndash;</td>");
                continue;
            }
            c_system(b, sizeof(b), &v->rates[w], i);
            status_printf(o, "<td>%s</td>", b);
        }
        status_puts(o, "</tr>\n");
    }
    status_printf(o, "<tr><td class=\"l\">run queue / blocked (now)</td><td colspan=\"4\" "
                  "class=\"l\">%u / %u</td></tr>\n</table>\n",
                  v->system.procs_running, v->system.procs_blocked);
}

/* A "nice" axis maximum: 1, 2 or 5 times a power of ten, at least @p m. */
static double nice_max(double m)
{
    double p = 1;
    if (m <= 0) {
        return 1;
    }
    while (p * 10 <= m) {
        p *= 10;
    }
    while (p > m * 10) {
        p /= 10;
    }
    for (;;) {
        if (m <= p) {
            return p;
        }
        if (m <= 2 * p) {
            return 2 * p;
        }
        if (m <= 5 * p) {
            return 5 * p;
        }
        p *= 10;
    }
}

static void chart(status_out_t *o, const status_view_t *v, const char *title,
                  status_series_t what, status_series_t what2, const char *label2)
{
    static const char *const colour[2] = {"#2563eb", "#d97706"};
    uint64_t n = hd_sb_ring_count();
    if (n > CHART_SECONDS + 1) {
        n = CHART_SECONDS + 1;
    }
    int plot_w = CHART_W - PAD_L - PAD_R, plot_h = CHART_H - PAD_T - PAD_B;
    status_printf(o, "<svg width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" "
                  "aria-label=\"%s\"><text x=\"%d\" y=\"15\" style=\"font-weight:600;"
                  "fill:#1d2430\">%s</text>",
                  CHART_W, CHART_H, CHART_W, CHART_H, title, PAD_L, title);
    if (n < 2) {
        status_printf(o, "<text x=\"%d\" y=\"%d\">collecting samples&hellip;</text></svg>\n",
                      PAD_L + 10, PAD_T + plot_h / 2);
        return;
    }
    int lines = label2 != NULL ? 2 : 1;
    size_t points = (size_t)(n - 1);
    double *val = hd_palloc(v->r->pool, sizeof(double) * points * 2);
    double max = 0;
    for (int l = 0; l < lines; l++) {
        for (uint64_t i = 0; i < points; i++) {
            /* oldest first */
            uint64_t ago = points - 1 - i;
            double x = status_series_value(l == 0 ? what : what2, hd_sb_ring_get(ago),
                                           hd_sb_ring_get(ago + 1));
            val[(size_t)l * points + i] = x;
            max = x > max ? x : max;
        }
    }
    max = nice_max(max);
    for (int g = 0; g <= 2; g++) {
        int y = PAD_T + plot_h - plot_h * g / 2;
        char lab[32];
        num(lab, sizeof(lab), max * g / 2);
        status_printf(o, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#e2e6ec\"/>"
                      "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>",
                      PAD_L, PAD_L + plot_w, y, y, PAD_L - 4, y + 4, lab);
    }
    double span = (double)points; /* seconds, one sample a second */
    status_printf(o, "<text x=\"%d\" y=\"%d\">&minus;%.0f s</text>"
                  "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">now</text>",
                  PAD_L, CHART_H - 6, span, PAD_L + plot_w, CHART_H - 6);
    for (int l = 0; l < lines; l++) {
        status_printf(o, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
                      colour[l]);
        for (size_t i = 0; i < points; i++) {
            double x = PAD_L + (points > 1 ? (double)plot_w * (double)i / (double)(points - 1)
                                           : (double)plot_w);
            double y = PAD_T + plot_h - (double)plot_h * val[(size_t)l * points + i] / max;
            status_printf(o, "%.1f,%.1f ", x, y);
        }
        status_puts(o, "\"/>");
    }
    if (label2 != NULL) {
        status_printf(o, "<text x=\"%d\" y=\"15\" text-anchor=\"end\"><tspan fill=\"%s\">"
                      "&#9644; workers</tspan> <tspan fill=\"%s\">&#9644; %s</tspan></text>",
                      PAD_L + plot_w, colour[0], colour[1], label2);
    }
    status_puts(o, "</svg>\n");
}

static void charts(status_out_t *o, const status_view_t *v)
{
    status_printf(o, "<h2>Last %d minutes</h2>\n<div class=\"charts\">\n", CHART_SECONDS / 60);
    chart(o, v, "requests/s", SERIES_REQ_PER_S, SERIES_REQ_PER_S, NULL);
    chart(o, v, "run queue (procs_running)", SERIES_RUN_QUEUE, SERIES_RUN_QUEUE, NULL);
    chart(o, v, "context switches/s", SERIES_WORKER_CS_PER_S, SERIES_SYSTEM_CS_PER_S,
          "system");
    chart(o, v, "syscalls/request", SERIES_SYSCALLS_PER_REQ, SERIES_SYSCALLS_PER_REQ, NULL);
    status_puts(o, "</div>\n");
}

static void totals(status_out_t *o, const status_view_t *v)
{
    const hd_sb_global_t *g = hd_scoreboard->global;
    char a[64], b[64], c[64];
    status_puts(o, "<h2>Totals</h2>\n<table>\n");
    bytes_h(a, sizeof(a), (double)v->work.bytes);
    us_h(b, sizeof(b), (double)v->work.duration_us);
    status_printf(o, "<tr><td class=\"l\">requests</td><td>%llu</td><td class=\"l\">traffic %s"
                  " &middot; total duration %s</td></tr>\n",
                  (unsigned long long)v->work.requests, a, b);
    status_puts(o, "<tr><td class=\"l\">responses</td><td></td><td class=\"l\">");
    for (int i = 0; i < 5; i++) {
        status_printf(o, "%s%dxx: %llu", i ? " &middot; " : "", i + 1,
                      (unsigned long long)v->work.status[i]);
    }
    status_puts(o, "</td></tr>\n");
    us_h(a, sizeof(a), status_latency_quantile(v->work.latency, 0.5));
    us_h(b, sizeof(b), status_latency_quantile(v->work.latency, 0.9));
    us_h(c, sizeof(c), status_latency_quantile(v->work.latency, 0.99));
    status_printf(o, "<tr><td class=\"l\">latency</td><td></td><td class=\"l\">p50 %s &middot; "
                  "p90 %s &middot; p99 %s</td></tr>\n", a, b, c);
    status_printf(o, "<tr><td class=\"l\">syscalls (workers)</td><td>%llu</td><td class=\"l\">",
                  (unsigned long long)v->syscalls);
    for (int k = 0; k < HD_SYS_NKINDS; k++) {
        status_printf(o, "%s%s %llu", k ? " &middot; " : "", hd_sys_kind_names[k],
                      (unsigned long long)v->work.sys[k]);
    }
    status_printf(o, "</td></tr>\n<tr><td class=\"l\">syscalls (master)</td><td>%llu</td>"
                  "<td></td></tr>\n", (unsigned long long)v->master_syscalls);
    status_printf(o, "<tr><td class=\"l\">context switches</td><td>%llu</td><td class=\"l\">"
                  "voluntary %llu &middot; involuntary %llu</td></tr>\n",
                  (unsigned long long)(v->kernel.vcs + v->kernel.ivcs),
                  (unsigned long long)v->kernel.vcs, (unsigned long long)v->kernel.ivcs);
    us_h(a, sizeof(a), (double)v->kernel.utime_us);
    us_h(b, sizeof(b), (double)v->kernel.stime_us);
    us_h(c, sizeof(c), (double)(g->master_utime_us + g->master_stime_us));
    status_printf(o, "<tr><td class=\"l\">CPU (workers)</td><td></td><td class=\"l\">user %s "
                  "&middot; system %s &middot; master %s</td></tr>\n", a, b, c);
    us_h(a, sizeof(a), (double)v->kernel.run_delay_us);
    status_printf(o, "<tr><td class=\"l\">run delay</td><td></td><td class=\"l\">%s in %llu "
                  "timeslices</td></tr>\n", a, (unsigned long long)v->kernel.timeslices);
    bytes_h(a, sizeof(a), (double)v->work.pool_bytes);
    us_h(b, sizeof(b), (double)v->kernel.lock_wait_us);
    status_printf(o, "<tr><td class=\"l\">pool mallocs</td><td>%llu</td><td class=\"l\">%s"
                  "</td></tr>\n<tr><td class=\"l\">lock waits</td><td>%llu</td>"
                  "<td class=\"l\">%s</td></tr>\n</table>\n",
                  (unsigned long long)v->work.pool_allocs, a,
                  (unsigned long long)v->kernel.lock_waits, b);
}

static void scoreboard(status_out_t *o, const status_view_t *v)
{
    status_printf(o, "<h2>Scoreboard</h2>\n<p>%d requests being processed, %d idle workers, "
                  "%d finishing gracefully; %d processes (%d stopping).</p>\n<pre class=\"sb\">",
                  v->census.busy, v->census.idle, v->census.graceful, v->census.processes,
                  v->census.stopping);
    for (int i = 0; v->letters[i] != '\0'; i++) {
        status_putn(o, &v->letters[i], 1);
        if (i % 64 == 63 && v->letters[i + 1] != '\0') {
            status_puts(o, "\n");
        }
    }
    status_puts(o, "</pre>\n<p class=\"legend\">"
                   "<code>_</code> Waiting for Connection, <code>S</code> Starting up, "
                   "<code>R</code> Reading Request, <code>W</code> Sending Reply, "
                   "<code>K</code> Keepalive (read), <code>D</code> DNS Lookup, "
                   "<code>C</code> Closing connection, <code>L</code> Logging, "
                   "<code>G</code> Gracefully finishing, <code>I</code> Idle cleanup of worker, "
                   "<code>.</code> Open slot with no current process</p>\n");
}

static void worker_row(status_out_t *o, const status_view_t *v, int i)
{
    const hd_sb_worker_t *w = &hd_scoreboard->workers[i];
    const hd_sb_counters_t *c = &hd_scoreboard->counters[i];
    int tl = hd_scoreboard->global->thread_limit;
    char bytes[32], cpu[32], delay[32], ss[32], req[32];
    uint64_t sys = 0;
    for (int k = 0; k < HD_SYS_NKINDS; k++) {
        sys += c->work.sys[k];
    }
    bytes_h(bytes, sizeof(bytes), (double)c->work.bytes);
    us_h(cpu, sizeof(cpu), (double)(c->total.utime_us + c->total.stime_us));
    us_h(delay, sizeof(delay), (double)c->total.run_delay_us);
    us_h(req, sizeof(req), (double)w->last_duration_us);
    if (w->last_used.tv_sec != 0) {
        snprintf(ss, sizeof(ss), "%lld", (long long)(v->now.tv_sec - w->last_used.tv_sec));
    } else {
        snprintf(ss, sizeof(ss), "&ndash;");
    }
    status_printf(o, "<tr><td>%d-%d%s</td><td>%d</td><td>%d</td><td class=\"l\"><b>%c</b></td>"
                  "<td>%llu/%llu/%llu</td><td>%s</td><td>%llu</td>",
                  i / tl, i % tl, i == v->self_slot ? "*" : "", (int)w->pid, (int)w->tid,
                  w->state, (unsigned long long)w->conn_count,
                  (unsigned long long)w->access_count, (unsigned long long)c->work.requests,
                  bytes, (unsigned long long)sys);
    for (int k = 0; k < HD_SYS_NKINDS; k++) {
        status_printf(o, "<td>%llu</td>", (unsigned long long)c->work.sys[k]);
    }
    status_printf(o, "<td>%llu/%llu</td><td>%s</td><td>%s</td><td>%llu</td><td>%llu</td>"
                  "<td>%s</td><td>%s</td><td class=\"l\">",
                  (unsigned long long)c->total.vcs, (unsigned long long)c->total.ivcs, cpu, delay,
                  (unsigned long long)c->work.pool_allocs, (unsigned long long)c->total.lock_waits,
                  ss, req);
    char client[sizeof(w->client)], request[sizeof(w->request)];
    STATUS_SLOT_TEXT(client, w->client);
    STATUS_SLOT_TEXT(request, w->request);
    status_put_html(o, v->extended ? client : "");
    status_puts(o, "</td><td class=\"req\">");
    status_put_html(o, v->extended ? request : "");
    status_puts(o, "</td></tr>\n");
}

static void workers(status_out_t *o, const status_view_t *v)
{
    status_puts(o, "<h2>Workers</h2>\n<div class=\"wide\"><table><tr><th>slot</th><th>pid</th>"
                   "<th>tid</th><th class=\"l\" title=\"state\">M</th>"
                   "<th title=\"requests: this connection / this process / the slot\">"
                   "requests</th>"
                   "<th>bytes</th><th>syscalls</th>");
    for (int k = 0; k < HD_SYS_NKINDS; k++) {
        status_printf(o, "<th title=\"%s\">%s</th>", hd_sys_kind_names[k], kind_short[k]);
    }
    status_puts(o, "<th title=\"context switches: voluntary/involuntary\">cs</th>"
                   "<th>CPU</th><th>run delay</th><th title=\"pool mallocs\">mallocs</th>"
                   "<th title=\"accept lock or queue waits\">lock</th>"
                   "<th title=\"seconds since the last request started\">SS</th>"
                   "<th title=\"duration of the last request\">last</th>"
                   "<th class=\"l\">client</th><th class=\"l\">request</th></tr>\n");
    for (int i = 0; i < v->nslots; i++) {
        const hd_sb_worker_t *w = &hd_scoreboard->workers[i];
        if (w->state == HD_SB_DEAD && hd_scoreboard->counters[i].work.requests == 0) {
            continue;
        }
        worker_row(o, v, i);
    }
    status_puts(o, "</table></div>\n<p><small>* the worker serving this page. Counts are the "
                   "slot's "
                   "since the server started unless marked; CPU, cs and run delay are read "
                   "from /proc once a second.</small></p>\n");
}

void status_render_html(status_out_t *o, const status_view_t *v, int refresh)
{
    status_puts(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    if (refresh > 0) {
        status_printf(o, "<meta http-equiv=\"refresh\" content=\"%d\">\n", refresh);
    }
    status_puts(o, "<title>Server status: ");
    status_put_html(o, v->server_name);
    status_printf(o, "</title>\n<style>%s</style>\n</head><body>\n", style);
    header(o, v);
    cards(o, v);
    rates_table(o, v);
    charts(o, v);
    totals(o, v);
    scoreboard(o, v);
    workers(o, v);
    status_puts(o, "<footer>Also as <a href=\"?auto\">?auto</a> (Apache's format), "
                   "<a href=\"?json\">?json</a>, <a href=\"?metrics\">?metrics</a> (Prometheus); "
                   "<a href=\"?refresh=5\">refresh every 5 s</a>. Every field is described in "
                   "<a href=\"/manual/status.html\">the manual</a>.</footer>\n</body></html>\n");
}
