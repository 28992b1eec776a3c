/*
 * The default handler: maps a URI under DocumentRoot and serves the file,
 * with conditional requests, single and multiple ranges.
 */
#ifndef HD_STATIC_FILE_H
#define HD_STATIC_FILE_H

#include "hd.h"

#include <sys/stat.h>
#include <time.h>

/**
 * The entity tag of a file, Apache's FileETag MTime Size:
 * "\"<size hex>-<mtime in microseconds hex>\"" (a pool string, quotes included).
 */
char *hd_file_etag(hd_pool_t *pool, const struct stat *st);

/** Sets r->filename from DocumentRoot and r->uri (no I/O). HD_OK or a status. */
int hd_translate_name(hd_request_t *r);

/**
 * Looks the file up: stat, and with FollowSymLinks off (merged Options) a
 * refusal of any symbolic link below DocumentRoot (403). A missing file is not
 * an error here (finfo_valid stays false; the handler answers 404). HD_OK or a
 * status.
 */
int hd_map_to_storage(hd_request_t *r);

/**
 * Evaluates If-Match, If-Unmodified-Since, If-None-Match and
 * If-Modified-Since (RFC 9110 13.2.2 order) against @p etag and @p mtime.
 * Returns HD_OK (go on), 304 or 412.
 */
int hd_meets_conditions(hd_request_t *r, const char *etag, time_t mtime);

/** The default content handler: GET/HEAD of r->filename. HD_OK or a status. */
int hd_static_handler(hd_request_t *r);

#endif
