/*
 * Listening sockets: opened by the master, kept across restarts when the
 * address stays in the configuration, inherited by children.
 */
#ifndef HD_LISTEN_H
#define HD_LISTEN_H

#include "hd.h"

/**
 * Opens every Listen of @p s, taking over the socket of an equal address in
 * @p old (may be NULL) and closing @p old's sockets that are not reused.
 * HD_OK, or HD_ERROR with the reason in the error log.
 */
int hd_listen_open(hd_server_t *s, hd_server_t *old);

/** Closes every listening socket of @p s. */
void hd_listen_close(hd_server_t *s);

/** Number of listeners of @p s. */
int hd_listen_count(const hd_server_t *s);

#endif
