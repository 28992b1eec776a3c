/*
 * Process machinery shared by every MPM (Apache's mpm_unix.c): signal flags
 * for the master and for children, waiting for a signal or a tick, the
 * PidFile, and detaching from the terminal.
 */
#ifndef HD_PROCESS_H
#define HD_PROCESS_H

#include "hd.h"

#include <signal.h>

/** Set by the master's signal handlers; the master loop acts on them. */
extern volatile sig_atomic_t hd_sig_stop;          /**< TERM, INT */
extern volatile sig_atomic_t hd_sig_restart;       /**< HUP */
extern volatile sig_atomic_t hd_sig_graceful;      /**< USR1 */
extern volatile sig_atomic_t hd_sig_graceful_stop; /**< WINCH */
extern volatile sig_atomic_t hd_sig_child;         /**< CHLD */

/** Set in a child by TERM (die now) and USR1 (finish, then exit). */
extern volatile sig_atomic_t hd_child_die;
extern volatile sig_atomic_t hd_child_graceful;

/** Blocks the master's signals until hd_master_signals_install: call before the port opens. */
void hd_master_signals_block(void);

/**
 * Installs the master's handlers (flags only) and blocks those signals
 * except inside hd_master_wait, so none is lost between check and wait.
 */
void hd_master_signals_install(void);

/** Waits up to @p timeout_ms or until a signal arrives. */
void hd_master_wait(int timeout_ms);

/** In a new child: TERM sets hd_child_die, USR1 hd_child_graceful; HUP/WINCH ignored. */
void hd_child_signals_install(void);

/** Writes the pid of this process to @p path. HD_OK or HD_ERROR (logged). */
int hd_pidfile_write(const char *path);
/** Reads a pid from @p path; 0 if missing or invalid. */
pid_t hd_pidfile_read(const char *path);
void hd_pidfile_remove(const char *path);

/**
 * Detaches from the terminal like Apache without -D FOREGROUND: fork (the
 * parent exits 0), setsid, stdin/stdout to /dev/null. HD_OK or HD_ERROR.
 */
int hd_detach(void);

#endif
