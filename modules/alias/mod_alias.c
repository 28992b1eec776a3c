/*
 * mod_alias: URL-paths mapped to files outside DocumentRoot (Alias,
 * AliasMatch) and external redirects (Redirect, RedirectMatch,
 * RedirectTemp, RedirectPermanent), as Apache 2.4's mod_alias.
 *
 * In translate_name, in Apache's order: a one-argument Redirect of the
 * <Location> sections that cover the URI, then the server's redirects, then
 * a one-argument Alias of those <Location> sections, then the server's
 * aliases; the first match in configuration order wins. Redirects that
 * stand in <Directory>, <Location> or <Files> are per-directory
 * configuration and apply in fixups, once the request's sections are merged.
 *
 * An alias only sets the file name and says where the mapping's root is
 * (r->context_root): the core's map_to_storage then merges the target's own
 * <Directory> sections (Require, Options) and checks symbolic links below
 * that root, exactly as under DocumentRoot.
 *
 * A server with none of these directives pays one flag test per hook.
 */
#include "alias/alias.h"

#include "config.h"
#include "core.h"
#include "log.h"
#include "module.h"
#include "path.h"
#include "pool.h"
#include "regex.h"
#include "request.h"
#include "response.h"
#include "sections.h"
#include "table.h"

#include <string.h>
#include <strings.h>

typedef struct {
    const char *fake;   /* URL-path prefix (Alias, Redirect), or NULL with a regex */
    hd_regex_t *regex;  /* AliasMatch, RedirectMatch */
    const char *real;   /* file path, URL, or a template with $N; NULL: no URL (410) */
    const char *root;   /* an alias's directory, for r->context_root */
    int status;         /* a redirect's status, 0 for an alias */
} alias_entry_t;

/* The one-argument forms that sit in <Location> sections, for translate_name. */
typedef struct {
    const hd_section_t *sec;
    const struct alias_dconf *conf;
} alias_location_t;

typedef struct {
    hd_array_t *aliases;      /* alias_entry_t, Alias and AliasMatch in file order */
    hd_array_t *redirects;    /* alias_entry_t, the server level's redirects in file order */
    alias_location_t *locations;
    size_t nlocations;
    bool translate;           /* translate_name has something to do */
    bool fixups;              /* some section holds a Redirect */
} alias_sconf_t;

/*
 * A merged config does not copy its sections' lists of redirects: it points
 * at them, the innermost first, as Apache's merge appends the enclosing
 * sections' redirects after the section's own.
 */
typedef struct alias_dconf alias_dconf_t;
struct alias_dconf {
    hd_array_t *redirects;        /* this section's, file order; NULL if none */
    const alias_dconf_t *parent;  /* a merge: the enclosing sections' */
    const char *alias;            /* one-argument Alias (<Location>): the file */
    const char *redirect;         /* one-argument Redirect: the escaped URL, or NULL */
    int redirect_status;          /* one-argument Redirect: its status; 0 when none */
};

/* ---- the pure rules -------------------------------------------------- */

size_t hd_alias_prefix_match(const char *uri, const char *fake)
{
    const char *a = fake, *u = uri;

    if (*a == '\0') {
        return 0;
    }
    while (*a != '\0') {
        if (*a == '/') {
            if (*u != '/') {
                return 0;
            }
            while (*a == '/') {
                a++;
            }
            while (*u == '/') {
                u++;
            }
        } else if (*u++ != *a++) {
            return 0;
        }
    }
    /* the last segment of the alias must end where one of the URI ends */
    if (a[-1] != '/' && *u != '\0' && *u != '/') {
        return 0;
    }
    return (size_t)(u - uri);
}

void hd_alias_clean_path(char *path)
{
    char *out = path;
    const char *in = path;

    if (*in != '/') {
        return;
    }
    while (*in != '\0') {
        const char *seg;
        size_t n;

        while (*in == '/') {
            in++;
        }
        seg = in;
        while (*in != '\0' && *in != '/') {
            in++;
        }
        n = (size_t)(in - seg);
        if (n == 1 && seg[0] == '.') {
            /* nothing */
        } else if (n == 2 && seg[0] == '.' && seg[1] == '.') {
            while (out > path && *--out != '/') {
            }
        } else if (n > 0) {
            *out++ = '/';
            memmove(out, seg, n);
            out += n;
        }
        /* a trailing '/', "/." or "/.." names a directory: keep the slash */
        if (*in == '\0' && (n == 0 || (n <= 2 && seg[0] == '.' && seg[n - 1] == '.'))) {
            *out++ = '/';
        }
    }
    if (out == path) {
        *out++ = '/';
    }
    *out = '\0';
}

static bool scheme_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '+' ||
           c == '-' || c == '.';
}

bool hd_alias_is_url(const char *u)
{
    size_t x;

    for (x = 0; u[x] != ':'; x++) {
        if (u[x] == '\0' || !scheme_char(u[x])) {
            return false;
        }
    }
    return x > 0;
}

/* Bytes a Location header must never carry as they are: controls, space, DEL, non-ASCII. */
static bool header_unsafe(unsigned char c)
{
    return c <= 0x20 || c >= 0x7f;
}

/* Appends @p s[0..n) to @p out, %-escaping the bytes header_unsafe names. */
static char *put_verbatim(char *out, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";

    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (header_unsafe(c)) {
            *out++ = '%';
            *out++ = hex[c >> 4];
            *out++ = hex[c & 0xf];
        } else {
            *out++ = (char)c;
        }
    }
    return out;
}

char *hd_alias_escape_target(hd_pool_t *p, const char *target)
{
    size_t keep = 0, path_end, len = strlen(target);
    const char *path;
    char *escaped, *out, *o;

    /* "scheme://authority" stays as written (an IPv6 "[::1]" must keep its brackets) */
    if (hd_alias_is_url(target)) {
        const char *colon = strchr(target, ':');
        keep = (size_t)(colon + 1 - target);
        if (colon[1] == '/' && colon[2] == '/') {
            keep += 2 + strcspn(colon + 3, "/?#");
        }
    }
    path_end = keep + strcspn(target + keep, "?#");
    path = hd_pstrndup(p, target + keep, path_end - keep);
    escaped = hd_escape_path(p, path);

    out = hd_pnalloc(p, 3 * len + strlen(escaped) + 1);
    o = put_verbatim(out, target, keep);
    memcpy(o, escaped, strlen(escaped));
    o += strlen(escaped);
    /* the query and the fragment are the configuration's (or the capture's) own */
    o = put_verbatim(o, target + path_end, len - path_end);
    *o = '\0';
    return out;
}

int hd_alias_parse_status(const char *arg)
{
    static const struct {
        const char *name;
        int status;
    } names[] = {{"permanent", 301}, {"temp", 302}, {"seeother", 303}, {"gone", 410}};
    int v = 0;

    for (size_t i = 0; i < HD_ARRAY_SIZE(names); i++) {
        if (strcasecmp(arg, names[i].name) == 0) {
            return names[i].status;
        }
    }
    if (*arg < '0' || *arg > '9') {
        return 0;
    }
    for (const char *c = arg; *c != '\0'; c++) {
        if (*c < '0' || *c > '9' || v > 999) {
            return -1;
        }
        v = v * 10 + (*c - '0');
    }
    return v >= 300 && v <= 599 ? v : -1;
}

/* ---- configuration ---------------------------------------------------- */

static void *alias_create_server_config(hd_pool_t *p, hd_server_t *s)
{
    alias_sconf_t *sc = hd_pcalloc(p, sizeof(*sc));

    sc->aliases = hd_array_create(p, 4, sizeof(alias_entry_t));
    sc->redirects = hd_array_create(p, 4, sizeof(alias_entry_t));
    return sc;
}

static void *alias_create_dir_config(hd_pool_t *p, const char *path)
{
    return hd_pcalloc(p, sizeof(alias_dconf_t));
}

static void *alias_merge_dir_config(hd_pool_t *p, const void *basev, const void *addv)
{
    const alias_dconf_t *base = basev, *add = addv;
    alias_dconf_t *m = hd_palloc(p, sizeof(*m));

    if (add->redirects != NULL) {
        m->redirects = add->redirects;
        m->parent = base->redirects != NULL || base->parent != NULL ? base : NULL;
    } else {
        m->redirects = base->redirects;
        m->parent = base->parent;
    }
    m->alias = add->alias ? add->alias : base->alias;
    if (add->redirect_status != 0) {
        m->redirect = add->redirect;
        m->redirect_status = add->redirect_status;
    } else {
        m->redirect = base->redirect;
        m->redirect_status = base->redirect_status;
    }
    return m;
}

static alias_sconf_t *sconf_of(const hd_server_t *s)
{
    return hd_get_server_config(s, &hd_alias_module);
}

static bool is_redirect_status(int status)
{
    return status >= 300 && status <= 399;
}

/* A file path from the configuration: absolute against ServerRoot, one spelling. */
static char *config_path(hd_cmd_parms_t *cmd, const char *path)
{
    char *abs = (char *)hd_server_root_relative(cmd->pool, cmd->server, path);

    hd_alias_clean_path(abs);
    return abs;
}

/*
 * The directory an AliasMatch target lies in whatever the captures hold:
 * the template up to the last '/' before its first "$N" or escape (made
 * absolute as the result will be). Links below it are checked as below an
 * Alias's directory; a result that lands elsewhere (a capture that starts
 * with '/') has every component checked, from "/".
 */
static const char *template_root(hd_cmd_parms_t *cmd, const char *tmpl)
{
    size_t lit = strcspn(tmpl, "$\\");
    char *root = (char *)hd_server_root_relative(cmd->pool, cmd->server,
                                                 hd_pstrndup(cmd->temp_pool, tmpl, lit));

    if (tmpl[lit] != '\0') {
        /* the segment the first capture lands in is not known yet */
        strrchr(root, '/')[1] = '\0';
    }
    hd_alias_clean_path(root);
    return root;
}

/* "$N" beyond the pattern's groups would always expand to nothing: a mistake. */
static const char *check_refs(hd_cmd_parms_t *cmd, const hd_regex_t *re, const char *tmpl)
{
    int max = hd_regex_subst_max_ref(tmpl);
    int groups = hd_regex_groups(re);

    if (max > groups) {
        return hd_psprintf(cmd->temp_pool,
                           "%s: \"%s\" refers to $%d, but the regular expression \"%s\" has %s "
                           "capturing group%s",
                           cmd->cmd->name, tmpl, max, hd_regex_pattern(re),
                           groups == 0 ? "no" : hd_psprintf(cmd->temp_pool, "only %d", groups),
                           groups == 1 ? "" : "s");
    }
    return NULL;
}

/* Apache's AH00671: an Alias that an earlier one always takes first. */
static void warn_overlap(hd_cmd_parms_t *cmd, const alias_sconf_t *sc, const char *fake)
{
    const alias_entry_t *e = sc->aliases->elts;

    for (size_t i = 0; i + 1 < sc->aliases->nelts; i++) {
        if (e[i].regex != NULL ? hd_regex_match(e[i].regex, fake, NULL, 0)
                               : hd_alias_prefix_match(fake, e[i].fake) > 0) {
            hd_log_error(HD_LOG_WARNING, "alias",
                         "AH00671: The %s directive in %s at line %u will probably never match "
                         "because it overlaps an earlier Alias%s.",
                         cmd->cmd->name, cmd->file, cmd->line, e[i].regex ? "Match" : "");
            return;
        }
    }
}

static const char *no_expressions(hd_cmd_parms_t *cmd, const char *arg)
{
    if (strstr(arg, "%{") != NULL) {
        return hd_psprintf(cmd->temp_pool,
                           "%s: \"%s\": expressions (%%{...}) are not supported; give a literal "
                           "path or URL",
                           cmd->cmd->name, arg);
    }
    return NULL;
}

static const char *cmd_alias(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    alias_sconf_t *sc = sconf_of(cmd->server);
    alias_dconf_t *d = mconfig;
    alias_entry_t *e;
    const char *err;

    if (argc == 1) {
        /* Apache 2.4's <Location> form: the whole location is this one file or directory */
        if (cmd->context == HD_CTX_MAIN) {
            return "Alias must have two arguments when used globally";
        }
        if ((err = no_expressions(cmd, argv[0])) != NULL) {
            return err;
        }
        d->alias = config_path(cmd, argv[0]);
        sc->translate = true;
        return NULL;
    }
    if (cmd->context != HD_CTX_MAIN) {
        return "Alias URL-path file-path is not allowed in <Location>: write it at server "
               "level, or give only the file-path inside <Location>";
    }
    if (argv[0][0] != '/') {
        return hd_psprintf(cmd->temp_pool, "Alias: URL-path \"%s\" must start with '/'",
                           argv[0]);
    }
    e = hd_array_push(sc->aliases);
    e->fake = hd_pstrdup(cmd->pool, argv[0]);
    /* cleaned, but a trailing '/' stays: "Alias /x/ /srv/x/" appends "file", not "/file" */
    e->real = config_path(cmd, argv[1]);
    e->root = e->real;
    sc->translate = true;
    warn_overlap(cmd, sc, e->fake);
    return NULL;
}

static const char *cmd_alias_match(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    alias_sconf_t *sc = sconf_of(cmd->server);
    hd_regex_t *re;
    alias_entry_t *e;
    const char *err;

    if ((err = hd_config_regex(cmd, argv[0], 0, &re)) != NULL ||
        (err = check_refs(cmd, re, argv[1])) != NULL) {
        return err;
    }
    e = hd_array_push(sc->aliases);
    e->regex = re;
    e->real = hd_pstrdup(cmd->pool, argv[1]);
    e->root = template_root(cmd, argv[1]);
    sc->translate = true;
    return NULL;
}

/*
 * Whether a Redirect target can ever be one: an absolute URL, or a path
 * made absolute with this server's name. A RedirectMatch template is judged
 * by its literal start: "$1" or "http$2" may still become a URL, "foo/$1"
 * never will (Apache finds out per request, with a 500).
 */
static const char *check_target(hd_cmd_parms_t *cmd, const char *url, bool tmpl)
{
    if (url[0] == '/' || hd_alias_is_url(url)) {
        return NULL;
    }
    if (tmpl) {
        size_t lit = strcspn(url, "$\\"), i = 0;
        while (i < lit && scheme_char(url[i])) {
            i++;
        }
        if (i == lit && url[lit] != '\0') {
            return NULL;
        }
    }
    return hd_psprintf(cmd->temp_pool,
                       "%s: target \"%s\" is neither an absolute URL (scheme://host/...) nor a "
                       "URL-path starting with '/'",
                       cmd->cmd->name, url);
}

/* Where a redirect entry goes: the server's list, or the section's (applied in fixups). */
static alias_entry_t *push_redirect(hd_cmd_parms_t *cmd, alias_dconf_t *d)
{
    alias_sconf_t *sc = sconf_of(cmd->server);

    if (cmd->context == HD_CTX_MAIN) {
        sc->translate = true;
        return hd_array_push(sc->redirects);
    }
    if (d->redirects == NULL) {
        d->redirects = hd_array_create(cmd->pool, 2, sizeof(alias_entry_t));
    }
    sc->fixups = true;
    return hd_array_push(d->redirects);
}

static const char *bad_status(hd_cmd_parms_t *cmd, const char *arg)
{
    return hd_psprintf(cmd->temp_pool,
                       "%s: invalid status \"%s\": use permanent, temp, seeother, gone, or a number "
                       "from 300 to 599",
                       cmd->cmd->name, arg);
}

typedef enum { REDIRECT, REDIRECT_MATCH, REDIRECT_TEMP, REDIRECT_PERMANENT } redirect_kind_t;

/*
 * Redirect [status] URL-path URL, RedirectMatch [status] regex URL, and in a
 * section Redirect [status] URL (every request the section covers goes to
 * that one URL, or gets that status). As Apache's: a 3xx needs a URL, any
 * other status must have none.
 */
static const char *add_redirect(hd_cmd_parms_t *cmd, alias_dconf_t *d, int argc, char *argv[],
                                redirect_kind_t kind)
{
    int status = kind == REDIRECT_PERMANENT ? 301 : 302;
    bool regex = kind == REDIRECT_MATCH, section = cmd->context != HD_CTX_MAIN;
    bool has_status = false;
    const char *path = NULL, *url = NULL, *err;
    alias_entry_t *e;

    if (kind == REDIRECT || kind == REDIRECT_MATCH) {
        int parsed = hd_alias_parse_status(argv[0]);
        if (parsed < 0 || (parsed == 0 && argc == 3)) {
            return bad_status(cmd, argv[0]);
        }
        if (parsed > 0) {
            status = parsed;
            has_status = true;
            argc--;
            argv++;
        }
    }
    /* one argument left is the URL only in a section's one-argument form of Redirect */
    if (argc == 2) {
        path = argv[0];
        url = argv[1];
    } else if (argc == 1 && section && !regex && is_redirect_status(status)) {
        url = argv[0];
    } else if (argc == 1) {
        if (!section && !regex && hd_alias_is_url(argv[0])) {
            /* Apache would send every request there, the target's own included */
            return hd_psprintf(cmd->temp_pool,
                               "%s needs a URL-path before the URL at server level; a URL alone "
                               "is only for inside <Location>, <Directory> or <Files>",
                               cmd->cmd->name);
        }
        path = argv[0];
    }

    if (is_redirect_status(status) && url == NULL) {
        return hd_psprintf(cmd->temp_pool, "%s: URL to redirect to is missing (status %d needs one)",
                           cmd->cmd->name, status);
    }
    if (!is_redirect_status(status) && url != NULL) {
        return hd_psprintf(cmd->temp_pool,
                           "%s: status %d takes no URL, only 3xx redirects do (got \"%s\")",
                           cmd->cmd->name, status, url);
    }
    if (path == NULL && !section) {
        return hd_psprintf(cmd->temp_pool,
                           "%s %d needs a URL-path at server level; a status alone is only for "
                           "inside <Location>, <Directory> or <Files>",
                           cmd->cmd->name, status);
    }
    if (url != NULL && (err = check_target(cmd, url, regex)) != NULL) {
        return err;
    }

    if (path == NULL) {
        if (url != NULL && (err = no_expressions(cmd, url)) != NULL) {
            return err;
        }
        d->redirect = url != NULL ? hd_alias_escape_target(cmd->pool, url) : "";
        d->redirect_status = status;
        sconf_of(cmd->server)->fixups = true;
        return NULL;
    }
    if (regex) {
        hd_regex_t *re;
        if ((err = hd_config_regex(cmd, path, 0, &re)) != NULL ||
            (url != NULL && (err = check_refs(cmd, re, url)) != NULL)) {
            return err;
        }
        e = push_redirect(cmd, d);
        e->regex = re;
    } else if (path[0] != '/') {
        if (kind == REDIRECT && !has_status) {
            return hd_psprintf(cmd->temp_pool,
                               "%s: \"%s\" is neither a status (permanent, temp, seeother, gone, "
                               "or a number) nor a URL-path starting with '/'",
                               cmd->cmd->name, path);
        }
        return hd_psprintf(cmd->temp_pool, "%s: URL-path \"%s\" must start with '/'",
                           cmd->cmd->name, path);
    } else {
        e = push_redirect(cmd, d);
        e->fake = hd_pstrdup(cmd->pool, path);
    }
    e->real = url != NULL ? hd_pstrdup(cmd->pool, url) : NULL;
    e->status = status;
    return NULL;
}

static const char *cmd_redirect(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    return add_redirect(cmd, mconfig, argc, argv, REDIRECT);
}

static const char *cmd_redirect_match(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    return add_redirect(cmd, mconfig, argc, argv, REDIRECT_MATCH);
}

static const char *cmd_redirect_temp(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    return add_redirect(cmd, mconfig, argc, argv, REDIRECT_TEMP);
}

static const char *cmd_redirect_permanent(hd_cmd_parms_t *cmd, void *mconfig, int argc,
                                          char *argv[])
{
    return add_redirect(cmd, mconfig, argc, argv, REDIRECT_PERMANENT);
}

/*
 * translate_name sees no <Location> merge (it runs before the file is
 * known), so the sections that hold a one-argument Alias or Redirect are
 * listed here once, in the order the merge applies them.
 */
static int alias_post_config(hd_server_t *s)
{
    alias_sconf_t *sc = sconf_of(s);
    const hd_section_index_t *ix = s->section_index;
    size_t n = 0;

    if (ix == NULL) {
        return HD_OK;
    }
    sc->locations = hd_palloc(s->pool, (ix->nlocations + 1) * sizeof(alias_location_t));
    for (size_t i = 0; i < ix->nlocations; i++) {
        const alias_dconf_t *d = ix->locations[i]->dir_conf[hd_alias_module.index];
        if (d != NULL && (d->alias != NULL || d->redirect_status != 0)) {
            sc->locations[n].sec = ix->locations[i];
            sc->locations[n].conf = d;
            n++;
        }
    }
    sc->nlocations = n;
    if (n > 0) {
        sc->translate = true;
    }
    return HD_OK;
}

/* ---- requests ---------------------------------------------------------- */

/* Answers with @p status; a 3xx goes to @p target, completed as Apache completes it. */
static int redirect_to(hd_request_t *r, const char *target, int status)
{
    if (!is_redirect_status(status)) {
        return status;
    }
    if (target[0] == '/') {
        target = hd_construct_url(r, target);
    }
    if (!hd_alias_is_url(target)) {
        hd_log_rerror(r, HD_LOG_ERR, "alias",
                      "AH00674: cannot redirect '%s' to '%s'; target is not a valid absoluteURI "
                      "or abs_path",
                      r->uri, target);
        return 500;
    }
    /* the request's query goes along unless the target has its own */
    if (r->args != NULL && strchr(target, '?') == NULL) {
        target = hd_pstrcat(r->pool, target, "?", r->args, NULL);
    }
    hd_table_set(r->headers_out, "Location", target);
    return status;
}

/*
 * The first entry of @p list that matches r->uri. For a redirect, answers
 * (a status); for an alias, sets the file name and returns HD_OK. HD_DECLINED
 * when none matches.
 */
static int try_list(hd_request_t *r, const hd_array_t *list, bool redirect)
{
    const alias_entry_t *e = list->elts;

    for (size_t i = 0; i < list->nelts; i++, e++) {
        hd_regmatch_t m[HD_REGEX_MAX_MATCH];
        char *found;
        size_t l = 0;

        if (e->regex != NULL) {
            if (!hd_regex_match(e->regex, r->uri, m, HD_REGEX_MAX_MATCH)) {
                continue;
            }
            if (e->real == NULL) {
                return e->status;
            }
            found = hd_regex_subst(r->pool, e->real, r->uri, m, HD_REGEX_MAX_MATCH);
            if (found == NULL) {
                hd_log_rerror(r, HD_LOG_ERR, "alias",
                              "AH00672: Regex substitution in '%s' failed. Replacement too long?",
                              e->real);
                return 500;
            }
            if (redirect) {
                return redirect_to(r, hd_alias_escape_target(r->pool, found), e->status);
            }
            if (found[0] != '/') {
                found = (char *)hd_server_root_relative(r->pool, r->server, found);
            }
            r->context_prefix = "";
        } else {
            if ((l = hd_alias_prefix_match(r->uri, e->fake)) == 0) {
                continue;
            }
            if (redirect) {
                if (e->real == NULL) {
                    return e->status;
                }
                return redirect_to(
                    r, hd_pstrcat(r->pool, e->real, hd_escape_path(r->pool, r->uri + l), NULL),
                    e->status);
            }
            found = hd_pstrcat(r->pool, e->real, r->uri + l, NULL);
            r->context_prefix = e->fake;
        }
        hd_alias_clean_path(found);
        r->filename = found;
        r->context_root = e->root;
        return HD_OK;
    }
    return HD_DECLINED;
}

static int alias_translate(hd_request_t *r)
{
    const alias_sconf_t *sc = sconf_of(r->server);
    const alias_dconf_t *loc_redirect = NULL;
    const char *loc_alias = NULL;
    int rv;

    /* (no config at all: a server record built by hand, as unit tests do) */
    if (sc == NULL || !sc->translate || r->uri == NULL || r->uri[0] != '/') {
        return HD_DECLINED;
    }
    /* the <Location> merge, for this module's one-argument forms: the last section wins */
    for (size_t i = 0; i < sc->nlocations; i++) {
        const alias_dconf_t *d = sc->locations[i].conf;
        if (hd_section_location_matches(sc->locations[i].sec, r->uri)) {
            if (d->redirect_status != 0) {
                loc_redirect = d;
            }
            if (d->alias != NULL) {
                loc_alias = d->alias;
            }
        }
    }
    if (loc_redirect != NULL) {
        return redirect_to(r, loc_redirect->redirect, loc_redirect->redirect_status);
    }
    if ((rv = try_list(r, sc->redirects, true)) != HD_DECLINED) {
        return rv;
    }
    if (loc_alias != NULL) {
        r->filename = hd_pstrdup(r->pool, loc_alias);
        r->context_prefix = r->uri;
        r->context_root = loc_alias;
        return HD_OK;
    }
    return try_list(r, sc->aliases, false);
}

/* Redirects of the request's <Directory>, <Location> and <Files> sections. */
static int alias_fixups(hd_request_t *r)
{
    const alias_sconf_t *sc = sconf_of(r->server);
    const alias_dconf_t *d;

    if (sc == NULL || !sc->fixups || r->dir_config == NULL || r->uri == NULL || r->uri[0] != '/') {
        return HD_DECLINED;
    }
    if ((d = hd_get_dir_config(r, &hd_alias_module)) == NULL) {
        return HD_DECLINED;
    }
    if (d->redirect_status != 0) {
        return redirect_to(r, d->redirect, d->redirect_status);
    }
    for (; d != NULL; d = d->parent) {
        int rv;
        if (d->redirects != NULL && (rv = try_list(r, d->redirects, true)) != HD_DECLINED) {
            return rv;
        }
    }
    return HD_DECLINED;
}

#define CTX_ALIAS (HD_CTX_MAIN | HD_CTX_LOCATION)

static const hd_command_t alias_commands[] = {
    {"Alias", cmd_alias, 0, HD_TAKE12, CTX_ALIAS, HD_CONF_DIR, "[URL-path] file-path|directory-path",
     NULL, "maps URL-path (and what lies below it) to a file or directory; inside <Location> the "
           "location maps to file-path"},
    {"AliasMatch", cmd_alias_match, 0, HD_TAKE2, HD_CTX_MAIN, HD_CONF_SERVER,
     "regex file-path|directory-path", NULL,
     "maps URLs the regular expression matches to a file name built with $1..$9"},
    {"Redirect", cmd_redirect, 0, HD_TAKE123, HD_CTX_ANY, HD_CONF_DIR, "[status] [URL-path] URL",
     NULL, "sends a redirect for URL-path and what lies below it; status permanent, temp "
           "(default), seeother, gone or a number"},
    {"RedirectMatch", cmd_redirect_match, 0, HD_TAKE23, HD_CTX_ANY, HD_CONF_DIR, "[status] regex URL",
     NULL, "sends a redirect for URLs the regular expression matches, to a URL built with $1..$9"},
    {"RedirectTemp", cmd_redirect_temp, 0, HD_TAKE2, HD_CTX_ANY, HD_CONF_DIR, "URL-path URL", NULL,
     "Redirect temp: a 302 for URL-path and what lies below it"},
    {"RedirectPermanent", cmd_redirect_permanent, 0, HD_TAKE2, HD_CTX_ANY, HD_CONF_DIR, "URL-path URL", NULL,
     "Redirect permanent: a 301 for URL-path and what lies below it"},
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

hd_module_t hd_alias_module = {
    .name = "alias",
    .source_name = "mod_alias.c",
    .always_loaded = true,
    .commands = alias_commands,
    .create_server_config = alias_create_server_config,
    .create_dir_config = alias_create_dir_config,
    .merge_dir_config = alias_merge_dir_config,
    .post_config = alias_post_config,
    .translate_name = alias_translate,
    .fixups = alias_fixups,
};
