/*
 * The HTTP/1.x request parser: a resumable byte-at-a-time state machine in
 * the manner of nginx's ngx_http_parse.c. It is pure: bytes in, offsets out,
 * no allocation and no I/O, so unit tests and fuzzers call it directly.
 * Offsets (not pointers) are kept so the caller may move or grow its buffer
 * between calls.
 */
#ifndef HD_HTTP_PARSER_H
#define HD_HTTP_PARSER_H

#include "hd.h"

/** Methods we know; HD_M_OTHER is a syntactically valid but unknown method. */
typedef enum {
    HD_M_GET,
    HD_M_HEAD,
    HD_M_POST,
    HD_M_PUT,
    HD_M_DELETE,
    HD_M_CONNECT,
    HD_M_OPTIONS,
    HD_M_TRACE,
    HD_M_PATCH,
    HD_M_PROPFIND,
    HD_M_PROPPATCH,
    HD_M_MKCOL,
    HD_M_COPY,
    HD_M_MOVE,
    HD_M_LOCK,
    HD_M_UNLOCK,
    HD_M_OTHER,
    HD_M_NMETHODS
} hd_method_t;

/** Method names indexed by hd_method_t ("GET" ...; NULL for HD_M_OTHER). */
extern const char *const hd_method_names[HD_M_NMETHODS];


/** One header field: offsets into the caller's buffer. Value is trimmed of OWS. */
typedef struct {
    uint32_t name_off, name_len;
    uint32_t value_off, value_len;
} hd_http_field_t;

/** Parser state and result. Zero it (hd_http_parser_init) before each request. */
typedef struct {
    /* result */
    hd_method_t method;
    uint32_t method_off, method_len;
    uint32_t target_off, target_len;   /**< request-target as sent */
    /**
     * Path part of the target (absolute-form: after the authority, where an
     * empty path is path_len 0 and means "/"; 0 long for "*" and CONNECT).
     */
    uint32_t path_off, path_len;
    /**
     * After '?', without it. query_off != 0 means a '?' was present: "/a?"
     * gives query_off at the byte after '?' and query_len 0; no '?' gives 0/0.
     */
    uint32_t query_off, query_len;
    /** Authority of an absolute-form target (or a CONNECT authority-form one), else 0/0. */
    uint32_t host_off, host_len;
    uint32_t line_off, line_len;       /**< the whole request line, without CRLF */
    int http_major, http_minor;        /**< 0.9 is rejected */
    bool absolute_form;
    bool asterisk_form;                /**< "OPTIONS * HTTP/1.1" (other methods: 400) */
    hd_http_field_t *fields;           /**< caller-provided array, max_fields long */
    uint32_t nfields;
    uint32_t head_len;                 /**< bytes of the head incl. final CRLF, when done */

    /* internal state, resumable across calls */
    int state;
    uint32_t pos;          /**< next byte to look at, relative to the buffer start */
    uint32_t mark;         /**< start of the current token */
    uint32_t line_start;   /**< start of the current line */
    uint32_t aux0, aux1;   /**< scratch for the machine */
} hd_http_parser_t;

/** Resets @p p for a new request; @p fields must hold limits->max_fields entries. */
void hd_http_parser_init(hd_http_parser_t *p, hd_http_field_t *fields);

/**
 * Parses the request head in buf[0, len). Bytes already seen are not looked
 * at again. Leading empty lines (CRLF) before the request line are skipped, as
 * RFC 9112 section 2.2 allows. Returns:
 *   HD_OK     the head is complete (p->head_len bytes);
 *   HD_AGAIN  more bytes are needed;
 *   an HTTP status for a malformed head:
 *     400 garbage, bad method token (1-32 tchars), bad target (not
 *         origin-, absolute- (http/https), asterisk- or, for CONNECT only,
 *         authority-form; SP, CTL or DEL inside), bad version, control bytes
 *         or NUL in a field, obs-fold (a line starting with SP/HTAB), a field
 *         without ':', whitespace before ':', an HTTP/2 preface
 *         ("PRI * HTTP/2.0"), a bare CR, more than 10 leading empty lines;
 *         bare LF is accepted as line end (RFC 9112 2.2)
 *     414 request line longer than max_request_line (skipped leading empty
 *         lines count too), as soon as the limit is passed
 *     431 a field longer than max_field_size or more than max_fields fields
 *     505 HTTP major version other than 1
 */
int hd_http_parse_head(hd_http_parser_t *p, const char *buf, size_t len,
                       const hd_http_limits_t *limits);

/** Case-insensitive field-name comparison helper. */
bool hd_http_field_is(const char *buf, const hd_http_field_t *f, const char *name);

/** Chunked transfer-coding decoder state (RFC 9112 section 7.1). */
typedef struct {
    int state;
    uint64_t chunk_left;   /**< data bytes left in the current chunk */
    uint32_t line_len;     /**< bytes of the current size/trailer line (limits) */
    uint32_t ntrailers;
} hd_chunked_t;

void hd_chunked_init(hd_chunked_t *c);

/**
 * Decodes chunked bytes from in[0, len). Sets *consumed to bytes eaten, and
 * *data_off and *data_len to one run of body data inside them (0/0 if none) so
 * a caller can count or keep it; call again with the rest. Returns HD_OK when
 * the last chunk and trailers were read (*consumed is just past the final
 * CRLF), HD_AGAIN after each data run or when more input is needed (loop
 * while *consumed < len), 400 for a malformed size (non-hex, over 16 hex
 * digits or above INT64_MAX, missing CRLF), a bad chunk extension, a bad
 * trailer field, a size or trailer line over 8190 bytes or over 100 trailers.
 * Line ends must be CRLF here (no bare LF), so framing cannot be read two ways.
 */
int hd_chunked_parse(hd_chunked_t *c, const char *in, size_t len, size_t *consumed,
                     size_t *data_off, size_t *data_len);

#endif
