/*
 * Signals, PidFile and detaching. Handlers only set sig_atomic_t flags, as
 * nginx's do; the loops that wait act on them.
 */
#include "process.h"

#include "connection.h"
#include "ids.h"
#include "log.h"
#include "sys.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

volatile sig_atomic_t hd_sig_stop;
volatile sig_atomic_t hd_sig_restart;
volatile sig_atomic_t hd_sig_graceful;
volatile sig_atomic_t hd_sig_graceful_stop;
volatile sig_atomic_t hd_sig_child;
volatile sig_atomic_t hd_child_die;
volatile sig_atomic_t hd_child_graceful;

static sigset_t wait_mask;

static void master_handler(int sig)
{
    switch (sig) {
    case SIGTERM:
    case SIGINT:
        hd_sig_stop = 1;
        break;
    case SIGHUP:
        hd_sig_restart = 1;
        break;
    case SIGUSR1:
        hd_sig_graceful = 1;
        break;
    case SIGWINCH:
        hd_sig_graceful_stop = 1;
        break;
    case SIGCHLD:
        hd_sig_child = 1;
        break;
    default:
        break;
    }
}

static void set_handler(int sig, void (*fn)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    hd_sigaction(sig, &sa, NULL);
}

static const int master_sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGWINCH, SIGCHLD};

void hd_master_signals_block(void)
{
    sigset_t block;
    sigemptyset(&block);
    for (size_t i = 0; i < HD_ARRAY_SIZE(master_sigs); i++) {
        sigaddset(&block, master_sigs[i]);
    }
    hd_sigprocmask(SIG_BLOCK, &block, NULL);
}

void hd_master_signals_install(void)
{
    const int *sigs = master_sigs;
    sigset_t block;
    sigemptyset(&block);
    for (size_t i = 0; i < HD_ARRAY_SIZE(master_sigs); i++) {
        set_handler(sigs[i], master_handler);
        sigaddset(&block, sigs[i]);
    }
    set_handler(SIGPIPE, SIG_IGN);
    hd_sigprocmask(SIG_BLOCK, &block, &wait_mask);
    for (size_t i = 0; i < HD_ARRAY_SIZE(master_sigs); i++) {
        sigdelset(&wait_mask, sigs[i]);
    }
}

void hd_master_wait(int timeout_ms)
{
    struct timespec ts = {.tv_sec = timeout_ms / 1000, .tv_nsec = (timeout_ms % 1000) * 1000000L};
    hd_ppoll(NULL, 0, &ts, &wait_mask);
}

/* Either way no connection is kept alive after its current response. */
static void child_handler(int sig)
{
    if (sig == SIGTERM || sig == SIGINT) {
        hd_child_die = 1;
        __atomic_store_n(&hd_stop_keepalive, 1, __ATOMIC_RELAXED);
    } else if (sig == SIGUSR1) {
        hd_child_graceful = 1;
        __atomic_store_n(&hd_stop_keepalive, 1, __ATOMIC_RELAXED);
    }
}

void hd_child_signals_install(void)
{
    set_handler(SIGTERM, child_handler);
    set_handler(SIGINT, child_handler);
    set_handler(SIGUSR1, child_handler);
    set_handler(SIGHUP, SIG_IGN);
    set_handler(SIGWINCH, SIG_IGN);
    set_handler(SIGCHLD, SIG_DFL);
    set_handler(SIGPIPE, SIG_IGN);
    sigset_t all;
    sigemptyset(&all);
    hd_sigprocmask(SIG_SETMASK, &all, NULL);
}

int hd_pidfile_write(const char *path)
{
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%ld\n", (long)hd_pid());
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    int fd = hd_open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || hd_write_full(fd, buf, (size_t)n) != n) {
        hd_log_error(HD_LOG_ERR, "core", "AH00099: could not create %s: %s", path, strerror(errno));
        if (fd >= 0) {
            hd_close(fd);
        }
        return HD_ERROR;
    }
    hd_close(fd);
    if (hd_rename(tmp, path) < 0) {
        hd_log_error(HD_LOG_ERR, "core", "AH00099: could not create %s: %s", path, strerror(errno));
        return HD_ERROR;
    }
    return HD_OK;
}

pid_t hd_pidfile_read(const char *path)
{
    char buf[32];
    int fd = hd_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) {
        return 0;
    }
    ssize_t n = hd_read(fd, buf, sizeof(buf) - 1);
    hd_close(fd);
    if (n <= 0) {
        return 0;
    }
    buf[n] = '\0';
    char *end;
    long pid = strtol(buf, &end, 10);
    if (pid <= 0 || (*end != '\n' && *end != '\0')) {
        return 0;
    }
    return (pid_t)pid;
}

void hd_pidfile_remove(const char *path)
{
    hd_unlink(path);
}

int hd_detach(void)
{
    pid_t pid = hd_fork();
    if (pid < 0) {
        fprintf(stderr, "httpd: fork failed: %s\n", strerror(errno));
        return HD_ERROR;
    }
    if (pid > 0) {
        _exit(0);
    }
    hd_setsid();
    int null = hd_open("/dev/null", O_RDWR, 0);
    if (null >= 0) {
        hd_dup2(null, 0);
        hd_dup2(null, 1);
        if (null > 2) {
            hd_close(null);
        }
    }
    return HD_OK;
}
