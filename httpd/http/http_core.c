/*
 * The http module: the core's own request hooks, which run after every
 * other module's in their phases (the build lists this module last). URI to
 * file under DocumentRoot, the stat and the <Directory> merge, the static
 * handler, and the range filter. Apache splits the same work between
 * core.c's hooks and http_core's protocol filters.
 */
#include "core.h"
#include "log.h"
#include "module.h"
#include "range.h"
#include "request.h"
#include "static_file.h"

/* Last in the handler phase: whatever no module answered is a static file. */
static int http_handler(hd_request_t *r)
{
    if (r->handler != NULL) {
        hd_log_rerror(r, HD_LOG_WARNING, "core", "handler '%s' not found for: %s", r->handler,
                      r->filename ? r->filename : r->uri);
    }
    return hd_static_handler(r);
}

hd_module_t hd_http_module = {
    .name = "http",
    .source_name = "http_core.c",
    .always_loaded = true,
    .create_server_config = hd_static_create_server_config,
    .post_config = hd_static_post_config,
    .translate_name = hd_core_translate,
    .map_to_storage = hd_core_map_to_storage,
    .insert_filter = hd_range_insert_filter,
    .handler = http_handler,
};
