/*
 * The output side of a request: filters between the handler and the
 * connection, and the connection's end of the chain. Without filters the
 * head and the handler's chain go to the connection as they are (one
 * allocation for the head, a link per buffer), which is the path nearly
 * every static request takes.
 */
#include "output.h"

#include "buf.h"
#include "filter.h"
#include "log.h"
#include "module.h"
#include "pool.h"
#include "request.h"
#include "response.h"
#include "table.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- the chain ------------------------------------------------------- */

hd_filter_t *hd_filter_insert(hd_request_t *r, const hd_filter_type_t *type, void *ctx)
{
    hd_filter_t *f = hd_pcalloc(r->pool, sizeof(*f));
    hd_filter_t **pp = &r->filters;

    f->type = type;
    f->r = r;
    f->ctx = ctx;
    while (*pp != NULL && (*pp)->type->stage <= type->stage) {
        pp = &(*pp)->next;
    }
    f->next = *pp;
    *pp = f;
    return f;
}

hd_filter_t *hd_filter_find(const hd_request_t *r, const hd_filter_type_t *type)
{
    for (hd_filter_t *f = r->filters; f != NULL; f = f->next) {
        if (f->type == type) {
            return f;
        }
    }
    return NULL;
}

bool hd_chain_ends_body(const hd_chain_t *in)
{
    for (; in != NULL; in = in->next) {
        if (in->buf->last_buf) {
            return true;
        }
    }
    return false;
}

void hd_vary_add(hd_request_t *r, const char *token)
{
    const char *vary = hd_table_get(r->headers_out, "Vary");
    size_t tl = strlen(token);

    if (vary == NULL) {
        hd_table_set(r->headers_out, "Vary", token);
        return;
    }
    for (const char *p = vary; *p != '\0';) {
        while (*p == ' ' || *p == '\t' || *p == ',') {
            p++;
        }
        const char *start = p;
        while (*p != '\0' && *p != ',') {
            p++;
        }
        const char *end = p;
        while (end > start && (end[-1] == ' ' || end[-1] == '\t')) {
            end--;
        }
        if (((size_t)(end - start) == tl && strncasecmp(start, token, tl) == 0) ||
            (end - start == 1 && *start == '*')) {
            return;
        }
    }
    hd_table_set(r->headers_out, "Vary", hd_pstrcat(r->pool, vary, ",", token, NULL));
}

/* ---- the connection's end -------------------------------------------- */

static void queue_buf(hd_request_t *r, hd_buf_t *b)
{
    hd_conn_t *c = r->c;
    hd_chain_t *cl = hd_palloc(r->pool, sizeof(*cl));

    cl->buf = b;
    cl->next = NULL;
    /* the writer advances c->out past what it sent; once all is sent the
     * old tail is no longer part of it */
    if (c->out == NULL) {
        r->out_tail = &c->out;
    }
    *r->out_tail = cl;
    r->out_tail = &cl->next;
}

/* False when the head holds a field no response may carry (response.h). */
static bool queue_head(hd_request_t *r)
{
    hd_buf_t *head = hd_response_head(r, r->keepalive_possible);

    if (head == NULL) {
        return false;
    }
    r->c->head_bytes = (size_t)(head->last - head->pos);
    r->c->out = NULL;
    queue_buf(r, head);
    r->head_queued = true;
    return true;
}

static void queue_text(hd_request_t *r, const char *text, size_t len)
{
    queue_buf(r, hd_buf_wrap(r->pool, text, len));
}

static void replace_with_500(hd_request_t *r);

/* The end of the chain: the head before the first body byte, then the body,
 * chunked when its length is unknown on HTTP/1.1. */
static int connection_end(hd_request_t *r, hd_chain_t *in)
{
    bool last = hd_chain_ends_body(in);

    if (r->output_done) {
        return HD_OK;
    }
    if (!r->head_queued) {
        bool body = hd_response_has_body(r) && !r->header_only;
        if (r->content_length < 0 && last) {
            r->content_length = (int64_t)hd_chain_size(in);
        }
        r->chunked = body && r->content_length < 0 && r->proto_num >= 1001;
        if (!queue_head(r)) {
            replace_with_500(r);
            return HD_OK;
        }
    }
    if (hd_response_has_body(r) && !r->header_only) {
        off_t n = hd_chain_size(in);
        if (r->chunked && n > 0) {
            char *size_line = hd_psprintf(r->pool, "%llx\r\n", (unsigned long long)n);
            queue_text(r, size_line, strlen(size_line));
        }
        for (hd_chain_t *l = in; l != NULL; l = l->next) {
            if (hd_buf_size(l->buf) > 0) {
                queue_buf(r, l->buf);
            }
        }
        if (r->chunked && n > 0) {
            queue_text(r, "\r\n", 2);
        }
        if (r->chunked && last) {
            queue_text(r, "0\r\n\r\n", 5);
        }
    }
    if (last) {
        r->output_done = true;
    }
    return hd_chain_memory_size(r->c->out) > HD_OUTPUT_HIGH_WATER ? HD_AGAIN : HD_OK;
}

int hd_filter_pass(hd_filter_t *f, hd_chain_t *out)
{
    if (f->next != NULL) {
        return f->next->type->run(f->next, out);
    }
    return connection_end(f->r, out);
}

/* ---- starting and resuming ------------------------------------------- */

static int run_chain(hd_request_t *r, hd_chain_t *in)
{
    int rv = r->filters->type->run(r->filters, in);
    return rv == HD_AGAIN ? HD_OK : rv;
}

/* A filter failed, or left an invalid head, before the head left: the client gets a plain 500. */
static void replace_with_500(hd_request_t *r)
{
    r->filters = NULL;
    r->chunked = false;
    hd_table_clear(r->headers_out);
    hd_response_error_page(r, 500);
    r->c->out = NULL;
    (void)queue_head(r); /* the server's own page: nothing in it can be refused */
    if (!r->header_only) {
        for (hd_chain_t *l = r->body; l != NULL; l = l->next) {
            queue_buf(r, l->buf);
        }
    }
    r->output_done = true;
}

int hd_output_start(hd_request_t *r, bool keepalive_possible)
{
    hd_module_t **m;

    r->keepalive_possible = keepalive_possible;
    for (m = r->server->hooks->insert_filter; *m != NULL; m++) {
        (*m)->insert_filter(r);
    }
    if (r->filters == NULL) {
        if (!queue_head(r)) {
            replace_with_500(r);
            return HD_OK;
        }
        if (!r->header_only) {
            for (hd_chain_t *l = r->body; l != NULL; l = l->next) {
                queue_buf(r, l->buf);
            }
        }
        r->output_done = true;
        return HD_OK;
    }

    /* the body, ended by a last_buf the filters pass on */
    hd_chain_t *body = r->body;
    hd_chain_t *last = hd_chain_last(body);
    if (last == NULL || !last->buf->last_buf) {
        hd_chain_append(r->pool, &body, hd_buf_last(r->pool));
    }
    r->body = NULL;
    int rv = run_chain(r, body);
    if (rv == HD_OK) {
        return HD_OK;
    }
    if (!r->head_queued) {
        hd_log_rerror(r, HD_LOG_ERR, "core", "an output filter failed on %s", r->uri ? r->uri : "-");
        replace_with_500(r);
        return HD_OK;
    }
    return HD_ERROR;
}

bool hd_output_done(const hd_request_t *r)
{
    return r->output_done;
}

int hd_output_resume(hd_request_t *r)
{
    if (r->output_done) {
        return HD_OK;
    }
    int rv = run_chain(r, NULL);
    if (rv != HD_OK) {
        return HD_ERROR;
    }
    if (!r->output_done && r->c->out == NULL) {
        hd_log_rerror(r, HD_LOG_ERR, "core",
                      "output filters stalled: none produced output or ended the body of %s",
                      r->uri ? r->uri : "-");
        return HD_ERROR;
    }
    return HD_OK;
}
