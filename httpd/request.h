/*
 * Connections and requests: the records every handler, filter and logger
 * sees, and the calls a handler uses to build a response.
 */
#ifndef HD_REQUEST_H
#define HD_REQUEST_H

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
    size_t head_bytes;      /**< bytes of the response head, to tell body bytes */
    char *scratch;          /**< for pread when sendfile is off */
    const struct sockaddr *local_sa;
};

/** Sizes of a response body known up front: -1 when unknown. */
struct hd_request {
    hd_pool_t *pool;
    hd_conn_t *c;
    hd_server_t *server;

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
    char *path_info;             /**< unused for now */
    struct stat finfo;
    bool finfo_valid;            /**< filename exists and finfo is filled */
    void **dir_config;           /**< merged per-module dir configs (config.h) */
    const char *handler;         /**< SetHandler name, or NULL */

    /* the response */
    int status;                  /**< 200 unless set */
    const char *status_line;     /**< NULL: standard reason phrase */
    hd_table_t *headers_out;
    const char *content_type;    /**< NULL: none sent */
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
 */
int hd_internal_redirect(hd_request_t *r, const char *new_uri);

/** Current time in microseconds, monotonic clock (vDSO, no syscall). */
int64_t hd_now_mono_us(void);

#endif
