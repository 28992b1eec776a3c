/*
 * Sections: the <Directory>, <Location> and <Files> containers (and their
 * Match and "~" forms) as the reader meets them, and the per-request merge
 * of the dir configs of the sections that apply, in Apache's order:
 *   1. the server-level dir configs (s->dir_default);
 *   2. plain <Directory>, shortest path first (sorted once per configuration);
 *   3. <Directory ~> and <DirectoryMatch>, in file order;
 *   4. <Files> and <FilesMatch> on the basename, in file order;
 *   5. <Location> and <LocationMatch> on the URI, in file order.
 */
#include "config_internal.h"
#include "module.h"
#include "pool.h"
#include "request.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <fnmatch.h>
#include <string.h>
#include <strings.h>

static void regex_free(void *re)
{
    pcre2_code_free(re);
}

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
        int ec;
        PCRE2_SIZE off;
        pcre2_code *re = pcre2_compile((PCRE2_SPTR)arg, PCRE2_ZERO_TERMINATED, 0, &ec, &off, NULL);
        if (re == NULL) {
            return "Regex could not be compiled";
        }
        hd_pool_cleanup_add(cmd->pool, regex_free, re);
        sec->regex = re;
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
    hd_section_index_t *ix = hd_config_section_index(s);
    if (ix == NULL) {
        return;
    }
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

/* One match data per thread: configs are shared by threads, and a request must not malloc. */
static __thread pcre2_match_data *match_data;

bool hd_config_regex_match(const void *re, const char *subject)
{
    if (match_data == NULL) {
        match_data = pcre2_match_data_create(1, NULL);
    }
    int rc = pcre2_match(re, (PCRE2_SPTR)subject, PCRE2_ZERO_TERMINATED, 0, 0, match_data, NULL);
    return rc >= 0;
}

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
static bool dir_matches(const hd_section_t *sec, const char *dir)
{
    if (sec->regex != NULL) {
        return hd_config_regex_match(sec->regex, dir);
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
        return hd_config_regex_match(sec->regex, base);
    }
    if (has_wildcard(sec->path)) {
        return fnmatch(sec->path, base, FNM_PATHNAME) == 0;
    }
    return strcmp(sec->path, base) == 0;
}

/* <Location /foo> covers /foo, /foo/ and /foo/bar but not /foobar (Apache's location walk). */
static bool location_matches(const hd_section_t *sec, const char *uri)
{
    if (sec->regex != NULL) {
        return hd_config_regex_match(sec->regex, uri);
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
        bool ok = p->kind == HD_SEC_DIRECTORY ? dir_matches(p, dir)
                  : p->kind == HD_SEC_FILES   ? files_matches(p, base)
                                              : false;
        if (!ok) {
            return false;
        }
    }
    return true;
}

static void apply(hd_request_t *r, void ***merged, const hd_section_t *sec)
{
    void **m = *merged;
    size_t n = (size_t)hd_num_modules;
    if (m == NULL) {
        m = hd_palloc(r->pool, n * sizeof(void *));
        memcpy(m, r->server->dir_default, n * sizeof(void *));
        *merged = m;
    }
    for (size_t i = 0; i < n; i++) {
        void *add = sec->dir_conf[i];
        if (add == NULL) {
            continue;
        }
        hd_module_t *mod = hd_builtin_modules[i];
        if (m[i] != NULL && mod->merge_dir_config != NULL) {
            m[i] = mod->merge_dir_config(r->pool, m[i], add);
        } else {
            m[i] = add;
        }
    }
}

/* The directory a <Directory> is matched against: no trailing '/', "/" for the root. */
static char *request_dir(hd_request_t *r)
{
    const char *f = r->filename;
    size_t n = strlen(f);
    bool is_dir = r->finfo_valid && S_ISDIR(r->finfo.st_mode);
    if (!is_dir || (n > 0 && f[n - 1] == '/')) {
        const char *slash = strrchr(f, '/');
        n = slash ? (size_t)(slash - f) : 0;
    }
    while (n > 1 && f[n - 1] == '/') {
        n--;
    }
    if (n == 0) {
        return hd_pstrdup(r->pool, "/");
    }
    return hd_pstrndup(r->pool, f, n);
}

void hd_config_merge_for_request(hd_request_t *r)
{
    hd_server_t *s = r->server;
    const hd_section_index_t *ix = hd_config_section_index(s);
    void **merged = NULL;

    if (ix != NULL && r->filename != NULL && r->filename[0] != '\0') {
        const char *slash = strrchr(r->filename, '/');
        const char *base = slash ? slash + 1 : r->filename;
        char *dir = NULL;
        if (ix->ndirs + ix->ndir_regex + ix->nfiles > 0) {
            dir = request_dir(r);
        }
        for (size_t i = 0; i < ix->ndirs; i++) {
            if (dir_matches(ix->dirs[i], dir)) {
                apply(r, &merged, ix->dirs[i]);
            }
        }
        for (size_t i = 0; i < ix->ndir_regex; i++) {
            if (dir_matches(ix->dir_regex[i], dir)) {
                apply(r, &merged, ix->dir_regex[i]);
            }
        }
        for (size_t i = 0; i < ix->nfiles; i++) {
            const hd_section_t *sec = ix->files[i];
            if (files_matches(sec, base) && parents_match(sec, dir, base)) {
                apply(r, &merged, sec);
            }
        }
    }
    if (ix != NULL && r->uri != NULL) {
        for (size_t i = 0; i < ix->nlocations; i++) {
            if (location_matches(ix->locations[i], r->uri)) {
                apply(r, &merged, ix->locations[i]);
            }
        }
    }
    r->dir_config = merged ? merged : s->dir_default;
}
