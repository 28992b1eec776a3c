/*
 * Byte ranges (RFC 9110 section 14): parsing a Range header against a
 * representation's length, If-Range, and building 206 responses (one range,
 * or multipart/byteranges) out of file ranges.
 */
#ifndef HD_RANGE_H
#define HD_RANGE_H

#include "hd.h"

#include <time.h>

/** At most this many range-specs in one header (Apache's MaxRanges default). */
#define HD_MAX_RANGES 200

/** hd_range_parse: the header must be ignored (bad syntax, other unit, too many). */
#define HD_RANGE_IGNORE (-1)
/** hd_range_parse: valid, but no range overlaps the representation (416). */
#define HD_RANGE_UNSATISFIABLE 0

/** A satisfiable byte range, both ends inclusive, start <= end < length. */
typedef struct {
    off_t start;
    off_t end;
} hd_range_t;

/**
 * Parses the value of a Range header for a representation of @p size bytes,
 * without I/O. The unit "bytes" is case-insensitive; OWS is accepted around
 * '=', ',' and '-', and empty list elements are skipped. "a-b" with b past the
 * end is cut at the end; "-n" longer than the representation means all of it.
 * Consecutive ranges that overlap or touch are merged (as Apache does).
 * @param out room for @p max ranges
 * @param max more range-specs than this make the header ignored
 * @return the number of satisfiable ranges (>= 1) stored in @p out;
 *         HD_RANGE_UNSATISFIABLE if the syntax is valid but none is satisfiable
 *         (any range of an empty representation); HD_RANGE_IGNORE for an
 *         invalid header (another unit, bad syntax, last < first), more than
 *         @p max specs, or merged ranges adding up to more than @p size.
 */
int hd_range_parse(const char *value, off_t size, hd_range_t *out, int max);

/**
 * True if an If-Range value lets the Range header apply: an entity tag must
 * equal @p etag under the strong comparison (a weak tag never matches), a date
 * must equal @p mtime exactly. NULL @p etag or zero @p mtime never match.
 */
bool hd_if_range_matches(const char *if_range, const char *etag, time_t mtime);

/**
 * Inserts the range filter when @p r is a GET with a Range header: the
 * http module's insert_filter hook. The filter applies the header (with
 * If-Range against the ETag and Last-Modified as they are after the content
 * filters) to a 200 response whose Accept-Ranges is not "none": 206 with one
 * range or multipart/byteranges, 416 with "Content-Range: bytes * /size"
 * (no space), or the body unchanged.
 */
void hd_range_insert_filter(hd_request_t *r);

#endif
