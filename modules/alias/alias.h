/*
 * mod_alias: Alias, AliasMatch, Redirect, RedirectMatch, RedirectTemp and
 * RedirectPermanent, as Apache 2.4's. The pure helpers below are the rules
 * the hooks are built from; tests/unit/test_alias.c checks them directly.
 */
#ifndef HD_ALIAS_H
#define HD_ALIAS_H

#include "hd.h"

extern hd_module_t hd_alias_module;

/**
 * Whether the URL-path @p fake (Alias, Redirect) covers @p uri, as Apache's
 * alias_matches: whole segments only ("/foo" covers "/foo" and "/foo/x", not
 * "/foobar"), a run of '/' in either matches a run of any length in the
 * other, and a trailing '/' in @p fake must be there in @p uri. Returns how
 * many bytes of @p uri matched (what follows is appended to the target), or
 * 0 for no match.
 */
size_t hd_alias_prefix_match(const char *uri, const char *fake);

/**
 * Removes "." and ".." segments and runs of '/' from the absolute file name
 * @p path in place, without looking at the disk (a ".." at the root stays at
 * the root); a trailing '/' is kept. What a mapping produces is matched
 * against <Directory> sections by name, so it must have one spelling only.
 */
void hd_alias_clean_path(char *path);

/** Whether @p u starts with a URL scheme ("http:", "x-y+z.1:"), as Apache's ap_is_url. */
bool hd_alias_is_url(const char *u);

/**
 * A redirect target made safe for Location, as Apache escapes what
 * RedirectMatch (and Redirect in <Location>) produce: everything before the
 * first '?' or '#' is %-escaped (an absolute URL's "scheme://authority"
 * left as it is), the query and the fragment are kept verbatim.
 */
char *hd_alias_escape_target(hd_pool_t *p, const char *target);

/**
 * Parses a Redirect status argument: "permanent" (301), "temp" (302),
 * "seeother" (303), "gone" (410), or digits. Returns the status, 0 if @p arg
 * is no status at all (a URL-path), or -1 for digits outside 300-599.
 */
int hd_alias_parse_status(const char *arg);

#endif
