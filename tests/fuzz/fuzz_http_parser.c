/*
 * libFuzzer driver for the request-head parser, the chunked decoder and path
 * normalisation (tests/fuzz/README for how to run it). It checks that
 * feeding one byte at a time gives the same answer as feeding everything at
 * once, and that every offset it reports stays inside the head.
 */
#include "http_parser.h"
#include "path.h"

#include <stdlib.h>
#include <string.h>

#define MAXF 64

static const hd_http_limits_t lim = { 1024, 512, MAXF };

static void check_span(uint32_t off, uint32_t len, uint32_t end)
{
    if (off > end || len > end - off) {
        abort();
    }
}

static void check_path(const char *buf, const hd_http_parser_t *p)
{
    char path[1100];
    size_t len = p->path_len;

    if (len == 0 || len >= sizeof(path)) {
        return;
    }
    memcpy(path, buf + p->path_off, len);
    path[len] = '\0';
    if (hd_path_normalize(path, &len) != 0) {
        return;
    }
    if (path[0] != '/' || strlen(path) != len || strstr(path, "//")
        || strstr(path, "/./") || strstr(path, "/../")) {
        abort();
    }
    if ((len >= 2 && strcmp(path + len - 2, "/.") == 0)
        || (len >= 3 && strcmp(path + len - 3, "/..") == 0)) {
        abort();
    }
}

static void check_chunked(const char *in, size_t len)
{
    hd_chunked_t a, b;
    size_t off = 0, data_a = 0, data_b = 0, cons, doff, dlen;
    int rc_a = HD_AGAIN, rc_b = HD_AGAIN;

    hd_chunked_init(&a);
    while (off < len) {
        rc_a = hd_chunked_parse(&a, in + off, len - off, &cons, &doff, &dlen);
        if (cons > len - off || doff + dlen > cons) {
            abort();
        }
        data_a += dlen;
        off += cons;
        if (rc_a != HD_AGAIN) {
            break;
        }
    }
    size_t used_a = off;

    hd_chunked_init(&b);
    for (off = 0; off < len && rc_b == HD_AGAIN; off += cons) {
        rc_b = hd_chunked_parse(&b, in + off, 1, &cons, &doff, &dlen);
        data_b += dlen;
    }
    if (rc_a != rc_b || data_a != data_b || (rc_a == HD_OK && used_a != off)) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static hd_http_field_t fa[MAXF], fb[MAXF];
    hd_http_parser_t a, b;
    const char *buf = (const char *)data;
    int rc_a, rc_b = HD_AGAIN;

    hd_http_parser_init(&a, fa);
    rc_a = hd_http_parse_head(&a, buf, size, &lim);

    hd_http_parser_init(&b, fb);
    for (size_t i = 1; i <= size && rc_b == HD_AGAIN; i++) {
        rc_b = hd_http_parse_head(&b, buf, i, &lim);
    }
    if (rc_a != rc_b) {
        abort();
    }
    if (rc_a != HD_OK) {
        return 0;
    }
    if (a.head_len != b.head_len || a.nfields != b.nfields || a.line_len != b.line_len
        || a.path_len != b.path_len || a.query_off != b.query_off
        || memcmp(fa, fb, a.nfields * sizeof(fa[0])) != 0) {
        abort();
    }

    uint32_t end = a.head_len;
    if (end > size || a.line_len > lim.max_request_line || a.nfields > lim.max_fields) {
        abort();
    }
    check_span(a.line_off, a.line_len, end);
    check_span(a.method_off, a.method_len, end);
    check_span(a.target_off, a.target_len, end);
    check_span(a.path_off, a.path_len, end);
    check_span(a.query_off, a.query_len, end);
    check_span(a.host_off, a.host_len, end);
    for (uint32_t i = 0; i < a.nfields; i++) {
        check_span(fa[i].name_off, fa[i].name_len, end);
        check_span(fa[i].value_off, fa[i].value_len, end);
        if (fa[i].name_len == 0) {
            abort();
        }
    }
    check_path(buf, &a);
    check_chunked(buf + end, size - end);
    return 0;
}
