/*
 * /proc readers for the master's sampler. A /proc file is generated anew at
 * each read from offset 0, so the sampler keeps each file open and preads
 * it: one system call per file and sample instead of open, read, close.
 */
#include "procstat.h"

#include "sys.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* /proc/stat carries one interrupt count per IRQ line: large on big machines. */
#define SYSTEM_BUF (256 * 1024)

static uint64_t number(const char **p)
{
    const char *s = *p;
    uint64_t v = 0;
    while (*s == ' ' || *s == '\t') {
        s++;
    }
    while (*s >= '0' && *s <= '9') {
        v = v * 10 + (uint64_t)(*s - '0');
        s++;
    }
    *p = s;
    return v;
}

/* Value of "key<sep>value" at the start of a line, or false. */
static bool line_value(const char *text, const char *key, uint64_t *out)
{
    size_t n = strlen(key);
    for (const char *p = text; p != NULL && *p != '\0';) {
        if (strncmp(p, key, n) == 0) {
            p += n;
            while (*p == ':' || *p == ' ' || *p == '\t') {
                p++;
            }
            if (*p < '0' || *p > '9') {
                return false;
            }
            *out = number(&p);
            return true;
        }
        p = strchr(p, '\n');
        if (p != NULL) {
            p++;
        }
    }
    return false;
}

int hd_procstat_parse_stat(const char *text, uint64_t *utime, uint64_t *stime)
{
    /* the command name may hold spaces and parentheses: fields follow the last ')' */
    const char *p = strrchr(text, ')');
    if (p == NULL) {
        return HD_ERROR;
    }
    p++;
    /* fields after ')' start with state (field 3); utime is field 14 */
    for (int field = 3; field < 14; field++) {
        while (*p == ' ') {
            p++;
        }
        while (*p != ' ' && *p != '\0') {
            p++;
        }
        if (*p == '\0') {
            return HD_ERROR;
        }
    }
    *utime = number(&p);
    *stime = number(&p);
    return HD_OK;
}

int hd_procstat_parse_status(const char *text, uint64_t *vcs, uint64_t *ivcs)
{
    if (!line_value(text, "voluntary_ctxt_switches", vcs) ||
        !line_value(text, "nonvoluntary_ctxt_switches", ivcs)) {
        return HD_ERROR;
    }
    return HD_OK;
}

int hd_procstat_parse_schedstat(const char *text, uint64_t *run_ns, uint64_t *delay_ns,
                                uint64_t *slices)
{
    const char *p = text;
    if (*p < '0' || *p > '9') {
        return HD_ERROR;
    }
    *run_ns = number(&p);
    *delay_ns = number(&p);
    *slices = number(&p);
    return HD_OK;
}

int hd_procstat_parse_system(const char *text, hd_sb_system_t *out)
{
    uint64_t v;
    if (strncmp(text, "cpu ", 4) != 0) {
        return HD_ERROR;
    }
    const char *p = text + 4;
    for (int i = 0; i < 8; i++) {
        out->cpu[i] = number(&p);
    }
    if (!line_value(text, "ctxt", &out->ctxt)) {
        return HD_ERROR;
    }
    /* the first number of "intr" is the total */
    out->intr = line_value(text, "intr", &v) ? v : 0;
    out->forks = line_value(text, "processes", &v) ? v : 0;
    out->procs_running = line_value(text, "procs_running", &v) ? (uint32_t)v : 0;
    out->procs_blocked = line_value(text, "procs_blocked", &v) ? (uint32_t)v : 0;
    return HD_OK;
}

int hd_procstat_parse_loadavg(const char *text, hd_sb_system_t *out)
{
    char *end;
    const char *p = text;
    for (int i = 0; i < 3; i++) {
        double d = strtod(p, &end);
        if (end == p) {
            return HD_ERROR;
        }
        out->load[i] = (float)d;
        p = end;
    }
    return HD_OK;
}

static uint64_t tick_us(void)
{
    static uint64_t us;
    if (us == 0) {
        long hz = sysconf(_SC_CLK_TCK); /* from the aux vector: no system call */
        us = hz > 0 ? (uint64_t)(1000000 / hz) : 10000;
    }
    return us;
}

/* Reads an open /proc file from its start: its length, or -1. */
static ssize_t pread_all(int fd, char *buf, size_t size)
{
    ssize_t n;
    do {
        n = hd_pread(fd, buf, size - 1, 0);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        return -1;
    }
    buf[n] = '\0';
    return n;
}

static const char *const thread_files[3] = {"stat", "status", "schedstat"};

void hd_procstat_thread_init(hd_procstat_thread_t *t)
{
    t->pid = 0;
    t->tid = 0;
    for (int i = 0; i < 3; i++) {
        t->fd[i] = -1;
    }
}

void hd_procstat_thread_close(hd_procstat_thread_t *t)
{
    for (int i = 0; i < 3; i++) {
        if (t->fd[i] >= 0) {
            hd_close(t->fd[i]);
        }
    }
    hd_procstat_thread_init(t);
}

static int thread_open(hd_procstat_thread_t *t, pid_t pid, pid_t tid)
{
    char path[64];
    hd_procstat_thread_close(t);
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", (int)pid, (int)tid, thread_files[i]);
        t->fd[i] = hd_open(path, O_RDONLY | O_CLOEXEC, 0);
        /* schedstat is missing on kernels without CONFIG_SCHEDSTATS: zeros then */
        if (t->fd[i] < 0 && i < 2) {
            hd_procstat_thread_close(t);
            return HD_ERROR;
        }
    }
    t->pid = pid;
    t->tid = tid;
    return HD_OK;
}

int hd_procstat_thread_read(hd_procstat_thread_t *t, pid_t pid, pid_t tid, hd_sb_kernel_t *out)
{
    char buf[2048];
    uint64_t a, b, c;

    if ((t->pid != pid || t->tid != tid || t->fd[0] < 0) && thread_open(t, pid, tid) != HD_OK) {
        return HD_ERROR;
    }
    /* a thread that exited leaves files that read as errors (ESRCH) */
    if (pread_all(t->fd[0], buf, sizeof(buf)) <= 0 ||
        hd_procstat_parse_stat(buf, &a, &b) != HD_OK) {
        hd_procstat_thread_close(t);
        return HD_ERROR;
    }
    out->utime_us = a * tick_us();
    out->stime_us = b * tick_us();
    if (pread_all(t->fd[1], buf, sizeof(buf)) <= 0 ||
        hd_procstat_parse_status(buf, &a, &b) != HD_OK) {
        hd_procstat_thread_close(t);
        return HD_ERROR;
    }
    out->vcs = a;
    out->ivcs = b;
    if (t->fd[2] >= 0 && pread_all(t->fd[2], buf, sizeof(buf)) > 0 &&
        hd_procstat_parse_schedstat(buf, &a, &b, &c) == HD_OK) {
        out->run_delay_us = b / 1000;
        out->timeslices = c;
    } else {
        out->run_delay_us = 0;
        out->timeslices = 0;
    }
    return HD_OK;
}

int hd_procstat_thread(pid_t pid, pid_t tid, hd_sb_kernel_t *out)
{
    hd_procstat_thread_t t;
    hd_procstat_thread_init(&t);
    int rv = hd_procstat_thread_read(&t, pid, tid, out);
    hd_procstat_thread_close(&t);
    return rv;
}

static int stat_fd = -1;
static int loadavg_fd = -1;

void hd_procstat_system_close(void)
{
    if (stat_fd >= 0) {
        hd_close(stat_fd);
    }
    if (loadavg_fd >= 0) {
        hd_close(loadavg_fd);
    }
    stat_fd = loadavg_fd = -1;
}

int hd_procstat_system(hd_sb_system_t *out)
{
    static char *buf;
    char small[256];
    if (buf == NULL) {
        buf = malloc(SYSTEM_BUF);
        if (buf == NULL) {
            return HD_ERROR;
        }
    }
    if (stat_fd < 0) {
        stat_fd = hd_open("/proc/stat", O_RDONLY | O_CLOEXEC, 0);
    }
    if (stat_fd < 0 || pread_all(stat_fd, buf, SYSTEM_BUF) <= 0 ||
        hd_procstat_parse_system(buf, out) != HD_OK) {
        return HD_ERROR;
    }
    if (loadavg_fd < 0) {
        loadavg_fd = hd_open("/proc/loadavg", O_RDONLY | O_CLOEXEC, 0);
    }
    if (loadavg_fd >= 0 && pread_all(loadavg_fd, small, sizeof(small)) > 0) {
        hd_procstat_parse_loadavg(small, out);
    }
    return HD_OK;
}
