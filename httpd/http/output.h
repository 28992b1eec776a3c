/*
 * A response on its way to the connection (output.c): the insert_filter
 * hooks, the filter chain, and the connection's end of it, which writes the
 * head before the first body byte and frames a body of unknown length.
 * Called by the connection state machine; not for modules (filter.h is).
 */
#ifndef HD_OUTPUT_H
#define HD_OUTPUT_H

#include "hd.h"

/** Unsent memory the connection holds before filters are told to wait (HD_AGAIN). */
#define HD_OUTPUT_HIGH_WATER 65536

/**
 * Queues the response of @p r (status, headers, r->body) on r->c->out: runs
 * every module's insert_filter hook, then the filters, or, with none, queues
 * the head and the body as they are. @p keepalive_possible: whether the
 * connection could stay open after this response. HD_OK, or HD_ERROR when a
 * filter failed after the head was queued (the connection must close).
 */
int hd_output_start(hd_request_t *r, bool keepalive_possible);

/** True once the end of the body has reached the connection (nothing more will be queued). */
bool hd_output_done(const hd_request_t *r);

/**
 * The connection has written everything queued but the response is not
 * done: lets the filters that held input go on. HD_OK, or HD_ERROR (a
 * filter failed, or none produced anything: the connection must close).
 */
int hd_output_resume(hd_request_t *r);

#endif
