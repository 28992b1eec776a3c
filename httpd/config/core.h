/*
 * The core module's configuration: server-wide settings and per-directory
 * settings (Options, Require, ErrorDocument, EnableSendfile ...).
 */
#ifndef HD_CORE_H
#define HD_CORE_H

#include "config.h"
#include "hd.h"
#include "module.h"

extern hd_module_t hd_core_module;

/** ServerTokens values. */
typedef enum {
    HD_TOKENS_PROD,
    HD_TOKENS_MAJOR,
    HD_TOKENS_MINOR,
    HD_TOKENS_MINIMAL,
    HD_TOKENS_OS,
    HD_TOKENS_FULL
} hd_server_tokens_t;

/** AcceptFilter protocol filter: on Linux, any filter but "none" is TCP_DEFER_ACCEPT. */
typedef struct hd_accept_filter hd_accept_filter_t;
struct hd_accept_filter {
    const char *protocol;
    const char *filter;
    hd_accept_filter_t *next;
};

/** The AcceptFilter for @p protocol: "data" unless configured. */
const char *hd_core_accept_filter(const hd_server_t *s, const char *protocol);

typedef struct {
    const char *server_name;     /**< ServerName, or the host name */
    const char *document_root;   /**< absolute, no trailing '/' */
    const char *error_log;       /**< path, absolute; "/dev/stderr" allowed */
    int log_level;               /**< HD_LOG_* */
    const char *pid_file;        /**< absolute */
    int timeout_s;               /**< Timeout (300) */
    int keepalive;               /**< KeepAlive (On) */
    int keepalive_timeout_ms;    /**< KeepAliveTimeout (5 s); "ms" suffix allowed */
    int max_keepalive_requests;  /**< MaxKeepAliveRequests (100, 0 = unlimited) */
    hd_http_limits_t limits;     /**< LimitRequestLine/FieldSize/Fields (8190, 8190, 100) */
    int server_tokens;           /**< ServerTokens (Full) */
    const char *server_banner;   /**< Server header value, from server_tokens */
    int listen_backlog;          /**< ListenBacklog (511) */
    hd_accept_filter_t *accept_filters; /**< AcceptFilter, by protocol (http, https: data) */
    int open_file_cache;         /**< OpenFileCache: entries per thread (32), 0 = off */
} hd_core_server_conf_t;

/** Options bits. */
#define HD_OPT_NONE 0u
#define HD_OPT_INDEXES 0x01u
#define HD_OPT_FOLLOWSYMLINKS 0x02u
#define HD_OPT_SYMLINKS_IF_OWNER 0x04u
#define HD_OPT_EXECCGI 0x08u
#define HD_OPT_INCLUDES 0x10u
#define HD_OPT_MULTIVIEWS 0x20u
#define HD_OPT_ALL (HD_OPT_INDEXES | HD_OPT_FOLLOWSYMLINKS | HD_OPT_SYMLINKS_IF_OWNER | HD_OPT_EXECCGI | HD_OPT_INCLUDES)
#define HD_OPT_UNSET 0x80000000u

typedef struct {
    int status;
    const char *value;   /**< "/local/path", "http://..." or a string (leading '"' removed) */
} hd_error_document_t;

typedef struct {
    unsigned options;            /**< HD_OPT_* or HD_OPT_UNSET */
    unsigned options_add;        /**< from +X */
    unsigned options_remove;     /**< from -X */
    hd_error_document_t *error_docs; /**< array */
    int n_error_docs;
    int enable_sendfile;         /**< -1 unset, 0, 1 (default On) */
    int64_t limit_request_body;  /**< -1 unset, 0 unlimited (default 1 GiB as Apache 2.4.54+) */
    const char *handler;         /**< SetHandler, or NULL */
} hd_core_dir_conf_t;

static inline hd_core_server_conf_t *hd_core_sconf(const hd_server_t *s)
{
    return (hd_core_server_conf_t *)s->module_config[hd_core_module.index];
}

/** The core's merged dir config of request @p r (a macro: needs request.h where used). */
#define hd_core_dconf(r) ((hd_core_dir_conf_t *)(r)->dir_config[hd_core_module.index])

/** Options while merging: the list in force, and the +X / -X still to apply below. */
typedef struct {
    unsigned options;
    unsigned add;
    unsigned remove;
} hd_core_options_t;

/** Merges the Options of the dir config @p add into @p o, as the per-request merge does. */
void hd_core_options_merge(hd_core_options_t *o, const hd_core_dir_conf_t *add);

/** Effective Options for a merged dir config. */
unsigned hd_core_options(const hd_core_dir_conf_t *d);

/** Finds the ErrorDocument for @p status, or NULL. */
const char *hd_core_error_document(const hd_core_dir_conf_t *d, int status);

#endif
