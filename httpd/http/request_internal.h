/*
 * Calls between the connection state machine and request processing
 * (request.c); not for modules.
 */
#ifndef HD_REQUEST_INTERNAL_H
#define HD_REQUEST_INTERNAL_H

#include "hd.h"
#include "request.h"

/** The Allow header value for static resources. */
extern const char *const hd_method_allow;

/**
 * Fills r from r->parser and the connection's buffer, and checks framing
 * (Host, Content-Length, Transfer-Encoding, Expect). Sets *close_after for
 * "Connection: close". HD_OK or an HTTP status.
 */
int hd_request_from_head(hd_request_t *r, bool *close_after);

/** Translates r->uri to a file name and merges the configuration for it. */
int hd_request_prepare(hd_request_t *r);

/** Storage, access, type, fixups and handler. HD_OK, HD_DONE or a status. */
int hd_request_run_phases(hd_request_t *r);

#endif
