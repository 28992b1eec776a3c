/*
 * Access log formats (Apache's LogFormat language): compiled once at
 * configuration time into a list of items, rendered per request into a
 * caller's buffer with no allocation. Also the entry points of
 * mod_log_config.c that its unit test drives with a fake clock.
 */
#ifndef HD_LOG_FORMAT_H
#define HD_LOG_FORMAT_H

#include "hd.h"

/** Size of each per-thread, per-CustomLog output buffer. */
#define HD_LOG_BUFFER_SIZE 32768

/** Apache's default format (CLF), used by TransferLog when no LogFormat sets one. */
#define HD_LOG_FORMAT_DEFAULT "%h %l %u %t \"%r\" %>s %b"

/** A compiled format. */
typedef struct hd_log_format hd_log_format_t;

/**
 * The format string of a nickname known without any LogFormat line:
 * "common", "combined" or "CLF"; NULL for any other name.
 */
const char *hd_log_format_predefined(const char *nickname);

/**
 * Compiles @p fmt (Apache syntax: literal text with \n \t \r \" \\ escapes,
 * and %[!][status,...][<|>][{arg}]X directives). The compiled format ends
 * with a newline, as Apache's does. Returns NULL and sets *@p err to a
 * message ("Unrecognized LogFormat directive %Z") when @p fmt is invalid.
 */
hd_log_format_t *hd_log_format_compile(hd_pool_t *p, const char *fmt, const char **err);

/** The string @p f was compiled from. */
const char *hd_log_format_source(const hd_log_format_t *f);

/**
 * Renders the log line of @p r (newline included, no NUL) into @p buf,
 * writing at most @p cap bytes. @p end_mono_us is the monotonic time the
 * request ended (for %D, %T and %{end:...}t). Returns the full length of
 * the line: when it is greater than @p cap the line was cut and must be
 * rendered again into a larger buffer.
 */
size_t hd_log_format_render(const hd_log_format_t *f, const hd_request_t *r,
                            int64_t end_mono_us, char *buf, size_t cap);

/** The module (mod_log_config.c). */
extern hd_module_t hd_log_config_module;

/**
 * mod_log_config's log_transaction with the current monotonic time given:
 * appends @p r's line to each CustomLog of r->server through the calling
 * thread's buffers. The module's hook calls it with hd_now_mono_us().
 */
void hd_log_config_transaction_at(hd_request_t *r, int64_t now_mono_us);

#endif
