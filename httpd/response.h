/*
 * The status line and headers of a response (response.c).
 */
#ifndef HD_RESPONSE_H
#define HD_RESPONSE_H

#include "hd.h"

/**
 * Decides keep-alive (given whether the connection could stay open) and
 * renders the status line and headers into a buffer from r->pool.
 */
hd_buf_t *hd_response_head(hd_request_t *r, bool keepalive_possible);

#endif
