/*
 * Sections: the <Directory>, <Location> and <Files> containers (and their
 * Match and "~" forms) as the reader meets them, the index that orders them
 * once per configuration, and whether one applies to a directory, a file
 * name or a URI. The per-request merge that uses them is the HTTP layer's
 * (request_config.c).
 */
#include "sections.h"

#include "config_internal.h"
#include "module.h"
#include "pool.h"
#include "regex.h"

#include <fnmatch.h>
#include <string.h>
#include <strings.h>

static unsigned count_components(const char *path)
{
    unsigned n = 0;
    for (const char *p = path; *p != '\0'; p++) {
        if (*p != '/' && (p == path || p[-1] == '/')) {
            n++;
        }
    }
    return n;
}

const char *hd_config_cmd_section(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    const char *name = cmd->cmd->name;
    size_t nlen = strlen(name);
    bool match = nlen > 5 && strcasecmp(name + nlen - 5, "Match") == 0;
    hd_section_kind_t kind = strncasecmp(name, "<Dir", 4) == 0   ? HD_SEC_DIRECTORY
                             : strncasecmp(name, "<Loc", 4) == 0 ? HD_SEC_LOCATION
                                                                 : HD_SEC_FILES;
    bool regex = match;
    const char *arg;
    if (!match && argc == 2 && strcmp(argv[0], "~") == 0) {
        regex = true;
        arg = argv[1];
    } else if (argc == 1) {
        arg = argv[0];
    } else if (argc == 0) {
        return hd_psprintf(cmd->temp_pool, "%s> directive requires additional arguments", name);
    } else {
        return hd_psprintf(cmd->temp_pool, "Multiple %s> arguments not (yet) supported.", name);
    }
    /* <Directory> and <Location> are server-level only (their table says so);
     * <Files> may sit in <Directory> or <Files>, not in <Location>, as Apache. */
    const char *enclosing_name;
    hd_section_t *enclosing = hd_config_current_section(&enclosing_name);
    if (enclosing != NULL && enclosing->kind == HD_SEC_LOCATION) {
        return hd_psprintf(cmd->temp_pool, "%s> cannot occur within %s> section", name,
                           enclosing_name);
    }

    hd_section_t *sec = hd_pcalloc(cmd->pool, sizeof(*sec));
    sec->kind = kind;
    if (regex) {
        const char *err = hd_config_regex(cmd, arg, 0, &sec->regex);
        if (err != NULL) {
            return err;
        }
        sec->path = hd_pstrdup(cmd->pool, arg);
    } else if (kind == HD_SEC_DIRECTORY) {
        char *p = (char *)hd_server_root_relative(cmd->pool, cmd->server, arg);
        size_t n = strlen(p);
        while (n > 1 && p[n - 1] == '/') {
            p[--n] = '\0';
        }
        sec->path = p;
    } else {
        sec->path = hd_pstrdup(cmd->pool, arg);
    }
    sec->ncomponents = regex ? 0 : count_components(sec->path);
    sec->dir_conf = hd_pcalloc(cmd->pool, (size_t)hd_num_modules * sizeof(void *));
    sec->parent = enclosing;
    sec->file = cmd->file;
    sec->line = cmd->line;
    unsigned context = kind == HD_SEC_DIRECTORY  ? HD_CTX_DIRECTORY
                       : kind == HD_SEC_LOCATION ? HD_CTX_LOCATION
                                                 : HD_CTX_FILES;
    return hd_config_read_section(cmd, sec, context) ? NULL : hd_config_nested_error;
}

/* ---- the index, built once per configuration ------------------------- */

static hd_section_t **collect(hd_server_t *s, size_t *n, bool (*want)(const hd_section_t *))
{
    size_t count = 0;
    for (hd_section_t *sec = s->sections; sec != NULL; sec = sec->next) {
        count += want(sec);
    }
    *n = count;
    if (count == 0) {
        return NULL;
    }
    hd_section_t **a = hd_palloc(s->pool, count * sizeof(*a));
    size_t i = 0;
    for (hd_section_t *sec = s->sections; sec != NULL; sec = sec->next) {
        if (want(sec)) {
            a[i++] = sec;
        }
    }
    return a;
}

static bool is_plain_dir(const hd_section_t *sec)
{
    return sec->kind == HD_SEC_DIRECTORY && sec->regex == NULL;
}

static bool is_regex_dir(const hd_section_t *sec)
{
    return sec->kind == HD_SEC_DIRECTORY && sec->regex != NULL;
}

static bool is_files(const hd_section_t *sec)
{
    return sec->kind == HD_SEC_FILES;
}

static bool is_location(const hd_section_t *sec)
{
    return sec->kind == HD_SEC_LOCATION;
}

void hd_config_index_sections(hd_server_t *s)
{
    hd_section_index_t *ix = hd_pcalloc(s->pool, sizeof(*ix));
    s->section_index = ix;
    ix->dirs = collect(s, &ix->ndirs, is_plain_dir);
    ix->dir_regex = collect(s, &ix->ndir_regex, is_regex_dir);
    ix->files = collect(s, &ix->nfiles, is_files);
    ix->locations = collect(s, &ix->nlocations, is_location);
    /* insertion sort: stable, so equal depths keep file order, as Apache's reorder */
    for (size_t i = 1; i < ix->ndirs; i++) {
        hd_section_t *sec = ix->dirs[i];
        size_t j = i;
        while (j > 0 && ix->dirs[j - 1]->ncomponents > sec->ncomponents) {
            ix->dirs[j] = ix->dirs[j - 1];
            j--;
        }
        ix->dirs[j] = sec;
    }
}

/* ---- matching -------------------------------------------------------- */

static bool has_wildcard(const char *s)
{
    return strpbrk(s, "*?[") != NULL;
}

/*
 * A <Directory> applies to the directory @p dir (the file's directory, or
 * the file itself when it is a directory) and to everything below it.
 * Wildcard paths are matched component-wise on as many leading components
 * as they have. Regexes see @p dir whole: like Apache 2.4, a DirectoryMatch
 * matches directories, never the file name itself.
 */
bool hd_section_dir_matches(const hd_section_t *sec, const char *dir)
{
    if (sec->regex != NULL) {
        return hd_regex_match(sec->regex, dir, NULL, 0);
    }
    const char *path = sec->path;
    if (has_wildcard(path)) {
        const char *p = dir;
        for (unsigned i = 0; i < sec->ncomponents; i++) {
            while (*p == '/') {
                p++;
            }
            if (*p == '\0') {
                return false;
            }
            p += strcspn(p, "/");
        }
        char buf[4096];
        size_t n = (size_t)(p - dir);
        if (n >= sizeof(buf)) {
            return false;
        }
        memcpy(buf, dir, n);
        buf[n] = '\0';
        return fnmatch(path, buf, FNM_PATHNAME) == 0;
    }
    size_t n = strlen(path);
    if (n == 1 && path[0] == '/') {
        return true;
    }
    return strncmp(path, dir, n) == 0 && (dir[n] == '\0' || dir[n] == '/');
}

static bool files_matches(const hd_section_t *sec, const char *base)
{
    if (sec->regex != NULL) {
        return hd_regex_match(sec->regex, base, NULL, 0);
    }
    if (has_wildcard(sec->path)) {
        return fnmatch(sec->path, base, FNM_PATHNAME) == 0;
    }
    return strcmp(sec->path, base) == 0;
}

/* <Location /foo> covers /foo, /foo/ and /foo/bar but not /foobar (Apache's location walk). */
bool hd_section_location_matches(const hd_section_t *sec, const char *uri)
{
    if (sec->regex != NULL) {
        return hd_regex_match(sec->regex, uri, NULL, 0);
    }
    const char *path = sec->path;
    if (has_wildcard(path)) {
        return fnmatch(path, uri, FNM_PATHNAME) == 0;
    }
    size_t n = strlen(path);
    return strncmp(path, uri, n) == 0 &&
           (n == 0 || path[n - 1] == '/' || uri[n] == '/' || uri[n] == '\0');
}

/* A nested <Files> applies only where every enclosing section does. */
static bool parents_match(const hd_section_t *sec, const char *dir, const char *base)
{
    for (const hd_section_t *p = sec->parent; p != NULL; p = p->parent) {
        bool ok = p->kind == HD_SEC_DIRECTORY ? hd_section_dir_matches(p, dir)
                  : p->kind == HD_SEC_FILES   ? files_matches(p, base)
                                              : false;
        if (!ok) {
            return false;
        }
    }
    return true;
}


bool hd_section_files_matches(const hd_section_t *sec, const char *dir, const char *base)
{
    return files_matches(sec, base) && parents_match(sec, dir, base);
}
