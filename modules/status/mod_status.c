/* Placeholder until the status module lands (issue 4). */
#include "module.h"

hd_module_t hd_status_module = {
    .name = "status",
    .source_name = "mod_status.c",
    .always_loaded = false,
};
