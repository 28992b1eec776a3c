/*
 * Modules: one fixed struct with a slot per phase (lighttpd's plugin shape),
 * filled with designated initialisers. Every module is compiled in; an MPM
 * and other optional modules become active through LoadModule.
 */
#ifndef HD_MODULE_H
#define HD_MODULE_H

#include "config.h"
#include "hd.h"

struct hd_module {
    const char *name;          /**< "core", "mpm_prefork": shown as name_module by -M */
    const char *source_name;   /**< "mod_mpm_prefork.c", for <IfModule mod_x.c> */
    bool always_loaded;        /**< active without LoadModule (a static module) */
    const hd_command_t *commands; /**< directive table ending in {NULL}, or NULL */

    /** Per-server config, created before the config is read. */
    void *(*create_server_config)(hd_pool_t *p, hd_server_t *s);
    /** Per-directory config for a section (@p path NULL at server level). */
    void *(*create_dir_config)(hd_pool_t *p, const char *path);
    /** Merges @p add over @p base into a new config; NULL means add wins. */
    void *(*merge_dir_config)(hd_pool_t *p, const void *base, const void *add);

    /** After the config is read: check it, apply defaults. HD_OK or HD_ERROR (logged). */
    int (*post_config)(hd_server_t *s);
    /** In the master, after post_config and on every restart: open log files. */
    int (*open_logs)(hd_server_t *s);
    /** In each new child process (or the single process with -X). */
    void (*child_init)(hd_server_t *s);
    /** Before a child or thread exits, and at idle points: flush buffers. */
    void (*flush)(hd_server_t *s);
    /** In the master, once a second (every MPM calls it): sampling. */
    void (*master_tick)(hd_server_t *s);

    /** Access control: HD_OK, HD_DECLINED, or an HTTP status. */
    int (*access_checker)(hd_request_t *r);
    /** Sets the content type (mime). HD_OK, HD_DECLINED or a status. */
    int (*type_checker)(hd_request_t *r);
    /** Last changes before the handler (mod_dir: index and trailing slash). */
    int (*fixups)(hd_request_t *r);
    /** Content handler: HD_DECLINED, HD_OK (response set) or an HTTP status. */
    int (*handler)(hd_request_t *r);
    /** After the response: logs. */
    void (*log_transaction)(hd_request_t *r);

    /** Non-NULL for an MPM module. */
    const hd_mpm_t *mpm;

    int index;                 /**< position in hd_builtin_modules, set at start */
};

/** Every compiled-in module, NULL-terminated (modules.c). */
extern hd_module_t *const hd_builtin_modules[];
/** Number of entries in hd_builtin_modules. */
extern const int hd_num_modules;

/** Sets each module's index. Call once at start. */
void hd_modules_init(void);

/** Finds a module by load name ("mpm_prefork_module"), name ("mpm_prefork") or
 *  source name ("mod_mpm_prefork.c"); NULL if none. */
hd_module_t *hd_module_find(const char *name);

/** True if @p m is active in @p s (static or loaded by LoadModule). */
bool hd_module_loaded(const hd_server_t *s, const hd_module_t *m);

#define HD_FOR_EACH_LOADED_MODULE(s, m)                                                   \
    for (hd_module_t *const *m##_it = hd_builtin_modules; ((m) = *m##_it) != NULL; m##_it++) \
        if (hd_module_loaded((s), (m)))

#endif
