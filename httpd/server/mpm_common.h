/*
 * What the children of the three MPMs share: accepting a connection,
 * serving one connection with blocking waits, the graceful-stop state, and
 * the signal handling of a threaded child's main thread.
 */
#ifndef HD_MPM_COMMON_H
#define HD_MPM_COMMON_H

#include "config.h"
#include "hd.h"
#include "request.h"

#include <signal.h>
#include <sys/socket.h>

/**
 * Once a child stops gracefully, a connection idle between requests is kept
 * this long: a request already on its way is served (with "Connection:
 * close") instead of meeting a closed socket.
 */
#define HD_MPM_IDLE_GRACE_MS 500

/**
 * Accepts one connection from @p l (non-blocking, close-on-exec). Returns the
 * fd, or -1 with errno set: nothing to accept (EAGAIN), or an error worth a
 * log line, which is logged under @p log_name.
 */
int hd_mpm_accept(hd_listen_t *l, struct sockaddr_storage *peer, socklen_t *peer_len,
                  const char *log_name);

/**
 * True if accept failed for lack of descriptors or memory: the listening
 * socket stays readable, so the caller pauses accepting for
 * HD_MPM_ACCEPT_BACKOFF_MS instead of spinning (and logging) on it.
 */
bool hd_mpm_accept_exhausted(int err);

#define HD_MPM_ACCEPT_BACKOFF_MS 100

/**
 * The local address of connection @p fd accepted on @p l: the listener's
 * address, or getsockname's answer in @p buf for a wildcard listener.
 * Returns the address; *@p len is set.
 */
const struct sockaddr *hd_mpm_local_addr(hd_listen_t *l, int fd, struct sockaddr_storage *buf,
                                         socklen_t *len);

/**
 * Serves @p c to the end with poll waits, then closes it. A stop of the
 * child (hd_mpm_begin_die) aborts the connection; a graceful stop
 * (hd_mpm_begin_stop) serves the request in progress and closes the
 * connection when it is idle (after HD_MPM_IDLE_GRACE_MS). @p stop_fd and
 * @p die_fd become readable when those begin, so a wait ends at once. With
 * both -1 (a single-threaded child: prefork), the signal flags of process.h
 * are read instead and a signal ends a wait. Buffered logs are flushed
 * during idle waits.
 */
void hd_mpm_serve(hd_conn_t *c, int stop_fd, int die_fd);

/** Starts a graceful stop of this child: no more keep-alive, idle grace begins. */
void hd_mpm_begin_stop(void);

/** True once hd_mpm_begin_stop ran in this child. */
bool hd_mpm_stopping(void);

/**
 * The child must stop at once (TERM): connections are dropped. Set by the
 * thread that received the signal; threads read hd_mpm_dying, never the
 * signal flags (which only the signalled thread may read).
 */
void hd_mpm_begin_die(void);

/** True once hd_mpm_begin_die ran in this child. */
bool hd_mpm_dying(void);

/** Milliseconds of idle grace left (0 when over); only meaningful while stopping. */
int hd_mpm_idle_grace_left_ms(void);

/**
 * In a threaded child's main thread, before creating threads: blocks the
 * child's signals (new threads inherit the mask, so only the main thread
 * receives them). @p wait_mask receives the mask to wait with.
 */
void hd_mpm_block_signals(sigset_t *wait_mask);

/**
 * Waits up to @p timeout_ms for a signal (with @p wait_mask) or for @p fd to
 * become readable (-1: no fd). Returns true if @p fd is readable.
 */
bool hd_mpm_wait(int fd, int timeout_ms, const sigset_t *wait_mask);

/** CPUs online (/sys/devices/system/cpu/online), at least 1; read once. */
int hd_mpm_ncpus(void);

/** Writes one byte to @p fd (a wake-up pipe); EAGAIN (already pending) is fine. */
void hd_mpm_wake(int fd);

/** Reads everything pending from the wake-up pipe @p fd. */
void hd_mpm_drain(int fd);

#endif
