/*
 * The configuration reader: Apache syntax, read in one pass. Lines are
 * joined (backslash continuation), ${VAR} substituted, split into words and
 * handed to the handler of the directive in the table of a loaded module.
 * Containers (<Directory>, <IfModule> ...) are directives too: their
 * handlers read the lines up to the closing tag, so nesting follows the C
 * call stack. The first error stops the reader, as in Apache.
 */
#include "config_internal.h"
#include "log.h"
#include "module.h"
#include "pool.h"
#include "regex.h"
#include "strbuf.h"
#include "sys.h"

#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CMDLINE_FILE "(command line)"

typedef struct {
    const char *file;
    const char *buf; /* NUL-terminated contents */
    size_t pos;
    unsigned line; /* physical lines consumed so far */
} source_t;

typedef struct {
    hd_section_t *sec; /* enclosing <Directory>/<Location>/<Files>, or NULL */
    unsigned context;  /* HD_CTX_* */
    const char *name;  /* its opener, "<Directory", for messages */
} scope_t;

typedef struct {
    const char *name;
    const char *value; /* NULL: defined without a value (-D, "Define X") */
} var_t;

typedef struct {
    hd_server_t *s;
    hd_pool_t *temp;
    source_t *src;
    scope_t scope;
    hd_array_t *vars;
    int depth;
    hd_section_t *last_section;
    char *err; /* "file:line: message" once something failed */
} reader_t;

/* Handlers reach the reader through this: hd_cmd_parms_t has no slot for it. */
static __thread reader_t *cur_reader;
static __thread char post_config_error[1024];
static __thread bool post_config_error_set;

/* Returned by container and Include handlers when the error is already in rd->err. */
const char hd_config_nested_error[] = "(nested error)";

static bool read_block(reader_t *rd, source_t *src, const char *open, unsigned open_line,
                       bool skip);

static bool fail(reader_t *rd, const char *file, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bool fail(reader_t *rd, const char *file, unsigned line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = hd_pvsprintf(rd->temp, fmt, ap);
    va_end(ap);
    rd->err = line ? hd_psprintf(rd->temp, "%s:%u: %s", file, line, msg)
                   : hd_psprintf(rd->temp, "%s: %s", file, msg);
    return false;
}

/* ---- lexing ---------------------------------------------------------- */

/*
 * The next logical line, trimmed, or NULL at the end. A backslash ending a
 * line joins the next one to it (a doubled backslash is a literal one), as
 * Apache's ap_cfg_getline does.
 */
static char *next_line(reader_t *rd, source_t *src, unsigned *lineno)
{
    const char *b = src->buf;
    if (b[src->pos] == '\0') {
        return NULL;
    }
    hd_strbuf_t sb = {.pool = rd->temp};
    *lineno = src->line + 1;
    while (b[src->pos] != '\0') {
        const char *start = b + src->pos;
        const char *nl = strchr(start, '\n');
        size_t len = nl ? (size_t)(nl - start) : strlen(start);
        src->pos += len + (nl ? 1 : 0);
        src->line++;
        while (len > 0 && isspace((unsigned char)start[len - 1])) {
            len--;
        }
        bool more = false;
        if (len > 0 && start[len - 1] == '\\') {
            len--;
            more = !(len > 0 && start[len - 1] == '\\');
        }
        hd_strbuf_add(&sb, start, len);
        if (!more) {
            break;
        }
    }
    if (sb.buf == NULL) {
        hd_strbuf_add(&sb, "", 0);
    }
    char *line = sb.buf;
    while (isspace((unsigned char)*line)) {
        line++;
    }
    return line;
}

static const var_t *find_var(reader_t *rd, const char *name, size_t n)
{
    const var_t *v = rd->vars->elts;
    for (size_t i = 0; i < rd->vars->nelts; i++) {
        if (v[i].name != NULL && strlen(v[i].name) == n && strncmp(v[i].name, name, n) == 0) {
            return &v[i];
        }
    }
    return NULL;
}

/* ${NAME}: a Define'd value, else the environment, else left as is (with a warning). */
static char *substitute(reader_t *rd, char *line)
{
    if (strstr(line, "${") == NULL) {
        return line;
    }
    hd_strbuf_t sb = {.pool = rd->temp};
    const char *p = line;
    for (;;) {
        const char *v = strstr(p, "${");
        const char *end = v ? strchr(v + 2, '}') : NULL;
        if (end == NULL) {
            hd_strbuf_add(&sb, p, strlen(p));
            break;
        }
        hd_strbuf_add(&sb, p, (size_t)(v - p));
        const char *name = v + 2;
        size_t n = (size_t)(end - name);
        const var_t *var = find_var(rd, name, n);
        const char *val = var ? var->value : NULL;
        if (val == NULL) {
            val = getenv(hd_pstrndup(rd->temp, name, n));
        }
        if (val != NULL) {
            hd_strbuf_add(&sb, val, strlen(val));
        } else {
            hd_log_error(HD_LOG_WARNING, "core", "Config variable ${%.*s} is not defined", (int)n,
                         name);
            hd_strbuf_add(&sb, v, (size_t)(end + 1 - v));
        }
        p = end + 1;
    }
    return sb.buf;
}

/*
 * The next word of *str, as Apache's ap_getword_conf: a word opening with a
 * quote runs to the matching quote (backslash escapes that quote), others
 * run to white space. NULL when no word is left.
 */
static char *next_word(hd_pool_t *p, const char **str)
{
    const char *s = *str;
    while (isspace((unsigned char)*s)) {
        s++;
    }
    if (*s == '\0') {
        *str = s;
        return NULL;
    }
    if (*s == '"' || *s == '\'') {
        char q = *s++;
        hd_strbuf_t sb = {.pool = p};
        hd_strbuf_add(&sb, "", 0);
        while (*s != '\0' && *s != q) {
            if (s[0] == '\\' && s[1] == q) {
                s++;
            }
            hd_strbuf_add(&sb, s, 1);
            s++;
        }
        *str = (*s == q) ? s + 1 : s;
        return sb.buf;
    }
    const char *e = s;
    while (*e != '\0' && !isspace((unsigned char)*e)) {
        e++;
    }
    *str = e;
    return hd_pstrndup(p, s, (size_t)(e - s));
}

/* ---- dispatch -------------------------------------------------------- */

static const hd_command_t *find_command(const hd_server_t *s, const char *name, hd_module_t **mod)
{
    hd_module_t *m;
    HD_FOR_EACH_LOADED_MODULE(s, m)
    {
        for (const hd_command_t *c = m->commands; c != NULL && c->name != NULL; c++) {
            if (strcasecmp(c->name, name) == 0) {
                *mod = m;
                return c;
            }
        }
    }
    return NULL;
}

static const char *args_error(hd_pool_t *p, const hd_command_t *c, const char *what)
{
    return hd_psprintf(p, "%s %s%s%s", c->name, what, c->help ? ", " : "", c->help ? c->help : "");
}

/* Apache's argument-count messages, for each shape. */
static const char *check_args(hd_pool_t *p, const hd_command_t *c, int argc)
{
    switch (c->args) {
    case HD_NO_ARGS:
        return argc == 0 ? NULL : hd_psprintf(p, "%s takes no arguments", c->name);
    case HD_TAKE1:
        return argc == 1 ? NULL : args_error(p, c, "takes one argument");
    case HD_TAKE2:
        return argc == 2 ? NULL : args_error(p, c, "takes two arguments");
    case HD_TAKE3:
        return argc == 3 ? NULL : args_error(p, c, "takes three arguments");
    case HD_TAKE12:
        return argc == 1 || argc == 2 ? NULL : args_error(p, c, "takes 1-2 arguments");
    case HD_TAKE13:
        return argc == 1 || argc == 3 ? NULL : args_error(p, c, "takes one or three arguments");
    case HD_TAKE23:
        return argc == 2 || argc == 3 ? NULL : args_error(p, c, "takes two or three arguments");
    case HD_TAKE123:
        return argc >= 1 && argc <= 3 ? NULL
                                      : args_error(p, c, "takes one, two or three arguments");
    case HD_ITERATE:
        return argc >= 1 ? NULL : args_error(p, c, "requires at least one argument");
    case HD_ITERATE2:
        return argc >= 2 ? NULL : args_error(p, c, "requires at least two arguments");
    case HD_FLAG:
        return argc == 1 ? NULL : hd_psprintf(p, "%s must be On or Off", c->name);
    case HD_TAKE_ARGV:
    case HD_RAW_ARGS:
        return NULL;
    }
    return NULL;
}

static const char *invoke(hd_cmd_parms_t *parms, void *mconfig, int argc, char *argv[])
{
    const hd_command_t *c = parms->cmd;
    const char *msg = check_args(parms->temp_pool, c, argc);
    if (msg != NULL) {
        return msg;
    }
    switch (c->args) {
    case HD_FLAG: {
        char *v;
        if (strcasecmp(argv[0], "on") == 0) {
            v = "on";
        } else if (strcasecmp(argv[0], "off") == 0) {
            v = "off";
        } else {
            return hd_psprintf(parms->temp_pool, "%s must be On or Off", c->name);
        }
        return c->fn(parms, mconfig, 1, &v);
    }
    case HD_ITERATE:
        for (int i = 0; i < argc; i++) {
            if ((msg = c->fn(parms, mconfig, 1, &argv[i])) != NULL) {
                return msg;
            }
        }
        return NULL;
    case HD_ITERATE2:
        for (int i = 1; i < argc; i++) {
            char *pair[2] = {argv[0], argv[i]};
            if ((msg = c->fn(parms, mconfig, 2, pair)) != NULL) {
                return msg;
            }
        }
        return NULL;
    default:
        return c->fn(parms, mconfig, argc, argv);
    }
}

static void *dir_config_for(reader_t *rd, hd_module_t *m)
{
    hd_section_t *sec = rd->scope.sec;
    if (sec == NULL) {
        return rd->s->dir_default[m->index];
    }
    if (sec->dir_conf[m->index] == NULL && m->create_dir_config != NULL) {
        sec->dir_conf[m->index] = m->create_dir_config(rd->s->pool, sec->path);
    }
    return sec->dir_conf[m->index];
}

static bool dispatch(reader_t *rd, source_t *src, char *line, unsigned lineno)
{
    bool container = line[0] == '<';
    size_t n = strcspn(line, container ? " \t>" : " \t");
    char *name = hd_pstrndup(rd->temp, line, n);
    const char *rest = line + n;
    while (isspace((unsigned char)*rest)) {
        rest++;
    }
    hd_module_t *m = NULL;
    const hd_command_t *c = find_command(rd->s, name, &m);
    if (c == NULL) {
        return fail(rd, src->file, lineno,
                    "Invalid command '%s', perhaps misspelled or defined by a module not "
                    "included in the server configuration",
                    name);
    }
    if (container) {
        const char *gt = strrchr(rest, '>');
        if (gt == NULL) {
            return fail(rd, src->file, lineno, "%s> directive missing closing '>'", c->name);
        }
        size_t len = (size_t)(gt - rest);
        while (len > 0 && isspace((unsigned char)rest[len - 1])) {
            len--;
        }
        if (len == 0) {
            return fail(rd, src->file, lineno, "%s> directive requires additional arguments",
                        c->name);
        }
        rest = hd_pstrndup(rd->temp, rest, len);
    }
    if ((c->contexts & rd->scope.context) == 0) {
        if (rd->scope.sec == NULL) {
            return fail(rd, src->file, lineno, "%s not allowed here", c->name);
        }
        return fail(rd, src->file, lineno, "%s not allowed in %s> context", c->name,
                    rd->scope.name);
    }

    int argc = 0;
    char **argv;
    if (c->args == HD_RAW_ARGS) {
        argv = hd_palloc(rd->temp, 2 * sizeof(char *));
        argv[argc++] = hd_pstrdup(rd->temp, rest);
    } else {
        hd_array_t *words = hd_array_create(rd->temp, 8, sizeof(char *));
        char *w;
        while ((w = next_word(rd->temp, &rest)) != NULL) {
            *(char **)hd_array_push(words) = w;
        }
        *(char **)hd_array_push(words) = NULL;
        argv = words->elts;
        argc = (int)words->nelts - 1;
    }

    hd_cmd_parms_t parms = {
        .server = rd->s,
        .pool = rd->s->pool,
        .temp_pool = rd->temp,
        .cmd = c,
        .module = m,
        .file = src->file,
        .line = lineno,
        .context = rd->scope.context,
        .section_path = rd->scope.sec ? rd->scope.sec->path : NULL,
    };
    void *mconfig =
        c->level == HD_CONF_DIR ? dir_config_for(rd, m) : rd->s->module_config[m->index];
    const char *msg = invoke(&parms, mconfig, argc, argv);
    if (msg != NULL) {
        if (rd->err == NULL) {
            fail(rd, src->file, lineno, "%s", msg);
        }
        return false;
    }
    return rd->err == NULL;
}

/*
 * Reads lines until the end of @p src, or until the closing tag of the
 * container @p open ("<Directory") opened at @p open_line. With @p skip (a
 * false <IfModule>/<IfDefine>) lines are only checked for balanced tags.
 */
static bool read_block(reader_t *rd, source_t *src, const char *open, unsigned open_line, bool skip)
{
    unsigned lineno;
    char *line;
    while ((line = next_line(rd, src, &lineno)) != NULL) {
        if (line[0] == '\0' || line[0] == '#') {
            continue;
        }
        if (line[0] == '<' && line[1] == '/') {
            size_t n = strcspn(line, " \t");
            if (line[n - 1] != '>') {
                return fail(rd, src->file, lineno, "%.*s> directive missing closing '>'", (int)n,
                            line);
            }
            const char *name = line + 2;
            n -= 3;
            if (open == NULL) {
                return fail(rd, src->file, lineno, "</%.*s> without matching <%.*s> section",
                            (int)n, name, (int)n, name);
            }
            if (strlen(open + 1) != n || strncasecmp(open + 1, name, n) != 0) {
                return fail(rd, src->file, lineno, "Expected </%s> but saw </%.*s>", open + 1,
                            (int)n, name);
            }
            return true;
        }
        if (skip) {
            if (line[0] == '<') {
                char *name = hd_pstrndup(rd->temp, line, strcspn(line, " \t>"));
                if (!read_block(rd, src, name, lineno, true)) {
                    return false;
                }
            }
            continue;
        }
        if (!dispatch(rd, src, substitute(rd, line), lineno)) {
            return false;
        }
    }
    if (open != NULL) {
        return fail(rd, src->file, open_line, "%s> was not closed.", open);
    }
    return true;
}

/* ---- files and Include ----------------------------------------------- */

static char *load_file(hd_pool_t *p, const char *path)
{
    int fd = hd_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) {
        return NULL;
    }
    hd_strbuf_t sb = {.pool = p};
    hd_strbuf_add(&sb, "", 0);
    char chunk[8192];
    for (;;) {
        ssize_t n = hd_read(fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            int e = errno;
            hd_close(fd);
            errno = e;
            return NULL;
        }
        if (n == 0) {
            break;
        }
        hd_strbuf_add(&sb, chunk, (size_t)n);
    }
    hd_close(fd);
    return sb.buf;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool include_path(reader_t *rd, const char *path, const char *from_file, unsigned from_line);

/* A directory: every entry, sorted, directories recursively (as Apache). */
static bool include_dir(reader_t *rd, const char *dir, const char *from_file, unsigned from_line)
{
    DIR *d = hd_opendir(dir);
    if (d == NULL) {
        return fail(rd, from_file, from_line, "Could not open config directory %s: %s", dir,
                    strerror(errno));
    }
    hd_array_t *names = hd_array_create(rd->temp, 16, sizeof(char *));
    struct dirent *de;
    while ((de = hd_readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
            *(char **)hd_array_push(names) = hd_psprintf(rd->temp, "%s/%s", dir, de->d_name);
        }
    }
    hd_closedir(d);
    qsort(names->elts, names->nelts, sizeof(char *), cmp_str);
    for (size_t i = 0; i < names->nelts; i++) {
        if (!include_path(rd, ((char **)names->elts)[i], from_file, from_line)) {
            return false;
        }
    }
    return true;
}

/* Reads one file or directory; errors are reported at the including line. */
static bool include_path(reader_t *rd, const char *path, const char *from_file, unsigned from_line)
{
    if (rd->depth >= HD_MAX_INCLUDE_DEPTH) {
        return fail(rd, from_file, from_line,
                    "Exceeded maximum include depth of %d, There appears to be a recursion.",
                    HD_MAX_INCLUDE_DEPTH);
    }
    struct stat st;
    if (hd_stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        rd->depth++;
        bool ok = include_dir(rd, path, from_file, from_line);
        rd->depth--;
        return ok;
    }
    char *buf = load_file(rd->temp, path);
    if (buf == NULL) {
        return fail(rd, from_file, from_line, "Could not open configuration file %s: %s", path,
                    strerror(errno));
    }
    source_t src = {.file = hd_pstrdup(rd->s->pool, path), .buf = buf};
    source_t *saved = rd->src;
    rd->src = &src;
    rd->depth++;
    bool ok = read_block(rd, &src, NULL, 0, false);
    rd->depth--;
    rd->src = saved;
    return ok;
}

static const char *include(hd_cmd_parms_t *cmd, const char *arg, bool optional)
{
    reader_t *rd = cur_reader;
    const char *path = hd_server_root_relative(rd->temp, rd->s, arg);
    if (strpbrk(path, "*?[") == NULL) {
        struct stat st;
        if (hd_stat(path, &st) < 0) {
            if (optional) {
                return NULL;
            }
            return hd_psprintf(cmd->temp_pool, "Could not open configuration file %s: %s", path,
                               strerror(errno));
        }
        return include_path(rd, path, cmd->file, cmd->line) ? NULL : hd_config_nested_error;
    }
    glob_t g;
    int rc = glob(path, 0, NULL, &g);
    if (rc != 0) {
        if (rc != GLOB_NOMATCH) {
            globfree(&g);
        }
        if (optional) {
            return NULL;
        }
        const char *slash = strrchr(path, '/');
        char *dir = hd_pstrndup(cmd->temp_pool, path, slash == path ? 1 : (size_t)(slash - path));
        struct stat st;
        if (strpbrk(dir, "*?[") == NULL && hd_stat(dir, &st) < 0) {
            return hd_psprintf(cmd->temp_pool,
                               "Include/IncludeOptional: Could not open directory %s: %s", dir,
                               strerror(errno));
        }
        return hd_psprintf(cmd->temp_pool,
                           "Include/IncludeOptional: No matches for the wildcard '%s' in '%s', "
                           "failing",
                           slash + 1, dir);
    }
    /* glob sorts its results, so files are read in name order */
    char **paths = hd_palloc(rd->temp, (g.gl_pathc + 1) * sizeof(char *));
    size_t n = g.gl_pathc;
    for (size_t i = 0; i < n; i++) {
        paths[i] = hd_pstrdup(rd->temp, g.gl_pathv[i]);
    }
    globfree(&g);
    for (size_t i = 0; i < n; i++) {
        if (!include_path(rd, paths[i], cmd->file, cmd->line)) {
            return hd_config_nested_error;
        }
    }
    return NULL;
}

const char *hd_config_cmd_include(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    return include(cmd, argv[0], false);
}

const char *hd_config_cmd_include_optional(hd_cmd_parms_t *cmd, void *mconfig, int argc,
                                           char *argv[])
{
    return include(cmd, argv[0], true);
}

/* ---- the reader's own directives ------------------------------------- */

/* s->defines is rebuilt from the variables after each change: it is NULL-terminated. */
static void sync_defines(reader_t *rd)
{
    const var_t *v = rd->vars->elts;
    const char **d = hd_palloc(rd->s->pool, (rd->vars->nelts + 1) * sizeof(char *));
    size_t n = 0;
    for (size_t i = 0; i < rd->vars->nelts; i++) {
        if (v[i].name != NULL) {
            d[n++] = v[i].name;
        }
    }
    d[n] = NULL;
    rd->s->defines = d;
}

static void set_var(reader_t *rd, const char *name, const char *value)
{
    var_t *v = (var_t *)find_var(rd, name, strlen(name));
    if (v == NULL) {
        v = hd_array_push(rd->vars);
        v->name = hd_pstrdup(rd->s->pool, name);
    }
    v->value = value ? hd_pstrdup(rd->s->pool, value) : NULL;
    sync_defines(rd);
}

const char *hd_config_cmd_define(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    if (strchr(argv[0], ':') != NULL) {
        return "Variable name must not contain ':'";
    }
    set_var(cur_reader, argv[0], argc > 1 ? argv[1] : NULL);
    return NULL;
}

const char *hd_config_cmd_undefine(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    reader_t *rd = cur_reader;
    var_t *v = (var_t *)find_var(rd, argv[0], strlen(argv[0]));
    if (v != NULL) {
        v->name = NULL;
        sync_defines(rd);
    }
    return NULL;
}

char *hd_config_absolute_path(hd_pool_t *p, const char *path)
{
    char *abs;
    if (path[0] == '/') {
        abs = hd_pstrdup(p, path);
    } else {
        char cwd[PATH_MAX];
        if (getcwd(cwd, sizeof(cwd)) == NULL) {
            return NULL;
        }
        abs = strcmp(path, ".") == 0 ? hd_pstrdup(p, cwd) : hd_psprintf(p, "%s/%s", cwd, path);
    }
    size_t n = strlen(abs);
    while (n > 1 && abs[n - 1] == '/') {
        abs[--n] = '\0';
    }
    return abs;
}

/* ---- containers ------------------------------------------------------ */

hd_section_t *hd_config_current_section(const char **opener)
{
    reader_t *rd = cur_reader;
    if (opener != NULL) {
        *opener = rd->scope.name;
    }
    return rd->scope.sec;
}

bool hd_config_read_section(hd_cmd_parms_t *cmd, hd_section_t *sec, unsigned context)
{
    reader_t *rd = cur_reader;
    if (rd->last_section != NULL) {
        rd->last_section->next = sec;
    } else {
        cmd->server->sections = sec;
    }
    rd->last_section = sec;
    scope_t saved = rd->scope;
    rd->scope = (scope_t){.sec = sec, .context = context, .name = cmd->cmd->name};
    bool ok = read_block(rd, rd->src, cmd->cmd->name, cmd->line, false);
    rd->scope = saved;
    return ok;
}

const char *hd_config_cmd_ifmodule(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    const char *arg = argv[0];
    bool negate = arg[0] == '!';
    hd_module_t *m = hd_module_find(arg + negate);
    bool cond = (m != NULL && hd_module_loaded(cmd->server, m)) != negate;
    reader_t *rd = cur_reader;
    return read_block(rd, rd->src, cmd->cmd->name, cmd->line, !cond) ? NULL
                                                                     : hd_config_nested_error;
}

const char *hd_config_cmd_ifdefine(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    const char *arg = argv[0];
    bool negate = arg[0] == '!';
    bool found = false;
    for (const char *const *d = cmd->server->defines; d != NULL && *d != NULL; d++) {
        if (strcmp(*d, arg + negate) == 0) {
            found = true;
        }
    }
    reader_t *rd = cur_reader;
    return read_block(rd, rd->src, cmd->cmd->name, cmd->line, found == negate)
               ? NULL
               : hd_config_nested_error;
}

/* ---- reading a whole configuration ----------------------------------- */

static bool run_cmdline(reader_t *rd, const char *const *directives)
{
    for (unsigned i = 0; directives != NULL && directives[i] != NULL; i++) {
        source_t src = {.file = CMDLINE_FILE, .buf = directives[i], .line = i};
        rd->src = &src;
        bool ok = read_block(rd, &src, NULL, 0, false);
        rd->src = NULL;
        if (!ok) {
            return false;
        }
    }
    return true;
}

static bool check_mpm(reader_t *rd)
{
    if (rd->s->mpm != NULL) {
        return true;
    }
    hd_strbuf_t sb = {.pool = rd->temp};
    hd_strbuf_add(&sb, "", 0);
    int n = 0, total = 0;
    for (int i = 0; i < hd_num_modules; i++) {
        total += hd_builtin_modules[i]->mpm != NULL;
    }
    for (int i = 0; i < hd_num_modules; i++) {
        hd_module_t *m = hd_builtin_modules[i];
        if (m->mpm == NULL) {
            continue;
        }
        n++;
        const char *sep = n == 1 ? "" : n == total ? " or " : ", ";
        char *item = hd_psprintf(rd->temp, "%s%s_module", sep, m->name);
        hd_strbuf_add(&sb, item, strlen(item));
    }
    return fail(rd, rd->s->conf_file, 0, "No MPM loaded. Load one with LoadModule (%s).", sb.buf);
}

static bool post_config(reader_t *rd)
{
    hd_module_t *m;
    HD_FOR_EACH_LOADED_MODULE(rd->s, m)
    {
        if (m->post_config == NULL) {
            continue;
        }
        post_config_error_set = false;
        if (m->post_config(rd->s) != HD_OK) {
            if (post_config_error_set) {
                return fail(rd, rd->s->conf_file, 0, "%s", post_config_error);
            }
            return fail(rd, rd->s->conf_file, 0, "Configuration check of %s_module failed",
                        m->name);
        }
    }
    return true;
}

void hd_config_error(hd_server_t *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(post_config_error, sizeof(post_config_error), fmt, ap);
    va_end(ap);
    post_config_error_set = true;
}

hd_server_t *hd_config_read(const hd_config_args_t *args, int generation, char **err)
{
    if (err != NULL) {
        *err = NULL;
    }
    hd_modules_init();
    hd_pool_t *p = hd_pool_create();
    hd_server_t *s = hd_pcalloc(p, sizeof(*s));
    s->pool = p;
    s->generation = generation;
    s->pre_directives = args->pre_directives;
    s->post_directives = args->post_directives;
    s->one_process = args->one_process;
    s->foreground = args->foreground;
    s->cmdline_log_level = args->cmdline_log_level;

    reader_t rd = {.s = s, .temp = hd_pool_create(), .scope = {.context = HD_CTX_MAIN}};
    rd.vars = hd_array_create(p, 8, sizeof(var_t));
    for (const char *const *d = args->defines; d != NULL && *d != NULL; d++) {
        set_var(&rd, *d, NULL);
    }
    sync_defines(&rd);

    bool ok = true;
    s->server_root = hd_config_absolute_path(p, args->server_root ? args->server_root : ".");
    if (s->server_root == NULL) {
        ok = fail(&rd, args->server_root ? args->server_root : ".", 0,
                  "ServerRoot must be a valid directory");
    } else {
        s->conf_file =
            hd_server_root_relative(p, s, args->conf_file ? args->conf_file : "conf/httpd.conf");
    }
    for (int i = 0; i < hd_num_modules; i++) {
        hd_module_t *m = hd_builtin_modules[i];
        if (m->create_server_config != NULL) {
            s->module_config[i] = m->create_server_config(p, s);
        }
        if (m->create_dir_config != NULL) {
            s->dir_default[i] = m->create_dir_config(p, NULL);
        }
    }

    cur_reader = &rd;
    ok = ok && run_cmdline(&rd, args->pre_directives);
    if (ok) {
        struct stat st;
        char *buf = NULL;
        if (hd_stat(s->conf_file, &st) == 0 && S_ISDIR(st.st_mode)) {
            ok = include_path(&rd, s->conf_file, s->conf_file, 0);
        } else if ((buf = load_file(rd.temp, s->conf_file)) == NULL) {
            rd.err = hd_psprintf(rd.temp, "Could not open configuration file %s: %s", s->conf_file,
                                 strerror(errno));
            ok = false;
        } else {
            source_t src = {.file = s->conf_file, .buf = buf};
            rd.src = &src;
            ok = read_block(&rd, &src, NULL, 0, false);
            rd.src = NULL;
        }
    }
    ok = ok && run_cmdline(&rd, args->post_directives) && check_mpm(&rd);
    if (ok) {
        hd_modules_build_hooks(s);
        ok = post_config(&rd);
    }
    cur_reader = NULL;
    if (!ok) {
        if (err != NULL) {
            *err = strdup(rd.err ? rd.err : "configuration error");
        }
        hd_pool_destroy(rd.temp);
        hd_config_free(s);
        return NULL;
    }
    hd_pool_destroy(rd.temp);
    return s;
}

void hd_config_free(hd_server_t *s)
{
    if (s != NULL) {
        hd_pool_destroy(s->pool);
    }
}

/* ---- helpers for directive tables ------------------------------------ */

const char *hd_config_regex(hd_cmd_parms_t *cmd, const char *pattern, unsigned flags,
                            hd_regex_t **out)
{
    const char *err;
    const char *name = cmd->cmd != NULL ? cmd->cmd->name : "regex";

    *out = hd_regex_compile(cmd->pool, pattern, flags, &err);
    if (*out == NULL) {
        return hd_psprintf(cmd->temp_pool, "%s%s: regular expression \"%s\" could not be compiled: %s",
                           name, name[0] == '<' ? ">" : "", pattern, err);
    }
    return NULL;
}

const char *hd_server_root_relative(hd_pool_t *p, const hd_server_t *s, const char *path)
{
    if (path[0] == '/') {
        return hd_pstrdup(p, path);
    }
    if (path[0] == '\0' || strcmp(path, ".") == 0) {
        return hd_pstrdup(p, s->server_root);
    }
    if (strcmp(s->server_root, "/") == 0) {
        return hd_psprintf(p, "/%s", path);
    }
    return hd_psprintf(p, "%s/%s", s->server_root, path);
}

static void *slot(const hd_cmd_parms_t *cmd, void *mconfig)
{
    return (char *)mconfig + cmd->cmd->offset;
}

const char *hd_set_string_slot(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    *(const char **)slot(cmd, mconfig) = hd_pstrdup(cmd->pool, argv[0]);
    return NULL;
}

const char *hd_set_path_slot(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    *(const char **)slot(cmd, mconfig) = hd_server_root_relative(cmd->pool, cmd->server, argv[0]);
    return NULL;
}

/* Digits only: "-1", "+3", " 5" and "5k" are all refused. */
static bool parse_uint(const char *s, int64_t max, int64_t *out)
{
    int64_t v = 0;
    if (*s == '\0') {
        return false;
    }
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9') {
            return false;
        }
        v = v * 10 + (*s - '0');
        if (v > max) {
            return false;
        }
    }
    *out = v;
    return true;
}

const char *hd_set_int_slot(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    int64_t v;
    if (!parse_uint(argv[0], INT_MAX, &v)) {
        return hd_psprintf(cmd->temp_pool, "%s must be a non-negative integer", cmd->cmd->name);
    }
    *(int *)slot(cmd, mconfig) = (int)v;
    return NULL;
}

const char *hd_set_off_slot(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    int64_t v;
    if (!parse_uint(argv[0], INT64_MAX / 10, &v)) {
        return hd_psprintf(cmd->temp_pool, "%s must be a non-negative integer", cmd->cmd->name);
    }
    *(int64_t *)slot(cmd, mconfig) = v;
    return NULL;
}

const char *hd_set_flag_slot(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    *(int *)slot(cmd, mconfig) = strcasecmp(argv[0], "on") == 0;
    return NULL;
}

/* ---- -L and the manual ----------------------------------------------- */

void hd_config_directive_context_text(const hd_command_t *cmd, char *buf, size_t size)
{
    bool main = cmd->contexts & HD_CTX_MAIN, dir = cmd->contexts & HD_CTX_DIR;
    snprintf(buf, size, "%s%s%s", main ? "server config" : "", main && dir ? ", " : "",
             dir ? "directory" : "");
}

void hd_config_directive_where_text(const hd_command_t *cmd, char *buf, size_t size)
{
    bool main = cmd->contexts & HD_CTX_MAIN, dir = cmd->contexts & HD_CTX_DIR;
    snprintf(buf, size, "%s",
             main && dir ? "anywhere"
             : main      ? "only outside <Directory>, <Files>, <Location>, or <If>"
                         : "only inside <Directory>, <Files>, <Location>, or <If>");
}

void hd_config_list_directives(FILE *out)
{
    for (int i = 0; hd_builtin_modules[i] != NULL; i++) {
        const hd_module_t *m = hd_builtin_modules[i];
        for (const hd_command_t *c = m->commands; c != NULL && c->name != NULL; c++) {
            char where[96];
            hd_config_directive_where_text(c, where, sizeof(where));
            fprintf(out, "%s (%s)\n", c->name, m->source_name);
            if (c->help != NULL) {
                fprintf(out, "\t%s\n", c->help);
            }
            fprintf(out, "\tAllowed in *.conf %s\n", where);
        }
    }
}
