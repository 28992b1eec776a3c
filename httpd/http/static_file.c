/*
 * The core's own mapping and handler: URI to file name under DocumentRoot,
 * the stat that every later phase relies on, the <Directory> merge and the
 * symbolic-link policy of Options, and serving a file with conditional
 * requests. The file's bytes never pass through memory here: the body is a
 * file buffer, byte ranges are cut from it by the range filter, and the
 * writer picks sendfile or pread.
 */
#include "static_file.h"

#include "config.h"
#include "core.h"
#include "date.h"
#include "log.h"
#include "pool.h"
#include "request.h"
#include "request_config.h"
#include "sections.h"
#include "sys.h"
#include "table.h"

#include <errno.h>
#include <string.h>

char *hd_file_etag(hd_pool_t *pool, const struct stat *st)
{
    /* Apache's apr_time_t is in microseconds; so is the mtime in its ETags */
    uint64_t mtime_us =
        (uint64_t)st->st_mtim.tv_sec * 1000000u + (uint64_t)st->st_mtim.tv_nsec / 1000u;

    return hd_psprintf(pool, "\"%llx-%llx\"", (unsigned long long)st->st_size,
                       (unsigned long long)mtime_us);
}

int hd_core_translate(hd_request_t *r)
{
    const char *root = hd_core_sconf(r->server)->document_root;
    size_t rlen, ulen;
    char *f;

    if (r->uri == NULL || r->uri[0] != '/') {
        return 400;
    }
    rlen = strlen(root);
    /* a DocumentRoot of "/" must not give "//uri" */
    if (rlen > 0 && root[rlen - 1] == '/') {
        rlen--;
    }
    ulen = strlen(r->uri);
    f = hd_pnalloc(r->pool, rlen + ulen + 1);
    memcpy(f, root, rlen);
    memcpy(f + rlen, r->uri, ulen + 1);
    r->filename = f;
    r->context_prefix = "";
    r->context_root = root;
    return HD_OK;
}

/* The Options in force for the directory @p dir: its <Directory> sections merged. */
static unsigned dir_options(const hd_server_t *s, const char *dir)
{
    const hd_section_index_t *ix = s->section_index;
    const hd_core_dir_conf_t *d = s->dir_default[hd_core_module.index];
    hd_core_options_t o = {d->options, d->options_add, d->options_remove};

    for (size_t i = 0; ix != NULL && i < ix->ndirs; i++) {
        if (hd_section_dir_matches(ix->dirs[i], dir)) {
            hd_core_options_merge(&o, ix->dirs[i]->dir_conf[hd_core_module.index]
                                          ? ix->dirs[i]->dir_conf[hd_core_module.index]
                                          : d);
        }
    }
    for (size_t i = 0; ix != NULL && i < ix->ndir_regex; i++) {
        const hd_section_t *sec = ix->dir_regex[i];
        if (sec->dir_conf[hd_core_module.index] != NULL && hd_section_dir_matches(sec, dir)) {
            hd_core_options_merge(&o, sec->dir_conf[hd_core_module.index]);
        }
    }
    return o.options & ~HD_OPT_UNSET;
}

/* What the http module knows once per configuration. */
typedef struct {
    bool follow_everywhere; /* no Options anywhere refuses symbolic links */
    bool follow_in_docroot; /* none at or below DocumentRoot does */
} static_sconf_t;

void *hd_static_create_server_config(hd_pool_t *p, hd_server_t *s)
{
    return hd_pcalloc(p, sizeof(static_sconf_t));
}

/* Whether Options set in a section could take FollowSymLinks away. */
static bool may_refuse_links(const hd_core_dir_conf_t *d)
{
    if (d == NULL) {
        return false;
    }
    return (d->options & HD_OPT_UNSET) ? (d->options_remove & HD_OPT_FOLLOWSYMLINKS) != 0
                                       : (d->options & HD_OPT_FOLLOWSYMLINKS) == 0;
}

/*
 * Whether FollowSymLinks holds in every directory at or below @p root (NULL:
 * everywhere): the root's own Options follow links, and no section that can
 * apply below it (a <Directory> deeper down, a wildcard or regex one,
 * <Files>, <Location>) takes that away.
 */
static bool follows_below(const hd_server_t *s, const char *root)
{
    size_t rlen = root != NULL ? strlen(root) : 0;
    const hd_core_dir_conf_t *d = s->dir_default[hd_core_module.index];

    if (root == NULL ? !(d->options & HD_OPT_FOLLOWSYMLINKS)
                     : !(dir_options(s, root) & HD_OPT_FOLLOWSYMLINKS)) {
        return false;
    }
    for (const hd_section_t *sec = s->sections; sec != NULL; sec = sec->next) {
        bool plain_dir = sec->kind == HD_SEC_DIRECTORY && sec->regex == NULL &&
                         strpbrk(sec->path, "*?[") == NULL;
        bool below = plain_dir && root != NULL && strncmp(sec->path, root, rlen) == 0 &&
                     sec->path[rlen] == '/';
        if (root != NULL && plain_dir && !below) {
            continue; /* counted in the root's own Options, or elsewhere */
        }
        if (may_refuse_links(sec->dir_conf[hd_core_module.index])) {
            return false;
        }
    }
    return true;
}

/* After the core's post_config, which indexes the sections. */
int hd_static_post_config(hd_server_t *s)
{
    static_sconf_t *sc = hd_get_server_config(s, &hd_http_module);
    sc->follow_everywhere = follows_below(s, NULL);
    sc->follow_in_docroot = follows_below(s, hd_core_sconf(s)->document_root);
    return HD_OK;
}

/* Whether no directory the request's path crosses can refuse a link. */
static bool links_always_followed(const hd_request_t *r)
{
    const static_sconf_t *sc = hd_get_server_config(r->server, &hd_http_module);
    if (sc == NULL) {
        return false;
    }
    return sc->follow_everywhere ||
           (sc->follow_in_docroot && r->context_root == hd_core_sconf(r->server)->document_root);
}

/*
 * Symbolic links, as Apache's directory walk checks them: each component
 * of the path below the mapping's root (DocumentRoot, or an Alias target)
 * is looked at with lstat unless the Options of the directory holding it
 * have FollowSymLinks; a link there is refused unless SymLinksIfOwnerMatch
 * allows it (link and target have the same owner). Apache starts at "/";
 * the root and what is above it are the administrator's own paths, so, as
 * nginx's disable_symlinks from=, they are not checked (no lstat per
 * request for the components of DocumentRoot). The file's own directory
 * uses the request's merged Options, so a section on it counts. A component
 * that does not exist ends the walk: the handler answers 404.
 */
static int check_symlinks(hd_request_t *r)
{
    const char *root = r->context_root;
    size_t rlen, len, i;
    char *path;

    if (root == NULL || links_always_followed(r)) {
        return HD_OK;
    }
    rlen = strlen(root);
    while (rlen > 0 && root[rlen - 1] == '/') {
        rlen--;
    }
    /* the common case: a file right in the root, whose own Options follow links */
    const char *name = r->filename + rlen;
    if (strncmp(r->filename, root, rlen) == 0 && name[0] == '/' && name[1] != '\0' &&
        strchr(name + 1, '/') == NULL &&
        (hd_core_options(hd_core_dconf(r)) & HD_OPT_FOLLOWSYMLINKS)) {
        return HD_OK;
    }
    if (strncmp(r->filename, root, rlen) != 0 || (r->filename[rlen] != '/' && r->filename[rlen] != '\0')) {
        root = "";
        rlen = 0;
    }
    path = hd_pstrdup(r->pool, r->filename);
    len = strlen(path);
    while (len > 1 && path[len - 1] == '/') {
        path[--len] = '\0';
    }
    const char *last_slash = strrchr(path, '/');
    size_t file_dir_len = last_slash ? (size_t)(last_slash - path) : 0;
    for (i = rlen; i < len;) {
        struct stat lst, tst;
        size_t j = i + 1;
        unsigned opts;
        char save;
        bool refused = false;

        while (j < len && path[j] != '/') {
            j++;
        }
        if (j == i + 1) {
            i = j;
            continue;
        }
        /* the Options of the directory that holds this component */
        if (i == file_dir_len && r->dir_config != NULL) {
            opts = hd_core_options(hd_core_dconf(r));
        } else {
            path[i] = '\0';
            opts = dir_options(r->server, i == 0 ? "/" : path);
            path[i] = '/';
        }
        if (opts & HD_OPT_FOLLOWSYMLINKS) {
            i = j;
            continue;
        }
        save = path[j];
        path[j] = '\0';
        if (hd_lstat(path, &lst) != 0) {
            if (errno == ENOENT || errno == ENOTDIR) {
                return HD_OK;
            }
            refused = true;
        } else if (S_ISLNK(lst.st_mode)) {
            refused = !(opts & HD_OPT_SYMLINKS_IF_OWNER) || hd_stat(path, &tst) != 0 ||
                      tst.st_uid != lst.st_uid;
        }
        if (refused) {
            hd_log_rerror(r, HD_LOG_ERR, "core",
                          "AH00037: Symbolic link not allowed or link target not accessible: %s",
                          path);
            r->finfo_valid = false;
            return 403;
        }
        path[j] = save;
        i = j;
    }
    return HD_OK;
}

int hd_core_map_to_storage(hd_request_t *r)
{
    int rv = HD_OK;

    r->finfo_valid = false;
    if (r->filename == NULL) {
        return HD_DECLINED;
    }
    if (hd_stat(r->filename, &r->finfo) == 0) {
        r->finfo_valid = true;
    } else if (errno == EACCES) {
        hd_log_rerror(r, HD_LOG_ERR, "core",
                      "(13)Permission denied: AH00035: access to %s denied (filesystem path "
                      "'%s') because search permissions are missing on a component of the path",
                      r->uri, r->filename);
        rv = 403;
    } else if (errno != ENOENT && errno != ENOTDIR) {
        int err = errno;
        hd_log_rerror(r, HD_LOG_ERR, "core", "(%d)%s: access to %s denied (filesystem path '%s')",
                      err, strerror(err), r->uri, r->filename);
        rv = 403;
    }
    /* the sections of the file apply to its error page too */
    hd_request_merge_config(r);
    if (rv != HD_OK) {
        return rv;
    }
    return check_symlinks(r);
}

/*
 * Whether @p list (a comma-separated list of entity tags, or "*") holds
 * @p etag. The strong comparison wants both tags strong; the weak one ignores
 * "W/". A malformed element ends the scan with what was found so far.
 */
static bool etag_list_match(const char *list, const char *etag, bool strong)
{
    const char *p = list;
    bool our_weak;
    size_t our_len;

    if (etag == NULL) {
        return false;
    }
    our_weak = etag[0] == 'W' && etag[1] == '/';
    if (our_weak) {
        etag += 2;
    }
    our_len = strlen(etag);
    for (;;) {
        const char *q;
        bool weak = false;

        while (*p == ' ' || *p == '\t' || *p == ',') {
            p++;
        }
        if (*p == '\0') {
            return false;
        }
        if (*p == '*') {
            return true;
        }
        if (p[0] == 'W' && p[1] == '/') {
            weak = true;
            p += 2;
        }
        if (*p != '"' || (q = strchr(p + 1, '"')) == NULL) {
            return false;
        }
        if ((size_t)(q - p + 1) == our_len && memcmp(p, etag, our_len) == 0 &&
            (!strong || (!weak && !our_weak))) {
            return true;
        }
        p = q + 1;
    }
}

int hd_meets_conditions(hd_request_t *r, const char *etag, time_t mtime)
{
    bool safe = r->method == HD_M_GET || r->method == HD_M_HEAD;
    const char *h;
    time_t t;

    if ((h = hd_table_get(r->headers_in, "If-Match")) != NULL) {
        if (!etag_list_match(h, etag, true)) {
            return 412;
        }
    } else if ((h = hd_table_get(r->headers_in, "If-Unmodified-Since")) != NULL) {
        t = hd_http_date_parse(h);
        if (t != -1 && mtime > t) {
            return 412;
        }
    }

    if ((h = hd_table_get(r->headers_in, "If-None-Match")) != NULL) {
        if (etag_list_match(h, etag, false)) {
            return safe ? 304 : 412;
        }
    } else if (safe && (h = hd_table_get(r->headers_in, "If-Modified-Since")) != NULL) {
        t = hd_http_date_parse(h);
        /* a date later than the request is bogus (clock skew, or a guess):
         * Apache ignores it rather than risk a wrong 304 */
        if (t != -1 && mtime <= t && (r->start.tv_sec == 0 || t <= r->start.tv_sec)) {
            return 304;
        }
    }
    return HD_OK;
}

static int method_not_allowed(hd_request_t *r)
{
    hd_table_set(r->headers_out, "Allow", "GET, HEAD, OPTIONS");
    return 405;
}

/* Out of descriptors: logged when it starts and when it ends (per process). */
static hd_log_episode_t open_shortage;

int hd_static_handler(hd_request_t *r)
{
    bool get_or_head = r->method == HD_M_GET || r->method == HD_M_HEAD;
    size_t ulen = r->uri ? strlen(r->uri) : 0;
    off_t size;
    int fd, rc;

    /* Apache lets POST reach the existence checks (a missing file is a 404
     * whatever the method) and refuses the rest outright. */
    if (!get_or_head && r->method != HD_M_POST) {
        return method_not_allowed(r);
    }
    if (!r->finfo_valid) {
        hd_log_rerror(r, HD_LOG_INFO, "core", "AH00128: File does not exist: %s",
                      r->filename ? r->filename : "");
        return 404;
    }
    if (S_ISDIR(r->finfo.st_mode)) {
        hd_log_rerror(r, HD_LOG_ERR, "core", "Attempt to serve directory: %s", r->filename);
        return 403;
    }
    /* no PATH_INFO for static files: "/file.html/" names nothing */
    if (ulen > 0 && r->uri[ulen - 1] == '/') {
        return 404;
    }
    if (!S_ISREG(r->finfo.st_mode)) {
        hd_log_rerror(r, HD_LOG_ERR, "core", "Not a regular file: %s", r->filename);
        return 403;
    }
    if (!get_or_head) {
        return method_not_allowed(r);
    }

    fd = hd_open_file_for_request(r, r->filename);
    if (fd < 0) {
        int err = errno;
        if (err == ENOENT || err == ENOTDIR) {
            return 404;
        }
        if (err == EMFILE || err == ENFILE) {
            /* the server's shortage, not the file's permissions: try again later */
            hd_log_episode_fail(&open_shortage, HD_LOG_ERR, "core",
                                "(%d)%s: cannot open files to serve them (first: %s); answering "
                                "503", err, strerror(err), r->filename);
            return 503;
        }
        hd_log_rerror(r, HD_LOG_ERR, "core",
                      "(%d)%s: AH00132: file permissions deny server access: %s", err,
                      strerror(err), r->filename);
        return 403;
    }
    hd_log_episode_end(&open_shortage, HD_LOG_ERR, "core", "cannot open files to serve them");
    size = r->finfo.st_size;

    /* An ErrorDocument served under its error status is not a representation
     * of the URI: no validators, conditionals or ranges for it. */
    if (r->status == 0 || r->status == 200) {
        const char *etag = hd_file_etag(r->pool, &r->finfo);

        r->mtime = r->finfo.st_mtime;
        hd_table_set(r->headers_out, "ETag", etag);
        hd_table_set(r->headers_out, "Accept-Ranges", "bytes");

        rc = hd_meets_conditions(r, etag, r->mtime);
        if (rc == 304) {
            r->status = 304;
            r->content_length = -1;
            return HD_OK;
        }
        if (rc != HD_OK) {
            return rc;
        }
        r->status = 200;
    }

    hd_body_append_file(r, fd, 0, size);
    r->content_length = size;
    return HD_OK;
}
