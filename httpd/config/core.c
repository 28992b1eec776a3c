/*
 * The core module: server-wide settings (Listen, ServerName, DocumentRoot,
 * logs, timeouts, request limits), per-directory settings (Options,
 * ErrorDocument, EnableSendfile, LimitRequestBody, SetHandler), the table
 * entries of the reader's own directives and containers, and -L.
 */
#include "core.h"
#include "config_internal.h"
#include "sections.h"
#include "file_cache.h"
#include "log.h"
#include "module.h"
#include "pool.h"
#include "sys.h"

#include <ctype.h>
#include <netdb.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define DEFAULT_LIMIT_REQUEST_BODY 1073741824
#define MAX_LIMIT_FIELD 65536

/* "SetHandler None" in a section: must override an inherited handler, so it
 * cannot be NULL (which means "not set here"); merging turns it into NULL. */
static const char handler_none[] = "none";

static void *core_create_server(hd_pool_t *p, hd_server_t *s)
{
    hd_core_server_conf_t *c = hd_pcalloc(p, sizeof(*c));
    c->log_level = HD_LOG_WARNING;
    c->pid_file = "logs/httpd.pid";
    c->timeout_s = 60;
    c->keepalive = 1;
    c->keepalive_timeout_ms = 5000;
    c->max_keepalive_requests = 100;
    c->limits = (hd_http_limits_t){8190, 8190, 100};
    c->server_tokens = HD_TOKENS_FULL;
    c->listen_backlog = 511;
    c->open_file_cache = HD_FILE_CACHE_DEFAULT;
    return c;
}

/* Server level gets the defaults; a section starts all unset so it inherits. */
static void *core_create_dir(hd_pool_t *p, const char *path)
{
    hd_core_dir_conf_t *d = hd_pcalloc(p, sizeof(*d));
    if (path == NULL) {
        d->options = HD_OPT_UNSET | HD_OPT_FOLLOWSYMLINKS;
        d->enable_sendfile = 1;
        d->limit_request_body = DEFAULT_LIMIT_REQUEST_BODY;
    } else {
        d->options = HD_OPT_UNSET;
        d->enable_sendfile = -1;
        d->limit_request_body = -1;
    }
    return d;
}

void hd_core_options_merge(hd_core_options_t *o, const hd_core_dir_conf_t *add)
{
    if (add->options & HD_OPT_UNSET) {
        /* only +X/-X here: adjust what is inherited, keeping add & remove disjoint */
        unsigned plus = (o->add & ~add->options_remove) | add->options_add;
        unsigned minus = (o->remove & ~add->options_add) | add->options_remove;
        o->options = (o->options & ~minus) | plus;
        o->add = plus;
        o->remove = minus;
    } else {
        /* an explicit list overrides everything inherited, +/- included */
        o->options = add->options;
        o->add = add->options_add;
        o->remove = add->options_remove;
    }
}

static void *core_merge_dir(hd_pool_t *p, const void *basev, const void *addv)
{
    const hd_core_dir_conf_t *base = basev, *add = addv;
    hd_core_dir_conf_t *c = hd_palloc(p, sizeof(*c));
    hd_core_options_t o = {base->options, base->options_add, base->options_remove};
    *c = *base;
    hd_core_options_merge(&o, add);
    c->options = o.options;
    c->options_add = o.add;
    c->options_remove = o.remove;
    if (add->n_error_docs > 0) {
        int n = base->n_error_docs + add->n_error_docs;
        hd_error_document_t *docs = hd_palloc(p, (size_t)n * sizeof(*docs));
        if (base->n_error_docs > 0) {
            memcpy(docs, base->error_docs, (size_t)base->n_error_docs * sizeof(*docs));
        }
        memcpy(docs + base->n_error_docs, add->error_docs,
               (size_t)add->n_error_docs * sizeof(*docs));
        c->error_docs = docs;
        c->n_error_docs = n;
    }
    if (add->enable_sendfile != -1) {
        c->enable_sendfile = add->enable_sendfile;
    }
    if (add->limit_request_body != -1) {
        c->limit_request_body = add->limit_request_body;
    }
    if (add->handler != NULL) {
        c->handler = add->handler == handler_none ? NULL : add->handler;
    }
    return c;
}

unsigned hd_core_options(const hd_core_dir_conf_t *d)
{
    return d->options & ~HD_OPT_UNSET;
}

/* Later entries win: a section's ErrorDocument follows the inherited ones. */
const char *hd_core_error_document(const hd_core_dir_conf_t *d, int status)
{
    for (int i = d->n_error_docs - 1; i >= 0; i--) {
        if (d->error_docs[i].status == status) {
            return d->error_docs[i].value;
        }
    }
    return NULL;
}

/* ---- server-level directives ----------------------------------------- */

static const char *cmd_load_module(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    hd_server_t *s = cmd->server;
    const char *name = argv[0];
    size_t n = strlen(name);
    hd_module_t *m = hd_module_find(name);
    if (m == NULL || n < 8 || strcmp(name + n - 7, "_module") != 0) {
        return hd_psprintf(cmd->temp_pool,
                           "Can't locate API module structure `%s' in file %s: unknown built-in "
                           "module %s",
                           name, hd_server_root_relative(cmd->temp_pool, s, argv[1]), name);
    }
    if (m->always_loaded) {
        return NULL;
    }
    if (s->loaded[m->index]) {
        hd_log_error(HD_LOG_WARNING, "so", "module %s is already loaded, skipping", name);
        return NULL;
    }
    if (m->mpm != NULL) {
        if (s->mpm_module != NULL && s->mpm_module != m) {
            return hd_psprintf(cmd->temp_pool, "More than one MPM loaded: %s and %s_module", name,
                               s->mpm_module->name);
        }
        s->mpm = m->mpm;
        s->mpm_module = m;
    }
    s->loaded[m->index] = true;
    return NULL;
}

static const char *cmd_server_root(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    char *dir = hd_config_absolute_path(cmd->pool, argv[0]);
    struct stat st;
    if (dir == NULL || hd_stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
        return "ServerRoot must be a valid directory";
    }
    cmd->server->server_root = dir;
    return NULL;
}

static bool all_digits(const char *s)
{
    return *s != '\0' && strspn(s, "0123456789") == strlen(s);
}

/*
 * Listen [addr:]port [protocol]. Addresses are numeric (plus "localhost");
 * a bare port or "*" means 0.0.0.0 (Apache binds [::] dual-stack instead).
 */
static const char *cmd_listen(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    hd_server_t *s = cmd->server;
    char *arg = hd_pstrdup(cmd->temp_pool, argv[0]);
    const char *host = NULL, *port;
    if (arg[0] == '[') {
        char *close = strchr(arg, ']');
        if (close == NULL) {
            return "Invalid address or port";
        }
        *close = '\0';
        host = arg + 1;
        if (close[1] != ':') {
            return "Port must be specified";
        }
        port = close + 2;
    } else {
        char *colon = strrchr(arg, ':');
        if (colon != NULL) {
            *colon = '\0';
            host = arg;
            port = colon + 1;
        } else {
            port = arg;
        }
    }
    if (host != NULL && (host[0] == '\0' || strcmp(host, "*") == 0)) {
        host = NULL;
    } else if (host != NULL && strcasecmp(host, "localhost") == 0) {
        host = "127.0.0.1";
    }
    if (!all_digits(port)) {
        return "Port must be specified";
    }
    if (strlen(port) > 5 || atoi(port) == 0 || atoi(port) > 65535) {
        return "Invalid address or port";
    }
    struct addrinfo hints = {
        .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE,
        .ai_family = AF_UNSPEC,
        .ai_socktype = SOCK_STREAM,
    };
    struct addrinfo *res;
    if (getaddrinfo(host ? host : "0.0.0.0", port, &hints, &res) != 0) {
        return "Invalid address or port";
    }
    hd_listen_t *l = hd_pcalloc(cmd->pool, sizeof(*l));
    memcpy(&l->addr, res->ai_addr, res->ai_addrlen);
    l->addr_len = res->ai_addrlen;
    freeaddrinfo(res);
    l->text = hd_pstrdup(cmd->pool, argv[0]);
    if (argc > 1) {
        l->protocol = hd_pstrdup_lower(cmd->pool, argv[1]);
    } else {
        l->protocol = atoi(port) == 443 ? "https" : "http";
    }
    l->fd = -1;

    hd_listen_t **tail = &s->listeners;
    for (; *tail != NULL; tail = &(*tail)->next) {
        if ((*tail)->addr_len == l->addr_len &&
            memcmp(&(*tail)->addr, &l->addr, l->addr_len) == 0) {
            return "Cannot define multiple Listeners on the same IP:port";
        }
    }
    *tail = l;
    return NULL;
}

static const char *cmd_document_root(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    hd_core_server_conf_t *conf = mconfig;
    char *path = (char *)hd_server_root_relative(cmd->pool, cmd->server, argv[0]);
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') {
        path[--n] = '\0';
    }
    struct stat st;
    if (hd_stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
        return hd_psprintf(cmd->temp_pool,
                           "DocumentRoot '%s' is not a directory, or is not readable", path);
    }
    conf->document_root = path;
    return NULL;
}

static const char *cmd_error_log(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    hd_core_server_conf_t *conf = mconfig;
    const char *a = argv[0];
    if (a[0] == '|') {
        return "Piped logs are not supported";
    }
    if (strncasecmp(a, "syslog", 6) == 0) {
        return "ErrorLog syslog is not supported";
    }
    if (strcmp(a, "stderr") == 0 || strcmp(a, "/dev/stderr") == 0) {
        conf->error_log = hd_pstrdup(cmd->pool, a);
    } else {
        conf->error_log = hd_server_root_relative(cmd->pool, cmd->server, a);
    }
    return NULL;
}

/* Called once per argument: "level" sets the level, "module:level" is checked and ignored. */
static const char *cmd_log_level(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    hd_core_server_conf_t *conf = mconfig;
    static const char levels[] =
        "Log level keyword must be one of emerg/alert/crit/error/warn/notice/info/debug/"
        "trace1/.../trace8";
    const char *colon = strchr(argv[0], ':');
    if (colon != NULL) {
        char *mod = hd_pstrndup(cmd->temp_pool, argv[0], (size_t)(colon - argv[0]));
        if (hd_module_find(mod) == NULL) {
            return hd_psprintf(cmd->temp_pool, "Cannot find module %s", mod);
        }
        if (hd_log_level_parse(colon + 1) < 0) {
            return hd_psprintf(cmd->temp_pool, "%s: %s", argv[0], levels);
        }
        return NULL;
    }
    int level = hd_log_level_parse(argv[0]);
    if (level < 0) {
        return levels;
    }
    conf->log_level = level;
    return NULL;
}

static const char *cmd_keepalive_timeout(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    hd_core_server_conf_t *conf = mconfig;
    const char *a = argv[0];
    size_t digits = strspn(a, "0123456789");
    const char *unit = a + digits;
    long long v = atoll(a);
    if (digits == 0 || digits > 9) {
        return "KeepAliveTimeout has wrong format";
    }
    if (strcmp(unit, "ms") == 0) {
        conf->keepalive_timeout_ms = (int)v;
    } else if ((*unit == '\0' || strcmp(unit, "s") == 0) && v <= 2000000) {
        conf->keepalive_timeout_ms = (int)(v * 1000);
    } else {
        return "KeepAliveTimeout has wrong format";
    }
    return NULL;
}

static const char *cmd_limit_field(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    uint32_t *slot = (uint32_t *)((char *)mconfig + cmd->cmd->offset);
    const char *a = argv[0];
    bool fields = slot == &((hd_core_server_conf_t *)mconfig)->limits.max_fields;
    if (!all_digits(a) || strlen(a) > 9) {
        return hd_psprintf(cmd->temp_pool, "%s \"%s\" must be a non-negative integer%s",
                           cmd->cmd->name, a, fields ? " (0 = no limit)" : "");
    }
    int v = atoi(a);
    if (v > MAX_LIMIT_FIELD) {
        return hd_psprintf(cmd->temp_pool, "%s \"%s\" must be at most %d", cmd->cmd->name, a,
                           MAX_LIMIT_FIELD);
    }
    /* the parser needs a bound for its field array: "no limit" is the largest we take */
    *slot = (uint32_t)(fields && v == 0 ? MAX_LIMIT_FIELD : v);
    return NULL;
}

static const char *cmd_server_tokens(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    static const struct {
        const char *name;
        hd_server_tokens_t value;
    } tokens[] = {
        {"Prod", HD_TOKENS_PROD},   {"ProductOnly", HD_TOKENS_PROD}, {"Major", HD_TOKENS_MAJOR},
        {"Minor", HD_TOKENS_MINOR}, {"Min", HD_TOKENS_MINIMAL},      {"Minimal", HD_TOKENS_MINIMAL},
        {"OS", HD_TOKENS_OS},       {"Full", HD_TOKENS_FULL},
    };
    hd_core_server_conf_t *conf = mconfig;
    for (size_t i = 0; i < HD_ARRAY_SIZE(tokens); i++) {
        if (strcasecmp(argv[0], tokens[i].name) == 0) {
            conf->server_tokens = (int)tokens[i].value;
            return NULL;
        }
    }
    return "ServerTokens takes 1 argument: 'Prod(uctOnly)', 'Major', 'Minor', 'Min(imal)', "
           "'OS', or 'Full'";
}

static const char *cmd_listen_backlog(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    hd_core_server_conf_t *conf = mconfig;
    if (!all_digits(argv[0]) || strlen(argv[0]) > 9 || atoi(argv[0]) <= 0) {
        return "ListenBacklog must be > 0";
    }
    conf->listen_backlog = atoi(argv[0]);
    return NULL;
}

/*
 * AcceptFilter protocol filter. Linux has one kind of filter,
 * TCP_DEFER_ACCEPT: every name but "none" turns it on, as in Apache.
 */
static const char *cmd_accept_filter(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    hd_core_server_conf_t *conf = mconfig;
    hd_accept_filter_t *f = hd_pcalloc(cmd->pool, sizeof(*f));
    f->protocol = hd_pstrdup_lower(cmd->pool, argv[0]);
    f->filter = hd_pstrdup(cmd->pool, argv[1]);
    /* the last one for a protocol wins: newest first */
    f->next = conf->accept_filters;
    conf->accept_filters = f;
    return NULL;
}

const char *hd_core_accept_filter(const hd_server_t *s, const char *protocol)
{
    for (const hd_accept_filter_t *f = hd_core_sconf(s)->accept_filters; f != NULL; f = f->next) {
        if (strcmp(f->protocol, protocol) == 0) {
            return f->filter;
        }
    }
    return "data";
}

/* OpenFileCache Off|On|entries: descriptors kept open per thread. */
static const char *cmd_open_file_cache(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    hd_core_server_conf_t *conf = mconfig;
    if (strcasecmp(argv[0], "off") == 0) {
        conf->open_file_cache = 0;
    } else if (strcasecmp(argv[0], "on") == 0) {
        conf->open_file_cache = HD_FILE_CACHE_DEFAULT;
    } else if (all_digits(argv[0]) && strlen(argv[0]) <= 4 &&
               atoi(argv[0]) <= HD_FILE_CACHE_MAX) {
        conf->open_file_cache = atoi(argv[0]);
    } else {
        return hd_psprintf(cmd->temp_pool,
                           "OpenFileCache must be On, Off or a number of entries from 0 to %d",
                           HD_FILE_CACHE_MAX);
    }
    return NULL;
}

/* ---- directory-level directives -------------------------------------- */

/* Apache's set_options: a list replaces, a +/- list adjusts what is inherited. */
static const char *cmd_options(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {
        {"Indexes", HD_OPT_INDEXES},
        {"FollowSymLinks", HD_OPT_FOLLOWSYMLINKS},
        {"SymLinksIfOwnerMatch", HD_OPT_SYMLINKS_IF_OWNER},
        {"ExecCGI", HD_OPT_EXECCGI},
        {"Includes", HD_OPT_INCLUDES},
        {"IncludesNOEXEC", HD_OPT_INCLUDES}, /* no SSI here: the same bit */
        {"MultiViews", HD_OPT_MULTIVIEWS},
    };
    static const char mix[] = "Either all Options must start with + or -, or no Option may.";
    hd_core_dir_conf_t *d = mconfig;
    bool first = true, merge = false, all_none = false;
    for (int i = 0; i < argc; i++) {
        const char *w = argv[i];
        char action = '\0';
        if (*w == '+' || *w == '-') {
            action = *w++;
            if (!merge && !first && !all_none) {
                return mix;
            }
            merge = true;
        } else if (first) {
            d->options = HD_OPT_NONE;
        } else if (merge) {
            return mix;
        }
        unsigned opt = 0;
        bool known = false;
        for (size_t k = 0; k < HD_ARRAY_SIZE(names) && !known; k++) {
            if (strcasecmp(w, names[k].name) == 0) {
                opt = names[k].bit;
                known = true;
            }
        }
        if (!known && strcasecmp(w, "None") == 0) {
            if (!first) {
                return "'Options None' must be the first Option given.";
            }
            if (action) {
                return "You may not use 'Options +None' or 'Options -None'.";
            }
            opt = HD_OPT_NONE;
            known = all_none = true;
        } else if (!known && strcasecmp(w, "All") == 0) {
            if (!first) {
                return "'Options All' must be the first option given.";
            }
            if (action) {
                return "You may not use 'Options +All' or 'Options -All'.";
            }
            opt = HD_OPT_ALL;
            known = all_none = true;
        }
        if (!known) {
            return hd_psprintf(cmd->temp_pool, "Illegal option %s", w);
        }
        if (action == '-') {
            d->options_remove |= opt;
            d->options_add &= ~opt;
            d->options &= ~opt;
        } else if (action == '+') {
            d->options_add |= opt;
            d->options_remove &= ~opt;
            d->options |= opt;
        } else {
            d->options |= opt;
        }
        first = false;
    }
    return NULL;
}

/* Apache's ap_is_url: a scheme, then "://". */
static bool is_url(const char *s)
{
    if (!isalpha((unsigned char)*s)) {
        return false;
    }
    while (isalnum((unsigned char)*s) || *s == '+' || *s == '-' || *s == '.') {
        s++;
    }
    return strncmp(s, "://", 3) == 0;
}

static const char *cmd_error_document(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    hd_core_dir_conf_t *d = mconfig;
    const char *code = argv[0], *msg = argv[1];
    int status = strlen(code) == 3 && all_digits(code) ? atoi(code) : 0;
    if (status < 400 || status > 599) {
        return hd_psprintf(cmd->temp_pool, "Unsupported HTTP response code %s", code);
    }
    const char *value = NULL; /* "default": back to the built-in page */
    if (strcasecmp(msg, "default") != 0) {
        /* Apache's heuristic: a space makes it a message, else a path or a URL */
        if (status == 401 && strchr(msg, ' ') == NULL && is_url(msg)) {
            hd_log_error(HD_LOG_NOTICE, "core",
                         "%s:%u cannot use a full URL in a 401 ErrorDocument directive --- "
                         "ignoring!",
                         cmd->file, cmd->line);
            return NULL;
        }
        value = hd_pstrdup(cmd->pool, msg[0] == '"' ? msg + 1 : msg);
    }
    hd_error_document_t *docs = hd_palloc(cmd->pool, (size_t)(d->n_error_docs + 1) * sizeof(*docs));
    if (d->n_error_docs > 0) {
        memcpy(docs, d->error_docs, (size_t)d->n_error_docs * sizeof(*docs));
    }
    docs[d->n_error_docs] = (hd_error_document_t){.status = status, .value = value};
    d->error_docs = docs;
    d->n_error_docs++;
    return NULL;
}

static const char *cmd_limit_request_body(hd_cmd_parms_t *cmd, void *mconfig, int argc,
                                          char *argv[])
{
    hd_core_dir_conf_t *d = mconfig;
    const char *a = argv[0];
    if (a[0] == '-' && all_digits(a + 1)) {
        return "LimitRequestBody requires a non-negative integer.";
    }
    if (!all_digits(a) || strlen(a) > 18) {
        return "LimitRequestBody argument is not parsable.";
    }
    d->limit_request_body = atoll(a);
    return NULL;
}

static const char *cmd_set_handler(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    hd_core_dir_conf_t *d = mconfig;
    if (strcasecmp(argv[0], "none") == 0) {
        d->handler = cmd->context == HD_CTX_MAIN ? NULL : handler_none;
        return NULL;
    }
    d->handler = hd_pstrdup_lower(cmd->pool, argv[0]);
    return NULL;
}

/* ---- after reading --------------------------------------------------- */

static const char *banner(hd_pool_t *p, int tokens)
{
    const char *v = HD_VERSION;
    const char *dot1 = strchr(v, '.');
    const char *dot2 = dot1 ? strchr(dot1 + 1, '.') : NULL;
    switch (tokens) {
    case HD_TOKENS_PROD:
        return HD_SERVER_BASEPRODUCT;
    case HD_TOKENS_MAJOR:
        return hd_psprintf(p, "%s/%.*s", HD_SERVER_BASEPRODUCT,
                           (int)(dot1 ? dot1 - v : (int)strlen(v)), v);
    case HD_TOKENS_MINOR:
        return hd_psprintf(p, "%s/%.*s", HD_SERVER_BASEPRODUCT,
                           (int)(dot2 ? dot2 - v : (int)strlen(v)), v);
    case HD_TOKENS_MINIMAL:
        return HD_SERVER_BASEPRODUCT "/" HD_VERSION;
    default:
        return HD_SERVER_BASEPRODUCT "/" HD_VERSION " (Unix)";
    }
}

static int core_post_config(hd_server_t *s)
{
    hd_core_server_conf_t *conf = hd_core_sconf(s);
    if (s->listeners == NULL) {
        hd_config_error(s, "No Listen directive: at least one Listen is needed");
        return HD_ERROR;
    }
    if (conf->document_root == NULL) {
        conf->document_root = hd_server_root_relative(s->pool, s, "htdocs");
    }
    conf->pid_file = hd_server_root_relative(s->pool, s, conf->pid_file);
    if (conf->server_name == NULL) {
        char host[256];
        if (gethostname(host, sizeof(host)) == 0) {
            host[sizeof(host) - 1] = '\0';
            conf->server_name = hd_pstrdup(s->pool, host);
        } else {
            conf->server_name = "localhost";
        }
    }
    if (s->cmdline_log_level >= 0) {
        conf->log_level = s->cmdline_log_level;
    }
    conf->server_banner = banner(s->pool, conf->server_tokens);
    hd_config_index_sections(s);
    return HD_OK;
}

/* ---- the table ------------------------------------------------------- */

#define SCONF(field) offsetof(hd_core_server_conf_t, field)
#define DCONF(field) offsetof(hd_core_dir_conf_t, field)
#define MAIN HD_CTX_MAIN
#define ANY HD_CTX_ANY
#define SRV HD_CONF_SERVER
#define DIRL HD_CONF_DIR

static const hd_command_t core_commands[] = {
    {"<Directory", hd_config_cmd_section, 0, HD_TAKE_ARGV, MAIN, SRV, "directory-path|~ regex",
     NULL, "Container for directives affecting resources located in the specified directories"},
    {"<DirectoryMatch", hd_config_cmd_section, 0, HD_TAKE_ARGV, MAIN, SRV, "regex", NULL,
     "Container for directives affecting resources located in the specified directories"},
    {"<Location", hd_config_cmd_section, 0, HD_TAKE_ARGV, MAIN, SRV, "URL-path|~ regex", NULL,
     "Container for directives affecting resources accessed through the specified URL paths"},
    {"<LocationMatch", hd_config_cmd_section, 0, HD_TAKE_ARGV, MAIN, SRV, "regex", NULL,
     "Container for directives affecting resources accessed through the specified URL paths"},
    {"<Files", hd_config_cmd_section, 0, HD_TAKE_ARGV, ANY, SRV, "filename|~ regex", NULL,
     "Container for directives affecting files matching specified patterns"},
    {"<FilesMatch", hd_config_cmd_section, 0, HD_TAKE_ARGV, ANY, SRV, "regex", NULL,
     "Container for directives affecting files matching specified patterns"},
    {"<IfModule", hd_config_cmd_ifmodule, 0, HD_TAKE1, ANY, SRV, "[!]module-file|module-identifier",
     NULL, "Container for directives based on existence of specified modules"},
    {"<IfDefine", hd_config_cmd_ifdefine, 0, HD_TAKE1, ANY, SRV, "[!]parameter-name", NULL,
     "Container for directives based on existence of command line defines"},
    {"Include", hd_config_cmd_include, 0, HD_TAKE1, ANY, SRV, "file-path|directory-path|wildcard",
     NULL,
     "Name(s) of the config file(s) to be included; fails if the wildcard does not match at "
     "least one file"},
    {"IncludeOptional", hd_config_cmd_include_optional, 0, HD_TAKE1, ANY, SRV,
     "file-path|directory-path|wildcard", NULL,
     "Name or pattern of the config file(s) to be included; ignored if the file does not exist "
     "or the pattern does not match any files"},
    {"Define", hd_config_cmd_define, 0, HD_TAKE12, ANY, SRV, "parameter-name [parameter-value]",
     NULL, "Define a variable, optionally to a value.  Same as passing -D to the command line."},
    {"UnDefine", hd_config_cmd_undefine, 0, HD_TAKE1, ANY, SRV, "parameter-name", NULL,
     "Undefine the existence of a variable. Undo a Define."},
    {"LoadModule", cmd_load_module, 0, HD_TAKE2, MAIN, SRV, "module filename", NULL,
     "a module name and the name of a shared object file to load it from (every module is "
     "built in: the file is not read)"},
    {"ServerRoot", cmd_server_root, 0, HD_TAKE1, MAIN, SRV, "directory-path", NULL,
     "Common directory of server-related files (logs, confs, etc.)"},
    {"Listen", cmd_listen, 0, HD_TAKE12, MAIN, SRV, "[IP-address:]portnumber [protocol]", NULL,
     "A port number or a numeric IP address and a port number, and an optional protocol"},
    {"AcceptFilter", cmd_accept_filter, 0, HD_TAKE2, MAIN, SRV, "protocol accept_filter",
     "http data", "Accept filter for a protocol: \"none\" hands connections over at once; any "
     "other (data, httpready) waits until the client has sent data (TCP_DEFER_ACCEPT)"},
    {"OpenFileCache", cmd_open_file_cache, 0, HD_TAKE1, MAIN, SRV, "On|Off|entries", "32",
     "Descriptors of served files kept open per thread; each use is checked against the "
     "request's stat of the path, so a changed file is opened again"},
    {"ListenBacklog", cmd_listen_backlog, 0, HD_TAKE1, MAIN, SRV, "backlog", "511",
     "Maximum length of the queue of pending connections, as used by listen(2)"},
    {"ServerName", hd_set_string_slot, SCONF(server_name), HD_TAKE1, MAIN, SRV,
     "domain-name|ip-address[:port]", NULL, "The hostname and port of the server"},
    {"DocumentRoot", cmd_document_root, 0, HD_TAKE1, MAIN, SRV, "directory-path", "htdocs",
     "Root directory of the document tree"},
    {"ErrorLog", cmd_error_log, 0, HD_TAKE1, MAIN, SRV, "file-path|stderr", "stderr",
     "The filename of the error log"},
    {"LogLevel", cmd_log_level, 0, HD_ITERATE, MAIN, SRV, "[module:]level [module:level] ...",
     "warn", "Level of verbosity in error logging"},
    {"PidFile", hd_set_path_slot, SCONF(pid_file), HD_TAKE1, MAIN, SRV, "filename",
     "logs/httpd.pid", "A file for logging the server process ID"},
    {"Timeout", hd_set_int_slot, SCONF(timeout_s), HD_TAKE1, MAIN, SRV, "seconds", "60",
     "Timeout duration (sec)"},
    {"KeepAlive", hd_set_flag_slot, SCONF(keepalive), HD_FLAG, MAIN, SRV, "On|Off", "On",
     "Whether persistent connections should be On or Off"},
    {"KeepAliveTimeout", cmd_keepalive_timeout, 0, HD_TAKE1, MAIN, SRV, "num[ms]", "5",
     "Keep-Alive timeout duration (sec)"},
    {"MaxKeepAliveRequests", hd_set_int_slot, SCONF(max_keepalive_requests), HD_TAKE1, MAIN, SRV,
     "number", "100", "Maximum number of Keep-Alive requests per connection, or 0 for infinite"},
    {"LimitRequestLine", cmd_limit_field, SCONF(limits.max_request_line), HD_TAKE1, MAIN, SRV,
     "bytes", "8190", "Limit on maximum size of an HTTP request line"},
    {"LimitRequestFieldSize", cmd_limit_field, SCONF(limits.max_field_size), HD_TAKE1, MAIN, SRV,
     "bytes", "8190", "Limit on maximum size of an HTTP request header field"},
    {"LimitRequestFields", cmd_limit_field, SCONF(limits.max_fields), HD_TAKE1, MAIN, SRV, "number",
     "100", "Limit (0 = unlimited) on max number of header fields in a request message"},
    {"ServerTokens", cmd_server_tokens, 0, HD_TAKE1, MAIN, SRV,
     "Major|Minor|Minimal|ProductOnly|OS|Full", "Full",
     "Determine tokens displayed in the Server: header - Min(imal), Major, Minor, "
     "Prod(uctOnly), OS, or Full"},
    {"Options", cmd_options, 0, HD_TAKE_ARGV, ANY, DIRL, "[+|-]option [[+|-]option] ...",
     "FollowSymLinks", "Set a number of attributes for a given directory"},
    {"EnableSendfile", hd_set_flag_slot, DCONF(enable_sendfile), HD_FLAG, ANY, DIRL, "On|Off", "On",
     "Controls whether sendfile may be used to transmit a file (On here; Off in Apache)"},
    {"LimitRequestBody", cmd_limit_request_body, 0, HD_TAKE1, ANY, DIRL, "bytes", "1073741824",
     "Limit (in bytes) on maximum size of request message body"},
    {"ErrorDocument", cmd_error_document, 0, HD_TAKE2, ANY, DIRL, "error-code document", NULL,
     "Change responses for HTTP errors"},
    {"SetHandler", cmd_set_handler, 0, HD_TAKE1, ANY, DIRL, "handler-name|none", NULL,
     "a handler name that overrides any other configured handler"},
    {.name = NULL},
};

hd_module_t hd_core_module = {
    .name = "core",
    .source_name = "core.c",
    .always_loaded = true,
    .commands = core_commands,
    .create_server_config = core_create_server,
    .create_dir_config = core_create_dir,
    .merge_dir_config = core_merge_dir,
    .post_config = core_post_config,
};
