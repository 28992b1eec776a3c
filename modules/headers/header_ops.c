/*
 * mod_headers' pure operations: value formats, the token test of "merge"
 * and regex edits. Nothing here sees a request, so the unit tests call
 * these directly.
 */
#include "headers.h"

#include "pool.h"
#include "regex.h"
#include "strbuf.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ---- value formats --------------------------------------------------- */

/* Literal text up to the next '%', with Apache's backslash escapes. */
static const char *parse_text(hd_pool_t *p, const char **sp, hd_hfmt_part_t *part)
{
    const char *s = *sp;
    hd_strbuf_t sb = {.pool = p};

    hd_strbuf_add(&sb, "", 0);
    while (*s != '\0' && *s != '%') {
        char c = *s++;
        if (c == '\\') {
            switch (*s) {
            case '\\':
                c = '\\';
                s++;
                break;
            case 'r':
                c = '\r';
                s++;
                break;
            case 'n':
                c = '\n';
                s++;
                break;
            case 't':
                c = '\t';
                s++;
                break;
            default:
                break; /* kept as written, with its backslash */
            }
        }
        if (c == '\r' || c == '\n') {
            return "a header value may not contain a line break (CR or LF)";
        }
        hd_strbuf_add(&sb, &c, 1);
    }
    part->kind = HD_HFMT_TEXT;
    part->text = sb.buf;
    part->len = sb.len;
    *sp = s;
    return NULL;
}

/* A '%' specifier; *sp is on the '%'. */
static const char *parse_spec(hd_pool_t *p, const char **sp, hd_hfmt_part_t *part)
{
    const char *s = *sp + 1;

    if (*s == '%' || *s == '\0') {
        part->kind = HD_HFMT_TEXT;
        part->text = "%";
        part->len = 1;
        *sp = *s ? s + 1 : s;
        return NULL;
    }
    if (*s == '{') {
        const char *close = strchr(s, '}');
        if (close == NULL) {
            return hd_psprintf(p, "unterminated %%{ in format specifier '%s'", *sp);
        }
        s = close + 1;
    }
    switch (*s) {
    case 't':
        part->kind = HD_HFMT_TIME;
        break;
    case 'D':
        part->kind = HD_HFMT_DURATION;
        break;
    case 'e':
    case 's':
        return hd_psprintf(p,
                           "format specifier %%%c is not supported by this server "
                           "(it has no %s); only %%%%, %%t and %%D are",
                           *s, *s == 'e' ? "environment variables" : "SSL variables");
    default:
        return hd_psprintf(p,
                           "unrecognized header format specifier %%%.1s "
                           "(supported: %%%%, %%t, %%D)",
                           *s ? s : "");
    }
    part->text = NULL;
    part->len = 0;
    *sp = s + 1;
    return NULL;
}

const char *hd_headers_parse_format(hd_pool_t *p, const char *s, hd_hfmt_t *out)
{
    hd_array_t *parts = hd_array_create(p, 4, sizeof(hd_hfmt_part_t));
    bool constant = true;
    hd_strbuf_t all = {.pool = p};

    hd_strbuf_add(&all, "", 0);
    while (*s != '\0') {
        hd_hfmt_part_t *part = hd_array_push(parts);
        const char *err = *s == '%' ? parse_spec(p, &s, part) : parse_text(p, &s, part);
        if (err != NULL) {
            return err;
        }
        if (part->kind == HD_HFMT_TEXT) {
            hd_strbuf_add(&all, part->text, part->len);
        } else {
            constant = false;
        }
    }
    out->parts = parts->elts;
    out->nparts = (int)parts->nelts;
    out->constant = constant ? all.buf : NULL;
    return NULL;
}

const char *hd_headers_format(hd_pool_t *p, const hd_hfmt_t *f, int64_t start_us,
                              int64_t elapsed_us)
{
    hd_strbuf_t sb = {.pool = p};

    if (f->constant != NULL) {
        return f->constant;
    }
    hd_strbuf_add(&sb, "", 0);
    for (int i = 0; i < f->nparts; i++) {
        const hd_hfmt_part_t *part = &f->parts[i];
        char num[32];
        int n;

        switch (part->kind) {
        case HD_HFMT_TEXT:
            hd_strbuf_add(&sb, part->text, part->len);
            break;
        case HD_HFMT_TIME:
            n = snprintf(num, sizeof(num), "t=%" PRId64, start_us);
            hd_strbuf_add(&sb, num, (size_t)n);
            break;
        case HD_HFMT_DURATION:
            n = snprintf(num, sizeof(num), "D=%" PRId64, elapsed_us);
            hd_strbuf_add(&sb, num, (size_t)n);
            break;
        }
    }
    return sb.buf;
}

/* ---- merge ------------------------------------------------------------ */

/*
 * Apache's loop (a variant of ap_get_token): an element starts after white
 * space and runs to a comma outside double quotes; it matches only when it
 * is exactly the token, so "a ,b" holds "a " and not "a".
 */
bool hd_headers_token_listed(const char *list, const char *token)
{
    size_t tlen = strlen(token);
    const char *v = list;

    while (*v != '\0') {
        while (*v == ' ' || *v == '\t' || *v == '\r' || *v == '\n' || *v == '\f' || *v == '\v') {
            v++;
        }
        const char *start = v;
        while (*v != '\0' && *v != ',') {
            if (*v++ == '"') {
                while (*v != '\0') {
                    if (*v++ == '"') {
                        break;
                    }
                }
            }
        }
        if ((size_t)(v - start) == tlen && strncmp(start, token, tlen) == 0) {
            return true;
        }
        if (*v != '\0') {
            v++;
        }
    }
    return false;
}

/* ---- edit ------------------------------------------------------------- */

const char *hd_headers_edit(hd_pool_t *p, const hd_regex_t *re, const char *tmpl, const char *value,
                            bool all)
{
    hd_strbuf_t sb = {.pool = p};
    const char *s = value;
    bool changed = false;

    for (;;) {
        hd_regmatch_t m[HD_REGEX_MAX_MATCH];
        if (!hd_regex_match(re, s, m, HD_REGEX_MAX_MATCH)) {
            break;
        }
        char *sub = hd_regex_subst(p, tmpl, s, m, HD_REGEX_MAX_MATCH);
        if (sub == NULL) {
            return NULL;
        }
        hd_strbuf_add(&sb, s, (size_t)m[0].so);
        hd_strbuf_add(&sb, sub, strlen(sub));
        changed = true;
        if (sb.len > HD_REGEX_SUBST_MAX) {
            return NULL;
        }
        s += m[0].eo;
        if (!all) {
            break;
        }
        if (m[0].eo == m[0].so) {
            /* an empty match: the next character stays as it was */
            if (*s == '\0') {
                break;
            }
            hd_strbuf_add(&sb, s, 1);
            s++;
        }
    }
    if (!changed) {
        return value;
    }
    hd_strbuf_add(&sb, s, strlen(s));
    if (sb.len > HD_REGEX_SUBST_MAX) {
        return NULL;
    }
    /* no line break may reach a header line, whatever the value held */
    for (char *c = sb.buf; (c = strpbrk(c, "\r\n")) != NULL; c++) {
        *c = ' ';
    }
    return sb.buf;
}
