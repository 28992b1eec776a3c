/*
 * mod_mime: TypesConfig and AddType; content types by file extension.
 */
#ifndef HD_MIME_H
#define HD_MIME_H

#include "hd.h"

extern hd_module_t hd_mime_module;

/** The content type for @p filename under @p r's config, or NULL if unknown. */
const char *hd_mime_lookup(const hd_request_t *r, const char *filename);

#endif
