/*
 * Output filters: an ordered chain between a handler's body and the
 * connection, as Apache's output filters and nginx's body filters.
 *
 * A handler builds the whole body as a chain (memory and file buffers) and
 * returns; the chain then runs through the request's filters, ordered by
 * stage, and reaches the connection, which writes the response head before
 * the first body byte. A filter works on buffer chains: a file buffer stays a
 * file range (sent with sendfile) unless a filter needs its bytes. A filter
 * may hold input and produce output a piece at a time: when the connection
 * already holds enough unsent output, hd_filter_pass returns HD_AGAIN and the
 * filter returns HD_AGAIN too, keeping the rest; it is called again (with
 * NULL input) when the connection has drained.
 *
 * Until its first output is passed on, a filter may change the response:
 * r->status, r->headers_out (ETag, Vary: hd_vary_add), r->content_type, and
 * r->content_length, which it sets to -1 when it changes the body's length
 * in a way it cannot tell in advance; the connection then sends the body
 * chunked (HTTP/1.1) or closes after it (HTTP/1.0), unless the whole body
 * reaches it at once, when it counts it.
 *
 * A response with no filter takes the direct path: the head and the
 * handler's chain are queued as they are, at no cost from this machinery.
 */
#ifndef HD_FILTER_H
#define HD_FILTER_H

#include "hd.h"

/** Stages, in the order filters run (Apache's AP_FTYPE_*). */
enum {
    HD_FILTER_CONTENT = 10,     /**< transforms the body (deflate, substitution) */
    HD_FILTER_CONTENT_SET = 20, /**< the finished representation's headers (mod_headers) */
    HD_FILTER_PROTOCOL = 30     /**< byte ranges: after every content filter */
};

typedef struct hd_filter hd_filter_t;

typedef struct {
    const char *name; /**< "DEFLATE", "BYTERANGE": for logs */
    int stage;        /**< HD_FILTER_* */
    /**
     * Takes the next part of the body. @p in is NULL when nothing new came
     * (the connection drained: go on with what you hold, or pass NULL on).
     * The body's last buffer has last_buf set, and is passed on last. Input
     * buffers are the filter's to consume, keep or pass on; they stay valid
     * until the request ends. Returns HD_OK (everything handled), HD_AGAIN
     * (holds input: call again when the connection drained) or HD_ERROR.
     */
    int (*run)(hd_filter_t *f, hd_chain_t *in);
} hd_filter_type_t;

struct hd_filter {
    const hd_filter_type_t *type;
    hd_request_t *r;
    void *ctx;          /**< the filter's per-request state (from hd_filter_insert, or its own) */
    hd_filter_t *next;  /**< NULL: the connection is next */
};

/**
 * Adds a filter of @p type to @p r's chain, after the filters of its stage
 * and earlier stages already there. Call from an insert_filter hook (or a
 * handler). Returns the filter.
 */
hd_filter_t *hd_filter_insert(hd_request_t *r, const hd_filter_type_t *type, void *ctx);

/** The first filter of @p r's chain with @p type, or NULL. */
hd_filter_t *hd_filter_find(const hd_request_t *r, const hd_filter_type_t *type);

/**
 * Passes @p out (may be NULL) to the filter after @p f, or to the
 * connection. Returns HD_OK, HD_AGAIN (the connection holds enough unsent
 * output: stop producing, keep the rest, return HD_AGAIN) or HD_ERROR.
 */
int hd_filter_pass(hd_filter_t *f, hd_chain_t *out);

/** True when @p in ends the body (its last buffer has last_buf). */
bool hd_chain_ends_body(const hd_chain_t *in);

/**
 * Adds @p token to the response's Vary header unless it is listed already
 * (case-insensitive), as filters that choose by a request header must.
 */
void hd_vary_add(hd_request_t *r, const char *token);

#endif
