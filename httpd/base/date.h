/*
 * HTTP dates (RFC 9110 5.6.7). The current Date header value is formatted
 * at most once a second per thread, never per request.
 */
#ifndef HD_DATE_H
#define HD_DATE_H

#include "hd.h"

#include <time.h>

#define HD_HTTP_DATE_LEN 29 /* "Sun, 06 Nov 1994 08:49:37 GMT" */

/** The current time as an IMF-fixdate; a thread-local string, refreshed each second. */
const char *hd_http_date_now(void);

/** Formats @p t as an IMF-fixdate into @p buf (at least 30 bytes). */
void hd_http_date_format(time_t t, char *buf);

/**
 * Parses an HTTP date in any of the three formats RFC 9110 requires a
 * recipient to accept (IMF-fixdate, RFC 850, asctime). Returns -1 if invalid.
 */
time_t hd_http_date_parse(const char *s);

#endif
