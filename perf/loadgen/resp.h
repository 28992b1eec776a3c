/*
 * An incremental HTTP/1.x response reader for the load generator. It keeps
 * no bytes of its own: it is fed what arrived, says how much it used, and
 * counts body bytes without looking at them. A header or chunk-size line cut
 * by a read is left unused for the caller to feed again with what follows.
 */
#ifndef LG_RESP_H
#define LG_RESP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** The longest status, header or chunk-size line accepted. */
#define LG_RESP_MAX_LINE 8192

/** What lg_resp_feed() and lg_resp_eof() say. */
enum {
    LG_RESP_AGAIN, /**< more bytes are needed */
    LG_RESP_DONE,  /**< the response is complete */
    LG_RESP_ERROR  /**< not a valid response */
};

/** The state of one response being read. */
typedef struct {
    uint8_t state;      /**< where in the response (private) */
    bool close;         /**< the connection cannot carry another request */
    bool chunked;       /**< Transfer-Encoding: chunked */
    bool have_length;   /**< a Content-Length was given */
    bool keepalive;     /**< Connection: keep-alive (matters for HTTP/1.0) */
    int minor;          /**< HTTP/1.minor */
    int status;         /**< the status code (0 until the status line is read) */
    uint64_t remaining; /**< body or chunk bytes still to come */
    uint64_t bytes;     /**< every byte of the response used so far */
    uint64_t body;      /**< body bytes (chunk data only, for chunked) */
} lg_resp_t;

/** Starts reading a new response. */
void lg_resp_init(lg_resp_t *r);

/**
 * Feeds @p len bytes at @p p. Sets *@p used to the bytes consumed: all of
 * them, or fewer when a line is incomplete (AGAIN; feed the rest again with
 * more) or the response ended (DONE; anything after is not part of it).
 */
int lg_resp_feed(lg_resp_t *r, const char *p, size_t len, size_t *used);

/** The connection closed: DONE if the body runs until close, ERROR otherwise. */
int lg_resp_eof(lg_resp_t *r);

#endif
