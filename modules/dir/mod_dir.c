/*
 * mod_dir: what a URI naming a directory gets. Without the trailing slash, a
 * 301 to the URI with it (so relative links in the index resolve); with it,
 * the first DirectoryIndex file that exists (a sub-request, then a fast
 * internal redirect); if none exists, a listing when Options has Indexes
 * (what mod_autoindex would do), else 403.
 *
 * The redirects happen in fixups; the listing and the refusal in the handler
 * phase, so that a fixups HD_OK is never mistaken for a finished response.
 */
#include "dir.h"

#include "config.h"
#include "core.h"
#include "log.h"
#include "module.h"
#include "path.h"
#include "pool.h"
#include "request.h"
#include "strbuf.h"
#include "response.h"
#include "sys.h"
#include "table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

typedef struct {
    bool set; /* a DirectoryIndex stands in this section */
    int n;    /* 0 when set: "disabled" */
    const char **names;
} dir_dconf_t;

static const char *const default_index[] = {"index.html"};

static void *dir_create_dir_config(hd_pool_t *p, const char *path)
{
    return hd_pcalloc(p, sizeof(dir_dconf_t));
}

/* Apache: a section's DirectoryIndex replaces its parents' list whole. */
static void *dir_merge_dir_config(hd_pool_t *p, const void *base, const void *add)
{
    const dir_dconf_t *a = add;
    return (void *)(a->set ? add : base);
}

/*
 * Several DirectoryIndex lines in one section add up; "disabled" as the only
 * argument clears what the section had (elsewhere it is just a file name).
 */
static const char *cmd_directory_index(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    dir_dconf_t *d = mconfig;
    const char **names;

    if (argc < 1) {
        return "DirectoryIndex requires at least one argument";
    }
    if (argc == 1 && strcasecmp(argv[0], "disabled") == 0) {
        d->set = true;
        d->n = 0;
        return NULL;
    }
    names = hd_palloc(cmd->pool, (size_t)(d->n + argc) * sizeof(*names));
    if (d->n > 0) {
        memcpy(names, d->names, (size_t)d->n * sizeof(*names));
    }
    for (int i = 0; i < argc; i++) {
        names[d->n + i] = hd_pstrdup(cmd->pool, argv[i]);
    }
    d->names = names;
    d->n += argc;
    d->set = true;
    return NULL;
}

static const dir_dconf_t *dir_conf(const hd_request_t *r)
{
    return r->dir_config ? hd_get_dir_config(r, &hd_dir_module) : NULL;
}

int hd_dir_index_names(const hd_request_t *r, const char *const **names)
{
    const dir_dconf_t *d = dir_conf(r);

    if (d == NULL || !d->set) {
        *names = default_index;
        return (int)HD_ARRAY_SIZE(default_index);
    }
    *names = d->names;
    return d->n;
}

static bool is_directory_request(const hd_request_t *r)
{
    return r->finfo_valid && S_ISDIR(r->finfo.st_mode) && r->handler == NULL && r->uri != NULL &&
           r->filename != NULL;
}

static int redirect_with_slash(hd_request_t *r)
{
    const char *path = hd_pstrcat(r->pool, hd_escape_path(r->pool, r->uri), "/", r->args ? "?" : "",
                                  r->args ? r->args : "", NULL);

    hd_table_set(r->headers_out, "Location", hd_construct_url(r, path));
    return 301;
}

/*
 * Each DirectoryIndex name is looked up as a sub-request (so Alias,
 * <Directory> and Require apply to it as to any URI); the first that is a
 * regular file the client may see becomes the request's resource (a fast
 * internal redirect: no phase runs twice), and the handler serves it.
 */
static int dir_fixups(hd_request_t *r)
{
    const char *const *names;
    size_t ulen;
    int n;

    if (!is_directory_request(r)) {
        return HD_DECLINED;
    }
    ulen = strlen(r->uri);
    if (ulen == 0 || r->uri[ulen - 1] != '/') {
        return redirect_with_slash(r);
    }

    n = hd_dir_index_names(r, &names);
    for (int i = 0; i < n; i++) {
        /* "/x/index.php" names a URI of its own, not a file here */
        const char *uri = names[i][0] == '/' ? names[i] : hd_pstrcat(r->pool, r->uri, names[i], NULL);
        hd_request_t *rr = hd_sub_req_lookup_uri(r, uri);

        if (rr->status != 200 || !rr->finfo_valid || !S_ISREG(rr->finfo.st_mode)) {
            continue;
        }
        if (r->orig_uri == NULL) {
            r->orig_uri = r->uri;
        }
        hd_internal_fast_redirect(rr, r);
        return HD_OK;
    }
    return HD_DECLINED;
}

static int dir_handler(hd_request_t *r)
{
    const char *const *names;
    const char *list;
    int n;

    if (!is_directory_request(r)) {
        return HD_DECLINED;
    }
    if (r->method != HD_M_GET && r->method != HD_M_HEAD) {
        hd_table_set(r->headers_out, "Allow", "GET, HEAD, OPTIONS");
        return 405;
    }
    if (r->dir_config != NULL && (hd_core_options(hd_core_dconf(r)) & HD_OPT_INDEXES)) {
        return hd_dir_listing(r);
    }

    n = hd_dir_index_names(r, &names);
    list = n > 0 ? names[0] : "none";
    for (int i = 1; i < n; i++) {
        list = hd_pstrcat(r->pool, list, ",", names[i], NULL);
    }
    hd_log_rerror(r, HD_LOG_ERR, "autoindex",
                  "AH01276: Cannot serve directory %s: No matching DirectoryIndex (%s) found, "
                  "and server-generated directory index forbidden by Options directive",
                  r->filename, list);
    return 403;
}

typedef struct {
    const char *name;
    struct stat st;
} entry_t;

static int entry_cmp(const void *a, const void *b)
{
    return strcmp(((const entry_t *)a)->name, ((const entry_t *)b)->name);
}

/* Sizes as mod_autoindex shows them: bytes below 1K, then one unit letter. */
static void format_size(char *buf, size_t n, off_t size)
{
    static const char units[] = "KMGTPE";
    double v = (double)size;
    int u = -1;

    if (size < 1024) {
        snprintf(buf, n, "%lld", (long long)size);
        return;
    }
    while (v >= 1024 && u < (int)sizeof(units) - 2) {
        v /= 1024;
        u++;
    }
    snprintf(buf, n, v < 9.95 ? "%.1f%c" : "%.0f%c", v, units[u]);
}

/* Names with a ':' before any '/' would read as a scheme in a relative href. */
static const char *entry_href(hd_pool_t *p, const char *name, bool is_dir)
{
    const char *href = hd_escape_path(p, name);

    if (strchr(href, ':') != NULL) {
        href = hd_pstrcat(p, "./", href, NULL);
    }
    if (is_dir) {
        href = hd_pstrcat(p, href, "/", NULL);
    }
    return hd_escape_html(p, href);
}

int hd_dir_listing(hd_request_t *r)
{
    hd_array_t *entries = hd_array_create(r->pool, 32, sizeof(entry_t));
    hd_strbuf_t sb = {.pool = r->pool};
    struct dirent *de;
    char *title;
    size_t tlen;
    DIR *d;
    int dfd;

    d = hd_opendir(r->filename);
    if (d == NULL) {
        int err = errno;
        hd_log_rerror(r, HD_LOG_ERR, "autoindex",
                      "(%d)%s: AH01275: Can't open directory for index: %s", err, strerror(err),
                      r->filename);
        return 403;
    }
    dfd = dirfd(d);
    while ((de = hd_readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) {
            continue;
        }
        entry_t *e = hd_array_push(entries);
        /* a dangling link is shown as itself rather than hidden */
        if (hd_fstatat(dfd, de->d_name, &e->st, 0) != 0 &&
            hd_fstatat(dfd, de->d_name, &e->st, AT_SYMLINK_NOFOLLOW) != 0) {
            entries->nelts--;
            continue;
        }
        e->name = hd_pstrdup(r->pool, de->d_name);
    }
    hd_closedir(d);
    qsort(entries->elts, entries->nelts, sizeof(entry_t), entry_cmp);

    /* like mod_autoindex: the title drops the URI's trailing slashes */
    title = hd_escape_html(r->pool, r->uri);
    tlen = strlen(title);
    while (tlen > 1 && title[tlen - 1] == '/') {
        title[--tlen] = '\0';
    }
    hd_strbuf_addstr(&sb, "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>Index of ");
    hd_strbuf_addstr(&sb, title);
    hd_strbuf_addstr(&sb, "</title>\n</head>\n<body>\n<h1>Index of ");
    hd_strbuf_addstr(&sb, title);
    hd_strbuf_addstr(&sb, "</h1>\n<table>\n<tr><th>Name</th><th>Last modified</th><th>Size</th></tr>\n"
                "<tr><th colspan=\"3\"><hr></th></tr>\n");
    if (strcmp(r->uri, "/") != 0) {
        hd_strbuf_addstr(&sb, "<tr><td><a href=\"../\">Parent Directory</a></td><td>&nbsp;</td>"
                    "<td align=\"right\">-</td></tr>\n");
    }
    for (size_t i = 0; i < entries->nelts; i++) {
        const entry_t *e = (const entry_t *)entries->elts + i;
        bool is_dir = S_ISDIR(e->st.st_mode);
        char when[32], size[32];
        struct tm tm;

        gmtime_r(&e->st.st_mtime, &tm);
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
        if (is_dir) {
            strcpy(size, "-");
        } else {
            format_size(size, sizeof(size), e->st.st_size);
        }
        hd_strbuf_addstr(&sb, hd_psprintf(r->pool,
                                "<tr><td><a href=\"%s\">%s%s</a></td><td align=\"right\">%s"
                                "</td><td align=\"right\">%s</td></tr>\n",
                                entry_href(r->pool, e->name, is_dir),
                                hd_escape_html(r->pool, e->name), is_dir ? "/" : "", when, size));
    }
    hd_strbuf_addstr(&sb, "<tr><th colspan=\"3\"><hr></th></tr>\n</table>\n</body>\n</html>\n");

    r->status = 200;
    r->content_type = "text/html;charset=UTF-8";
    hd_body_append_mem(r, sb.buf, sb.len);
    r->content_length = (int64_t)sb.len;
    return HD_OK;
}

static const hd_command_t dir_commands[] = {
    {"DirectoryIndex", cmd_directory_index, 0, HD_TAKE_ARGV, HD_CTX_ANY, HD_CONF_DIR,
     "disabled | local-url [local-url] ...", "index.html",
     "files to look for when a directory is requested; a section's list replaces its parent's"},
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

hd_module_t hd_dir_module = {
    .name = "dir",
    .source_name = "mod_dir.c",
    .always_loaded = true,
    .commands = dir_commands,
    .create_dir_config = dir_create_dir_config,
    .merge_dir_config = dir_merge_dir_config,
    .fixups = dir_fixups,
    .handler = dir_handler,
};
