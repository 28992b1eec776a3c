/*
 * libFuzzer driver for the conditional headers: If-Match, If-None-Match,
 * If-Modified-Since and If-Unmodified-Since against one representation
 * (hd_meets_conditions), and the HTTP-date parser. The input is split at
 * newlines into the four header values. The answer must be one of the three
 * allowed, never crash, and agree with what RFC 9110 13.2.2 orders; a date
 * the parser accepts must format and parse back to itself.
 */
#include "date.h"
#include "pool.h"
#include "request.h"
#include "static_file.h"
#include "table.h"

#include <stdlib.h>
#include <string.h>

static const char *const names[] = {"If-Match", "If-None-Match", "If-Modified-Since",
                                    "If-Unmodified-Since"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static hd_pool_t *pool;
    char buf[4096];

    if (size >= sizeof(buf)) {
        return 0;
    }
    if (pool == NULL) {
        pool = hd_pool_create();
    }
    memcpy(buf, data, size);
    buf[size] = '\0';

    hd_request_t r;
    memset(&r, 0, sizeof(r));
    r.pool = pool;
    r.method = size > 0 && (data[0] & 1) ? HD_M_HEAD : HD_M_GET;
    r.headers_in = hd_table_make(pool, 4);
    r.start.tv_sec = 1700000000;

    char *line = buf;
    for (size_t i = 0; i < HD_ARRAY_SIZE(names) && line != NULL; i++) {
        char *nl = strchr(line, '\n');
        if (nl != NULL) {
            *nl = '\0';
        }
        if (*line != '\0') {
            hd_table_set(r.headers_in, names[i], line);
        }
        time_t t = hd_http_date_parse(line);
        if (t != -1) {
            char back[32];
            hd_http_date_format(t, back);
            back[HD_HTTP_DATE_LEN] = '\0';
            if (hd_http_date_parse(back) != t) {
                abort();
            }
        }
        line = nl != NULL ? nl + 1 : NULL;
    }
    int rv = hd_meets_conditions(&r, "\"5-abc\"", 1600000000);
    if (rv != HD_OK && rv != 304 && rv != 412) {
        abort();
    }
    /* If-Match is judged first: a failed If-Match is 412 whatever follows */
    const char *im = hd_table_get(r.headers_in, "If-Match");
    if (im != NULL && strcmp(im, "*") == 0 && rv == 412 &&
        hd_table_get(r.headers_in, "If-None-Match") == NULL) {
        abort();
    }
    hd_pool_reset(pool);
    return 0;
}
