/*
 * The per-request configuration: the dir configs of every section that
 * applies to the request's file and URI, merged in Apache's order (see
 * sections.h) into r->dir_config. A request no section applies to shares the
 * server-level array and allocates nothing.
 */
#include "request_config.h"

#include "module.h"
#include "pool.h"
#include "request.h"
#include "sections.h"

#include <string.h>

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

void hd_request_merge_config(hd_request_t *r)
{
    hd_server_t *s = r->server;
    const hd_section_index_t *ix = s->section_index;
    void **merged = NULL;

    if (ix != NULL && r->filename != NULL && r->filename[0] != '\0') {
        const char *slash = strrchr(r->filename, '/');
        const char *base = slash ? slash + 1 : r->filename;
        char *dir = NULL;
        if (ix->ndirs + ix->ndir_regex + ix->nfiles > 0) {
            dir = request_dir(r);
        }
        for (size_t i = 0; i < ix->ndirs; i++) {
            if (hd_section_dir_matches(ix->dirs[i], dir)) {
                apply(r, &merged, ix->dirs[i]);
            }
        }
        for (size_t i = 0; i < ix->ndir_regex; i++) {
            if (hd_section_dir_matches(ix->dir_regex[i], dir)) {
                apply(r, &merged, ix->dir_regex[i]);
            }
        }
        for (size_t i = 0; i < ix->nfiles; i++) {
            const hd_section_t *sec = ix->files[i];
            if (hd_section_files_matches(sec, dir, base)) {
                apply(r, &merged, sec);
            }
        }
    }
    if (ix != NULL && r->uri != NULL) {
        for (size_t i = 0; i < ix->nlocations; i++) {
            if (hd_section_location_matches(ix->locations[i], r->uri)) {
                apply(r, &merged, ix->locations[i]);
            }
        }
    }
    r->dir_config = merged ? merged : s->dir_default;
    r->config_merged = true;
}
