/*
 * The core's own mapping (URI to file, stat, sections, symbolic links) and
 * the default handler, which serves the file with conditional requests.
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

/**
 * The core's translate_name (run after every module's): r->filename from
 * DocumentRoot and r->uri, no I/O; r->context_root is DocumentRoot. HD_OK or a status.
 */
int hd_core_translate(hd_request_t *r);

/**
 * The core's map_to_storage: stat of r->filename, the merge of the sections
 * that apply (request_config.h), and where Options lack FollowSymLinks the
 * refusal (403) of a symbolic link below r->context_root. A missing file is
 * not an error here (finfo_valid stays false; the handler answers 404).
 * HD_OK, HD_DECLINED (no file name: nothing to look up) or a status.
 */
int hd_core_map_to_storage(hd_request_t *r);

/**
 * Evaluates If-Match, If-Unmodified-Since, If-None-Match and
 * If-Modified-Since (RFC 9110 13.2.2 order) against @p etag and @p mtime.
 * Returns HD_OK (go on), 304 or 412.
 */
int hd_meets_conditions(hd_request_t *r, const char *etag, time_t mtime);

/** The http module (http_core.c), whose server config this file keeps. */
extern hd_module_t hd_http_module;

/** The http module's server config: what is known once per configuration. */
void *hd_static_create_server_config(hd_pool_t *p, hd_server_t *s);

/**
 * The http module's post_config (after the core's, which indexes the
 * sections): notes whether every Options keeps FollowSymLinks, so that no
 * request needs the symbolic-link walk.
 */
int hd_static_post_config(hd_server_t *s);

/** The default content handler: GET/HEAD of r->filename (ranges: the range filter). HD_OK or a status. */
int hd_static_handler(hd_request_t *r);

#endif
