/*
 * The status line and headers of a response (response.c).
 */
#ifndef HD_RESPONSE_H
#define HD_RESPONSE_H

#include "hd.h"

/**
 * Decides keep-alive (given whether the connection could stay open) and
 * renders the status line and headers into a buffer from r->pool:
 * Content-Length from r->content_length (counted from r->body when -1 and
 * no filter ran), or Transfer-Encoding: chunked when r->chunked. NULL (and
 * an error logged) when a field in r->headers_out or the content type holds
 * a line break, or a name is empty or holds ':' or white space: the caller
 * must not send that head.
 */
hd_buf_t *hd_response_head(hd_request_t *r, bool keepalive_possible);

/**
 * Apache's ap_construct_url: @p path (a local, escaped URL-path, may carry
 * a query) made absolute with this connection's scheme and the host the
 * client asked for (the absolute-form target's or Host), or ServerName and
 * the local port when that host is missing or not safe to echo.
 */
const char *hd_construct_url(hd_request_t *r, const char *path);

/** False for statuses that never carry a body (1xx, 204, 304). */
bool hd_response_has_body(const hd_request_t *r);

/** Drops the headers that describe the representation an error page replaces
 *  (ETag, Last-Modified, Content-Encoding ...), the body and its length. */
void hd_response_drop_representation(hd_request_t *r);

/** Sets the server's own short HTML page for @p status as the body. */
void hd_response_default_error_body(hd_request_t *r, int status);

/** Makes the response the plain error page of @p status (no ErrorDocument). */
void hd_response_error_page(hd_request_t *r, int status);

#endif
