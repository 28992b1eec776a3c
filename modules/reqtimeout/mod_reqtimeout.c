/*
 * mod_reqtimeout: RequestReadTimeout, as Apache 2.4's. Timeout bounds each
 * wait for data, so a client that sends a byte now and then could hold its
 * connection forever; this bounds the whole head and the whole body:
 *
 *   header=20-40,MinRate=500: the head must be complete 20 s after it began
 *   (the connection's accept, or the first byte of a later request), plus
 *   one second per 500 bytes received, but never later than 40 s;
 *   body=20,MinRate=500: the same for the body, with no upper bound.
 *
 * Those are Apache's defaults, in force without the directive. When the
 * limit passes the client gets 408 (a connection that sent nothing is
 * closed), logged at info as AH01382. The connection state machine calls
 * the input_wait hook before each wait for request data; the limit it sets
 * ends that wait sooner than Timeout would.
 */
#include "config.h"
#include "module.h"
#include "pool.h"
#include "request.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern hd_module_t hd_reqtimeout_module;

/* One stage (handshake, header, body): seconds, and the rate that extends them. */
typedef struct {
    int timeout_s;      /* 0: no limit */
    int max_timeout_s;  /* 0: none */
    int min_rate;       /* bytes/s that each add a second, 0: none */
} stage_t;

typedef struct {
    stage_t handshake;  /* TLS: parsed and kept for the TLS module */
    stage_t header;
    stage_t body;
} reqtimeout_sconf_t;

static void *create_server_config(hd_pool_t *p, hd_server_t *s)
{
    reqtimeout_sconf_t *c = hd_pcalloc(p, sizeof(*c));
    c->header = (stage_t){20, 40, 500};
    c->body = (stage_t){20, 0, 500};
    return c;
}

static const char *parse_int(hd_cmd_parms_t *cmd, const char *what, const char *s, size_t n,
                             int *out)
{
    char buf[16];
    char *end;

    if (n == 0 || n >= sizeof(buf)) {
        return hd_psprintf(cmd->temp_pool, "RequestReadTimeout: bad %s \"%.*s\"", what, (int)n, s);
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    errno = 0;
    long v = strtol(buf, &end, 10);
    if (*end != '\0' || errno != 0 || v < 0 || v > 86400 * 365) {
        return hd_psprintf(cmd->temp_pool, "RequestReadTimeout: bad %s \"%s\"", what, buf);
    }
    *out = (int)v;
    return NULL;
}

/* "timeout[-maxtimeout][,MinRate=rate]", as mod_reqtimeout's set_reqtimeout_param. */
static const char *parse_stage(hd_cmd_parms_t *cmd, stage_t *st, const char *val)
{
    stage_t n = {0, 0, 0};
    const char *comma = strchr(val, ',');
    size_t tlen = comma ? (size_t)(comma - val) : strlen(val);
    const char *dash = memchr(val, '-', tlen);
    const char *err;

    if ((err = parse_int(cmd, "timeout", val, dash ? (size_t)(dash - val) : tlen,
                         &n.timeout_s)) != NULL) {
        return err;
    }
    if (dash != NULL &&
        (err = parse_int(cmd, "maximum timeout", dash + 1, (size_t)(val + tlen - dash - 1),
                         &n.max_timeout_s)) != NULL) {
        return err;
    }
    if (comma != NULL) {
        if (strncasecmp(comma + 1, "MinRate=", 8) != 0) {
            return hd_psprintf(cmd->temp_pool, "RequestReadTimeout: unknown option \"%s\"",
                               comma + 1);
        }
        const char *rate = comma + 9;
        if ((err = parse_int(cmd, "MinRate", rate, strlen(rate), &n.min_rate)) != NULL) {
            return err;
        }
        if (n.min_rate == 0) {
            return "RequestReadTimeout: MinRate must be greater than 0";
        }
    }
    if (n.max_timeout_s > 0 && n.max_timeout_s <= n.timeout_s) {
        return "RequestReadTimeout: maximum timeout must be larger than initial timeout";
    }
    if (n.max_timeout_s > 0 && n.min_rate == 0) {
        return "RequestReadTimeout: must set MinRate option if using timeout range";
    }
    *st = n;
    return NULL;
}

static const char *cmd_request_read_timeout(hd_cmd_parms_t *cmd, void *mconfig, int argc,
                                            char *argv[])
{
    reqtimeout_sconf_t *c = mconfig;
    const char *arg = argv[0];
    const char *eq = strchr(arg, '=');
    stage_t *st;

    if (eq == NULL) {
        return hd_psprintf(cmd->temp_pool,
                           "RequestReadTimeout: \"%s\" is not handshake=, header= or body=", arg);
    }
    size_t klen = (size_t)(eq - arg);
    if (klen == 9 && strncasecmp(arg, "handshake", 9) == 0) {
        st = &c->handshake;
    } else if (klen == 6 && strncasecmp(arg, "header", 6) == 0) {
        st = &c->header;
    } else if (klen == 4 && strncasecmp(arg, "body", 4) == 0) {
        st = &c->body;
    } else {
        return hd_psprintf(cmd->temp_pool, "RequestReadTimeout: unknown stage \"%.*s\"",
                           (int)klen, arg);
    }
    return parse_stage(cmd, st, eq + 1);
}

/* The end of the phase: its start, the timeout, a second per MinRate bytes, capped at the maximum. */
static void reqtimeout_input_wait(hd_conn_t *c)
{
    const reqtimeout_sconf_t *conf = hd_get_server_config(c->server, &hd_reqtimeout_module);
    const stage_t *st;

    if (conf == NULL) {
        return;
    }
    if (c->read_phase == HD_READ_HEAD) {
        st = &conf->header;
        c->read_limit_msg = "AH01382: Request header read timeout";
    } else if (c->read_phase == HD_READ_BODY) {
        st = &conf->body;
        c->read_limit_msg = "AH01382: Request body read timeout";
    } else {
        return;
    }
    if (st->timeout_s == 0) {
        return;
    }
    int64_t limit = c->read_started_ms + (int64_t)st->timeout_s * 1000;
    if (st->min_rate > 0) {
        limit += (int64_t)(c->read_bytes * 1000 / (uint64_t)st->min_rate);
    }
    if (st->max_timeout_s > 0) {
        int64_t max = c->read_started_ms + (int64_t)st->max_timeout_s * 1000;
        limit = limit < max ? limit : max;
    }
    c->read_limit_ms = limit;
}

static const hd_command_t reqtimeout_commands[] = {
    {"RequestReadTimeout", cmd_request_read_timeout, 0, HD_ITERATE, HD_CTX_MAIN, HD_CONF_SERVER,
     "[handshake=timeout[-maxtimeout][,MinRate=rate]] [header=timeout[-maxtimeout][,MinRate=rate]] "
     "[body=timeout[-maxtimeout][,MinRate=rate]]",
     "header=20-40,MinRate=500 body=20,MinRate=500",
     "limits on the time to receive a request's head and body (seconds, extended by a second "
     "per MinRate bytes up to maxtimeout); 0 turns a limit off; 408 when one passes"},
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

hd_module_t hd_reqtimeout_module = {
    .name = "reqtimeout",
    .source_name = "mod_reqtimeout.c",
    .always_loaded = true,
    .commands = reqtimeout_commands,
    .create_server_config = create_server_config,
    .input_wait = reqtimeout_input_wait,
};
