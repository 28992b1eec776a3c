/*
 * The connection state machine: read a head, discard any body, run the
 * request, write the response, then keep alive, linger or close. It never
 * blocks; the MPM waits for readiness and calls hd_conn_process again.
 */
#include "connection.h"

#include "buf.h"
#include "config.h"
#include "core.h"
#include "file_cache.h"
#include "log.h"
#include "module.h"
#include "output.h"
#include "pool.h"
#include "request_internal.h"
#include "response.h"
#include "scoreboard.h"
#include "sys.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <time.h>

#define CONN_CONTINUE (-1)
#define CONN_GOT_INPUT (-2)
#define IN_BUF_INITIAL 4096
#define SCRATCH_SIZE 16384
#define LINGER_MS 2000

volatile sig_atomic_t hd_stop_keepalive;

/*
 * hd_stop_keepalive is set by a signal handler (process.c) or by an MPM's
 * main thread and read by worker threads: an atomic load keeps that a
 * defined (and sanitizer-clean) read.
 */
static bool stopping(void)
{
    return __atomic_load_n(&hd_stop_keepalive, __ATOMIC_RELAXED) != 0;
}

static int64_t now_ms(void)
{
    return hd_now_mono_us() / 1000;
}

static void addr_to_text(const struct sockaddr *sa, char *out, size_t size, uint16_t *port)
{
    out[0] = '\0';
    *port = 0;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &in->sin_addr, out, (socklen_t)size);
        *port = ntohs(in->sin_port);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
            inet_ntop(AF_INET, &in6->sin6_addr.s6_addr[12], out, (socklen_t)size);
        } else {
            inet_ntop(AF_INET6, &in6->sin6_addr, out, (socklen_t)size);
        }
        *port = ntohs(in6->sin6_port);
    }
}

static void begin_read_phase(hd_conn_t *c, hd_read_phase_t phase);

void hd_set_conn_config(hd_conn_t *c, const hd_module_t *m, void *state)
{
    if (c->conn_config == NULL) {
        c->conn_config = hd_pcalloc(c->pool, (size_t)hd_num_modules * sizeof(void *));
    }
    c->conn_config[m->index] = state;
}

/* run-all: every module's pre_connection while each says HD_OK or HD_DECLINED. */
static int run_pre_connection(hd_conn_t *c)
{
    for (hd_module_t **m = c->server->hooks->pre_connection; *m != NULL; m++) {
        int rv = (*m)->pre_connection(c);
        if (rv != HD_OK && rv != HD_DECLINED) {
            return HD_ERROR;
        }
    }
    return HD_OK;
}

hd_conn_t *hd_conn_create(hd_server_t *s, int fd, hd_listen_t *l, const struct sockaddr *peer,
                          socklen_t peer_len, const struct sockaddr *local, socklen_t local_len,
                          const hd_conn_keep_t *resume)
{
    hd_pool_t *pool = hd_pool_create();
    hd_conn_t *c = hd_pcalloc(pool, sizeof(*c));
    c->pool = pool;
    c->server = s;
    c->fd = fd;
    c->listener = l;
    c->io = resume != NULL ? resume->io : &hd_conn_io_plain;
    c->io_ctx = resume != NULL ? resume->io_ctx : NULL;
    c->requests = resume != NULL ? resume->requests : 0;
    c->state = HD_CONN_READ_HEAD;
    if (peer_len > sizeof(c->peer)) {
        peer_len = sizeof(c->peer);
    }
    memcpy(&c->peer, peer, peer_len);
    addr_to_text(peer, c->client_ip, sizeof(c->client_ip), &c->client_port);
    if (local != NULL && local_len > 0) {
        addr_to_text(local, c->local_ip, sizeof(c->local_ip), &c->local_port);
        c->local_sa = local;
    }
    c->in_size = IN_BUF_INITIAL;
    c->in = hd_pnalloc(pool, c->in_size);
    c->deadline_ms = now_ms() + hd_core_sconf(s)->timeout_s * 1000LL;
    /* a new connection's first request is being read from the start */
    if (resume == NULL) {
        begin_read_phase(c, HD_READ_HEAD);
    }
    if (resume == NULL && run_pre_connection(c) != HD_OK) {
        c->aborted = true;
        c->state = HD_CONN_CLOSED;
    }
    return c;
}

void hd_conn_release(hd_conn_t *c, hd_conn_keep_t *keep)
{
    keep->io = c->io;
    keep->io_ctx = c->io_ctx;
    keep->requests = c->requests;
    hd_pool_destroy(c->pool);
}

void hd_conn_close_kept(int fd, hd_conn_keep_t *keep)
{
    /* the I/O layer sees the fields it owns; the rest of the record is gone */
    hd_conn_t c = {.fd = fd, .io = keep->io, .io_ctx = keep->io_ctx};
    keep->io->close(&c);
}

/* True if the I/O layer already holds input the socket will not announce again. */
static bool input_pending(const hd_conn_t *c)
{
    return c->io->pending != NULL && c->io->pending(c);
}

int hd_conn_timeout_ms(const hd_conn_t *c)
{
    int64_t left = c->deadline_ms - now_ms();
    if (left < 0) {
        return 0;
    }
    return left > INT32_MAX ? INT32_MAX : (int)left;
}

static void set_deadline(hd_conn_t *c, int64_t ms)
{
    c->deadline_ms = now_ms() + ms;
}

static int64_t timeout_ms(const hd_conn_t *c)
{
    return hd_core_sconf(c->server)->timeout_s * 1000LL;
}

static void begin_read_phase(hd_conn_t *c, hd_read_phase_t phase)
{
    c->read_phase = phase;
    c->read_started_ms = now_ms();
    c->read_bytes = 0;
    c->read_limit_ms = 0;
}

/*
 * Waits for more of a request: Timeout bounds each wait, and a module's
 * limit on the whole head or body (RequestReadTimeout) may end it sooner.
 */
static int wait_for_request_input(hd_conn_t *c)
{
    set_deadline(c, timeout_ms(c));
    c->read_limit_ms = 0;
    for (hd_module_t **m = c->server->hooks->input_wait; *m != NULL; m++) {
        (*m)->input_wait(c);
    }
    if (c->read_limit_ms > 0 && c->read_limit_ms < c->deadline_ms) {
        c->deadline_ms = c->read_limit_ms;
    }
    return HD_WANT_READ;
}

/* The largest head the limits allow, plus slack for line ends. */
static size_t max_head_size(const hd_core_server_conf_t *sc)
{
    return (size_t)sc->limits.max_request_line + 4 +
           (size_t)sc->limits.max_fields * ((size_t)sc->limits.max_field_size + 2) + 64;
}

/* Reads into the free end of the input buffer. Returns bytes, 0 at EOF, -1 on error/EAGAIN. */
static ssize_t conn_read(hd_conn_t *c)
{
    for (;;) {
        ssize_t n = c->io->recv(c, c->in + c->in_end, c->in_size - c->in_end);
        if (n > 0) {
            c->in_end += (size_t)n;
            c->read_bytes += (uint64_t)n;
            return n;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        return n;
    }
}

/* Moves unconsumed input to the start of the buffer. */
static void compact_input(hd_conn_t *c)
{
    if (c->in_pos > 0) {
        size_t left = c->in_end - c->in_pos;
        if (left > 0) {
            memmove(c->in, c->in + c->in_pos, left);
        }
        c->in_pos = 0;
        c->in_end = left;
    }
}

static bool grow_input(hd_conn_t *c)
{
    size_t max = max_head_size(hd_core_sconf(c->server));
    if (c->in_size >= max) {
        return false;
    }
    size_t size = c->in_size * 2;
    if (size > max) {
        size = max;
    }
    char *in = hd_pnalloc(c->pool, size);
    memcpy(in, c->in, c->in_end);
    c->in = in;
    c->in_size = size;
    return true;
}

static void start_request(hd_conn_t *c)
{
    hd_pool_t *pool = hd_pool_create();
    hd_request_t *r = hd_pcalloc(pool, sizeof(*r));
    const hd_core_server_conf_t *sc = hd_core_sconf(c->server);
    r->pool = pool;
    r->c = c;
    r->server = c->server;
    r->status = 200;
    r->content_length = -1;
    r->content_length_in = -1;
    r->headers_out = hd_table_make(pool, 8);
    r->dir_config = c->server->dir_default; /* until the URI is known */
    clock_gettime(CLOCK_REALTIME, &r->start);
    r->start_mono_us = hd_now_mono_us();
    hd_http_parser_init(&r->parser,
                        hd_palloc(pool, sizeof(hd_http_field_t) * (sc->limits.max_fields + 1)));
    c->r = r;
    c->keepalive = false;
    c->close_after = false;
    c->body_left = 0;
    c->body_read = 0;
    /* a new connection's phase began at accept; a later request's with its first byte */
    if (c->read_phase != HD_READ_HEAD) {
        begin_read_phase(c, HD_READ_HEAD);
    }
    hd_sb_set_state(HD_SB_BUSY_READ);
}

/* Hands the response to the output side (filters, head) and starts writing. */
static void queue_response(hd_conn_t *c)
{
    hd_request_t *r = c->r;
    const hd_core_server_conf_t *sc = hd_core_sconf(c->server);
    bool ka = sc->keepalive && !c->close_after && !stopping() &&
              (r->proto_num >= 1001 || c->keepalive) &&
              (sc->max_keepalive_requests == 0 ||
               c->requests + 1 < (unsigned)sc->max_keepalive_requests);
    if (r->headers_out == NULL) {
        r->headers_out = hd_table_make(r->pool, 4);
    }
    c->read_phase = HD_READ_NONE;
    c->out = NULL;
    if (hd_output_start(r, ka) != HD_OK) {
        c->aborted = true;
    }
    if (!r->keepalive) {
        c->close_after = true;
    }
    c->state = HD_CONN_WRITE;
    hd_sb_set_state(HD_SB_BUSY_WRITE);
    set_deadline(c, timeout_ms(c));
}

/* Answers with an error status and closes afterwards. */
static void respond_error(hd_conn_t *c, int status)
{
    hd_request_t *r = c->r;
    if (r->uri == NULL) {
        r->uri = "";
    }
    if (r->method_name == NULL) {
        r->method_name = "-";
    }
    if (r->headers_in == NULL) {
        /* the head was not parsed: the hooks that see the answer still get a table */
        r->headers_in = hd_table_make(r->pool, 1);
    }
    c->close_after = true;
    c->linger = true;
    hd_send_error(r, status);
    queue_response(c);
}

static void run_request(hd_conn_t *c)
{
    hd_request_t *r = c->r;
    int rv = hd_request_run_phases(r);
    if (rv != HD_OK && rv != HD_DONE) {
        hd_send_error(r, rv);
    }
    queue_response(c);
}

static int write_continue(hd_conn_t *c)
{
    static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
    struct iovec iov = {.iov_base = (void *)cont, .iov_len = sizeof(cont) - 1};
    ssize_t n = c->io->send(c, &iov, 1, false);
    return n == (ssize_t)(sizeof(cont) - 1) ? HD_OK : HD_ERROR;
}

/* A complete head was parsed: build the request and decide what comes next. */
static void head_done(hd_conn_t *c)
{
    hd_request_t *r = c->r;
    bool close_after = false;
    c->in_pos = r->parser.head_len;

    int rv = hd_request_from_head(r, &close_after);
    c->close_after = close_after;
    /* ExtendedStatus: request line and client into the slot */
    hd_sb_request_start(&r->start, c->requests == 0, c->client_ip, r->the_request);
    /* as Apache: R while the head is read, W from then on (handler, body, reply) */
    hd_sb_set_state(HD_SB_BUSY_WRITE);
    compact_input(c); /* the request holds copies of everything it needs */
    if (rv == HD_OK && r->method == HD_M_OTHER) {
        rv = 501;
    }
    bool has_body = r->chunked_in || r->content_length_in > 0;
    if (rv == HD_OK) {
        rv = hd_request_prepare(r);
        if (rv != HD_OK && !has_body) {
            /* a well-formed request the mapping answered (a redirect, a
             * refusal): the connection may stay open, as for any response */
            hd_send_error(r, rv);
            queue_response(c);
            return;
        }
    }
    if (rv != HD_OK) {
        if (has_body) {
            c->linger = true;
        }
        respond_error(c, rv);
        return;
    }
    if (has_body) {
        c->body_limit = hd_core_dconf(r)->limit_request_body;
        if (c->body_limit > 0 && r->content_length_in > c->body_limit) {
            respond_error(c, 413);
            return;
        }
        if (r->expect_continue && write_continue(c) != HD_OK) {
            c->aborted = true;
            c->state = HD_CONN_CLOSED;
            return;
        }
        c->body_left = r->content_length_in;
        hd_chunked_init(&c->chunked);
        c->state = HD_CONN_READ_BODY;
        begin_read_phase(c, HD_READ_BODY);
        set_deadline(c, timeout_ms(c));
        return;
    }
    run_request(c);
}

/*
 * Reads more of the request in progress (head or body): CONN_GOT_INPUT when
 * bytes came and the caller parses again, else what the caller returns.
 */
static int read_more(hd_conn_t *c)
{
    ssize_t n = conn_read(c);
    if (n == 0 || (n < 0 && errno != EAGAIN)) {
        /* The client gave up mid-request: nothing to answer. */
        c->aborted = true;
        c->state = HD_CONN_CLOSED;
        return CONN_CONTINUE;
    }
    if (n < 0) {
        return wait_for_request_input(c);
    }
    return CONN_GOT_INPUT;
}

static int read_head(hd_conn_t *c)
{
    const hd_core_server_conf_t *sc = hd_core_sconf(c->server);

    if (c->r == NULL) {
        if (c->in_pos == c->in_end) {
            c->in_pos = c->in_end = 0;
            ssize_t n = conn_read(c);
            if (n == 0 || (n < 0 && errno != EAGAIN)) {
                c->state = HD_CONN_CLOSED;
                return CONN_CONTINUE;
            }
            if (n < 0) {
                if (c->requests > 0 && stopping()) {
                    /* Idle, and no request came: close now. */
                    c->state = HD_CONN_CLOSED;
                    return CONN_CONTINUE;
                }
                if (c->requests > 0) {
                    c->state = HD_CONN_KEEPALIVE;
                    c->read_phase = HD_READ_NONE;
                    set_deadline(c, sc->keepalive_timeout_ms);
                    hd_sb_set_state(HD_SB_BUSY_KEEPALIVE);
                    return HD_WANT_IDLE;
                }
                return wait_for_request_input(c);
            }
        }
        compact_input(c);
        start_request(c);
        set_deadline(c, timeout_ms(c));
    }
    for (;;) {
        int rv = hd_http_parse_head(&c->r->parser, c->in, c->in_end, &sc->limits);
        if (rv == HD_OK) {
            head_done(c);
            return CONN_CONTINUE;
        }
        if (rv != HD_AGAIN) {
            respond_error(c, rv);
            return CONN_CONTINUE;
        }
        if (c->in_end == c->in_size && !grow_input(c)) {
            respond_error(c, 431);
            return CONN_CONTINUE;
        }
        int w = read_more(c);
        if (w != CONN_GOT_INPUT) {
            return w;
        }
    }
}

/* Discards the request body (static handlers never read one). */
static int read_body(hd_conn_t *c)
{
    hd_request_t *r = c->r;
    for (;;) {
        size_t avail = c->in_end - c->in_pos;
        if (r->chunked_in) {
            while (avail > 0) {
                size_t consumed = 0, off = 0, len = 0;
                int rv = hd_chunked_parse(&c->chunked, c->in + c->in_pos, avail, &consumed, &off,
                                          &len);
                c->in_pos += consumed;
                avail -= consumed;
                c->body_read += (int64_t)len;
                if (c->body_limit > 0 && c->body_read > c->body_limit) {
                    respond_error(c, 413);
                    return CONN_CONTINUE;
                }
                if (rv == HD_OK) {
                    compact_input(c);
                    run_request(c);
                    return CONN_CONTINUE;
                }
                if (rv != HD_AGAIN) {
                    respond_error(c, rv);
                    return CONN_CONTINUE;
                }
                if (consumed == 0) {
                    break;
                }
            }
        } else {
            size_t take = avail < (uint64_t)c->body_left ? avail : (size_t)c->body_left;
            c->in_pos += take;
            c->body_left -= (int64_t)take;
            c->body_read += (int64_t)take;
            if (c->body_left == 0) {
                compact_input(c);
                run_request(c);
                return CONN_CONTINUE;
            }
        }
        compact_input(c);
        if (c->in_end == c->in_size) {
            /* A partial chunk-size line filled the buffer: it is far too long. */
            respond_error(c, 400);
            return CONN_CONTINUE;
        }
        int w = read_more(c);
        if (w != CONN_GOT_INPUT) {
            return w;
        }
    }
}

static void finish_request(hd_conn_t *c)
{
    hd_request_t *r = c->r;
    if (r == NULL) {
        return;
    }
    r->body_bytes_sent = r->bytes_sent > (int64_t)c->head_bytes
                             ? r->bytes_sent - (int64_t)c->head_bytes : 0;
    if (r->header_only) {
        r->body_bytes_sent = 0;
    }
    hd_sb_set_state(HD_SB_BUSY_LOG);
    for (hd_module_t **m = c->server->hooks->log_transaction; *m != NULL; m++) {
        (*m)->log_transaction(r);
    }
    hd_sb_request_done(r->status, (uint64_t)r->bytes_sent,
                       (uint64_t)(hd_now_mono_us() - r->start_mono_us));
    c->requests++;
    c->r = NULL;
    c->out = NULL;
    hd_pool_destroy(r->pool);
}

static ssize_t sink_send(void *ctx, const struct iovec *iov, int n, bool more)
{
    hd_conn_t *c = ctx;
    return c->io->send(c, iov, n, more);
}

static ssize_t sink_sendfile(void *ctx, int fd, off_t *off, size_t len)
{
    hd_conn_t *c = ctx;
    return c->io->sendfile(c, fd, off, len);
}

/* Writes what is queued; when filters still hold part of the body, lets them go on. */
static int write_out(hd_conn_t *c, hd_request_t *r)
{
    bool use_sendfile = hd_core_dconf(r)->enable_sendfile != 0 && c->io->sendfile != NULL;
    hd_chain_sink_t sink = {.send = sink_send,
                            .sendfile = use_sendfile ? sink_sendfile : NULL,
                            .ctx = c};
    if (c->scratch == NULL && !use_sendfile) {
        c->scratch = hd_pnalloc(c->pool, SCRATCH_SIZE);
    }
    for (;;) {
        off_t sent = 0;
        int rv = hd_chain_write(&sink, &c->out, c->scratch, SCRATCH_SIZE, &sent);
        r->bytes_sent += sent;
        if (rv != HD_OK || hd_output_done(r)) {
            return rv;
        }
        if (hd_output_resume(r) != HD_OK) {
            errno = EIO;
            return HD_ERROR;
        }
    }
}

static int write_response(hd_conn_t *c)
{
    hd_request_t *r = c->r;
    int rv = c->aborted ? HD_ERROR : write_out(c, r);
    if (rv == HD_AGAIN) {
        set_deadline(c, timeout_ms(c));
        return HD_WANT_WRITE;
    }
    if (rv != HD_OK) {
        c->aborted = true;
        finish_request(c);
        c->state = HD_CONN_CLOSED;
        return CONN_CONTINUE;
    }
    bool close = c->close_after || c->aborted;
    finish_request(c);
    if (close) {
        if (c->linger || c->in_end > c->in_pos) {
            c->io->shutdown(c);
            c->state = HD_CONN_LINGER;
            hd_sb_set_state(HD_SB_CLOSING);
            set_deadline(c, LINGER_MS);
        } else {
            c->state = HD_CONN_CLOSED;
        }
        return CONN_CONTINUE;
    }
    if (c->in_end > c->in_pos || input_pending(c)) {
        c->state = HD_CONN_READ_HEAD; /* a pipelined request is waiting */
        return CONN_CONTINUE;
    }
    c->in_pos = c->in_end = 0;
    c->state = HD_CONN_KEEPALIVE;
    set_deadline(c, hd_core_sconf(c->server)->keepalive_timeout_ms);
    hd_sb_set_state(HD_SB_BUSY_KEEPALIVE);
    return HD_WANT_IDLE;
}

/* Reads and drops input until the client closes or the linger time ends. */
static int linger(hd_conn_t *c)
{
    for (;;) {
        c->in_pos = c->in_end = 0;
        ssize_t n = conn_read(c);
        if (n > 0) {
            continue;
        }
        if (n < 0 && errno == EAGAIN) {
            return HD_WANT_READ;
        }
        c->state = HD_CONN_CLOSED;
        return CONN_CONTINUE;
    }
}

hd_conn_want_t hd_conn_process(hd_conn_t *c)
{
    for (;;) {
        int w;
        switch (c->state) {
        case HD_CONN_KEEPALIVE:
            /*
             * Even when stopping, a request that has already arrived is
             * served (its response says close): the client sent it on an
             * open connection and would see it dropped unanswered. read_head
             * closes the connection if nothing is there.
             */
            c->state = HD_CONN_READ_HEAD;
            /* fall through */
        case HD_CONN_READ_HEAD:
            w = read_head(c);
            break;
        case HD_CONN_READ_BODY:
            w = read_body(c);
            break;
        case HD_CONN_WRITE:
            w = write_response(c);
            break;
        case HD_CONN_LINGER:
            w = linger(c);
            break;
        case HD_CONN_CLOSED:
        default:
            return HD_WANT_CLOSE;
        }
        if (w != CONN_CONTINUE) {
            return (hd_conn_want_t)w;
        }
    }
}

hd_conn_want_t hd_conn_timed_out(hd_conn_t *c)
{
    if (c->read_phase != HD_READ_NONE && c->read_limit_ms > 0 &&
        c->deadline_ms == c->read_limit_ms && c->read_limit_msg != NULL) {
        hd_log_client_error(HD_LOG_INFO, "reqtimeout", c->client_ip, c->client_port, "%s",
                            c->read_limit_msg);
    }
    switch (c->state) {
    case HD_CONN_READ_HEAD:
    case HD_CONN_READ_BODY:
        if (c->r != NULL) {
            c->linger = false;
            respond_error(c, 408);
            c->linger = false;
            return hd_conn_process(c);
        }
        break;
    default:
        break;
    }
    if (c->state == HD_CONN_WRITE) {
        c->aborted = true;
        finish_request(c);
    }
    c->state = HD_CONN_CLOSED;
    return HD_WANT_CLOSE;
}

void hd_conn_close(hd_conn_t *c)
{
    if (c->r != NULL) {
        if (c->state == HD_CONN_WRITE) {
            c->aborted = true;
            finish_request(c);
        } else {
            hd_pool_destroy(c->r->pool);
            c->r = NULL;
        }
    }
    hd_sb_set_state(HD_SB_CLOSING);
    c->io->close(c);
    hd_pool_destroy(c->pool);
}

/* When the calling thread last flushed (monotonic µs). */
static __thread int64_t last_flush_us;

void hd_modules_flush_due(hd_server_t *s)
{
    if (hd_now_mono_us() - last_flush_us >= HD_FLUSH_INTERVAL_US) {
        hd_modules_flush(s);
    }
}

void hd_modules_flush(hd_server_t *s)
{
    hd_module_t *m;
    last_flush_us = hd_now_mono_us();
    /* an idle point: files nobody asked for in a while are closed too */
    hd_file_cache_expire(hd_now_mono_us() / 1000, HD_FILE_CACHE_IDLE_MS);
    HD_FOR_EACH_LOADED_MODULE(s, m)
    {
        if (m->flush != NULL) {
            m->flush(s);
        }
    }
}

void hd_modules_master_tick(hd_server_t *s)
{
    hd_module_t *m;
    HD_FOR_EACH_LOADED_MODULE(s, m)
    {
        if (m->master_tick != NULL) {
            m->master_tick(s);
        }
    }
}

void hd_conn_serve(hd_conn_t *c, void (*on_idle)(hd_server_t *s))
{
    hd_server_t *s = c->server;
    hd_conn_want_t w = hd_conn_process(c);
    while (w != HD_WANT_CLOSE) {
        struct pollfd pfd = {.fd = c->fd, .events = w == HD_WANT_WRITE ? POLLOUT : POLLIN};
        int left = hd_conn_timeout_ms(c);
        /* Idle keep-alive waits are sliced so buffered logs get flushed. */
        int slice = (w == HD_WANT_IDLE && left > 1000) ? 1000 : left;
        int n = hd_poll(&pfd, 1, slice);
        if (n > 0) {
            w = hd_conn_process(c);
        } else if (n == 0) {
            if (slice < left) {
                if (on_idle != NULL) {
                    on_idle(s);
                }
                continue;
            }
            w = hd_conn_timed_out(c);
        } else if (errno == EINTR) {
            if (stopping() && c->state == HD_CONN_KEEPALIVE) {
                break;
            }
        } else {
            break;
        }
    }
    hd_conn_close(c);
}
