/*
 * The connection state machine. A connection is driven by hd_conn_process()
 * until it needs the socket to become readable or writable; the MPM then
 * waits for that (poll in a thread, or an event loop) and calls it again.
 * The same code serves every MPM.
 */
#ifndef HD_CONNECTION_H
#define HD_CONNECTION_H

#include "hd.h"
#include "request.h"

#include <signal.h>

/**
 * Set by the MPM when the process is stopping gracefully: responses in
 * progress finish, but no connection is kept alive afterwards.
 */
extern volatile sig_atomic_t hd_stop_keepalive;

/**
 * Creates a connection for the socket @p fd (non-blocking) that listener
 * @p l accepted, in a new pool. @p local is its local address (the
 * listener's unless it is a wildcard; avoids a getsockname call). A new
 * connection (@p resume NULL) runs the modules' pre_connection hooks, which
 * may choose its I/O; one rebuilt after hd_conn_release gets back what was kept.
 */
hd_conn_t *hd_conn_create(hd_server_t *s, int fd, hd_listen_t *l, const struct sockaddr *peer,
                          socklen_t peer_len, const struct sockaddr *local, socklen_t local_len,
                          const hd_conn_keep_t *resume);

/**
 * Frees an idle connection's pool but not its socket or I/O state, which go
 * into @p keep for hd_conn_create: the event MPM's idle keep-alive
 * connections cost only their record.
 */
void hd_conn_release(hd_conn_t *c, hd_conn_keep_t *keep);

/** Closes a released connection: its I/O state and its socket @p fd. */
void hd_conn_close_kept(int fd, hd_conn_keep_t *keep);

/** Drives the connection as far as it can go without blocking. */
hd_conn_want_t hd_conn_process(hd_conn_t *c);

/** Milliseconds until the current wait times out (0 if already due). */
int hd_conn_timeout_ms(const hd_conn_t *c);

/** The wait timed out: answers 408 if a request was partly read, then closes. */
hd_conn_want_t hd_conn_timed_out(hd_conn_t *c);

/** Closes the socket, finishes any request (logs) and frees the connection. */
void hd_conn_close(hd_conn_t *c);

/**
 * Serves @p c to the end with blocking waits (poll): for MPMs that give a
 * thread or process to each connection. @p on_idle runs before each
 * keep-alive wait (flushing buffered logs); may be NULL.
 */
void hd_conn_serve(hd_conn_t *c, void (*on_idle)(hd_server_t *s));

/** At an idle point: runs every loaded module's flush hook (buffered logs) and
 * closes the open-file cache's long-unused entries. */
void hd_modules_flush(hd_server_t *s);

/** Buffered output (access log lines) never waits longer than this for a flush. */
#define HD_FLUSH_INTERVAL_US 1000000

/**
 * hd_modules_flush if the calling thread has not flushed for
 * HD_FLUSH_INTERVAL_US: the MPMs call it whenever a thread wakes up, busy or
 * not, so a buffered line is written within a second whatever the load.
 */
void hd_modules_flush_due(hd_server_t *s);

/** Runs every loaded module's master_tick hook; MPM masters call it once a second. */
void hd_modules_master_tick(hd_server_t *s);

#endif
