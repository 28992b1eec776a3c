/*
 * The compiled-in modules. Order matters only for hooks: modules run in this
 * order, and the core's default handler runs after every module's handler.
 */
#include "module.h"

#include <string.h>

extern hd_module_t hd_core_module;
extern hd_module_t hd_authz_core_module;
extern hd_module_t hd_mime_module;
extern hd_module_t hd_dir_module;
extern hd_module_t hd_log_config_module;
extern hd_module_t hd_status_module;
extern hd_module_t hd_mpm_prefork_module;
extern hd_module_t hd_mpm_worker_module;
extern hd_module_t hd_mpm_event_module;

hd_module_t *const hd_builtin_modules[] = {
    &hd_core_module,
    &hd_authz_core_module,
    &hd_mime_module,
    &hd_dir_module,
    &hd_log_config_module,
    &hd_status_module,
    &hd_mpm_prefork_module,
    &hd_mpm_worker_module,
    &hd_mpm_event_module,
    NULL,
};

const int hd_num_modules = (int)HD_ARRAY_SIZE(hd_builtin_modules) - 1;

void hd_modules_init(void)
{
    for (int i = 0; hd_builtin_modules[i] != NULL; i++) {
        hd_builtin_modules[i]->index = i;
    }
}

/* Matches "x_module", "x" and "mod_x.c", as LoadModule and <IfModule> allow. */
hd_module_t *hd_module_find(const char *name)
{
    size_t n = strlen(name);
    for (int i = 0; hd_builtin_modules[i] != NULL; i++) {
        hd_module_t *m = hd_builtin_modules[i];
        size_t mn = strlen(m->name);
        if (strcmp(name, m->name) == 0 || strcmp(name, m->source_name) == 0) {
            return m;
        }
        if (n == mn + 7 && strncmp(name, m->name, mn) == 0 && strcmp(name + mn, "_module") == 0) {
            return m;
        }
    }
    return NULL;
}

bool hd_module_loaded(const hd_server_t *s, const hd_module_t *m)
{
    return m->always_loaded || s->loaded[m->index];
}
