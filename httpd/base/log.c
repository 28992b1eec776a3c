/*
 * The error log, in Apache's format:
 *   [Mon Nov 30 00:52:07.123456 2026] [core:error] [pid 1234:tid 5678] [client 1.2.3.4:5] msg
 * Each message is formatted on the stack and written with a single write on
 * an O_APPEND descriptor, so concurrent writers never interleave within a
 * line and no lock or shared buffer is needed.
 */
#include "log.h"

#include "ids.h"

/* before sys.h, which uses rename() without including <stdio.h> */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "sys.h"

#define LOG_LINE_MAX 8192

static const char *const level_names[] = {
    "emerg",  "alert",  "crit",   "error",  "warn",   "notice", "info",   "debug",
    "trace1", "trace2", "trace3", "trace4", "trace5", "trace6", "trace7", "trace8",
};

static const char day_names[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
static const char month_names[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

/* Set while reading the configuration, before workers run; read-only after. */
static int log_fd = STDERR_FILENO;
static int log_level = HD_LOG_WARNING;

int hd_log_level_parse(const char *name)
{
    if (name == NULL) {
        return -1;
    }
    for (size_t i = 0; i < HD_ARRAY_SIZE(level_names); i++) {
        if (strcasecmp(name, level_names[i]) == 0) {
            return (int)i;
        }
    }
    return -1;
}

const char *hd_log_level_name(int level)
{
    if (level < 0 || (size_t)level >= HD_ARRAY_SIZE(level_names)) {
        return "unknown";
    }
    return level_names[level];
}

int hd_log_open(const char *path, int level)
{
    int fd;

    if (strcmp(path, "stderr") == 0 || strcmp(path, "/dev/stderr") == 0) {
        fd = STDERR_FILENO;
    } else {
        fd = hd_open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) {
            fprintf(stderr, "httpd: could not open error log file %s: %s\n", path, strerror(errno));
            return HD_ERROR;
        }
    }
    if (log_fd != STDERR_FILENO && log_fd != fd) {
        hd_close(log_fd);
    }
    log_fd = fd;
    hd_log_set_level(level);
    return HD_OK;
}

void hd_log_set_level(int level)
{
    if (level < HD_LOG_EMERG) {
        level = HD_LOG_EMERG;
    } else if (level > HD_LOG_TRACE8) {
        level = HD_LOG_TRACE8;
    }
    log_level = level;
}

int hd_log_get_level(void)
{
    return log_level;
}

int hd_log_fd(void)
{
    return log_fd;
}

/* "[Mon Nov 30 00:52:07.123456 2026] ", in local time like Apache. */
static size_t format_time(char *buf, size_t size)
{
    struct timespec ts;
    struct tm tm;

    clock_gettime(CLOCK_REALTIME, &ts);
    if (localtime_r(&ts.tv_sec, &tm) == NULL) {
        memset(&tm, 0, sizeof(tm));
    }
    return (size_t)snprintf(buf, size, "[%s %s %02d %02d:%02d:%02d.%06ld %d] ",
                            day_names[tm.tm_wday % 7], month_names[tm.tm_mon % 12], tm.tm_mday,
                            tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000, tm.tm_year + 1900);
}

/*
 * Control characters from a message (which may quote a request) would let a
 * client forge log lines, and bytes from 0x80 up include terminal escapes
 * (0x9b is CSI, CVE-2003-0020): both are written as \xHH, as Apache does.
 */
static size_t copy_escaped(char *dst, size_t room, const char *src, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t len = 0;

    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)src[i];

        if (ch >= 0x20 && ch < 0x7f) {
            if (len + 1 > room) {
                break;
            }
            dst[len++] = (char)ch;
        } else {
            if (len + 4 > room) {
                break;
            }
            dst[len++] = '\\';
            dst[len++] = 'x';
            dst[len++] = hex[ch >> 4];
            dst[len++] = hex[ch & 15];
        }
    }
    return len;
}

void hd_log_verror(int level, const char *module, const char *client, const char *fmt, va_list ap)
{
    char line[LOG_LINE_MAX];
    char msg[LOG_LINE_MAX];
    size_t len, room;
    pid_t pid, tid;
    int n;

    if (level > log_level) {
        return;
    }
    pid = hd_pid();
    tid = hd_tid();
    /* the prefix is well under the line size: snprintf cannot truncate it */
    len = format_time(line, sizeof(line));
    len += (size_t)snprintf(line + len, sizeof(line) - len, "[%s:%s] [pid %d:tid %d] ",
                            module != NULL ? module : "core", hd_log_level_name(level), (int)pid,
                            (int)tid);
    if (client != NULL && len < sizeof(line)) {
        len += (size_t)snprintf(line + len, sizeof(line) - len, "[client %.64s] ", client);
    }
    if (len >= sizeof(line)) {
        len = sizeof(line) - 1;
    }
    n = vsnprintf(msg, sizeof(msg), fmt, ap);
    if (n < 0) {
        n = 0;
    } else if ((size_t)n >= sizeof(msg)) {
        n = sizeof(msg) - 1;
    }
    room = sizeof(line) - 1 - len; /* one byte kept for the newline */
    len += copy_escaped(line + len, room, msg, (size_t)n);
    line[len++] = '\n';
    (void)hd_write(log_fd, line, len);
}

void hd_log_error(int level, const char *module, const char *fmt, ...)
{
    va_list ap;

    if (level > log_level) {
        return;
    }
    va_start(ap, fmt);
    hd_log_verror(level, module, NULL, fmt, ap);
    va_end(ap);
}

void hd_log_client_error(int level, const char *module, const char *ip, unsigned port,
                         const char *fmt, ...)
{
    char client[80];
    const char *cp = NULL;
    va_list ap;

    if (level > log_level) {
        return;
    }
    if (ip != NULL) {
        snprintf(client, sizeof(client), "%s:%u", ip, port);
        cp = client;
    }
    va_start(ap, fmt);
    hd_log_verror(level, module, cp, fmt, ap);
    va_end(ap);
}

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void hd_log_episode_fail(hd_log_episode_t *ep, int level, const char *module, const char *fmt, ...)
{
    va_list ap;
    char msg[512];
    int64_t now = mono_us();

    __atomic_add_fetch(&ep->count, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&ep->last_us, now, __ATOMIC_RELAXED);
    if (__atomic_exchange_n(&ep->active, true, __ATOMIC_ACQ_REL)) {
        return;
    }
    __atomic_store_n(&ep->count, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&ep->since_us, now, __ATOMIC_RELAXED);
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    hd_log_error(level, module, "%s (further failures are counted, not logged, until it ends)", msg);
}

void hd_log_episode_end_slow(hd_log_episode_t *ep, int level, const char *module, const char *what)
{
    int64_t now = mono_us();
    if (now - __atomic_load_n(&ep->last_us, __ATOMIC_RELAXED) < HD_LOG_EPISODE_QUIET_US ||
        !__atomic_exchange_n(&ep->active, false, __ATOMIC_ACQ_REL)) {
        return;
    }
    uint64_t count = __atomic_exchange_n(&ep->count, 0, __ATOMIC_RELAXED);
    double secs = (double)(__atomic_load_n(&ep->last_us, __ATOMIC_RELAXED) -
                           __atomic_load_n(&ep->since_us, __ATOMIC_RELAXED)) / 1e6;
    hd_log_error(level, module, "%s: over; %llu failure%s in %.1f s", what,
                 (unsigned long long)count, count == 1 ? "" : "s", secs);
}
