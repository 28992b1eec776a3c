/*
 * mod_mime: content types from file name extensions. TypesConfig loads the
 * server-wide table (a hash from extension to type) once per configuration;
 * AddType adds per-directory entries that win over it and over the entries of
 * enclosing sections.
 */
#include "mime.h"

#include "config.h"
#include "log.h"
#include "module.h"
#include "pool.h"
#include "request.h"
#include "sys.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#define DEFAULT_TYPES_CONFIG "conf/mime.types"

typedef struct {
    const char *ext; /* lowercase, no leading dot */
    const char *type;
} mime_entry_t;

typedef struct {
    const char *types_config; /* TypesConfig, absolute once set */
    mime_entry_t *slots;      /* open addressing, power-of-two size */
    size_t mask;
    size_t count;
} mime_sconf_t;

typedef struct addtype addtype_t;
struct addtype {
    const char *ext;
    const char *type;
    addtype_t *next;
};

/*
 * A merged config does not copy its parents' lists: it points at them, so a
 * per-request merge costs one small allocation at most. Lookup walks from the
 * innermost section outwards; within a section the newest AddType comes first.
 */
typedef struct mime_dconf mime_dconf_t;
struct mime_dconf {
    addtype_t *types;
    const mime_dconf_t *parent;
};

/* FNV-1a over the lowercased bytes, so lookups need no lowercase copy. */
static uint64_t ext_hash(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;

    for (size_t i = 0; i < n; i++) {
        h = (h ^ (unsigned char)tolower((unsigned char)s[i])) * 0x100000001b3ull;
    }
    return h;
}

static mime_entry_t *table_slot(const mime_sconf_t *sc, const char *ext, size_t n)
{
    size_t i = (size_t)ext_hash(ext, n) & sc->mask;

    for (;;) {
        mime_entry_t *e = &sc->slots[i];
        if (e->ext == NULL || (strncasecmp(e->ext, ext, n) == 0 && e->ext[n] == '\0')) {
            return e;
        }
        i = (i + 1) & sc->mask;
    }
}

static void table_grow(hd_pool_t *p, mime_sconf_t *sc)
{
    mime_entry_t *old = sc->slots;
    size_t old_size = sc->slots ? sc->mask + 1 : 0;
    size_t size = old_size ? old_size * 2 : 1024;

    sc->slots = hd_pcalloc(p, size * sizeof(*sc->slots));
    sc->mask = size - 1;
    for (size_t i = 0; i < old_size; i++) {
        if (old[i].ext != NULL) {
            *table_slot(sc, old[i].ext, strlen(old[i].ext)) = old[i];
        }
    }
}

/* A later line naming the same extension replaces the earlier type. */
static void table_put(hd_pool_t *p, mime_sconf_t *sc, const char *ext, const char *type)
{
    mime_entry_t *e;

    if (sc->slots == NULL || (sc->count + 1) * 2 > sc->mask + 1) {
        table_grow(p, sc);
    }
    e = table_slot(sc, ext, strlen(ext));
    if (e->ext == NULL) {
        e->ext = ext;
        sc->count++;
    }
    e->type = type;
}

static char *lowercase(char *s)
{
    for (char *p = s; *p; p++) {
        *p = (char)tolower((unsigned char)*p);
    }
    return s;
}

/* "type ext ext ..." per line; '#' starts a comment line, as in Apache's file. */
static void parse_types(hd_pool_t *p, mime_sconf_t *sc, char *text)
{
    char *line = text;

    while (line != NULL && *line != '\0') {
        char *next = strchr(line, '\n');
        char *save = NULL, *tok;
        const char *type;

        if (next != NULL) {
            *next++ = '\0';
        }
        while (*line == ' ' || *line == '\t') {
            line++;
        }
        if (*line == '#' || *line == '\0') {
            line = next;
            continue;
        }
        type = strtok_r(line, " \t\r", &save);
        if (type != NULL) {
            type = hd_pstrdup(p, type);
            while ((tok = strtok_r(NULL, " \t\r", &save)) != NULL) {
                table_put(p, sc, lowercase(hd_pstrdup(p, tok)), type);
            }
        }
        line = next;
    }
}

/* Reads a whole file into a pool string; NULL with errno set on failure. */
static char *read_file(hd_pool_t *p, const char *path)
{
    size_t cap = 64 * 1024, len = 0;
    char *buf;
    int fd = hd_open(path, O_RDONLY | O_CLOEXEC, 0);

    if (fd < 0) {
        return NULL;
    }
    buf = hd_palloc(p, cap);
    for (;;) {
        ssize_t n;
        if (cap - len < 2) {
            char *bigger = hd_palloc(p, cap * 2);
            memcpy(bigger, buf, len);
            buf = bigger;
            cap *= 2;
        }
        n = hd_read(fd, buf + len, cap - len - 1);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            int err = errno;
            hd_close(fd);
            errno = err;
            return NULL;
        }
        if (n == 0) {
            break;
        }
        len += (size_t)n;
    }
    hd_close(fd);
    buf[len] = '\0';
    return buf;
}

static void *mime_create_server_config(hd_pool_t *p, hd_server_t *s)
{
    return hd_pcalloc(p, sizeof(mime_sconf_t));
}

static void *mime_create_dir_config(hd_pool_t *p, const char *path)
{
    return hd_pcalloc(p, sizeof(mime_dconf_t));
}

static bool dconf_empty(const mime_dconf_t *d)
{
    return d->types == NULL && d->parent == NULL;
}

static void *mime_merge_dir_config(hd_pool_t *p, const void *base, const void *add)
{
    const mime_dconf_t *b = base, *a = add;
    mime_dconf_t *m;

    if (dconf_empty(a)) {
        return (void *)b;
    }
    if (dconf_empty(b)) {
        return (void *)a;
    }
    m = hd_palloc(p, sizeof(*m));
    m->parent = b;
    if (a->parent == NULL) {
        m->types = a->types;
        return m;
    }
    /* add is itself a merge result: its chain is copied so base can follow it */
    addtype_t *head = NULL, **tail = &head;
    for (const mime_dconf_t *d = a; d != NULL; d = d->parent) {
        for (const addtype_t *t = d->types; t != NULL; t = t->next) {
            addtype_t *n = hd_palloc(p, sizeof(*n));
            n->ext = t->ext;
            n->type = t->type;
            n->next = NULL;
            *tail = n;
            tail = &n->next;
        }
    }
    m->types = head;
    return m;
}

static int mime_post_config(hd_server_t *s)
{
    mime_sconf_t *sc = hd_get_server_config(s, &hd_mime_module);
    char *text;

    if (sc->types_config == NULL) {
        sc->types_config = hd_server_root_relative(s->pool, s, DEFAULT_TYPES_CONFIG);
    }
    text = read_file(s->pool, sc->types_config);
    if (text == NULL) {
        hd_log_error(HD_LOG_ERR, "mime", "(%d)%s: could not open mime types config file %s.", errno,
                     strerror(errno), sc->types_config);
        return HD_ERROR;
    }
    parse_types(s->pool, sc, text);
    return HD_OK;
}

static const char *cmd_add_type(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    mime_dconf_t *d = mconfig;
    const char *ext;
    addtype_t *t;

    if (argc < 2) {
        return "AddType requires a type and at least one extension";
    }
    ext = argv[1];
    if (*ext == '.') {
        ext++;
    }
    if (*ext == '\0') {
        return hd_psprintf(cmd->pool, "AddType: empty extension for %s", argv[0]);
    }
    t = hd_palloc(cmd->pool, sizeof(*t));
    t->ext = lowercase(hd_pstrdup(cmd->pool, ext));
    t->type = hd_pstrdup(cmd->pool, argv[0]);
    t->next = d->types;
    d->types = t;
    return NULL;
}

static const char *dir_lookup(const mime_dconf_t *d, const char *ext, size_t n)
{
    for (; d != NULL; d = d->parent) {
        for (const addtype_t *t = d->types; t != NULL; t = t->next) {
            if (strncasecmp(t->ext, ext, n) == 0 && t->ext[n] == '\0') {
                return t->type;
            }
        }
    }
    return NULL;
}

static const char *ext_lookup(const hd_request_t *r, const char *ext, size_t n)
{
    const mime_sconf_t *sc;
    const char *type = NULL;

    if (r->dir_config != NULL) {
        type = dir_lookup(hd_get_dir_config(r, &hd_mime_module), ext, n);
    }
    if (type == NULL && r->server != NULL &&
        (sc = hd_get_server_config(r->server, &hd_mime_module)) != NULL && sc->slots != NULL) {
        const mime_entry_t *e = table_slot(sc, ext, n);
        type = e->ext ? e->type : NULL;
    }
    return type;
}

/*
 * Like Apache, every extension counts ("page.html.en" has two) and the base
 * name before the first dot is not one; of several typed extensions the last
 * wins, so the scan goes from the right and stops at the first hit.
 */
const char *hd_mime_lookup(const hd_request_t *r, const char *filename)
{
    const char *base = strrchr(filename, '/');
    const char *first_dot, *end;

    base = base ? base + 1 : filename;
    first_dot = strchr(base, '.');
    if (first_dot == NULL) {
        return NULL;
    }
    end = base + strlen(base);
    while (end > first_dot) {
        const char *dot = end - 1;
        const char *type;

        while (*dot != '.') {
            dot--;
        }
        if (end - dot > 1 && (type = ext_lookup(r, dot + 1, (size_t)(end - dot - 1))) != NULL) {
            return type;
        }
        end = dot;
    }
    return NULL;
}

static int mime_type_checker(hd_request_t *r)
{
    const char *type;

    if (!r->finfo_valid || !S_ISREG(r->finfo.st_mode) || r->filename == NULL) {
        return HD_DECLINED;
    }
    type = hd_mime_lookup(r, r->filename);
    if (type == NULL) {
        return HD_DECLINED;
    }
    r->content_type = type;
    return HD_OK;
}

static const hd_command_t mime_commands[] = {
    {"TypesConfig", hd_set_path_slot, offsetof(mime_sconf_t, types_config), HD_TAKE1, HD_CTX_MAIN,
     HD_CONF_SERVER, "file-path", DEFAULT_TYPES_CONFIG,
     "the MIME types config file (type followed by extensions, one type a line)"},
    {"AddType", cmd_add_type, 0, HD_ITERATE2, HD_CTX_ANY, HD_CONF_DIR,
     "media-type extension [extension] ...", NULL,
     "maps file name extensions to a content type, over TypesConfig"},
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

hd_module_t hd_mime_module = {
    .name = "mime",
    .source_name = "mod_mime.c",
    .always_loaded = true,
    .commands = mime_commands,
    .create_server_config = mime_create_server_config,
    .create_dir_config = mime_create_dir_config,
    .merge_dir_config = mime_merge_dir_config,
    .post_config = mime_post_config,
    .type_checker = mime_type_checker,
};
