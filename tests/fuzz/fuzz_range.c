/*
 * libFuzzer driver for the Range header parser and If-Range. The input's
 * first 8 bytes choose the representation's length; the rest is the header
 * value. Every range it accepts must lie inside the representation, be in
 * order within itself, and all must add up to no more than the length (the
 * guard against overlapping ranges that would multiply the answer); If-Range
 * must never match a weak tag or a garbled date.
 */
#include "date.h"
#include "range.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hd_range_t out[HD_MAX_RANGES];
    char value[4096];
    uint64_t raw = 0;

    if (size < 8 || size - 8 >= sizeof(value)) {
        return 0;
    }
    memcpy(&raw, data, 8);
    off_t len = (off_t)(raw % ((uint64_t)1 << 40)); /* up to a terabyte */
    memcpy(value, data + 8, size - 8);
    value[size - 8] = '\0';

    int n = hd_range_parse(value, len, out, HD_MAX_RANGES);
    if (n < HD_RANGE_IGNORE || n > HD_MAX_RANGES) {
        abort();
    }
    off_t sum = 0;
    for (int i = 0; i < n; i++) {
        if (out[i].start < 0 || out[i].start > out[i].end || out[i].end >= len) {
            abort();
        }
        /* (a range is merged into the one before it when they overlap or touch,
         * as Apache does; that can make it overlap one further back, which the
         * client asked for and RFC 9110 allows) */
        sum += out[i].end - out[i].start + 1;
    }
    if (sum > len) {
        abort();
    }
    if (n == HD_RANGE_UNSATISFIABLE && len > 0 && strncmp(value, "bytes=0-", 8) == 0) {
        abort(); /* the first byte of a non-empty representation is always there */
    }

    /* If-Range: a weak tag never matches; a date matches only itself */
    if (hd_if_range_matches(value, "\"tag\"", 784111777) && strcmp(value, "\"tag\"") != 0) {
        time_t t = hd_http_date_parse(value);
        if (t != 784111777) {
            abort();
        }
    }
    if (value[0] == 'W' && value[1] == '/' && hd_if_range_matches(value, value + 2, 1)) {
        abort();
    }
    return 0;
}
