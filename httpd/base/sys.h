/*
 * The syscall layer. Every system call the server makes goes through one of
 * these wrappers so that it is counted, by kind, in the calling worker's
 * scoreboard slot. The count is a plain increment through a thread-local
 * pointer: no atomics, no locks. Code outside this header and sys.c must not
 * call these system calls directly (tests/unit/check_syscalls.sh enforces it).
 */
#ifndef HD_SYS_H
#define HD_SYS_H

#include "hd.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

/** Kinds of system call, as published in the scoreboard and status pages. */
typedef enum {
    HD_SYS_ACCEPT,
    HD_SYS_READ,
    HD_SYS_WRITE,
    HD_SYS_SENDFILE,
    HD_SYS_OPEN,
    HD_SYS_STAT,
    HD_SYS_CLOSE,
    HD_SYS_EPOLL_WAIT,
    HD_SYS_EPOLL_CTL,
    HD_SYS_OTHER,
    HD_SYS_NKINDS
} hd_sys_kind_t;

/** Names of the kinds, indexed by hd_sys_kind_t ("accept", "read" ...). */
extern const char *const hd_sys_kind_names[HD_SYS_NKINDS];

/**
 * The calling thread's counters: points into its scoreboard slot once the
 * thread has one, and at a private array before that.
 */
extern __thread uint64_t *hd_sys_counters;

/** Point the calling thread's counters at @p counters (NULL: private array). */
void hd_sys_bind_counters(uint64_t *counters);

/*
 * HD_NO_COUNTERS (cmake -DHD_NO_COUNTERS=ON) compiles the counting out; it
 * exists only to measure what the counters cost (perf/counter_cost.sh).
 */
#ifdef HD_NO_COUNTERS
#define HD_SYS_COUNT(kind) ((void)0)
#else
#define HD_SYS_COUNT(kind) (hd_sys_counters[(kind)]++)
#endif

static inline ssize_t hd_read(int fd, void *buf, size_t n)
{
    HD_SYS_COUNT(HD_SYS_READ);
    return read(fd, buf, n);
}

static inline ssize_t hd_write(int fd, const void *buf, size_t n)
{
    HD_SYS_COUNT(HD_SYS_WRITE);
    return write(fd, buf, n);
}

static inline ssize_t hd_writev(int fd, const struct iovec *iov, int iovcnt)
{
    HD_SYS_COUNT(HD_SYS_WRITE);
    return writev(fd, iov, iovcnt);
}

static inline ssize_t hd_sendmsg(int fd, const struct msghdr *msg, int flags)
{
    HD_SYS_COUNT(HD_SYS_WRITE);
    return sendmsg(fd, msg, flags);
}

static inline ssize_t hd_pread(int fd, void *buf, size_t n, off_t off)
{
    HD_SYS_COUNT(HD_SYS_READ);
    return pread(fd, buf, n, off);
}

static inline ssize_t hd_sendfile(int out_fd, int in_fd, off_t *off, size_t n)
{
    HD_SYS_COUNT(HD_SYS_SENDFILE);
    return sendfile(out_fd, in_fd, off, n);
}

static inline int hd_openat(int dirfd, const char *path, int flags, mode_t mode)
{
    HD_SYS_COUNT(HD_SYS_OPEN);
    return openat(dirfd, path, flags, mode);
}

static inline int hd_open(const char *path, int flags, mode_t mode)
{
    HD_SYS_COUNT(HD_SYS_OPEN);
    return open(path, flags, mode);
}

static inline int hd_fstat(int fd, struct stat *st)
{
    HD_SYS_COUNT(HD_SYS_STAT);
    return fstat(fd, st);
}

static inline int hd_stat(const char *path, struct stat *st)
{
    HD_SYS_COUNT(HD_SYS_STAT);
    return stat(path, st);
}

static inline int hd_lstat(const char *path, struct stat *st)
{
    HD_SYS_COUNT(HD_SYS_STAT);
    return lstat(path, st);
}

static inline int hd_fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
    HD_SYS_COUNT(HD_SYS_STAT);
    return fstatat(dirfd, path, st, flags);
}

static inline int hd_close(int fd)
{
    HD_SYS_COUNT(HD_SYS_CLOSE);
    return close(fd);
}

static inline int hd_accept4(int fd, struct sockaddr *sa, socklen_t *len, int flags)
{
    HD_SYS_COUNT(HD_SYS_ACCEPT);
    return accept4(fd, sa, len, flags);
}

static inline int hd_epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout_ms)
{
    HD_SYS_COUNT(HD_SYS_EPOLL_WAIT);
    return epoll_wait(epfd, ev, max, timeout_ms);
}

static inline int hd_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
    HD_SYS_COUNT(HD_SYS_EPOLL_CTL);
    return epoll_ctl(epfd, op, fd, ev);
}

static inline int hd_epoll_create(void)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return epoll_create1(EPOLL_CLOEXEC);
}

static inline int hd_poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return poll(fds, n, timeout_ms);
}

static inline int hd_socket(int domain, int type, int proto)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return socket(domain, type, proto);
}

static inline int hd_bind(int fd, const struct sockaddr *sa, socklen_t len)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return bind(fd, sa, len);
}

static inline int hd_listen(int fd, int backlog)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return listen(fd, backlog);
}

static inline int hd_setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return setsockopt(fd, level, name, val, len);
}

static inline int hd_getsockname(int fd, struct sockaddr *sa, socklen_t *len)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return getsockname(fd, sa, len);
}

static inline int hd_shutdown(int fd, int how)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return shutdown(fd, how);
}

static inline int hd_fcntl_setfl(int fd, int flags)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return fcntl(fd, F_SETFL, flags);
}

static inline int hd_fcntl_getfl(int fd)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return fcntl(fd, F_GETFL);
}

static inline int hd_pipe2(int fds[2], int flags)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return pipe2(fds, flags);
}

static inline int hd_dup2(int oldfd, int newfd)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return dup2(oldfd, newfd);
}

/** fork(); the child counts in its own private array until it binds a slot. */
static inline pid_t hd_fork(void)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    pid_t pid = fork();
    if (pid == 0) {
        /* the parent's counters may be in shared memory (the master's) */
        hd_sys_bind_counters(NULL);
    }
    return pid;
}

static inline int hd_kill(pid_t pid, int sig)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return kill(pid, sig);
}

static inline pid_t hd_waitpid(pid_t pid, int *status, int options)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return waitpid(pid, status, options);
}

static inline int hd_unlink(const char *path)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return unlink(path);
}

static inline int hd_rename(const char *from, const char *to)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return rename(from, to);
}

static inline ssize_t hd_readlink(const char *path, char *buf, size_t n)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return readlink(path, buf, n);
}

/** opendir/readdir/closedir: libc makes the calls; counted as open, other, close. */
static inline DIR *hd_opendir(const char *path)
{
    HD_SYS_COUNT(HD_SYS_OPEN);
    return opendir(path);
}

static inline struct dirent *hd_readdir(DIR *d)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return readdir(d);
}

static inline int hd_closedir(DIR *d)
{
    HD_SYS_COUNT(HD_SYS_CLOSE);
    return closedir(d);
}

static inline int hd_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
                           const sigset_t *mask)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return ppoll(fds, n, ts, mask);
}

static inline int hd_sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return sigprocmask(how, set, old);
}

static inline int hd_sigaction(int sig, const struct sigaction *sa, struct sigaction *old)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return sigaction(sig, sa, old);
}

static inline void *hd_mmap_shared(size_t size)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
}

static inline int hd_munmap(void *addr, size_t size)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return munmap(addr, size);
}

static inline pid_t hd_setsid(void)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return setsid();
}

static inline int hd_chdir(const char *path)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return chdir(path);
}

static inline int hd_getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return getsockopt(fd, level, name, val, len);
}

static inline int hd_getrlimit(int resource, struct rlimit *rl)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return getrlimit(resource, rl);
}

static inline int hd_setrlimit(int resource, const struct rlimit *rl)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return setrlimit(resource, rl);
}

static inline pid_t hd_getpid(void)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return getpid();
}

/** The calling thread's kernel id (as in /proc/<pid>/task/<tid>). */
static inline pid_t hd_gettid(void)
{
    HD_SYS_COUNT(HD_SYS_OTHER);
    return gettid();
}

/*
 * Locks for threads of one process whose every system call is counted: a
 * mutex and a condition variable on futexes (Drepper's "Futexes Are Tricky"
 * mutex), for the MPMs' queues. pthread's would make futex calls that no
 * counter sees. A futex call is counted as "other".
 */
typedef struct {
    uint32_t state;     /* 0 free, 1 locked, 2 locked and maybe waited for */
} hd_mutex_t;

typedef struct {
    uint32_t seq;       /* bumped by every signal */
    uint32_t waiters;
} hd_cond_t;

#define HD_MUTEX_INIT {0}
#define HD_COND_INIT {0, 0}

/** Takes @p m if it is free; true if taken. No system call. */
bool hd_mutex_trylock(hd_mutex_t *m);
/** Takes @p m, sleeping in the kernel only while another thread holds it. */
void hd_mutex_lock(hd_mutex_t *m);
/** Releases @p m; a system call only if a thread may be waiting. */
void hd_mutex_unlock(hd_mutex_t *m);
/**
 * Releases @p m, waits for a signal on @p c or until the CLOCK_MONOTONIC
 * time @p until (NULL: no limit), and takes @p m again. Returns 0, or
 * ETIMEDOUT. May return early (spurious wake-up): callers check their
 * condition in a loop, as with pthread_cond_wait.
 */
int hd_cond_wait_until(hd_cond_t *c, hd_mutex_t *m, const struct timespec *until);
/** Wakes one waiter of @p c (a system call only if there is one). */
void hd_cond_signal(hd_cond_t *c);
/** Wakes every waiter of @p c. */
void hd_cond_broadcast(hd_cond_t *c);

/** Writes all of @p buf, retrying on EINTR and short writes (blocking fds only). */
ssize_t hd_write_full(int fd, const void *buf, size_t n);

#endif
