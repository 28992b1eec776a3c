/*
 * Common definitions shared by every file of the server: return codes,
 * forward declarations and small helpers.
 */
#ifndef HD_H
#define HD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/** Return codes, nginx-style. Handlers may also return an HTTP status (>= 100). */
#define HD_OK 0
#define HD_ERROR (-1)
#define HD_AGAIN (-2)
#define HD_DONE (-4)
#define HD_DECLINED (-5)

#define HD_VERSION "0.1.0"
#define HD_SERVER_BASEPRODUCT "httpd"

#define HD_UNUSED __attribute__((unused))
#define hd_likely(x) __builtin_expect(!!(x), 1)
#define hd_unlikely(x) __builtin_expect(!!(x), 0)
#define HD_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/**
 * Hard limits on a request head, from LimitRequestLine, LimitRequestFieldSize
 * and LimitRequestFields: the core's config holds them, the parser obeys them.
 */
typedef struct {
    uint32_t max_request_line;  /**< bytes in the request line, without CRLF */
    uint32_t max_field_size;    /**< bytes in one header line, without CRLF */
    uint32_t max_fields;        /**< number of header fields */
} hd_http_limits_t;

typedef struct hd_pool hd_pool_t;
typedef struct hd_buf hd_buf_t;
typedef struct hd_chain hd_chain_t;
typedef struct hd_server hd_server_t;
typedef struct hd_conn hd_conn_t;
typedef struct hd_request hd_request_t;
typedef struct hd_module hd_module_t;
typedef struct hd_mpm hd_mpm_t;
typedef struct hd_regex hd_regex_t;

#endif
