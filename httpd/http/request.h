/*
 * Connections and requests: the records every handler, filter and logger
 * sees, and the calls a handler uses to build a response.
 */
#ifndef HD_REQUEST_H
#define HD_REQUEST_H

#include "config.h"
#include "conn_io.h"
#include "hd.h"
#include "http_parser.h"
#include "table.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

/** Where a connection's state machine stands (see connection.c). */
typedef enum {
    HD_CONN_READ_HEAD,    /**< waiting for (more of) a request head */
    HD_CONN_READ_BODY,    /**< reading and discarding a request body */
    HD_CONN_WRITE,        /**< writing a response */
    HD_CONN_KEEPALIVE,    /**< idle between requests */
    HD_CONN_LINGER,       /**< half-closed, draining input before close */
    HD_CONN_CLOSED
} hd_conn_state_t;

/** Which part of a request the connection is reading. */
typedef enum {
    HD_READ_NONE,     /**< not reading a request: keep-alive, handler, writing */
    HD_READ_HEAD,     /**< the request line and header fields */
    HD_READ_BODY      /**< the body */
} hd_read_phase_t;

/** What the connection needs from its MPM before it can go on. */
typedef enum {
    HD_WANT_READ,     /**< wait until readable, timeout hd_conn_timeout_ms() */
    HD_WANT_WRITE,    /**< wait until writable */
    HD_WANT_IDLE,     /**< keep-alive: wait until readable, keep-alive timeout */
    HD_WANT_CLOSE     /**< done: call hd_conn_close() */
} hd_conn_want_t;

struct hd_conn {
    hd_pool_t *pool;
    hd_server_t *server;
    int fd;
    hd_conn_state_t state;
    hd_listen_t *listener;  /**< the Listen that accepted it */
    const hd_conn_io_t *io; /**< how its bytes are read and written: plain, or what a module chose */
    void *io_ctx;           /**< the I/O implementation's state; outlives c->pool (conn_io.h) */
    void **conn_config;     /**< per-module connection state by module index, NULL until set */

    struct sockaddr_storage peer;
    char client_ip[48];     /**< textual peer address (IPv4-mapped shown as IPv4) */
    uint16_t client_port;
    char local_ip[48];
    uint16_t local_port;

    /* input: one contiguous buffer; a pipelined next request is moved to its start */
    char *in;
    size_t in_size;
    size_t in_pos;          /**< first byte not yet consumed */
    size_t in_end;          /**< one past the last byte read */

    hd_request_t *r;        /**< request in progress, or NULL */

    /* the request being read (RequestReadTimeout: the input_wait hook) */
    hd_read_phase_t read_phase; /**< head, body, or none (keep-alive, handler, writing) */
    int64_t read_started_ms;  /**< when the phase began (monotonic ms) */
    uint64_t read_bytes;      /**< bytes read from the client in the phase */
    int64_t read_limit_ms;    /**< a module's end of the phase (monotonic ms), 0: none */
    const char *read_limit_msg; /**< logged (info) when that end comes first */
    hd_chain_t *out;        /**< output not yet written */
    unsigned requests;      /**< requests served on this connection */
    bool keepalive;         /**< the current response allows another request */
    bool aborted;           /**< client went away or I/O failed */
    int64_t deadline_ms;    /**< monotonic ms when the current wait times out */
    void *mpm_data;         /**< owned by the MPM */

    /* private to connection.c */
    int64_t body_left;      /**< Content-Length body bytes still to discard */
    int64_t body_read;      /**< body bytes read for the current request */
    int64_t body_limit;     /**< LimitRequestBody for it, 0 = none */
    hd_chunked_t chunked;   /**< chunked body decoder */
    bool close_after;       /**< close once the current response is written */
    bool linger;            /**< drain input before closing */
    size_t head_bytes;      /**< bytes of the response head, to tell body bytes (set by output.c) */
    char *scratch;          /**< for pread when sendfile is off */
    const struct sockaddr *local_sa;
};

/** What outlives a connection's pool while the event MPM keeps it idle. */
typedef struct {
    const hd_conn_io_t *io;
    void *io_ctx;
    unsigned requests;
} hd_conn_keep_t;

/** A module's connection state for @p c (NULL if none was set). */
#define hd_get_conn_config(c, m) ((c)->conn_config ? (c)->conn_config[(m)->index] : NULL)
/** Sets @p m's connection state for @p c (allocated from c->pool: it does not survive an idle release). */
void hd_set_conn_config(hd_conn_t *c, const hd_module_t *m, void *state);

typedef struct hd_filter hd_filter_t;

struct hd_request {
    hd_pool_t *pool;
    hd_conn_t *c;
    hd_server_t *server;
    hd_request_t *main;          /**< for a sub-request, the request it serves; else NULL */

    hd_http_parser_t parser;     /**< parse result; offsets into c->in */

    /* the request as received */
    hd_method_t method;
    const char *method_name;
    const char *the_request;     /**< request line, for logs */
    const char *unparsed_uri;    /**< request-target as sent */
    char *uri;                   /**< decoded, normalised path */
    const char *args;            /**< query string without '?', or NULL */
    const char *protocol;        /**< "HTTP/1.1" */
    int proto_num;               /**< 1000 * major + minor: 1000, 1001 */
    const char *hostname;        /**< from Host or the absolute-form target */
    hd_table_t *headers_in;
    int64_t content_length_in;   /**< -1 if none */
    bool chunked_in;
    bool expect_continue;
    struct timespec start;       /**< when the first byte of the request arrived (CLOCK_REALTIME) */
    int64_t start_mono_us;       /**< same, monotonic, for durations */

    /* mapping */
    char *filename;              /**< file the URI maps to, or NULL */
    const char *context_prefix;  /**< the URI prefix translate_name mapped ("" for DocumentRoot) */
    const char *context_root;    /**< the directory it mapped to (DocumentRoot, an Alias target):
                                      symbolic links are checked below it */
    char *path_info;             /**< unused for now */
    struct stat finfo;
    bool finfo_valid;            /**< filename exists and finfo is filled */
    bool config_merged;          /**< dir_config is this request's merge (not the server's default) */
    void **dir_config;           /**< merged per-module dir configs (config.h) */
    const char *handler;         /**< SetHandler name, or NULL */

    /* the response */
    int status;                  /**< 200 unless set */
    const char *status_line;     /**< NULL: standard reason phrase */
    hd_table_t *headers_out;
    const char *content_type;    /**< NULL: none sent */
    const char *content_encoding; /**< from the type checker (mod_mime), or NULL */
    const char *content_language; /**< from the type checker, comma-separated, or NULL */
    const char *content_charset; /**< the charset the type checker found, or NULL */
    int64_t content_length;      /**< -1 unknown (then the connection closes) */
    time_t mtime;                /**< Last-Modified, 0 for none */
    bool header_only;            /**< HEAD: send headers only */
    hd_chain_t *body;            /**< body chain built by the handler */
    int64_t body_bytes_sent;     /**< body bytes written, for %b and the scoreboard */
    int64_t bytes_sent;          /**< all bytes written, head included */
    bool keepalive;              /**< decided when the head is written */
    int orig_status;             /**< status before an ErrorDocument redirect, 0 if none */
    const char *orig_uri;        /**< URI before an internal redirect, or NULL */
    int internal_redirects;
    void *module_data[8];        /**< scratch for modules, by module index % 8 */

    /* the way out (output.c) */
    hd_filter_t *filters;        /**< output filters by stage, or NULL (filter.h) */
    bool keepalive_possible;     /**< the connection could stay open after this response */
    bool head_queued;            /**< the head is on the connection's output */
    bool output_done;            /**< the body's end reached the connection */
    bool chunked;                /**< the body goes with Transfer-Encoding: chunked */
    hd_chain_t **out_tail;       /**< where the next output link goes on c->out */
};

/** Reason phrase for @p status ("OK"), or NULL if unknown. */
const char *hd_status_reason(int status);

/** Appends @p len bytes at @p data to the response body (not copied). */
void hd_body_append_mem(hd_request_t *r, const void *data, size_t len);

/** Copies @p len bytes into the request pool and appends them to the body. */
void hd_body_append_copy(hd_request_t *r, const void *data, size_t len);

/** Appends a file range to the body; @p fd must stay open (pool cleanup). */
void hd_body_append_file(hd_request_t *r, int fd, off_t off, off_t len);

/**
 * Opens @p path read-only and registers a pool cleanup that closes it.
 * Returns the fd, or -1 with errno set.
 */
int hd_open_file_for_request(hd_request_t *r, const char *path);

/**
 * Answers @p r with an error: @p status (>= 300), a short HTML body, or the
 * ErrorDocument configured for it. Always returns HD_OK (the response is set).
 */
int hd_send_error(hd_request_t *r, int status);

/**
 * Restarts request processing on @p new_uri (a local path, may carry a query)
 * keeping the connection and the original status; ErrorDocument uses it.
 * Returns HD_DONE when the new URI was answered (or HD_OK), else a status.
 */
int hd_internal_redirect(hd_request_t *r, const char *new_uri);

/**
 * Sub-requests: what a URI or a file name would map to, through the
 * translate_name, map_to_storage, access_checker and type_checker phases,
 * without running a handler. The result is a request record (from r->pool)
 * whose status is 200 when every phase passed, or the status one answered
 * (403 from access, 404 is not decided here: look at finfo_valid); it has
 * the uri, filename, finfo, dir_config, handler, content_type,
 * content_encoding, content_language and content_charset the phases set,
 * and main pointing at @p r. mod_dir's index search and content negotiation
 * use them.
 */
hd_request_t *hd_sub_req_lookup_uri(hd_request_t *r, const char *uri);

/** The same for the file @p filename (absolute; its <Directory> sections apply), skipping translate_name. */
hd_request_t *hd_sub_req_lookup_file(hd_request_t *r, const char *filename);

/**
 * Makes @p r the sub-request @p rr's resource, as Apache's
 * ap_internal_fast_redirect: its uri, filename, finfo, configuration, handler
 * and content type, so no phase runs twice. The remaining fixups and the
 * handler then run on it.
 */
void hd_internal_fast_redirect(hd_request_t *rr, hd_request_t *r);

/** Current time in microseconds, monotonic clock (vDSO, no syscall). */
int64_t hd_now_mono_us(void);

#endif
