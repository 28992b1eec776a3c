/*
 * Request paths: percent-decoding and dot-segment removal (RFC 3986 5.2.4),
 * done before a URI is mapped to the file system.
 */
#ifndef HD_PATH_H
#define HD_PATH_H

#include "hd.h"

/**
 * Decodes %XX escapes and removes "." and ".." segments in place, also
 * collapsing repeated slashes. Decoding comes first, so "%2e%2e" is a ".."
 * segment. The path must start with '/'. The result always starts with '/',
 * keeps a trailing '/' ("/a/." gives "/a/", "/a/.." gives "/") and never
 * climbs above the root: "/../a" is refused. Returns 0, or:
 *   400 for a bad escape (%G1, truncated %), an encoded NUL (%00), a raw NUL,
 *       or a path that does not start with '/', or ".." that would climb
 *       above the root (Apache answers 400 there too);
 *   404 for an encoded slash (%2F), as Apache with AllowEncodedSlashes Off.
 * *@p len is the new length; the buffer stays NUL-terminated.
 */
int hd_path_normalize(char *path, size_t *len);

/**
 * Decodes %XX escapes in place (query strings; '+' stays '+', %2F is allowed);
 * returns 0, or 400 for a bad or truncated escape or %00. NUL-terminates.
 */
int hd_unescape(char *s, size_t *len);

/**
 * Escapes @p s for use in a URL path (Location headers, directory listings):
 * bytes outside unreserved / sub-delims / ':' '@' '/' become %XX. Returns a
 * pool string.
 */
char *hd_escape_path(hd_pool_t *pool, const char *s);

/** Escapes &, <, >, " for HTML. Returns a pool string. */
char *hd_escape_html(hd_pool_t *pool, const char *s);

#endif
