/*
 * mod_log_config: access logs (LogFormat, CustomLog, TransferLog).
 *
 * With BufferedLogs On, lines are rendered into a per-thread buffer per log
 * file and written with one write() when the buffer would overflow, when its
 * oldest line is a second old, or when the MPM calls the flush hook (at
 * least once a second per thread, and before a worker exits). Off, the
 * default as in Apache, writes each line when its request is done. Lines are written whole, so processes appending to
 * the same file (O_APPEND) never interleave inside a line.
 */
#include "log_format.h"

#include "config.h"
#include "log.h"
#include "module.h"
#include "pool.h"
#include "request.h"
#include "sys.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define MODULE_NAME "log_config"
#define AGE_LIMIT_US 1000000

/* A LogFormat nickname. */
typedef struct fmt_def {
    const char *name;
    hd_log_format_t *format;
    struct fmt_def *next;
} fmt_def_t;

/* A CustomLog or TransferLog line. */
typedef struct log_file {
    const char *path;         /* as written */
    const char *abs_path;     /* resolved against ServerRoot when opened */
    const char *fmt_arg;      /* format or nickname; NULL: the default format */
    const char *where;        /* "file:line: ", for errors found after reading */
    hd_log_format_t *format;  /* set by post_config at the latest */
    int fd;
    unsigned slot;            /* index among the server's logs: its thread buffer */
    uint64_t serial;          /* unique per opening: ties thread buffers to this fd */
    struct log_file *next;
} log_file_t;

typedef struct {
    fmt_def_t *formats;       /* newest first: a redefinition wins */
    const char *default_arg;  /* LogFormat without a nickname */
    const char *default_where;
    hd_log_format_t *default_format;
    log_file_t *logs;
    log_file_t **tail;
    unsigned nlogs;
    int buffered;             /* BufferedLogs, Off unless set On */
    bool cleanup_added;
} log_sconf_t;

/* Written only by the master in open_logs, before any worker runs. */
static uint64_t next_serial;

/* ---------------------------------------------------------------------- */
/* per-thread buffers */

typedef struct {
    uint64_t serial;          /* log file whose lines are held; 0: none */
    size_t len;
    int64_t first_us;         /* when the oldest held line was added */
    char *data;               /* HD_LOG_BUFFER_SIZE bytes, malloc'd at first use */
} tbuf_t;

typedef struct {
    unsigned n;
    tbuf_t bufs[];
} tstate_t;

static __thread tstate_t *tstate;
static pthread_key_t tstate_key;
static pthread_once_t tstate_once = PTHREAD_ONCE_INIT;

/* Frees a thread's buffers when it exits; the MPM has flushed them before. */
static void tstate_free(void *data)
{
    tstate_t *ts = data;
    for (unsigned i = 0; i < ts->n; i++) {
        free(ts->bufs[i].data);
    }
    free(ts);
}

static void tstate_key_init(void)
{
    if (pthread_key_create(&tstate_key, tstate_free) != 0) {
        hd_log_error(HD_LOG_WARNING, MODULE_NAME, "cannot create a thread key: "
                     "log buffers of exiting threads will not be freed");
    }
}

static void write_all(const log_file_t *f, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = hd_write(f->fd, p, n);
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            int e = errno;
            char eb[128];
            hd_log_error(HD_LOG_WARNING, MODULE_NAME, "(%d)%s: Error writing to %s", e,
                         strerror_r(e, eb, sizeof(eb)), f->abs_path ? f->abs_path : f->path);
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

static void flush_buf(const log_file_t *f, tbuf_t *b)
{
    if (b->len > 0) {
        write_all(f, b->data, b->len);
        b->len = 0;
    }
}

/* The calling thread's buffer for @f, allocated at first use; NULL if out of memory. */
static tbuf_t *thread_buf(const log_file_t *f)
{
    tstate_t *ts = tstate;
    if (ts == NULL || f->slot >= ts->n) {
        unsigned n = f->slot + 1 > 4 ? f->slot + 1 : 4;
        unsigned old = ts ? ts->n : 0;
        tstate_t *grown = realloc(ts, sizeof(*ts) + n * sizeof(tbuf_t));
        if (grown == NULL) {
            return NULL;
        }
        memset(&grown->bufs[old], 0, (n - old) * sizeof(tbuf_t));
        grown->n = n;
        tstate = ts = grown;
        pthread_once(&tstate_once, tstate_key_init);
        pthread_setspecific(tstate_key, ts);
    }
    tbuf_t *b = &ts->bufs[f->slot];
    if (b->data == NULL && (b->data = malloc(HD_LOG_BUFFER_SIZE)) == NULL) {
        return NULL;
    }
    if (b->serial != f->serial) {
        /* lines of a configuration that is gone: its fd may be closed or reused */
        if (b->len > 0) {
            hd_log_error(HD_LOG_WARNING, MODULE_NAME, "dropped %zu bytes of access log "
                         "lines buffered for a previous configuration", b->len);
        }
        b->serial = f->serial;
        b->len = 0;
    }
    return b;
}

/* Flushes the calling thread's buffer for @f, if it holds lines for it. */
static void flush_thread_buf(const log_file_t *f)
{
    tstate_t *ts = tstate;
    if (ts != NULL && f->slot < ts->n && ts->bufs[f->slot].serial == f->serial) {
        flush_buf(f, &ts->bufs[f->slot]);
    }
}

/* A line that does not fit in a buffer goes out alone, in one write. */
static void write_direct(const log_file_t *f, hd_request_t *r, int64_t now, size_t n)
{
    if (r->pool == NULL) {
        return;
    }
    char *tmp = hd_pnalloc(r->pool, n);
    n = hd_log_format_render(f->format, r, now, tmp, n);
    write_all(f, tmp, n);
}

static void append_line(const log_sconf_t *conf, const log_file_t *f, hd_request_t *r,
                        int64_t now)
{
    tbuf_t *b = thread_buf(f);
    if (b == NULL) {
        write_direct(f, r, now, hd_log_format_render(f->format, r, now, NULL, 0));
        return;
    }
    size_t room = HD_LOG_BUFFER_SIZE - b->len;
    size_t n = hd_log_format_render(f->format, r, now, b->data + b->len, room);
    if (n > room) {
        flush_buf(f, b);
        if (n > HD_LOG_BUFFER_SIZE) {
            write_direct(f, r, now, n);
            return;
        }
        n = hd_log_format_render(f->format, r, now, b->data, HD_LOG_BUFFER_SIZE);
        n = n < HD_LOG_BUFFER_SIZE ? n : HD_LOG_BUFFER_SIZE;
    }
    if (b->len == 0) {
        b->first_us = now;
    }
    b->len += n;
    if (!conf->buffered || b->len == HD_LOG_BUFFER_SIZE || now - b->first_us >= AGE_LIMIT_US) {
        flush_buf(f, b);
    }
}

void hd_log_config_transaction_at(hd_request_t *r, int64_t now_mono_us)
{
    if (r->server == NULL) {
        return;
    }
    const log_sconf_t *conf = hd_get_server_config(r->server, &hd_log_config_module);
    if (conf == NULL) {
        return;
    }
    for (const log_file_t *f = conf->logs; f != NULL; f = f->next) {
        if (f->fd >= 0 && f->format != NULL) {
            append_line(conf, f, r, now_mono_us);
        }
    }
}

/* ---------------------------------------------------------------------- */
/* hooks */

static void log_transaction(hd_request_t *r)
{
    hd_log_config_transaction_at(r, hd_now_mono_us());
}

static void flush_logs(hd_server_t *s)
{
    const log_sconf_t *conf = hd_get_server_config(s, &hd_log_config_module);
    if (conf == NULL || tstate == NULL) {
        return;
    }
    for (const log_file_t *f = conf->logs; f != NULL; f = f->next) {
        flush_thread_buf(f);
    }
}

/* Runs when the configuration is freed; in -X mode this thread may still hold lines. */
static void close_logs(void *data)
{
    log_sconf_t *conf = data;
    for (log_file_t *f = conf->logs; f != NULL; f = f->next) {
        if (f->fd >= 0) {
            flush_thread_buf(f);
            hd_close(f->fd);
            f->fd = -1;
        }
    }
}

static int open_logs(hd_server_t *s)
{
    log_sconf_t *conf = hd_get_server_config(s, &hd_log_config_module);

    /* localtime_r reads the zone once; do it here, not in the first request */
    tzset();
    if (!conf->cleanup_added) {
        hd_pool_cleanup_add(s->pool, close_logs, conf);
        conf->cleanup_added = true;
    }
    for (log_file_t *f = conf->logs; f != NULL; f = f->next) {
        if (f->fd >= 0) {
            continue;
        }
        const char *path = hd_server_root_relative(s->pool, s, f->path);
        int fd = hd_open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) {
            int e = errno;
            char eb[128];
            hd_log_error(HD_LOG_ERR, MODULE_NAME, "(%d)%s: could not open transfer log file %s.",
                         e, strerror_r(e, eb, sizeof(eb)), path);
            return HD_ERROR;
        }
        f->fd = fd;
        f->abs_path = path;
        f->serial = ++next_serial;
    }
    return HD_OK;
}

static void child_init(hd_server_t *s)
{
    tzset();
}

/* A nickname's format: LogFormat's newest definition, else a predefined one. */
static hd_log_format_t *find_nickname(hd_pool_t *p, log_sconf_t *conf, const char *name)
{
    for (fmt_def_t *d = conf->formats; d != NULL; d = d->next) {
        if (strcmp(d->name, name) == 0) {
            return d->format;
        }
    }
    const char *src = hd_log_format_predefined(name);
    if (src == NULL) {
        return NULL;
    }
    const char *err = NULL;
    fmt_def_t *d = hd_pcalloc(p, sizeof(*d));
    d->name = name;
    d->format = hd_log_format_compile(p, src, &err);
    d->next = conf->formats;
    conf->formats = d;
    return d->format;
}

/* Nicknames are resolved after the whole file is read, so LogFormat may come later. */
static int post_config(hd_server_t *s)
{
    log_sconf_t *conf = hd_get_server_config(s, &hd_log_config_module);
    const char *err = NULL;

    if (conf->default_format == NULL && conf->default_arg != NULL) {
        conf->default_format = find_nickname(s->pool, conf, conf->default_arg);
        if (conf->default_format == NULL) {
            hd_log_error(HD_LOG_ERR, MODULE_NAME, "%sLogFormat: unknown log format nickname '%s'",
                         conf->default_where, conf->default_arg);
            return HD_ERROR;
        }
    }
    if (conf->default_format == NULL) {
        conf->default_format = hd_log_format_compile(s->pool, HD_LOG_FORMAT_DEFAULT, &err);
    }
    for (log_file_t *f = conf->logs; f != NULL; f = f->next) {
        if (f->format != NULL) {
            continue;
        }
        if (f->fmt_arg == NULL) {
            f->format = conf->default_format;
            continue;
        }
        f->format = find_nickname(s->pool, conf, f->fmt_arg);
        if (f->format == NULL) {
            hd_log_error(HD_LOG_ERR, MODULE_NAME, "%sCustomLog: unknown log format nickname '%s'",
                         f->where, f->fmt_arg);
            return HD_ERROR;
        }
    }
    return HD_OK;
}

/* ---------------------------------------------------------------------- */
/* configuration */

static void *create_server_config(hd_pool_t *p, hd_server_t *s)
{
    log_sconf_t *conf = hd_pcalloc(p, sizeof(*conf));
    conf->tail = &conf->logs;
    conf->buffered = 0; /* Apache's default: a line is in the file when the request is done */
    return conf;
}

static const char *add_log(hd_cmd_parms_t *cmd, log_sconf_t *conf, const char *name,
                           const char *path, const char *fmt)
{
    if (path[0] == '|') {
        return hd_psprintf(cmd->pool, "%s: piped logs are not supported", name);
    }
    if (path[0] == '\0') {
        return hd_psprintf(cmd->pool, "%s: empty file name", name);
    }
    log_file_t *f = hd_pcalloc(cmd->pool, sizeof(*f));
    f->path = hd_pstrdup(cmd->pool, path);
    f->fd = -1;
    if (fmt != NULL) {
        f->fmt_arg = hd_pstrdup(cmd->pool, fmt);
        /* as Apache: a string with a '%' is a format, anything else a nickname */
        if (strchr(fmt, '%') != NULL) {
            const char *err = NULL;
            f->format = hd_log_format_compile(cmd->pool, fmt, &err);
            if (f->format == NULL) {
                return err;
            }
        }
    }
    f->where = hd_psprintf(cmd->pool, "%s:%u: ", cmd->file ? cmd->file : "", cmd->line);
    f->slot = conf->nlogs++;
    *conf->tail = f;
    conf->tail = &f->next;
    return NULL;
}

static const char *cmd_custom_log(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    if (argc == 3) {
        if (strncasecmp(argv[2], "env=", 4) == 0) {
            return "CustomLog: env= conditions are not supported";
        }
        if (strncasecmp(argv[2], "expr=", 5) == 0) {
            return "CustomLog: expr= conditions are not supported";
        }
        return hd_psprintf(cmd->pool, "CustomLog: error in condition clause '%s'", argv[2]);
    }
    return add_log(cmd, mconfig, "CustomLog", argv[0], argv[1]);
}

static const char *cmd_transfer_log(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    return add_log(cmd, mconfig, "TransferLog", argv[0], NULL);
}

static const char *cmd_log_format(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    log_sconf_t *conf = mconfig;
    const char *err = NULL;

    if (argc == 2) {
        fmt_def_t *d = hd_pcalloc(cmd->pool, sizeof(*d));
        d->name = hd_pstrdup(cmd->pool, argv[1]);
        d->format = hd_log_format_compile(cmd->pool, argv[0], &err);
        if (d->format == NULL) {
            return err;
        }
        d->next = conf->formats;
        conf->formats = d;
        return NULL;
    }
    conf->default_format = NULL;
    conf->default_arg = hd_pstrdup(cmd->pool, argv[0]);
    conf->default_where = hd_psprintf(cmd->pool, "%s:%u: ", cmd->file ? cmd->file : "",
                                      cmd->line);
    if (strchr(argv[0], '%') != NULL) {
        conf->default_format = hd_log_format_compile(cmd->pool, argv[0], &err);
        if (conf->default_format == NULL) {
            return err;
        }
    }
    return NULL;
}

static const char *cmd_buffered_logs(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    log_sconf_t *conf = mconfig;
    conf->buffered = strcasecmp(argv[0], "on") == 0;
    return NULL;
}

static const hd_command_t log_config_cmds[] = {
    {.name = "LogFormat", .fn = cmd_log_format, .args = HD_TAKE12, .contexts = HD_CTX_MAIN,
     .level = HD_CONF_SERVER, .syntax = "format|nickname [nickname]",
     .dflt = "\"" HD_LOG_FORMAT_DEFAULT "\"",
     .help = "a log format string and a nickname for it; without a nickname, the format "
             "(or the nickname of one) TransferLog uses"},
    {.name = "CustomLog", .fn = cmd_custom_log, .args = HD_TAKE23, .contexts = HD_CTX_MAIN,
     .level = HD_CONF_SERVER, .syntax = "file format|nickname",
     .help = "a file name (relative to ServerRoot) and a log format string or nickname "
             "(common, combined or one set by LogFormat); pipes and env=/expr= conditions "
             "are not supported"},
    {.name = "TransferLog", .fn = cmd_transfer_log, .args = HD_TAKE1, .contexts = HD_CTX_MAIN,
     .level = HD_CONF_SERVER, .syntax = "file",
     .help = "a file name for an access log in the format of LogFormat without a nickname "
             "(common log format by default)"},
    {.name = "BufferedLogs", .fn = cmd_buffered_logs, .args = HD_FLAG, .contexts = HD_CTX_MAIN,
     .level = HD_CONF_SERVER, .syntax = "On|Off", .dflt = "Off",
     .help = "buffer access log lines per thread, each written within a second (busy or "
             "idle) and when the process exits; Off (the default) writes each line at once"},
    {.name = NULL},
};

hd_module_t hd_log_config_module = {
    .name = MODULE_NAME,
    .source_name = "mod_log_config.c",
    .always_loaded = true,
    .commands = log_config_cmds,
    .create_server_config = create_server_config,
    .post_config = post_config,
    .open_logs = open_logs,
    .child_init = child_init,
    .flush = flush_logs,
    .log_transaction = log_transaction,
};
