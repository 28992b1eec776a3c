/*
 * mod_headers: Header and RequestHeader, as Apache 2.4's mod_headers.
 *
 * RequestHeader edits r->headers_in in the fixups phase, just before the
 * handler. Header edits the response in an output filter (stage
 * CONTENT_SET), once, just before the head is written: "always" entries on
 * every response, errors and redirects the server makes included, then the
 * default ("onsuccess") entries on the responses Apache's default table
 * reaches: those a handler answered with 2xx, and its 304.
 *
 * Each list runs the server level's entries first, then those of each
 * section in the per-directory merge order. A merged config does not copy
 * the lists: it points at the enclosing config, so the per-request merge
 * costs one small allocation, and a request no Header stands for costs a
 * flag test in each hook and no filter.
 */
#include "headers.h"

#include "config.h"
#include "date.h"
#include "filter.h"
#include "log.h"
#include "module.h"
#include "pool.h"
#include "regex.h"
#include "request.h"
#include "table.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

typedef enum {
    A_SET,
    A_APPEND,
    A_ADD,
    A_MERGE,
    A_SETIFEMPTY,
    A_UNSET,
    A_ECHO,
    A_EDIT,
    A_EDIT_ALL
} action_t;

static const struct {
    const char *name;
    action_t action;
} actions[] = {
    {"set", A_SET},
    {"append", A_APPEND},
    {"add", A_ADD},
    {"merge", A_MERGE},
    {"setifempty", A_SETIFEMPTY},
    {"unset", A_UNSET},
    {"echo", A_ECHO},
    {"edit", A_EDIT},
    {"edit*", A_EDIT_ALL},
};

/* Response headers the head renders from a request field, not from headers_out. */
typedef enum { NAME_PLAIN, NAME_CONTENT_TYPE, NAME_LAST_MODIFIED } name_kind_t;

typedef struct entry entry_t;
struct entry {
    action_t action;
    const char *name; /* the header; for echo the pattern as written */
    name_kind_t kind;
    hd_hfmt_t value; /* the value, or the replacement of an edit */
    hd_regex_t *re;  /* edit, edit*: on the value; echo: on request header names */
    entry_t *next;
};

/* The three lists, as Apache's fixup_in, fixup_out and fixup_err. */
enum { L_IN, L_OUT, L_ERR, L_COUNT };
#define BIT(l) (1u << (l))

typedef struct headers_dconf headers_dconf_t;
struct headers_dconf {
    entry_t *head[L_COUNT]; /* this section's own entries, in file order */
    entry_t *tail[L_COUNT];
    const headers_dconf_t *parent; /* the enclosing (merged) config, applied first */
    unsigned lists;                /* BIT(l): list l is not empty here or in a parent */
};

/*
 * Framing and the server's own fields: the head writes these after
 * mod_headers has run, as Apache's core does, so a Header naming one could
 * not do what it says (or would send a second, conflicting line).
 */
static const char *const server_owned[] = {
    "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive", "Date", "Server"};

static bool is_server_owned(const char *name)
{
    for (size_t i = 0; i < HD_ARRAY_SIZE(server_owned); i++) {
        if (strcasecmp(name, server_owned[i]) == 0) {
            return true;
        }
    }
    return false;
}

/* ---- configuration ---------------------------------------------------- */

static void *headers_create_dir_config(hd_pool_t *p, const char *path)
{
    return hd_pcalloc(p, sizeof(headers_dconf_t));
}

/* @p add's entries after @p base's: @p add (and its parents) re-hung below @p base. */
static headers_dconf_t *hang_below(hd_pool_t *p, const headers_dconf_t *base,
                                   const headers_dconf_t *add)
{
    headers_dconf_t *m = hd_palloc(p, sizeof(*m));

    *m = *add;
    m->parent = add->parent != NULL ? hang_below(p, base, add->parent) : base;
    m->lists = add->lists | base->lists;
    return m;
}

static void *headers_merge_dir_config(hd_pool_t *p, const void *base, const void *add)
{
    const headers_dconf_t *b = base, *a = add;

    if (a->lists == 0) {
        return (void *)b;
    }
    if (b->lists == 0) {
        return (void *)a;
    }
    return hang_below(p, b, a);
}

/* RFC 9110 token characters. */
static bool is_token(const char *s)
{
    if (*s == '\0') {
        return false;
    }
    for (; *s != '\0'; s++) {
        if (!isalnum((unsigned char)*s) && strchr("!#$%&'*+-.^_`|~", *s) == NULL) {
            return false;
        }
    }
    return true;
}

/* The envclause: Apache's conditions, none of which this server can evaluate. */
static const char *condition_error(hd_cmd_parms_t *cmd, const char *clause)
{
    const char *dn = cmd->cmd->name;

    if (strcasecmp(clause, "early") == 0) {
        return hd_psprintf(cmd->pool,
                           "%s: 'early' is not supported by this server "
                           "(headers are only changed late, as in production)",
                           dn);
    }
    if (strncasecmp(clause, "env=", 4) == 0) {
        return hd_psprintf(cmd->pool,
                           "%s: condition '%s' is not supported by this server "
                           "(it has no environment variables)",
                           dn, clause);
    }
    if (strncasecmp(clause, "expr=", 5) == 0) {
        return hd_psprintf(cmd->pool,
                           "%s: condition '%s' is not supported by this server "
                           "(it has no expression parser)",
                           dn, clause);
    }
    return hd_psprintf(cmd->pool, "%s: unknown parameter '%s' (a condition would go here)", dn,
                       clause);
}

static const char *parse_value(hd_cmd_parms_t *cmd, const char *what, const char *s, hd_hfmt_t *out)
{
    const char *err;

    if (strncmp(s, "expr=", 5) == 0) {
        return hd_psprintf(cmd->pool,
                           "%s: %s '%s': expr= values are not supported by this "
                           "server (it has no expression parser)",
                           cmd->cmd->name, what, s);
    }
    err = hd_headers_parse_format(cmd->pool, s, out);
    if (err != NULL) {
        return hd_psprintf(cmd->pool, "%s: %s '%s': %s", cmd->cmd->name, what, s, err);
    }
    return NULL;
}

/*
 * Apache's header_cmd and header_inout_cmd: [condition] action header
 * [value] [replacement] [envclause], where unset and echo take no value and
 * only edit takes a replacement, so the words shift left for the others.
 */
static const char *parse_header_cmd(hd_cmd_parms_t *cmd, headers_dconf_t *d, int list, int argc,
                                    char *argv[])
{
    const char *dn = cmd->cmd->name;
    const char *action, *hdr, *val, *subs, *clause;
    entry_t *e;
    int i = 0;
    size_t k;

    if (list == L_OUT && argc > 0) {
        if (strcasecmp(argv[0], "always") == 0) {
            list = L_ERR;
            i++;
        } else if (strcasecmp(argv[0], "onsuccess") == 0) {
            i++;
        }
    }
    if (i >= argc) {
        return hd_psprintf(cmd->pool,
                           "%s requires an action: set, append, add, merge, "
                           "setifempty, unset, %sedit or edit*",
                           dn, list == L_IN ? "" : "echo, ");
    }
    action = argv[i++];
    hdr = i < argc ? argv[i++] : NULL;
    val = i < argc ? argv[i++] : NULL;
    subs = i < argc ? argv[i++] : NULL;
    clause = i < argc ? argv[i++] : NULL;
    if (i < argc) {
        return hd_psprintf(cmd->pool, "%s has too many arguments", dn);
    }

    e = hd_pcalloc(cmd->pool, sizeof(*e));
    for (k = 0; k < HD_ARRAY_SIZE(actions); k++) {
        if (strcasecmp(action, actions[k].name) == 0) {
            break;
        }
    }
    if (strcasecmp(action, "note") == 0) {
        return hd_psprintf(cmd->pool,
                           "%s: action 'note' is not supported by this server "
                           "(it has no request notes)",
                           dn);
    }
    if (k == HD_ARRAY_SIZE(actions) || (list == L_IN && actions[k].action == A_ECHO)) {
        return hd_psprintf(cmd->pool,
                           "%s: unknown action '%s': it must be set, append, add, "
                           "merge, setifempty, unset, %sedit or edit*%s",
                           dn, action, list == L_IN ? "" : "echo, ",
                           list == L_IN && k < HD_ARRAY_SIZE(actions)
                               ? " (echo copies request headers into the response: Header only)"
                               : "");
    }
    e->action = actions[k].action;
    action = actions[k].name;

    if (hdr == NULL || *hdr == '\0') {
        return hd_psprintf(cmd->pool, "%s %s requires a header name%s", dn, action,
                           e->action == A_ECHO    ? " pattern"
                           : e->action == A_UNSET ? ""
                           : e->action >= A_EDIT  ? ", a regular expression and a replacement"
                                                  : " and a value");
    }
    if (e->action == A_EDIT || e->action == A_EDIT_ALL) {
        if (val == NULL || subs == NULL) {
            return hd_psprintf(cmd->pool,
                               "%s %s requires a header name, a regular expression "
                               "and a replacement",
                               dn, action);
        }
    } else {
        if (clause != NULL) {
            return hd_psprintf(cmd->pool, "%s has too many arguments", dn);
        }
        clause = subs;
        subs = NULL;
        if (e->action == A_UNSET || e->action == A_ECHO) {
            if (val != NULL && clause != NULL) {
                return hd_psprintf(cmd->pool, "%s %s takes a header name and at most a condition",
                                   dn, action);
            }
            if (val != NULL) {
                clause = val;
                val = NULL;
            }
        } else if (val == NULL) {
            return hd_psprintf(cmd->pool, "%s %s requires a header name and a value", dn, action);
        }
    }
    if (clause != NULL) {
        return condition_error(cmd, clause);
    }

    if (e->action == A_ECHO) {
        const char *err = hd_config_regex(cmd, hdr, 0, &e->re);
        if (err != NULL) {
            return err;
        }
        e->name = hd_pstrdup(cmd->pool, hdr);
    } else {
        /* "X-Foo:" names X-Foo, as in Apache */
        const char *colon = strchr(hdr, ':');
        e->name =
            colon ? hd_pstrndup(cmd->pool, hdr, (size_t)(colon - hdr)) : hd_pstrdup(cmd->pool, hdr);
        if (!is_token(e->name)) {
            return hd_psprintf(cmd->pool, "%s %s: '%s' is not a valid header name", dn, action,
                               hdr);
        }
    }

    const char *err = NULL;
    if (e->action == A_EDIT || e->action == A_EDIT_ALL) {
        int ref;
        if ((err = hd_config_regex(cmd, val, 0, &e->re)) != NULL) {
            return err;
        }
        if ((err = parse_value(cmd, "replacement", subs, &e->value)) != NULL) {
            return err;
        }
        /* the references of the template as substitution sees it, escapes done */
        ref = hd_regex_subst_max_ref(hd_headers_format(cmd->temp_pool, &e->value, 0, 0));
        if (ref > hd_regex_groups(e->re)) {
            return hd_psprintf(cmd->pool,
                               "%s %s: the replacement '%s' refers to $%d but the "
                               "regular expression '%s' has %d group%s",
                               dn, action, subs, ref, val, hd_regex_groups(e->re),
                               hd_regex_groups(e->re) == 1 ? "" : "s");
        }
    } else if (val != NULL && (err = parse_value(cmd, "value", val, &e->value)) != NULL) {
        return err;
    }

    if (list != L_IN && e->action != A_ECHO) {
        if (is_server_owned(e->name)) {
            /* Apache sets these after mod_headers too: the directive does nothing there */
            hd_log_error(HD_LOG_WARNING, "headers",
                         "%s:%u: %s %s %s is ignored: %s is written by the server itself after "
                         "Header has run",
                         cmd->file, cmd->line, dn, action, e->name, e->name);
            return NULL;
        }
        if (strcasecmp(e->name, "Content-Type") == 0) {
            e->kind = NAME_CONTENT_TYPE;
        } else if (strcasecmp(e->name, "Last-Modified") == 0) {
            e->kind = NAME_LAST_MODIFIED;
        }
    }

    if (d->tail[list] != NULL) {
        d->tail[list]->next = e;
    } else {
        d->head[list] = e;
    }
    d->tail[list] = e;
    d->lists |= BIT(list);
    return NULL;
}

static const char *cmd_header(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    return parse_header_cmd(cmd, mconfig, L_OUT, argc, argv);
}

static const char *cmd_request_header(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    return parse_header_cmd(cmd, mconfig, L_IN, argc, argv);
}

/* ---- applying --------------------------------------------------------- */

typedef struct {
    hd_request_t *r;
    hd_table_t *t; /* headers_in or headers_out */
    bool response; /* Content-Type and Last-Modified live in r's fields */
} fix_t;

static const char *value_of(const fix_t *fx, const entry_t *e)
{
    const hd_request_t *r = fx->r;

    if (e->value.constant != NULL) {
        return e->value.constant;
    }
    return hd_headers_format(r->pool, &e->value,
                             (int64_t)r->start.tv_sec * 1000000 + r->start.tv_nsec / 1000,
                             hd_now_mono_us() - r->start_mono_us);
}

/* apr_table_mergen: ", value" onto the first value, or a new one. */
static void table_append(hd_table_t *t, hd_pool_t *p, const char *key, const char *val)
{
    for (size_t i = 0; i < t->nelts; i++) {
        if (strcasecmp(t->elts[i].key, key) == 0) {
            t->elts[i].val = hd_pstrcat(p, t->elts[i].val, ", ", val, NULL);
            return;
        }
    }
    hd_table_add(t, key, val);
}

static bool echo_skips(const char *name)
{
    return is_server_owned(name) || strcasecmp(name, "Content-Type") == 0 ||
           strcasecmp(name, "Last-Modified") == 0;
}

/* One entry on a table. False when an edit's result would be too long. */
static bool fix_table(const fix_t *fx, const entry_t *e)
{
    hd_request_t *r = fx->r;
    hd_table_t *t = fx->t;
    const char *v, *cur;

    switch (e->action) {
    case A_SET:
        hd_table_set(t, e->name, value_of(fx, e));
        break;
    case A_SETIFEMPTY:
        if (hd_table_get(t, e->name) == NULL) {
            hd_table_set(t, e->name, value_of(fx, e));
        }
        break;
    case A_ADD:
        hd_table_add(t, e->name, value_of(fx, e));
        break;
    case A_APPEND:
        table_append(t, r->pool, e->name, value_of(fx, e));
        break;
    case A_MERGE:
        v = value_of(fx, e);
        cur = hd_table_get(t, e->name);
        if (cur == NULL || !hd_headers_token_listed(cur, v)) {
            table_append(t, r->pool, e->name, v);
        }
        break;
    case A_UNSET:
        hd_table_unset(t, e->name);
        break;
    case A_ECHO:
        /* request header values hold no line break: the parser refuses them */
        for (size_t i = 0; i < r->headers_in->nelts; i++) {
            const hd_table_entry_t *in = &r->headers_in->elts[i];
            if (!echo_skips(in->key) && hd_regex_match(e->re, in->key, NULL, 0)) {
                hd_table_add(t, in->key, in->val);
            }
        }
        break;
    case A_EDIT:
    case A_EDIT_ALL:
        v = NULL;
        for (size_t i = 0; i < t->nelts; i++) {
            if (strcasecmp(t->elts[i].key, e->name) != 0) {
                continue;
            }
            if (v == NULL) {
                v = value_of(fx, e);
            }
            const char *nv =
                hd_headers_edit(r->pool, e->re, v, t->elts[i].val, e->action == A_EDIT_ALL);
            if (nv == NULL) {
                return false;
            }
            t->elts[i].val = nv;
        }
        break;
    }
    return true;
}

/*
 * The content type is r->content_type, one value. set, unset and edit act
 * on it; setifempty, add, append and merge give a response its type only
 * when it has none: in Apache they go to the table, where the type the
 * server determined overwrites them when the head is written.
 */
static bool fix_content_type(const fix_t *fx, const entry_t *e)
{
    hd_request_t *r = fx->r;

    switch (e->action) {
    case A_SET:
        r->content_type = value_of(fx, e);
        break;
    case A_UNSET:
        r->content_type = NULL;
        hd_table_unset(fx->t, "Content-Type");
        break;
    case A_EDIT:
    case A_EDIT_ALL:
        if (r->content_type != NULL) {
            const char *nv = hd_headers_edit(r->pool, e->re, value_of(fx, e), r->content_type,
                                             e->action == A_EDIT_ALL);
            if (nv == NULL) {
                return false;
            }
            r->content_type = nv;
        }
        break;
    default:
        if (r->content_type == NULL) {
            r->content_type = value_of(fx, e);
        }
        break;
    }
    return true;
}

static bool fix_entry(const fix_t *fx, const entry_t *e)
{
    hd_request_t *r = fx->r;

    if (fx->response && e->kind == NAME_CONTENT_TYPE) {
        return fix_content_type(fx, e);
    }
    if (fx->response && e->kind == NAME_LAST_MODIFIED && r->mtime != 0) {
        /* from here on the header is a table entry like any other, as in Apache */
        char *date = hd_pnalloc(r->pool, HD_HTTP_DATE_LEN + 1);
        hd_http_date_format(r->mtime, date);
        date[HD_HTTP_DATE_LEN] = '\0';
        hd_table_set(fx->t, "Last-Modified", date);
        r->mtime = 0;
    }
    return fix_table(fx, e);
}

static bool fix_list(const fix_t *fx, const headers_dconf_t *d, int list)
{
    if (d->parent != NULL && !fix_list(fx, d->parent, list)) {
        return false;
    }
    for (const entry_t *e = d->head[list]; e != NULL; e = e->next) {
        if (!fix_entry(fx, e)) {
            return false;
        }
    }
    return true;
}

/* As Apache, a failed edit ends the list; what ran before it stays. */
static void fix(hd_request_t *r, hd_table_t *t, const headers_dconf_t *d, int list)
{
    fix_t fx = {.r = r, .t = t, .response = list != L_IN};

    if (!fix_list(&fx, d, list)) {
        hd_log_rerror(r, HD_LOG_ERR, "headers",
                      "AH01504: Regular expression replacement failed (replacement too long?); "
                      "the rest of the %s directives were not applied",
                      list == L_IN ? "RequestHeader" : "Header");
    }
}

/* What Apache's default table reaches: a handler's own answers (2xx) and its 304. */
static bool onsuccess_applies(const hd_request_t *r)
{
    return (r->status >= 200 && r->status < 300) || r->status == 304;
}

static const headers_dconf_t *dconf(const hd_request_t *r)
{
    return r->dir_config != NULL ? hd_get_dir_config(r, &hd_headers_module) : NULL;
}

static int headers_fixups(hd_request_t *r)
{
    const headers_dconf_t *d = dconf(r);

    if (d != NULL && (d->lists & BIT(L_IN))) {
        fix(r, r->headers_in, d, L_IN);
    }
    return HD_DECLINED;
}

/* Edits the head on the first call (before any output moves on), then passes everything. */
static int headers_filter(hd_filter_t *f, hd_chain_t *in)
{
    const headers_dconf_t *d = f->ctx;

    if (d != NULL) {
        hd_request_t *r = f->r;
        f->ctx = NULL;
        if (d->lists & BIT(L_ERR)) {
            fix(r, r->headers_out, d, L_ERR);
        }
        if ((d->lists & BIT(L_OUT)) && onsuccess_applies(r)) {
            fix(r, r->headers_out, d, L_OUT);
        }
    }
    return hd_filter_pass(f, in);
}

static const hd_filter_type_t headers_filter_type = {
    .name = "FIXUP_HEADERS_OUT",
    .stage = HD_FILTER_CONTENT_SET,
    .run = headers_filter,
};

static void headers_insert_filter(hd_request_t *r)
{
    const headers_dconf_t *d = dconf(r);

    if (d == NULL || d->lists == 0) {
        return;
    }
    if ((d->lists & BIT(L_ERR)) || ((d->lists & BIT(L_OUT)) && onsuccess_applies(r))) {
        hd_filter_insert(r, &headers_filter_type, (void *)d);
    }
}

static const hd_command_t headers_commands[] = {
    {"Header", cmd_header, 0, HD_TAKE_ARGV, HD_CTX_ANY, HD_CONF_DIR,
     "[onsuccess|always] set|append|add|merge|setifempty|unset|echo|edit|edit* header "
     "[value|regex] [replacement]",
     NULL,
     "changes response headers (always: every response, errors and redirects too; onsuccess: "
     "2xx and 304); values may use %t, %D and %%; Content-Length, Transfer-Encoding, "
     "Connection, Keep-Alive, Date and Server are the server's: ignored with a warning, as "
     "Apache ignores them"},
    {"RequestHeader", cmd_request_header, 0, HD_TAKE_ARGV, HD_CTX_ANY, HD_CONF_DIR,
     "set|append|add|merge|setifempty|unset|edit|edit* header [value|regex] [replacement]", NULL,
     "changes request headers before the handler runs (fixups); values may use %t, %D and %%"},
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

hd_module_t hd_headers_module = {
    .name = "headers",
    .source_name = "mod_headers.c",
    .always_loaded = true,
    .commands = headers_commands,
    .create_dir_config = headers_create_dir_config,
    .merge_dir_config = headers_merge_dir_config,
    .fixups = headers_fixups,
    .insert_filter = headers_insert_filter,
};
