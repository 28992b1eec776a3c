/*
 * Access logs: the LogFormat compiler and renderer on a fake request, and
 * mod_log_config's directives, file handling and per-thread buffering.
 */
#include "test.h"

#include "config.h"
#include "core.h"
#include "log_config/log_format.h"
#include "module.h"
#include "pool.h"
#include "request.h"
#include "sys.h"
#include "table.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define T_START 971186136 /* 10/Oct/2000:13:55:36 UTC */
#define MONO_START 5000000

static hd_pool_t *pool;

static hd_server_t *make_server(const char *server_name)
{
    hd_server_t *s = hd_pcalloc(pool, sizeof(*s));
    s->pool = hd_pool_create();
    s->server_root = "/tmp";
    hd_core_server_conf_t *cs = hd_pcalloc(s->pool, sizeof(*cs));
    cs->server_name = server_name;
    s->module_config[hd_core_module.index] = cs;
    s->module_config[hd_log_config_module.index] =
        hd_log_config_module.create_server_config(s->pool, s);
    return s;
}

static hd_request_t *make_request(hd_server_t *s)
{
    hd_conn_t *c = hd_pcalloc(pool, sizeof(*c));
    hd_request_t *r = hd_pcalloc(pool, sizeof(*r));
    strcpy(c->client_ip, "192.0.2.7");
    c->client_port = 54321;
    strcpy(c->local_ip, "127.0.0.1");
    c->local_port = 8080;
    c->requests = 1;
    c->server = s;
    r->pool = pool;
    r->c = c;
    r->server = s;
    r->method = HD_M_GET;
    r->method_name = "GET";
    r->the_request = "GET /index.html?x=1 HTTP/1.1";
    r->unparsed_uri = "/index.html?x=1";
    r->uri = "/index.html";
    r->args = "x=1";
    r->protocol = "HTTP/1.1";
    r->proto_num = 1001;
    r->hostname = "example.org";
    r->headers_in = hd_table_make(pool, 8);
    hd_table_add(r->headers_in, "Host", "example.org");
    hd_table_add(r->headers_in, "Referer", "http://ref.example/");
    hd_table_add(r->headers_in, "User-Agent", "curl/8.0");
    r->start.tv_sec = T_START;
    r->start.tv_nsec = 123456789;
    r->start_mono_us = MONO_START;
    r->status = 200;
    r->headers_out = hd_table_make(pool, 8);
    r->content_type = "text/html; charset=utf-8";
    r->content_length = 1234;
    r->body_bytes_sent = 1234;
    r->bytes_sent = 1500;
    r->keepalive = true;
    return r;
}

/* Renders @fmt for @r (ending @dur_us after it started), without the newline. */
static const char *render_at(const char *fmt, const hd_request_t *r, int64_t dur_us)
{
    const char *err = NULL;
    hd_log_format_t *f = hd_log_format_compile(pool, fmt, &err);
    if (f == NULL) {
        return hd_psprintf(pool, "ERROR: %s", err);
    }
    int64_t end = r->start_mono_us + dur_us;
    size_t n = hd_log_format_render(f, r, end, NULL, 0);
    char *buf = hd_pnalloc(pool, n + 1);
    CHECK_INT(hd_log_format_render(f, r, end, buf, n), n);
    /* a short buffer gets a cut line but the full length back */
    if (n > 3) {
        char small[3];
        CHECK_INT(hd_log_format_render(f, r, end, small, sizeof(small)), n);
        CHECK(memcmp(small, buf, sizeof(small)) == 0);
    }
    CHECK(n > 0 && buf[n - 1] == '\n');
    buf[n > 0 ? n - 1 : 0] = '\0';
    return buf;
}

static const char *render(const char *fmt, const hd_request_t *r)
{
    return render_at(fmt, r, 1234567);
}

static const char *compile_error(const char *fmt)
{
    const char *err = NULL;
    if (hd_log_format_compile(pool, fmt, &err) != NULL) {
        return "(compiled)";
    }
    return err;
}

static void test_common_combined(void)
{
    hd_server_t *s = make_server("www.example.com");
    hd_request_t *r = make_request(s);
    CHECK_STR(render(hd_log_format_predefined("common"), r),
              "192.0.2.7 - - [10/Oct/2000:13:55:36 +0000] \"GET /index.html?x=1 HTTP/1.1\" "
              "200 1234");
    CHECK_STR(render(hd_log_format_predefined("combined"), r),
              "192.0.2.7 - - [10/Oct/2000:13:55:36 +0000] \"GET /index.html?x=1 HTTP/1.1\" "
              "200 1234 \"http://ref.example/\" \"curl/8.0\"");
    CHECK_STR(hd_log_format_predefined("CLF"), HD_LOG_FORMAT_DEFAULT);
    CHECK(hd_log_format_predefined("nosuch") == NULL);

    /* Apache's own example: a zone 7 hours west of UTC */
    setenv("TZ", "XXX7", 1);
    tzset();
    r->start.tv_sec = 971211336;
    CHECK_STR(render("%t", r), "[10/Oct/2000:13:55:36 -0700]");
    setenv("TZ", "UTC0", 1);
    tzset();
    r->start.tv_sec = T_START + 3600;
    CHECK_STR(render("%t", r), "[10/Oct/2000:14:55:36 +0000]");
    hd_pool_destroy(s->pool);
}

static void test_directives(void)
{
    hd_server_t *s = make_server("www.example.com:8443");
    hd_request_t *r = make_request(s);
    char want[64];

    CHECK_STR(render("%%", r), "%");
    CHECK_STR(render("100%% %a", r), "100% 192.0.2.7");
    CHECK_STR(render("%a %{c}a %h %A", r), "192.0.2.7 192.0.2.7 192.0.2.7 127.0.0.1");
    CHECK_STR(render("%B %b %O", r), "1234 1234 1500");
    CHECK_STR(render("%D %T %{s}T %{ms}T %{us}T %{MS}T", r),
              "1234567 1 1 1234 1234567 1234");
    CHECK_STR(render_at("%D %T", r, 999), "999 0");
    CHECK_STR(render("%H %l %u %m", r), "HTTP/1.1 - - GET");
    CHECK_STR(render("%p %{canonical}p %{local}p %{remote}p", r), "8443 8443 8080 54321");
    snprintf(want, sizeof(want), "%d %d", (int)getpid(), (int)getpid());
    CHECK_STR(render("%P %{pid}P", r), want);
    snprintf(want, sizeof(want), "%d %x", (int)gettid(), (unsigned)gettid());
    CHECK_STR(render("%{tid}P %{hextid}P", r), want);
    CHECK_STR(render("%q|%r|%U", r), "?x=1|GET /index.html?x=1 HTTP/1.1|/index.html");
    CHECK_STR(render("%v %V", r), "www.example.com example.org");
    CHECK_STR(render("%X %k", r), "+ 0");
    CHECK_STR(render("%f %R", r), "- -");
    r->filename = "/srv/www/index.html";
    r->handler = "server-status";
    CHECK_STR(render("%f %R", r), "/srv/www/index.html server-status");

    /* time: begin (default) and end, CLF, strftime and the absolute forms */
    CHECK_STR(render("%t %{begin}t", r),
              "[10/Oct/2000:13:55:36 +0000] [10/Oct/2000:13:55:36 +0000]");
    CHECK_STR(render("%{%Y-%m-%d %H:%M:%S}t|%{begin:%H}t", r), "2000-10-10 13:55:36|13");
    CHECK_STR(render("%{sec}t %{msec}t %{usec}t", r),
              "971186136 971186136123 971186136123456");
    CHECK_STR(render("%{msec_frac}t %{usec_frac}t", r), "123 123456");
    CHECK_STR(render_at("%{end:sec}t %{end:usec_frac}t %{end}t", r, 1900000),
              "971186138 023456 [10/Oct/2000:13:55:38 +0000]");

    /* connection status and keep-alive count */
    r->c->requests = 3;
    CHECK_STR(render("%k", r), "2");
    r->keepalive = false;
    CHECK_STR(render("%X", r), "-");
    r->c->aborted = true;
    CHECK_STR(render("%X", r), "X");

    /* %q: no query string is empty, an empty one is "?" */
    r->args = NULL;
    CHECK_STR(render("[%q]", r), "[]");
    r->args = "";
    CHECK_STR(render("[%q]", r), "[?]");

    /* %V falls back to ServerName; ports are not part of either name */
    r->hostname = "example.org:8080";
    CHECK_STR(render("%V", r), "example.org");
    r->hostname = "[::1]:8080";
    CHECK_STR(render("%V", r), "[::1]");
    r->hostname = NULL;
    CHECK_STR(render("%V", r), "www.example.com");
    hd_core_sconf(s)->server_name = "www.example.com";
    CHECK_STR(render("%p", r), "8080");
    hd_pool_destroy(s->pool);
}

/* The cached process id is not inherited by a forked child. */
static void test_pid_after_fork(void)
{
    hd_server_t *s = make_server("www.example.com");
    hd_request_t *r = make_request(s);
    char want[32];
    snprintf(want, sizeof(want), "%d", (int)getpid());
    CHECK_STR(render("%P", r), want);
    pid_t pid = hd_fork();
    if (pid == 0) {
        snprintf(want, sizeof(want), "%d", (int)getpid());
        _exit(strcmp(render("%P", r), want) == 0 ? 0 : 1);
    }
    int status = -1;
    CHECK(pid > 0 && hd_waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    hd_pool_destroy(s->pool);
}

static void test_bytes_and_status(void)
{
    hd_server_t *s = make_server("www.example.com");
    hd_request_t *r = make_request(s);

    r->body_bytes_sent = 0;
    r->bytes_sent = 180;
    CHECK_STR(render("%b %B %O", r), "- 0 180");

    /* an ErrorDocument redirect: %s is the original status, %>s the final */
    r->orig_status = 404;
    r->status = 200;
    r->orig_uri = "/missing.html";
    r->uri = "/errors/404.html";
    CHECK_STR(render("%s %>s %<s", r), "404 200 404");
    CHECK_STR(render("%U %>U %<U", r), "/missing.html /errors/404.html /missing.html");
    r->orig_status = 0;
    r->orig_uri = NULL;
    CHECK_STR(render("%s %>s %U", r), "200 200 /errors/404.html");
    r->status = 0;
    CHECK_STR(render("%s", r), "-");

    /* status conditions: the item is "-" unless the (final) status matches */
    r->status = 200;
    CHECK_STR(render("%400,501{User-Agent}i|%!200,304{Referer}i|%200m", r), "-|-|GET");
    r->status = 501;
    CHECK_STR(render("%400,501{User-Agent}i|%!200,304{Referer}i|%!501m", r),
              "curl/8.0|http://ref.example/|-");
    hd_pool_destroy(s->pool);
}

static void test_headers_and_escaping(void)
{
    hd_server_t *s = make_server("www.example.com");
    hd_request_t *r = make_request(s);

    CHECK_STR(render("%{referer}i|%{X-None}i", r), "http://ref.example/|-");
    hd_table_set(r->headers_in, "User-Agent", "a\"b\\c\n\x01\xff\t\r\v\b z");
    CHECK_STR(render("%{User-Agent}i", r), "a\\\"b\\\\c\\n\\x01\\xff\\t\\r\\v\\b z");
    r->the_request = "GET /a\"b HTTP/1.1";
    CHECK_STR(render("%r", r), "GET /a\\\"b HTTP/1.1");
    r->uri = "/caf\xc3\xa9";
    CHECK_STR(render("%U", r), "/caf\\xc3\\xa9");

    /* response headers, including those the core writes from request fields */
    CHECK_STR(render("%{Content-Type}o %{Content-Length}o %{ETag}o", r), "text/html 1234 -");
    hd_table_add(r->headers_out, "ETag", "\"abc\"");
    hd_table_add(r->headers_out, "Set-Cookie", "a=1");
    hd_table_add(r->headers_out, "Set-Cookie", "b=2");
    hd_table_add(r->headers_out, "Content-Length", "99");
    CHECK_STR(render("%{etag}o|%{Set-Cookie}o|%{Content-Length}o", r),
              "\\\"abc\\\"|a=1, b=2|99");
    r->mtime = 784111777;
    CHECK_STR(render("%{Last-Modified}o", r), "Sun, 06 Nov 1994 08:49:37 GMT");

    /* cookies */
    hd_table_add(r->headers_in, "Cookie", "a=1; sid = xy\"z ;c=3");
    CHECK_STR(render("%{sid}C|%{c}C|%{A}C|%{none}C", r), "xy\\\"z|3|1|-");

    /* literal escapes in the format itself */
    CHECK_STR(render("a\\tb\\nc\\\\d\\\"e\\qf\\", r), "a\tb\nc\\d\"e\\qf\\");
    hd_pool_destroy(s->pool);
}

static void test_errors(void)
{
    CHECK_STR(compile_error("%h %Z"), "Unrecognized LogFormat directive %Z");
    CHECK_STR(compile_error("%>"), "Ran off end of LogFormat parsing args to some directive");
    CHECK_STR(compile_error("%"), "Ran off end of LogFormat parsing args to some directive");
    CHECK_STR(compile_error("%{Referer"),
              "Ran off end of LogFormat parsing args to some directive");
    CHECK_STR(compile_error("%I"), "LogFormat directive %I (bytes received) is not supported");
    CHECK_STR(compile_error("%{FOO}e"),
              "LogFormat directive %e (environment variables) is not supported");
    CHECK_STR(compile_error("%{min}T"),
              "Unrecognized time unit 'min' in %{min}T (use s, ms or us)");
    CHECK_STR(compile_error("%{x}p"),
              "Unrecognized port 'x' in %{x}p (use canonical, local or remote)");
    CHECK_STR(compile_error("%{x}P"), "Unrecognized id 'x' in %{x}P (use pid, tid or hextid)");
    CHECK_STR(compile_error("%i"), "LogFormat directive %i needs a name: %{Name}i");
    CHECK_STR(compile_error("%1000s"), "LogFormat status conditions must be 3-digit statuses");
    CHECK_STR(compile_error("%h %{X}i %>s"), "(compiled)");
}

/* ---------------------------------------------------------------------- */
/* the module: directives, files, buffering */

static char tmpdir[64];

static const hd_command_t *find_cmd(const char *name)
{
    for (const hd_command_t *c = hd_log_config_module.commands; c->name; c++) {
        if (strcmp(c->name, name) == 0) {
            return c;
        }
    }
    return NULL;
}

/* Runs directive @name with up to three arguments; returns its error or NULL. */
static const char *directive(hd_server_t *s, const char *name, const char *a1, const char *a2,
                             const char *a3)
{
    char *argv[3] = {(char *)a1, (char *)a2, (char *)a3};
    int argc = a3 ? 3 : a2 ? 2 : 1;
    hd_cmd_parms_t cmd = {
        .server = s, .pool = s->pool, .temp_pool = s->pool, .module = &hd_log_config_module,
        .file = "test.conf", .line = 7, .context = HD_CTX_MAIN,
    };
    cmd.cmd = find_cmd(name);
    if (cmd.cmd == NULL) {
        return "no such directive";
    }
    return cmd.cmd->fn(&cmd, s->module_config[hd_log_config_module.index], argc, argv);
}

static char *read_file(const char *path, size_t *len)
{
    static char buf[1 << 21];
    int fd = hd_open(path, O_RDONLY, 0);
    size_t n = 0;
    ssize_t got;
    while (fd >= 0 && (got = hd_read(fd, buf + n, sizeof(buf) - 1 - n)) > 0) {
        n += (size_t)got;
    }
    if (fd >= 0) {
        hd_close(fd);
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

static size_t count_lines(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        n += s[i] == '\n';
    }
    return n;
}

/* A configured server logging to a new file with @fmt. */
/* A server with one access log, BufferedLogs On (the buffering tests). */
static hd_server_t *logging_server(const char *file, const char *fmt, char **path)
{
    hd_server_t *s = make_server("www.example.com");
    CHECK(directive(s, "BufferedLogs", "on", NULL, NULL) == NULL);
    *path = hd_psprintf(pool, "%s/%s", tmpdir, file);
    CHECK(directive(s, "CustomLog", *path, fmt, NULL) == NULL);
    CHECK_INT(hd_log_config_module.post_config(s), HD_OK);
    CHECK_INT(hd_log_config_module.open_logs(s), HD_OK);
    return s;
}

static void test_config(void)
{
    hd_server_t *s = make_server("www.example.com");

    CHECK_STR(directive(s, "CustomLog", "|/usr/bin/rotatelogs", "common", NULL),
              "CustomLog: piped logs are not supported");
    CHECK_STR(directive(s, "CustomLog", "logs/a", "common", "env=!dontlog"),
              "CustomLog: env= conditions are not supported");
    CHECK_STR(directive(s, "CustomLog", "logs/a", "common", "expr=true"),
              "CustomLog: expr= conditions are not supported");
    CHECK_STR(directive(s, "CustomLog", "logs/a", "common", "bogus"),
              "CustomLog: error in condition clause 'bogus'");
    CHECK_STR(directive(s, "CustomLog", "logs/a", "%h %Q", NULL),
              "Unrecognized LogFormat directive %Q");
    CHECK_STR(directive(s, "LogFormat", "%h %Q", "mine", NULL),
              "Unrecognized LogFormat directive %Q");
    CHECK_STR(directive(s, "TransferLog", "|cat", NULL, NULL),
              "TransferLog: piped logs are not supported");
    hd_pool_destroy(s->pool);

    /* nicknames may be defined after use; unknown ones fail after reading */
    s = make_server("www.example.com");
    CHECK(directive(s, "CustomLog", "a.log", "nosuch", NULL) == NULL);
    CHECK_INT(hd_log_config_module.post_config(s), HD_ERROR);
    hd_pool_destroy(s->pool);

    /* a file that cannot be opened */
    s = make_server("www.example.com");
    CHECK(directive(s, "CustomLog", "/nonexistent-dir/x/access.log", "common", NULL) == NULL);
    CHECK_INT(hd_log_config_module.post_config(s), HD_OK);
    CHECK_INT(hd_log_config_module.open_logs(s), HD_ERROR);
    hd_pool_destroy(s->pool);

    /* forward nickname, TransferLog with the default format, relative paths */
    s = make_server("www.example.com");
    s->server_root = tmpdir;
    CHECK(directive(s, "CustomLog", "fwd.log", "mine", NULL) == NULL);
    CHECK(directive(s, "LogFormat", "%m %U", "mine", NULL) == NULL);
    CHECK(directive(s, "LogFormat", "%>s mine=%m", "mine", NULL) == NULL);
    CHECK(directive(s, "LogFormat", "%m!", NULL, NULL) == NULL);
    CHECK(directive(s, "TransferLog", "xfer.log", NULL, NULL) == NULL);
    CHECK(directive(s, "CustomLog", "comb.log", "combined", NULL) == NULL);
    CHECK_INT(hd_log_config_module.post_config(s), HD_OK);
    CHECK_INT(hd_log_config_module.open_logs(s), HD_OK);
    hd_request_t *r = make_request(s);
    hd_log_config_transaction_at(r, MONO_START + 10);
    hd_log_config_module.flush(s);
    size_t len;
    CHECK_STR(read_file(hd_psprintf(pool, "%s/fwd.log", tmpdir), &len), "200 mine=GET\n");
    CHECK_STR(read_file(hd_psprintf(pool, "%s/xfer.log", tmpdir), &len), "GET!\n");
    CHECK_STR(read_file(hd_psprintf(pool, "%s/comb.log", tmpdir), &len),
              "192.0.2.7 - - [10/Oct/2000:13:55:36 +0000] \"GET /index.html?x=1 HTTP/1.1\" "
              "200 1234 \"http://ref.example/\" \"curl/8.0\"\n");
    hd_pool_destroy(s->pool);

    /* LogFormat naming a nickname sets the default for TransferLog */
    s = make_server("www.example.com");
    CHECK(directive(s, "LogFormat", "common", NULL, NULL) == NULL);
    CHECK_INT(hd_log_config_module.post_config(s), HD_OK);
    hd_pool_destroy(s->pool);
    s = make_server("www.example.com");
    CHECK(directive(s, "LogFormat", "nosuch", NULL, NULL) == NULL);
    CHECK_INT(hd_log_config_module.post_config(s), HD_ERROR);
    hd_pool_destroy(s->pool);
}

static void test_buffering(void)
{
    char *path;
    hd_server_t *s = logging_server("buf.log", "%m %U %>s", &path);
    hd_request_t *r = make_request(s);
    size_t len;
    char *data;

    /* 100 lines within a second: no write until the flush hook, then exactly one */
    uint64_t w0 = hd_sys_counters[HD_SYS_WRITE];
    for (int i = 0; i < 100; i++) {
        hd_log_config_transaction_at(r, MONO_START + 1000 * i);
    }
    CHECK_INT(hd_sys_counters[HD_SYS_WRITE] - w0, 0);
    read_file(path, &len);
    CHECK_INT(len, 0);
    hd_log_config_module.flush(s);
    CHECK_INT(hd_sys_counters[HD_SYS_WRITE] - w0, 1);
    data = read_file(path, &len);
    CHECK_INT(len, 100 * strlen("GET /index.html 200\n"));
    CHECK_INT(count_lines(data, len), 100);
    CHECK(strncmp(data, "GET /index.html 200\nGET /index.html 200\n", 40) == 0);
    hd_log_config_module.flush(s);
    CHECK_INT(hd_sys_counters[HD_SYS_WRITE] - w0, 1);

    /* the oldest line is a second old when a new one comes: both go out in one write */
    w0 = hd_sys_counters[HD_SYS_WRITE];
    hd_log_config_transaction_at(r, 50000000);
    hd_log_config_transaction_at(r, 50999999);
    CHECK_INT(hd_sys_counters[HD_SYS_WRITE] - w0, 0);
    hd_log_config_transaction_at(r, 51000000);
    CHECK_INT(hd_sys_counters[HD_SYS_WRITE] - w0, 1);
    data = read_file(path, &len);
    CHECK_INT(count_lines(data, len), 103);

    /* freeing the configuration writes what this thread holds and closes the file */
    w0 = hd_sys_counters[HD_SYS_WRITE];
    uint64_t c0 = hd_sys_counters[HD_SYS_CLOSE];
    hd_log_config_transaction_at(r, 52000000);
    hd_pool_destroy(s->pool);
    CHECK_INT(hd_sys_counters[HD_SYS_WRITE] - w0, 1);
    CHECK_INT(hd_sys_counters[HD_SYS_CLOSE] - c0, 1);
    data = read_file(path, &len);
    CHECK_INT(count_lines(data, len), 104);
}

static void test_overflow(void)
{
    char *path;
    hd_server_t *s = logging_server("big.log", "%{User-Agent}i", &path);
    hd_request_t *r = make_request(s);
    size_t len;
    char *data;

    /* 1000-byte lines: 32 fit in the buffer, the 33rd sends those 32 */
    char *ua = hd_pnalloc(pool, 1000);
    memset(ua, 'u', 999);
    ua[999] = '\0';
    hd_table_set(r->headers_in, "User-Agent", ua);
    uint64_t w0 = hd_sys_counters[HD_SYS_WRITE];
    for (int i = 0; i < 40; i++) {
        hd_log_config_transaction_at(r, MONO_START);
    }
    CHECK_INT(hd_sys_counters[HD_SYS_WRITE] - w0, 1);
    data = read_file(path, &len);
    CHECK_INT(len, 32 * 1000);
    hd_log_config_module.flush(s);
    data = read_file(path, &len);
    CHECK_INT(len, 40 * 1000);
    CHECK_INT(count_lines(data, len), 40);

    /* a line longer than the buffer is written alone, after the lines before it */
    char *huge = hd_pnalloc(pool, 40001);
    memset(huge, 'h', 40000);
    huge[40000] = '\0';
    w0 = hd_sys_counters[HD_SYS_WRITE];
    hd_table_set(r->headers_in, "User-Agent", "small");
    hd_log_config_transaction_at(r, MONO_START);
    hd_table_set(r->headers_in, "User-Agent", huge);
    hd_log_config_transaction_at(r, MONO_START);
    CHECK_INT(hd_sys_counters[HD_SYS_WRITE] - w0, 2);
    data = read_file(path, &len);
    CHECK_INT(len, 40 * 1000 + 6 + 40001);
    CHECK(strncmp(data + 40000, "small\nhhh", 9) == 0);
    CHECK(data[len - 1] == '\n' && data[len - 2] == 'h');
    hd_pool_destroy(s->pool);
}

static void test_unbuffered(void)
{
    hd_server_t *s = make_server("www.example.com");
    char *path = hd_psprintf(pool, "%s/unbuf.log", tmpdir);
    /* no BufferedLogs: Off, Apache's default */
    CHECK(directive(s, "CustomLog", path, "%m", NULL) == NULL);
    CHECK_INT(hd_log_config_module.post_config(s), HD_OK);
    CHECK_INT(hd_log_config_module.open_logs(s), HD_OK);
    hd_request_t *r = make_request(s);
    uint64_t w0 = hd_sys_counters[HD_SYS_WRITE];
    for (int i = 0; i < 3; i++) {
        hd_log_config_transaction_at(r, MONO_START);
    }
    CHECK_INT(hd_sys_counters[HD_SYS_WRITE] - w0, 3);
    size_t len;
    CHECK_STR(read_file(path, &len), "GET\nGET\nGET\n");
    hd_pool_destroy(s->pool);
}

/* Threads with their own buffers append to one file: every line stays whole. */
typedef struct {
    hd_server_t *s;
    hd_request_t *r;
} thread_arg_t;

static void *thread_main(void *data)
{
    thread_arg_t *a = data;
    for (int i = 0; i < 2000; i++) {
        hd_log_config_transaction_at(a->r, MONO_START + i * 1000);
    }
    hd_log_config_module.flush(a->s);
    return NULL;
}

static void test_threads(void)
{
    char *path;
    hd_server_t *s = logging_server("threads.log", "%{User-Agent}i %U", &path);
    pthread_t t[4];
    thread_arg_t args[4];
    for (int i = 0; i < 4; i++) {
        args[i].s = s;
        args[i].r = make_request(s);
        args[i].r->pool = NULL; /* no line is too long to be buffered */
        hd_table_set(args[i].r->headers_in, "User-Agent",
                     hd_psprintf(pool, "thread-%d-%0100d", i, 0));
        pthread_create(&t[i], NULL, thread_main, &args[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
    }
    size_t len;
    char *data = read_file(path, &len);
    CHECK_INT(count_lines(data, len), 8000);
    size_t bad = 0;
    for (char *line = data; line < data + len;) {
        char *nl = strchr(line, '\n');
        size_t n = (size_t)(nl - line);
        if (n != strlen("thread-0-") + 100 + strlen(" /index.html") ||
            strncmp(line, "thread-", 7) != 0 || strncmp(nl - 12, " /index.html", 12) != 0) {
            bad++;
        }
        line = nl + 1;
    }
    CHECK_INT(bad, 0);
    hd_pool_destroy(s->pool);
}

int main(void)
{
    setenv("TZ", "UTC0", 1);
    tzset();
    hd_modules_init();
    pool = hd_pool_create();
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_log_format.XXXXXX");
    if (mkdtemp(tmpdir) == NULL) {
        perror("mkdtemp");
        return 1;
    }

    RUN(test_common_combined);
    RUN(test_directives);
    RUN(test_pid_after_fork);
    RUN(test_bytes_and_status);
    RUN(test_headers_and_escaping);
    RUN(test_errors);
    RUN(test_config);
    RUN(test_buffering);
    RUN(test_overflow);
    RUN(test_unbuffered);
    RUN(test_threads);

    const char *files[] = {"fwd.log", "xfer.log", "comb.log", "buf.log", "big.log",
                           "unbuf.log", "threads.log"};
    for (size_t i = 0; i < HD_ARRAY_SIZE(files); i++) {
        hd_unlink(hd_psprintf(pool, "%s/%s", tmpdir, files[i]));
    }
    rmdir(tmpdir);
    hd_pool_destroy(pool);
    TEST_DONE();
}
