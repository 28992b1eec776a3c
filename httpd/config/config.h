/*
 * Configuration: the Apache-syntax reader, directive tables, sections and the
 * per-request merge of directory configs.
 */
#ifndef HD_CONFIG_H
#define HD_CONFIG_H

#include "hd.h"

#include <stdio.h>
#include <sys/socket.h>

/** Argument shapes, as Apache's. */
typedef enum {
    HD_NO_ARGS,
    HD_TAKE1,
    HD_TAKE2,
    HD_TAKE3,
    HD_TAKE12,
    HD_TAKE13,
    HD_TAKE23,
    HD_TAKE123,
    HD_ITERATE,   /**< one or more; the handler is called once per argument */
    HD_ITERATE2,  /**< two or more; called with (first, each other) */
    HD_FLAG,      /**< On|Off; argv[0] is "on" or "off" */
    HD_TAKE_ARGV, /**< any number (0 or more), all at once */
    HD_RAW_ARGS   /**< the rest of the line, unsplit, as argv[0] */
} hd_args_how_t;

/** Where a directive may stand (bits). */
#define HD_CTX_MAIN 0x01u      /**< server config, outside any section */
#define HD_CTX_DIRECTORY 0x02u /**< <Directory>, <DirectoryMatch> */
#define HD_CTX_LOCATION 0x04u  /**< <Location>, <LocationMatch> */
#define HD_CTX_FILES 0x08u     /**< <Files>, <FilesMatch> */
#define HD_CTX_DIR (HD_CTX_DIRECTORY | HD_CTX_LOCATION | HD_CTX_FILES)
#define HD_CTX_ANY (HD_CTX_MAIN | HD_CTX_DIR)

/** Which config a directive's handler receives as @p mconfig. */
typedef enum {
    HD_CONF_SERVER, /**< the module's server config (create_server_config) */
    HD_CONF_DIR     /**< the module's dir config of the enclosing section (server level outside) */
} hd_conf_level_t;

typedef struct hd_cmd_parms hd_cmd_parms_t;

/**
 * A directive handler: returns NULL, or an error message (static or from
 * cmd->pool) that the reader prints as "file:line: message".
 */
typedef const char *(*hd_cmd_fn)(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[]);

typedef struct {
    const char *name;
    hd_cmd_fn fn;
    size_t offset;        /**< for the generic setters: offsetof into mconfig */
    hd_args_how_t args;
    unsigned contexts;    /**< HD_CTX_* bits */
    hd_conf_level_t level;
    const char *syntax;   /**< argument syntax for -L and the manual: "On|Off" */
    const char *dflt;     /**< default, for -L and the manual, or NULL */
    const char *help;     /**< one line */
} hd_command_t;

struct hd_cmd_parms {
    hd_server_t *server;
    hd_pool_t *pool;           /**< the configuration's pool */
    hd_pool_t *temp_pool;      /**< freed after reading */
    const hd_command_t *cmd;
    hd_module_t *module;
    const char *file;
    unsigned line;
    unsigned context;          /**< HD_CTX_* of where the directive stands */
    const char *section_path;  /**< path/pattern of the enclosing section, or NULL */
};

/** Generic setters: write at cmd->cmd->offset into mconfig. */
const char *hd_set_string_slot(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[]);
/** Resolves a relative path against ServerRoot. */
const char *hd_set_path_slot(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[]);
/** int >= 0. */
const char *hd_set_int_slot(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[]);
/** int64_t >= 0. */
const char *hd_set_off_slot(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[]);
/** int: 1 for On, 0 for Off. */
const char *hd_set_flag_slot(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[]);

/**
 * Compiles a directive's regular expression (regex.h) into the
 * configuration's pool. Returns NULL and sets *@p out, or an error naming
 * the directive and the pattern with PCRE2's message, for the reader to
 * prefix with file and line.
 */
const char *hd_config_regex(hd_cmd_parms_t *cmd, const char *pattern, unsigned flags,
                            hd_regex_t **out);

/** Returns @p path made absolute against ServerRoot (pool string). */
const char *hd_server_root_relative(hd_pool_t *p, const hd_server_t *s, const char *path);

typedef enum { HD_SEC_DIRECTORY, HD_SEC_LOCATION, HD_SEC_FILES } hd_section_kind_t;

typedef struct hd_section hd_section_t;
struct hd_section {
    hd_section_kind_t kind;
    const char *path;          /**< as written (Directory paths absolute, no trailing '/') */
    hd_regex_t *regex;         /**< for *Match and "~", else NULL */
    unsigned ncomponents;      /**< '/'-separated components, for Directory ordering */
    void **dir_conf;           /**< per module (index), NULL where not created */
    hd_section_t *parent;      /**< <Files> inside <Directory>, else NULL */
    const char *file;
    unsigned line;
    hd_section_t *next;        /**< in file order */
};

typedef struct hd_listen hd_listen_t;
struct hd_listen {
    struct sockaddr_storage addr;
    socklen_t addr_len;
    const char *text;          /**< as written in Listen */
    const char *protocol;      /**< Listen's protocol: "https" for port 443, else "http" */
    int fd;                    /**< -1 until opened */
    hd_listen_t *next;
};

#define HD_MAX_MODULES 64

struct hd_server {
    hd_pool_t *pool;           /**< lives as long as this configuration */
    const char *server_root;
    const char *conf_file;     /**< absolute */
    int generation;            /**< 0 at start, +1 per restart */
    bool loaded[HD_MAX_MODULES];
    void *module_config[HD_MAX_MODULES]; /**< per-module server configs */
    void *dir_default[HD_MAX_MODULES];   /**< per-module dir configs at server level */
    hd_section_t *sections;
    struct hd_section_index *section_index; /**< sections.h, built after reading */
    hd_listen_t *listeners;
    const hd_mpm_t *mpm;
    hd_module_t *mpm_module;
    struct hd_hooks *hooks;           /**< module.h: the loaded modules' hooks by phase */

    /* from the command line, kept across restarts */
    const char *const *defines;       /**< -D names, NULL-terminated, plus Define'd ones */
    const char *const *pre_directives;  /**< -C, before the file */
    const char *const *post_directives; /**< -c, after the file */
    bool one_process;                 /**< -X */
    bool foreground;                  /**< -D FOREGROUND or -X */
    int cmdline_log_level;            /**< -e, or -1 */
};

/** Options the reader needs that come from the command line. */
typedef struct {
    const char *server_root;     /**< -d or the compiled default */
    const char *conf_file;       /**< -f, relative to server_root if not absolute */
    const char *const *defines;  /**< -D, NULL-terminated */
    const char *const *pre_directives;
    const char *const *post_directives;
    bool one_process;
    bool foreground;
    int cmdline_log_level;
} hd_config_args_t;

/**
 * Reads a whole configuration into a new server record with its own pool.
 * On error returns NULL and sets *@p err to "file:line: message" (or
 * "file: message" for a file that can't be opened). Runs each loaded module's
 * post_config. Does not open listeners or logs.
 */
hd_server_t *hd_config_read(const hd_config_args_t *args, int generation, char **err);

/** Frees a configuration read by hd_config_read. */
void hd_config_free(hd_server_t *s);

/** The module's server config. */
#define hd_get_server_config(s, m) ((s)->module_config[(m)->index])

/** The module's merged dir config for @p r. */
#define hd_get_dir_config(r, m) ((r)->dir_config[(m)->index])

/** Prints every directive of every module with its help (-L) to @p out. */
void hd_config_list_directives(FILE *out);

#endif

