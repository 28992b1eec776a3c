/*
 * mod_headers: the Header and RequestHeader directives, as Apache 2.4's.
 *
 * The pure pieces live in header_ops.c so the unit tests can drive them
 * without a request: value formats ("%t", "%D", "%%" and backslash escapes),
 * the token test of "merge", and the regex edit of "edit" and "edit*".
 */
#ifndef HD_HEADERS_H
#define HD_HEADERS_H

#include "hd.h"

extern hd_module_t hd_headers_module;

/** What one piece of a value format stands for. */
typedef enum {
    HD_HFMT_TEXT,    /**< the text itself */
    HD_HFMT_TIME,    /**< %t: "t=" and the time the request arrived, µs since the epoch */
    HD_HFMT_DURATION /**< %D: "D=" and the µs from the request's arrival to now */
} hd_hfmt_kind_t;

typedef struct {
    hd_hfmt_kind_t kind;
    const char *text; /**< HD_HFMT_TEXT only */
    size_t len;
} hd_hfmt_part_t;

/** A parsed value format. */
typedef struct {
    const hd_hfmt_part_t *parts;
    int nparts;
    const char *constant; /**< the whole value when it has no specifier, else NULL */
} hd_hfmt_t;

/**
 * Parses @p s as Apache's mod_headers does: "%%" (or a '%' ending the value)
 * is '%', "%t" and "%D" (an "{arg}" before the letter is allowed and
 * ignored), "\\", "\t", "\r" and "\n" are escapes and any other backslash
 * stays as written. Returns NULL and fills @p out (from @p p), or an error
 * naming the unsupported word; a CR or LF in the result is an error, so no
 * configured value can break a header line.
 */
const char *hd_headers_parse_format(hd_pool_t *p, const char *s, hd_hfmt_t *out);

/**
 * The value of @p f for a request that arrived at @p start_us (µs since the
 * epoch), @p elapsed_us ago. The constant itself when there is no
 * specifier (no allocation), else a string from @p p.
 */
const char *hd_headers_format(hd_pool_t *p, const hd_hfmt_t *f, int64_t start_us,
                              int64_t elapsed_us);

/**
 * True when @p token is one of the comma-separated elements of @p list, as
 * Apache's "merge" sees them: leading white space skipped, a quoted string
 * may hold commas, the comparison exact (case and trailing space count).
 */
bool hd_headers_token_listed(const char *list, const char *token);

/**
 * Replaces the first match of @p re in @p value (every match when @p all,
 * as "edit*") by @p tmpl with "$0".."$9" from that match. Returns @p value
 * itself when nothing matched, the new string from @p p, or NULL when the
 * result would exceed HD_REGEX_SUBST_MAX bytes. Like Apache, each further
 * match is looked for in the rest of the value as a string of its own (so
 * "^" matches there again); an empty match takes the next character over
 * unchanged, so the loop always moves on. CR and LF in an edited result
 * become spaces, whatever the value held.
 */
const char *hd_headers_edit(hd_pool_t *p, const hd_regex_t *re, const char *tmpl, const char *value,
                            bool all);

#endif
