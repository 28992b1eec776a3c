/*
 * The one regular-expression helper (PCRE2): patterns are compiled once, at
 * configuration time (JIT where the library has it), and matched per request
 * with no allocation; captures feed "$0".."$9" substitution as Apache's
 * ap_pregsub does. Sections (<DirectoryMatch> ...), mod_alias and mod_headers
 * all use it.
 */
#ifndef HD_REGEX_H
#define HD_REGEX_H

#include "hd.h"

/** A compiled pattern; lives as long as the pool it was compiled in. */
typedef struct hd_regex hd_regex_t;

/** Case-insensitive matching (Apache's "[NC]", `<FilesMatch "(?i)...">` works too). */
#define HD_REGEX_ICASE 0x01u

/** Captures substitution can name: $0 (the whole match) to $9. */
#define HD_REGEX_MAX_MATCH 10

/** Where one capture lies in the subject: byte offsets, -1 when it took no part. */
typedef struct {
    int so;
    int eo;
} hd_regmatch_t;

/**
 * Compiles @p pattern (with HD_REGEX_* @p flags) into @p pool, which frees it.
 * On error returns NULL and sets *@p err to a pool string with PCRE2's own
 * message and the offset, e.g. "missing closing parenthesis at offset 4".
 */
hd_regex_t *hd_regex_compile(hd_pool_t *pool, const char *pattern, unsigned flags,
                             const char **err);

/** The pattern as written. */
const char *hd_regex_pattern(const hd_regex_t *re);

/** How many capturing groups the pattern has (not counting $0). */
int hd_regex_groups(const hd_regex_t *re);

/**
 * Matches @p subject (NUL-terminated). When @p m is not NULL, fills @p nmatch
 * entries (at most HD_REGEX_MAX_MATCH); groups that took no part, or beyond
 * the pattern's, get -1. Safe from any thread: each thread has its own match
 * space, so a match allocates nothing.
 */
bool hd_regex_match(const hd_regex_t *re, const char *subject, hd_regmatch_t *m, int nmatch);

/**
 * Expands @p tmpl into a pool string: "$N" becomes capture N of @p subject
 * (empty if it took no part or N >= @p nmatch), a backslash takes the next
 * character literally ("\$1" is "$1"), anything else is copied. NULL if the
 * result would exceed HD_REGEX_SUBST_MAX bytes (a request-controlled blow-up).
 */
char *hd_regex_subst(hd_pool_t *pool, const char *tmpl, const char *subject,
                     const hd_regmatch_t *m, int nmatch);

/** The longest string hd_regex_subst returns. */
#define HD_REGEX_SUBST_MAX 65536

/** The highest "$N" in @p tmpl, or -1 if it names none (to check back-references at config time). */
int hd_regex_subst_max_ref(const char *tmpl);

#endif
