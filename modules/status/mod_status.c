/*
 * mod_status: the server's state for people and for tools. `SetHandler
 * server-status` in a <Location> answers with an HTML page, `?auto`
 * (Apache's keys, byte for byte, then ours), `?json` or `?metrics`
 * (Prometheus text format; `SetHandler server-metrics` gives it without the
 * query). The master samples /proc once a second into the scoreboard's
 * ring (status_sampler.c); the handler only reads shared memory.
 */
#include "status.h"

#include "config.h"
#include "log.h"
#include "module.h"
#include "pool.h"
#include "request.h"
#include "scoreboard.h"
#include "table.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_REFRESH 86400
#define DEFAULT_HISTORY 60

typedef struct {
    int extended; /* ExtendedStatus */
} status_conf_t;

typedef enum { FMT_HTML, FMT_AUTO, FMT_JSON, FMT_METRICS } status_format_t;

typedef struct {
    status_format_t format;
    int refresh;  /* seconds, 0: none */
    int history;  /* ring samples in ?json */
} status_args_t;

static void *status_create_server_config(hd_pool_t *p, hd_server_t *s)
{
    status_conf_t *c = hd_pcalloc(p, sizeof(*c));
    c->extended = 1; /* Apache 2.4: On once mod_status is loaded */
    return c;
}

static int status_post_config(hd_server_t *s)
{
    const status_conf_t *c = hd_get_server_config(s, &hd_status_module);
    hd_sb_extended_status = c->extended != 0;
    return HD_OK;
}

static void status_master_tick(hd_server_t *s)
{
    status_sample(true);
}

/* A child inherits the master's open /proc files: it has no use for them. */
static void status_child_init(hd_server_t *s)
{
    status_sampler_forget();
}

/*
 * Under -X there is no master to sample: the handler does it, at most once
 * a second, so the one-process server still shows its figures.
 */
static void sample_without_master(void)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static int64_t last_us;
    int64_t now = hd_now_mono_us();
    pthread_mutex_lock(&lock);
    if (last_us == 0 || now - last_us >= 1000000) {
        last_us = now;
        status_sample(false);
    }
    pthread_mutex_unlock(&lock);
}

/* Value of "name=value" as an int in [lo, hi]; @p dflt without "=". */
static int arg_int(const char *value, int dflt, int lo, int hi)
{
    if (value == NULL || *value == '\0') {
        return dflt;
    }
    long v = strtol(value, NULL, 10);
    return v < lo ? lo : v > hi ? hi : (int)v;
}

/* Tokens separated by '&' or ';', as Apache's status options, in any order. */
static void parse_args(hd_request_t *r, status_args_t *a)
{
    a->format = FMT_HTML;
    a->refresh = 0;
    a->history = DEFAULT_HISTORY;
    if (r->args == NULL) {
        return;
    }
    char *args = hd_pstrdup(r->pool, r->args);
    char *save = NULL;
    for (char *tok = strtok_r(args, "&;", &save); tok != NULL; tok = strtok_r(NULL, "&;", &save)) {
        char *value = strchr(tok, '=');
        if (value != NULL) {
            *value++ = '\0';
        }
        if (strcasecmp(tok, "auto") == 0) {
            a->format = FMT_AUTO;
        } else if (strcasecmp(tok, "json") == 0) {
            a->format = FMT_JSON;
        } else if (strcasecmp(tok, "metrics") == 0) {
            a->format = FMT_METRICS;
        } else if (strcasecmp(tok, "refresh") == 0) {
            a->refresh = arg_int(value, 1, 1, MAX_REFRESH);
        } else if (strcasecmp(tok, "history") == 0) {
            a->history = arg_int(value, DEFAULT_HISTORY, 0, HD_SB_RING_SIZE);
        }
    }
}

static int status_handler(hd_request_t *r)
{
    bool metrics_only;
    if (r->handler == NULL) {
        return HD_DECLINED;
    }
    metrics_only = strcmp(r->handler, "server-metrics") == 0;
    if (!metrics_only && strcmp(r->handler, "server-status") != 0 &&
        strcmp(r->handler, "application/x-httpd-status") != 0) {
        return HD_DECLINED;
    }
    if (r->method != HD_M_GET && r->method != HD_M_HEAD) {
        hd_table_set(r->headers_out, "Allow", "GET, HEAD");
        return 405;
    }
    if (hd_scoreboard == NULL) {
        hd_log_rerror(r, HD_LOG_ERR, "status", "AH01237: Server status unavailable: no scoreboard");
        return 500;
    }
    if (r->server->one_process) {
        sample_without_master();
    }

    status_args_t a;
    parse_args(r, &a);
    if (metrics_only) {
        a.format = FMT_METRICS;
    }
    status_view_t *v = hd_palloc(r->pool, sizeof(*v));
    status_view_build(v, r);

    status_out_t out;
    status_out_init(&out, r);
    switch (a.format) {
    case FMT_AUTO:
        r->content_type = "text/plain; charset=ISO-8859-1";
        status_render_auto(&out, v);
        break;
    case FMT_JSON:
        r->content_type = "application/json";
        status_render_json(&out, v, a.history);
        break;
    case FMT_METRICS:
        r->content_type = "text/plain; version=0.0.4; charset=utf-8";
        status_render_metrics(&out, v);
        break;
    case FMT_HTML:
        r->content_type = "text/html; charset=utf-8";
        status_render_html(&out, v, a.refresh);
        break;
    }
    status_out_finish(&out);
    if (a.refresh > 0) {
        hd_table_set(r->headers_out, "Refresh", hd_psprintf(r->pool, "%d", a.refresh));
    }
    r->status = 200;
    return HD_OK;
}

static const hd_command_t status_commands[] = {
    {"ExtendedStatus", hd_set_flag_slot, offsetof(status_conf_t, extended), HD_FLAG, HD_CTX_MAIN,
     HD_CONF_SERVER, "On|Off", "On",
     "\"On\" to record each worker's current request and client, \"Off\" to disable"},
    {.name = NULL},
};

hd_module_t hd_status_module = {
    .name = "status",
    .source_name = "mod_status.c",
    .always_loaded = false,
    .commands = status_commands,
    .create_server_config = status_create_server_config,
    .post_config = status_post_config,
    .master_tick = status_master_tick,
    .child_init = status_child_init,
    .handler = status_handler,
};
