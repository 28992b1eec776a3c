/*
 * The configuration reader, the core and authz_core directives, and the
 * per-request merge of sections. Runs in tests/unit: ServerRoot is the
 * working directory, fixtures are under conf/, and error cases are written
 * to a temporary file so every message can be checked with its file:line.
 */
#include "authz_core/authz_core.h"
#include "config.h"
#include "config_internal.h"
#include "request_config.h"
#include "core.h"
#include "log.h"
#include "module.h"
#include "pool.h"
#include "request.h"
#include "test.h"

#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <unistd.h>

static char root[PATH_MAX];
static char tmpdir[] = "/tmp/hd_test_config_XXXXXX";
static char tmpconf[256];

/* LoadModule, Listen and TypesConfig as -C directives, so test files can stay short. */
static const char *const base[] = {
    "LoadModule mpm_prefork_module modules/mod_mpm_prefork.so",
    "Listen 127.0.0.1:8080",
    "TypesConfig conf/config_test.types",
    NULL,
};
static const char *const types_only[] = {"TypesConfig conf/config_test.types", NULL};

static hd_server_t *read_with(const char *file, const char *const *pre, const char *const *post,
                              const char *const *defines, char **err)
{
    hd_config_args_t args = {
        .server_root = root,
        .conf_file = file,
        .defines = defines,
        .pre_directives = pre,
        .post_directives = post,
        .cmdline_log_level = -1,
    };
    *err = NULL;
    return hd_config_read(&args, 0, err);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

/* Reads @p text as a configuration file after the base -C directives. */
static hd_server_t *read_text(const char *text, const char *const *pre, char **err)
{
    write_file(tmpconf, text);
    return read_with(tmpconf, pre, NULL, NULL, err);
}

/* @p text must fail with "<tmpconf>:<line>: <msg>". */
static void expect_error_at(const char *text, unsigned line, const char *msg, int src_line)
{
    char *err;
    hd_server_t *s = read_text(text, base, &err);
    char want[8192];
    snprintf(want, sizeof(want), "%s:%u: %s", tmpconf, line, msg);
    if (s != NULL || err == NULL || strcmp(err, want) != 0) {
        fprintf(stderr, "test_config.c:%d: for config:\n%s", src_line, text);
    }
    CHECK(s == NULL);
    CHECK_STR(err, want);
    hd_config_free(s);
    free(err);
}
#define EXPECT_ERROR(text, line, msg) expect_error_at(text, line, msg, __LINE__)

static hd_server_t *must_read(const char *file, const char *const *pre, const char *const *defines)
{
    char *err;
    hd_server_t *s = read_with(file, pre, NULL, defines, &err);
    if (s == NULL) {
        fprintf(stderr, "unexpected error: %s\n", err);
    }
    free(err);
    return s;
}

static void test_basic(void)
{
    hd_server_t *s = must_read("conf/basic.conf", NULL, NULL);
    CHECK(s != NULL);
    if (s == NULL) {
        return;
    }
    const hd_core_server_conf_t *c = hd_core_sconf(s);
    char path[PATH_MAX + 64];
    CHECK_STR(s->server_root, root);
    snprintf(path, sizeof(path), "%s/conf/basic.conf", root);
    CHECK_STR(s->conf_file, path);
    CHECK(s->mpm != NULL);
    CHECK(s->mpm_module == hd_module_find("mpm_prefork_module"));
    CHECK(hd_module_loaded(s, hd_module_find("mpm_prefork_module")));
    CHECK_STR(c->server_name, "www.example.com");
    snprintf(path, sizeof(path), "%s/conf", root);
    CHECK_STR(c->document_root, path);
    CHECK_INT(c->timeout_s, 30);
    CHECK_INT(c->keepalive, 0);
    CHECK_INT(c->keepalive_timeout_ms, 250);
    CHECK_INT(c->max_keepalive_requests, 0);
    CHECK_INT(c->limits.max_request_line, 4096);
    CHECK_INT(c->limits.max_field_size, 2048);
    CHECK_INT(c->limits.max_fields, 50);
    CHECK_INT(c->server_tokens, HD_TOKENS_PROD);
    CHECK_STR(c->server_banner, "httpd");
    snprintf(path, sizeof(path), "%s/logs/error.log", root);
    CHECK_STR(c->error_log, path);
    snprintf(path, sizeof(path), "%s/run/httpd.pid", root);
    CHECK_STR(c->pid_file, path);
    CHECK_INT(c->log_level, HD_LOG_INFO);
    CHECK_INT(c->listen_backlog, 128);

    /* three listeners, in order, fd -1 */
    const hd_listen_t *l = s->listeners;
    CHECK(l != NULL && l->next != NULL && l->next->next != NULL && l->next->next->next == NULL);
    if (l != NULL && l->next != NULL && l->next->next != NULL) {
        const struct sockaddr_in *a4 = (const struct sockaddr_in *)&l->addr;
        CHECK_INT(a4->sin_family, AF_INET);
        CHECK_INT(ntohs(a4->sin_port), 8080);
        CHECK_INT(ntohl(a4->sin_addr.s_addr), 0x7f000001);
        CHECK_STR(l->text, "127.0.0.1:8080");
        CHECK_INT(l->fd, -1);
        const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)&l->next->addr;
        CHECK_INT(a6->sin6_family, AF_INET6);
        CHECK_INT(ntohs(a6->sin6_port), 8081);
        CHECK(IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr));
        a4 = (const struct sockaddr_in *)&l->next->next->addr;
        CHECK_INT(a4->sin_family, AF_INET);
        CHECK_INT(ntohs(a4->sin_port), 8082);
        CHECK_INT(a4->sin_addr.s_addr, INADDR_ANY);
    }

    const hd_core_dir_conf_t *d = s->dir_default[hd_core_module.index];
    CHECK_INT(hd_core_options(d), HD_OPT_INDEXES | HD_OPT_MULTIVIEWS);
    CHECK_INT(d->enable_sendfile, 0);
    CHECK_INT(d->limit_request_body, 0);
    CHECK(d->handler == NULL);
    CHECK_STR(hd_core_error_document(d, 404), "/missing.html");
    CHECK_STR(hd_core_error_document(d, 500), "Server broke, sorry");
    CHECK_STR(hd_core_error_document(d, 403), "http://example.com/denied");
    CHECK(hd_core_error_document(d, 401) == NULL); /* a full URL is refused for 401 */
    CHECK(hd_core_error_document(d, 410) == NULL);
    hd_config_free(s);
}

static void test_defaults(void)
{
    char *err;
    hd_server_t *s = read_text("# nothing but the base\n", base, &err);
    CHECK(s != NULL);
    if (s == NULL) {
        free(err);
        return;
    }
    const hd_core_server_conf_t *c = hd_core_sconf(s);
    char path[PATH_MAX + 64];
    CHECK_INT(c->timeout_s, 60);
    CHECK_INT(c->keepalive, 1);
    CHECK_INT(c->keepalive_timeout_ms, 5000);
    CHECK_INT(c->max_keepalive_requests, 100);
    CHECK_INT(c->limits.max_request_line, 8190);
    CHECK_INT(c->limits.max_field_size, 8190);
    CHECK_INT(c->limits.max_fields, 100);
    CHECK_INT(c->log_level, HD_LOG_WARNING);
    CHECK_INT(c->listen_backlog, 511);
    CHECK(c->error_log == NULL);
    CHECK(c->server_name != NULL && c->server_name[0] != '\0');
    CHECK_STR(c->server_banner, "httpd/" HD_VERSION " (Unix)");
    snprintf(path, sizeof(path), "%s/logs/httpd.pid", root);
    CHECK_STR(c->pid_file, path);
    snprintf(path, sizeof(path), "%s/htdocs", root);
    CHECK_STR(c->document_root, path);
    const hd_core_dir_conf_t *d = s->dir_default[hd_core_module.index];
    CHECK_INT(hd_core_options(d), HD_OPT_FOLLOWSYMLINKS);
    CHECK_INT(d->enable_sendfile, 1);
    CHECK_INT(d->limit_request_body, 1073741824);
    CHECK(s->sections == NULL);
    hd_config_free(s);

    static const struct {
        const char *arg;
        const char *banner;
    } tokens[] = {
        {"Major", "httpd/0"},           {"Minor", "httpd/0.1"},       {"Min", "httpd/0.1.0"},
        {"Minimal", "httpd/0.1.0"},     {"OS", "httpd/0.1.0 (Unix)"}, {"ProductOnly", "httpd"},
        {"full", "httpd/0.1.0 (Unix)"},
    };
    for (size_t i = 0; i < HD_ARRAY_SIZE(tokens); i++) {
        char text[64];
        snprintf(text, sizeof(text), "ServerTokens %s\n", tokens[i].arg);
        s = read_text(text, base, &err);
        CHECK(s != NULL);
        if (s != NULL) {
            CHECK_STR(hd_core_sconf(s)->server_banner, tokens[i].banner);
        }
        hd_config_free(s);
        free(err);
    }
}

static void test_lexer(void)
{
    static const struct {
        const char *text;
        const char *name;
    } cases[] = {
        {"ServerName \"a b\"\n", "a b"},
        {"ServerName 'it\\'s'\n", "it's"},
        {"ServerName \"say \\\"hi\\\"\"\n", "say \"hi\""},
        {"ServerName \\\n    joined\n", "joined"},
        {"ServerName back\\\\\nTimeout 3\n", "back\\"},
        {"  servername   lower-case-directive   \n", "lower-case-directive"},
        {"\r\n# comment\n\t# tab comment\nServerName crlf\r\n", "crlf"},
        {"ServerName x \\\n", "x"},
    };
    for (size_t i = 0; i < HD_ARRAY_SIZE(cases); i++) {
        char *err;
        hd_server_t *s = read_text(cases[i].text, base, &err);
        CHECK(s != NULL);
        if (s != NULL) {
            CHECK_STR(hd_core_sconf(s)->server_name, cases[i].name);
        } else {
            fprintf(stderr, "  %s\n", err);
        }
        hd_config_free(s);
        free(err);
    }
    /* '#' starts a comment only at the start of a line, as in Apache */
    EXPECT_ERROR("ServerName a # not a comment\n", 1,
                 "ServerName takes one argument, The hostname and port of the server");
    /* a continued line is reported at its first line */
    EXPECT_ERROR("\nServerName a \\\n b\n", 2,
                 "ServerName takes one argument, The hostname and port of the server");
}

static void test_include(void)
{
    hd_server_t *s = must_read("conf/include.conf", base, NULL);
    CHECK(s != NULL);
    if (s == NULL) {
        return;
    }
    /* 02-a.conf defines ORDER=a, then 10-b.conf appends b: sorted order */
    CHECK_STR(hd_core_sconf(s)->server_name, "ab");
    bool from_dir = false;
    for (const char *const *d = s->defines; *d != NULL; d++) {
        from_dir |= strcmp(*d, "FROM_DIR") == 0;
    }
    CHECK(from_dir);
    hd_config_free(s);

    char want[PATH_MAX * 2 + 200];
    char *err;
    s = read_with("conf/recurse.conf", base, NULL, NULL, &err);
    CHECK(s == NULL);
    snprintf(want, sizeof(want),
             "%s/conf/recurse.conf:1: Exceeded maximum include depth of 32, There appears to "
             "be a recursion.",
             root);
    CHECK_STR(err, want);
    free(err);

    /* an error inside an included file names that file and its line */
    snprintf(want, sizeof(want),
             "%s/conf/bad_inc.conf:2: Invalid command 'NoSuchDirective', perhaps misspelled or "
             "defined by a module not included in the server configuration",
             root);
    s = read_text("ServerName x\nInclude conf/bad_inc.conf\n", base, &err);
    CHECK(s == NULL);
    CHECK_STR(err, want);
    free(err);

    snprintf(want, sizeof(want),
             "Could not open configuration file %s/conf/missing.conf: No such file or directory",
             root);
    EXPECT_ERROR("\nInclude conf/missing.conf\n", 2, want);
    snprintf(want, sizeof(want),
             "Include/IncludeOptional: No matches for the wildcard '*.nothing' in '%s/conf/inc', "
             "failing",
             root);
    EXPECT_ERROR("Include conf/inc/*.nothing\n", 1, want);
    snprintf(want, sizeof(want),
             "Include/IncludeOptional: Could not open directory %s/conf/nodir: No such file or "
             "directory",
             root);
    EXPECT_ERROR("Include conf/nodir/*.conf\n", 1, want);

    /* the main file itself */
    s = read_with("conf/does-not-exist.conf", base, NULL, NULL, &err);
    CHECK(s == NULL);
    snprintf(want, sizeof(want),
             "Could not open configuration file %s/conf/does-not-exist.conf: No such file or "
             "directory",
             root);
    CHECK_STR(err, want);
    free(err);
}

static bool defined(const hd_server_t *s, const char *name)
{
    for (const char *const *d = s->defines; d != NULL && *d != NULL; d++) {
        if (strcmp(*d, name) == 0) {
            return true;
        }
    }
    return false;
}

static void test_define(void)
{
    static const char text[] = "Define DOCROOT conf\n"
                               "Define FLAG\n"
                               "DocumentRoot ${DOCROOT}\n"
                               "<IfDefine FLAG>\n"
                               "  ServerName flag-${DOCROOT}\n"
                               "</IfDefine>\n"
                               "<IfDefine !FLAG>\n"
                               "  ServerName not-flag\n"
                               "  This would be an error if it were read\n"
                               "</IfDefine>\n"
                               "UnDefine FLAG\n"
                               "<IfDefine !FLAG>\n"
                               "  <IfDefine FROM_CMDLINE>\n"
                               "    Timeout 7\n"
                               "  </IfDefine>\n"
                               "  <IfDefine !FROM_CMDLINE>\n"
                               "    Timeout 8\n"
                               "  </IfDefine>\n"
                               "</IfDefine>\n"
                               "ErrorDocument 404 ${HD_TEST_UNDEFINED_VARIABLE}\n";
    write_file(tmpconf, text);
    const char *const defines[] = {"FROM_CMDLINE", NULL};
    hd_server_t *s = must_read(tmpconf, base, defines);
    CHECK(s != NULL);
    if (s == NULL) {
        return;
    }
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/conf", root);
    CHECK_STR(hd_core_sconf(s)->document_root, path);
    CHECK_STR(hd_core_sconf(s)->server_name, "flag-conf");
    CHECK_INT(hd_core_sconf(s)->timeout_s, 7);
    CHECK(defined(s, "FROM_CMDLINE"));
    CHECK(defined(s, "DOCROOT"));
    CHECK(!defined(s, "FLAG"));
    /* an undefined variable is left as written (and a warning logged) */
    const hd_core_dir_conf_t *d = s->dir_default[hd_core_module.index];
    CHECK_STR(hd_core_error_document(d, 404), "${HD_TEST_UNDEFINED_VARIABLE}");
    hd_config_free(s);

    /* "Define X" without a value defines X for IfDefine, not as ${X} */
    char *err;
    s = read_text("Define BARE\nServerName ${BARE}\n", base, &err);
    CHECK(s != NULL);
    if (s != NULL) {
        CHECK_STR(hd_core_sconf(s)->server_name, "${BARE}");
    }
    hd_config_free(s);
    free(err);

    EXPECT_ERROR("Define a:b\n", 1, "Variable name must not contain ':'");
    EXPECT_ERROR("Define\n", 1,
                 "Define takes 1-2 arguments, Define a variable, optionally to a value.  Same as "
                 "passing -D to the command line.");
    EXPECT_ERROR("Define a b c\n", 1,
                 "Define takes 1-2 arguments, Define a variable, optionally to a value.  Same as "
                 "passing -D to the command line.");
}

static void test_ifmodule(void)
{
    static const char text[] = "<IfModule mod_mime.c>\n"
                               "  Timeout 11\n"
                               "</IfModule>\n"
                               "<IfModule mime_module>\n"
                               "  KeepAliveTimeout 12\n"
                               "</IfModule>\n"
                               "<IfModule !mod_nothere.c>\n"
                               "  MaxKeepAliveRequests 13\n"
                               "</IfModule>\n"
                               "<IfModule nothere_module>\n"
                               "  Unknown directives are not read here\n"
                               "  <Directory /x>\n"
                               "    <IfModule foo>\n"
                               "    </IfModule>\n"
                               "  </Directory>\n"
                               "</IfModule>\n"
                               "<IfModule !mpm_prefork_module>\n"
                               "  ServerName before-loadmodule\n"
                               "</IfModule>\n"
                               "LoadModule mpm_prefork_module modules/mod_mpm_prefork.so\n"
                               "<IfModule mpm_prefork_module>\n"
                               "  ListenBacklog 14\n"
                               "</IfModule>\n";
    const char *const pre[] = {"Listen 8080", "TypesConfig conf/config_test.types", NULL};
    char *err;
    hd_server_t *s = read_text(text, pre, &err);
    CHECK(s != NULL);
    if (s == NULL) {
        fprintf(stderr, "%s\n", err);
        free(err);
        return;
    }
    const hd_core_server_conf_t *c = hd_core_sconf(s);
    CHECK_INT(c->timeout_s, 11);
    CHECK_INT(c->keepalive_timeout_ms, 12000);
    CHECK_INT(c->max_keepalive_requests, 13);
    CHECK_STR(c->server_name, "before-loadmodule");
    CHECK_INT(c->listen_backlog, 14);
    CHECK(s->sections == NULL); /* the skipped <Directory> made no section */
    hd_config_free(s);

    /* a false condition still needs balanced tags */
    EXPECT_ERROR("<IfModule nothere_module>\n<Directory /x>\n</IfModule>\n", 3,
                 "Expected </Directory> but saw </IfModule>");
    EXPECT_ERROR("<IfModule nothere_module>\n", 1, "<IfModule> was not closed.");
    EXPECT_ERROR("<IfModule>\n</IfModule>\n", 1,
                 "<IfModule> directive requires additional "
                 "arguments");
    EXPECT_ERROR("<IfDefine>\n</IfDefine>\n", 1,
                 "<IfDefine> directive requires additional "
                 "arguments");
}

static unsigned components(const char *path)
{
    unsigned n = 0;
    for (const char *p = path; *p != '\0'; p++) {
        n += *p != '/' && (p == path || p[-1] == '/');
    }
    return n;
}

static void test_sections(void)
{
    static const char text[] = "<Directory />\n"
                               "</Directory>\n"
                               "<Directory conf/>\n"
                               "  <Files \"*.txt\">\n"
                               "    <IfModule mod_mime.c>\n"
                               "      SetHandler Text-Handler\n"
                               "    </IfModule>\n"
                               "  </Files>\n"
                               "</Directory>\n"
                               "<Directory ~ \"^/x\">\n"
                               "</Directory>\n"
                               "<location /loc/>\n"
                               "  Require local\n"
                               "</LOCATION>\n"
                               "<FilesMatch \\.php$>\n"
                               "</FilesMatch>\n";
    char *err;
    hd_server_t *s = read_text(text, base, &err);
    CHECK(s != NULL);
    if (s == NULL) {
        fprintf(stderr, "%s\n", err);
        free(err);
        return;
    }
    char path[PATH_MAX + 64];
    const hd_section_t *sec = s->sections;
    const hd_section_t *expect_parent = NULL;
    int n = 0;
    for (; sec != NULL; sec = sec->next, n++) {
        switch (n) {
        case 0:
            CHECK_INT(sec->kind, HD_SEC_DIRECTORY);
            CHECK_STR(sec->path, "/");
            CHECK_INT(sec->ncomponents, 0);
            CHECK_INT(sec->line, 1);
            CHECK_STR(sec->file, tmpconf);
            break;
        case 1:
            snprintf(path, sizeof(path), "%s/conf", root);
            CHECK_STR(sec->path, path);
            CHECK_INT(sec->ncomponents, components(path));
            expect_parent = sec;
            break;
        case 2:
            CHECK_INT(sec->kind, HD_SEC_FILES);
            CHECK_STR(sec->path, "*.txt");
            CHECK(sec->parent == expect_parent);
            CHECK(sec->regex == NULL);
            CHECK(sec->dir_conf[hd_core_module.index] != NULL);
            if (sec->dir_conf[hd_core_module.index] != NULL) {
                const hd_core_dir_conf_t *d = sec->dir_conf[hd_core_module.index];
                CHECK_STR(d->handler, "text-handler"); /* handler names are lower-cased */
            }
            CHECK_INT(sec->line, 4);
            break;
        case 3:
            CHECK_INT(sec->kind, HD_SEC_DIRECTORY);
            CHECK(sec->regex != NULL);
            CHECK_STR(sec->path, "^/x");
            break;
        case 4:
            CHECK_INT(sec->kind, HD_SEC_LOCATION);
            CHECK_STR(sec->path, "/loc/");
            CHECK(sec->dir_conf[hd_authz_core_module.index] != NULL);
            CHECK(sec->dir_conf[hd_core_module.index] == NULL); /* created only when used */
            break;
        case 5:
            CHECK_INT(sec->kind, HD_SEC_FILES);
            CHECK(sec->regex != NULL);
            CHECK(sec->parent == NULL);
            break;
        }
    }
    CHECK_INT(n, 6);
    hd_config_free(s);

    EXPECT_ERROR("<Directory /a>\n\nOptions None\n", 1, "<Directory> was not closed.");
    EXPECT_ERROR("<Directory /a>\n</Files>\n", 2, "Expected </Directory> but saw </Files>");
    EXPECT_ERROR("\n</Directory>\n", 2, "</Directory> without matching <Directory> section");
    EXPECT_ERROR("<Directory /a>\n</Directory\n", 2, "</Directory> directive missing closing '>'");
    EXPECT_ERROR("<Directory /a\n</Directory>\n", 1, "<Directory> directive missing closing '>'");
    EXPECT_ERROR("<Directory>\n</Directory>\n", 1,
                 "<Directory> directive requires additional arguments");
    EXPECT_ERROR("<Directory /a /b>\n</Directory>\n", 1,
                 "Multiple <Directory> arguments not (yet) supported.");
    EXPECT_ERROR("<Location /a>\n<Directory /b>\n</Directory>\n</Location>\n", 2,
                 "<Directory not allowed in <Location> context");
    EXPECT_ERROR("<Directory /a>\n<Directory /b>\n</Directory>\n</Directory>\n", 2,
                 "<Directory not allowed in <Directory> context");
    EXPECT_ERROR("<Location /a>\n<Files b>\n</Files>\n</Location>\n", 2,
                 "<Files> cannot occur within <Location> section");
    EXPECT_ERROR("<DirectoryMatch (>\n</DirectoryMatch>\n", 1,
                 "<DirectoryMatch>: regular expression \"(\" could not be compiled: missing closing "
                 "parenthesis at offset 1");
    EXPECT_ERROR("<Files ~ [>\n</Files>\n", 1,
                 "<Files>: regular expression \"[\" could not be compiled: missing terminating ] for "
                 "character class at offset 1");
    EXPECT_ERROR("<Directory /a>\nListen 80\n</Directory>\n", 2,
                 "Listen not allowed in <Directory> context");
    EXPECT_ERROR("<Directory /a>\n<Files x>\nServerName y\n</Files>\n</Directory>\n", 3,
                 "ServerName not allowed in <Files> context");
    EXPECT_ERROR("<Foo bar>\n</Foo>\n", 1,
                 "Invalid command '<Foo', perhaps misspelled or defined by a module not included "
                 "in the server configuration");
}

/* ---- per-request merge ----------------------------------------------- */

static hd_request_t *fake_request(hd_server_t *s, hd_pool_t *p, const char *filename,
                                  const char *uri)
{
    hd_request_t *r = hd_pcalloc(p, sizeof(*r));
    r->pool = p;
    r->server = s;
    r->filename = filename ? hd_pstrdup(p, filename) : NULL;
    r->uri = uri ? hd_pstrdup(p, uri) : NULL;
    hd_request_merge_config(r);
    return r;
}

static void test_merge(void)
{
    hd_server_t *s = must_read("conf/merge.conf", base, NULL);
    CHECK(s != NULL);
    if (s == NULL) {
        return;
    }
    hd_pool_t *p = hd_pool_create();
    const unsigned top = HD_OPT_INDEXES | HD_OPT_FOLLOWSYMLINKS;

    /* /srv/a (-Indexes +ExecCGI) then /srv/a/b (+Indexes), whatever the file order */
    hd_request_t *r = fake_request(s, p, "/srv/a/b/x.html", "/x.html");
    CHECK_INT(hd_core_options(hd_core_dconf(r)), top | HD_OPT_EXECCGI);
    CHECK_STR(hd_core_error_document(hd_core_dconf(r), 404), "/b404.html");

    r = fake_request(s, p, "/srv/a/x.html", "/x.html");
    CHECK_INT(hd_core_options(hd_core_dconf(r)), HD_OPT_FOLLOWSYMLINKS | HD_OPT_EXECCGI);
    CHECK(hd_core_error_document(hd_core_dconf(r), 404) == NULL);

    /* a directory that is the file itself (a request for /srv/a/b/) */
    r = fake_request(s, p, "/srv/a/b/", "/");
    CHECK_INT(hd_core_options(hd_core_dconf(r)), top | HD_OPT_EXECCGI);

    /* component boundaries: /srv/ab is not under /srv/a */
    r = fake_request(s, p, "/srv/ab/x.html", "/x.html");
    CHECK(r->dir_config == s->dir_default);
    CHECK_INT(hd_core_options(hd_core_dconf(r)), top);

    r = fake_request(s, p, "/srv/c/d/x", "/x");
    CHECK_INT(hd_core_options(hd_core_dconf(r)), HD_OPT_NONE);

    r = fake_request(s, p, "/srv/wild/x/y.html", "/y.html");
    CHECK_STR(hd_core_dconf(r)->handler, "wild-handler");
    r = fake_request(s, p, "/srv/wild/z/y.html", "/y.html");
    CHECK(hd_core_dconf(r)->handler == NULL);

    r = fake_request(s, p, "/srv/r12/x.html", "/x.html");
    CHECK_STR(hd_core_dconf(r)->handler, "regex-handler");
    r = fake_request(s, p, "/srv/rx/x.html", "/x.html");
    CHECK(hd_core_dconf(r)->handler == NULL);

    r = fake_request(s, p, "/anywhere/run.cgi", "/run.cgi");
    CHECK_STR(hd_core_dconf(r)->handler, "cgi-script");
    r = fake_request(s, p, "/anywhere/pic.png", "/pic.png");
    CHECK_INT(hd_core_dconf(r)->enable_sendfile, 0);
    CHECK_INT(hd_core_dconf(r)->limit_request_body, 1073741824);

    /* <Files> nested in <Directory /srv/a> applies only below /srv/a */
    r = fake_request(s, p, "/srv/a/secret.txt", "/secret.txt");
    CHECK_STR(hd_core_dconf(r)->handler, "secret-handler");
    r = fake_request(s, p, "/other/secret.txt", "/secret.txt");
    CHECK(hd_core_dconf(r)->handler == NULL);
    CHECK(r->dir_config == s->dir_default);

    /* <Location /status>: /status, /status/..., not /statusx; None overrides */
    r = fake_request(s, p, NULL, "/status");
    CHECK_STR(hd_core_dconf(r)->handler, "server-status");
    r = fake_request(s, p, NULL, "/status/x");
    CHECK_STR(hd_core_dconf(r)->handler, "server-status");
    r = fake_request(s, p, NULL, "/statusx");
    CHECK(r->dir_config == s->dir_default);
    r = fake_request(s, p, NULL, "/status/none/y");
    CHECK(hd_core_dconf(r)->handler == NULL);

    r = fake_request(s, p, "/srv/a/api.txt", "/api/v2/x");
    CHECK_INT(hd_core_dconf(r)->limit_request_body, 1024);
    CHECK_INT(hd_core_options(hd_core_dconf(r)), HD_OPT_FOLLOWSYMLINKS | HD_OPT_EXECCGI);
    r = fake_request(s, p, NULL, "/api/vx/x");
    CHECK(r->dir_config == s->dir_default);

    /* nothing matches: the server defaults are shared, not copied */
    r = fake_request(s, p, "/var/www/index.html", "/index.html");
    CHECK(r->dir_config == s->dir_default);

    hd_pool_destroy(p);
    hd_config_free(s);
}

static void test_options(void)
{
    static const char text[] =
        "<Directory /o1>\n  Options +Indexes -FollowSymLinks\n</Directory>\n"
        "<Directory /o1/o2>\n  Options -Indexes +MultiViews\n</Directory>\n"
        "<Directory /o1/o2/o3>\n  Options All\n</Directory>\n"
        "<Directory /o1/o2/o3/o4>\n  Options None +ExecCGI\n</Directory>\n"
        "<Directory /o1/o2/o3/o4/o5>\n  Options +includesnoexec\n</Directory>\n";
    char *err;
    hd_server_t *s = read_text(text, base, &err);
    CHECK(s != NULL);
    if (s == NULL) {
        fprintf(stderr, "%s\n", err);
        free(err);
        return;
    }
    hd_pool_t *p = hd_pool_create();
    hd_request_t *r = fake_request(s, p, "/o1/f", NULL);
    CHECK_INT(hd_core_options(hd_core_dconf(r)), HD_OPT_INDEXES);
    r = fake_request(s, p, "/o1/o2/f", NULL);
    CHECK_INT(hd_core_options(hd_core_dconf(r)), HD_OPT_MULTIVIEWS);
    r = fake_request(s, p, "/o1/o2/o3/f", NULL);
    CHECK_INT(hd_core_options(hd_core_dconf(r)), HD_OPT_ALL);
    r = fake_request(s, p, "/o1/o2/o3/o4/f", NULL);
    CHECK_INT(hd_core_options(hd_core_dconf(r)), HD_OPT_EXECCGI);
    r = fake_request(s, p, "/o1/o2/o3/o4/o5/f", NULL);
    CHECK_INT(hd_core_options(hd_core_dconf(r)), HD_OPT_EXECCGI | HD_OPT_INCLUDES);
    hd_pool_destroy(p);
    hd_config_free(s);

    const char *mix = "Either all Options must start with + or -, or no Option may.";
    EXPECT_ERROR("Options +Indexes FollowSymLinks\n", 1, mix);
    EXPECT_ERROR("Options Indexes +FollowSymLinks\n", 1, mix);
    EXPECT_ERROR("Options Bogus\n", 1, "Illegal option Bogus");
    EXPECT_ERROR("Options -Bogus\n", 1, "Illegal option Bogus");
    EXPECT_ERROR("Options Indexes None\n", 1, "'Options None' must be the first Option given.");
    EXPECT_ERROR("Options +None\n", 1, "You may not use 'Options +None' or 'Options -None'.");
    EXPECT_ERROR("Options Indexes All\n", 1, "'Options All' must be the first option given.");
    EXPECT_ERROR("Options -All\n", 1, "You may not use 'Options +All' or 'Options -All'.");
}

static void test_error_document(void)
{
    static const char text[] = "ErrorDocument 404 /top404.html\n"
                               "ErrorDocument 503 \"Back soon\"\n"
                               "<Location /x>\n"
                               "  ErrorDocument 404 https://example.com/nf\n"
                               "  ErrorDocument 503 default\n"
                               "</Location>\n";
    char *err;
    hd_server_t *s = read_text(text, base, &err);
    CHECK(s != NULL);
    if (s == NULL) {
        free(err);
        return;
    }
    hd_pool_t *p = hd_pool_create();
    hd_request_t *r = fake_request(s, p, NULL, "/y");
    CHECK_STR(hd_core_error_document(hd_core_dconf(r), 404), "/top404.html");
    CHECK_STR(hd_core_error_document(hd_core_dconf(r), 503), "Back soon");
    r = fake_request(s, p, NULL, "/x/y");
    CHECK_STR(hd_core_error_document(hd_core_dconf(r), 404), "https://example.com/nf");
    CHECK(hd_core_error_document(hd_core_dconf(r), 503) == NULL);
    hd_pool_destroy(p);
    hd_config_free(s);

    EXPECT_ERROR("ErrorDocument 404\n", 1,
                 "ErrorDocument takes two arguments, Change responses for HTTP errors");
    EXPECT_ERROR("ErrorDocument 200 /x\n", 1, "Unsupported HTTP response code 200");
    EXPECT_ERROR("ErrorDocument abc /x\n", 1, "Unsupported HTTP response code abc");
    EXPECT_ERROR("ErrorDocument 4040 /x\n", 1, "Unsupported HTTP response code 4040");
}

/* ---- Require --------------------------------------------------------- */

static int access_from(hd_server_t *s, hd_pool_t *p, const char *uri, const char *ip,
                       const char *local_ip)
{
    hd_conn_t *c = hd_pcalloc(p, sizeof(*c));
    if (strchr(ip, ':') != NULL) {
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&c->peer;
        a6->sin6_family = AF_INET6;
        inet_pton(AF_INET6, ip, &a6->sin6_addr);
    } else {
        struct sockaddr_in *a4 = (struct sockaddr_in *)&c->peer;
        a4->sin_family = AF_INET;
        inet_pton(AF_INET, ip, &a4->sin_addr);
    }
    snprintf(c->client_ip, sizeof(c->client_ip), "%s", ip);
    snprintf(c->local_ip, sizeof(c->local_ip), "%s", local_ip);
    hd_request_t *r = fake_request(s, p, NULL, uri);
    r->c = c;
    return hd_authz_core_module.access_checker(r);
}

static void test_require(void)
{
    static const char text[] = "<Location /ip>\n"
                               "  Require ip 10.1 192.168.0.0/24 2001:db8::/32\n"
                               "  Require ip 172.16.5.0/255.255.255.0\n"
                               "</Location>\n"
                               "<Location /local>\n"
                               "  Require local\n"
                               "</Location>\n"
                               "<Location /denied>\n"
                               "  Require all denied\n"
                               "</Location>\n"
                               "<Location /denied/open>\n"
                               "  Require all granted\n"
                               "</Location>\n"
                               "<Location /except>\n"
                               "  Require all granted\n"
                               "  Require not ip 10.9\n"
                               "</Location>\n"
                               "<Location /except-only>\n"
                               "  Require not ip 10.9.0.0/16\n"
                               "</Location>\n";
    char *err;
    hd_server_t *s = read_text(text, base, &err);
    CHECK(s != NULL);
    if (s == NULL) {
        fprintf(stderr, "%s\n", err);
        free(err);
        return;
    }
    hd_pool_t *p = hd_pool_create();
    CHECK_INT(access_from(s, p, "/anything", "203.0.113.9", "10.0.0.1"), HD_OK);
    CHECK_INT(access_from(s, p, "/ip", "10.1.200.3", "10.0.0.1"), HD_OK);
    CHECK_INT(access_from(s, p, "/ip", "10.2.0.1", "10.0.0.1"), 403);
    CHECK_INT(access_from(s, p, "/ip", "192.168.0.77", "10.0.0.1"), HD_OK);
    CHECK_INT(access_from(s, p, "/ip", "192.168.1.77", "10.0.0.1"), 403);
    CHECK_INT(access_from(s, p, "/ip", "172.16.5.9", "10.0.0.1"), HD_OK);
    CHECK_INT(access_from(s, p, "/ip", "::ffff:10.1.0.5", "10.0.0.1"), HD_OK);
    CHECK_INT(access_from(s, p, "/ip", "2001:db8::1", "10.0.0.1"), HD_OK);
    CHECK_INT(access_from(s, p, "/ip", "2001:db9::1", "10.0.0.1"), 403);
    CHECK_INT(access_from(s, p, "/local", "127.0.0.5", "127.0.0.1"), HD_OK);
    CHECK_INT(access_from(s, p, "/local", "::1", "::1"), HD_OK);
    CHECK_INT(access_from(s, p, "/local", "::ffff:127.0.0.1", "::ffff:127.0.0.1"), HD_OK);
    CHECK_INT(access_from(s, p, "/local", "10.0.0.1", "10.0.0.1"), HD_OK);
    CHECK_INT(access_from(s, p, "/local", "10.0.0.2", "10.0.0.1"), 403);
    CHECK_INT(access_from(s, p, "/denied/x", "127.0.0.1", "127.0.0.1"), 403);
    CHECK_INT(access_from(s, p, "/denied/open/x", "10.3.3.3", "127.0.0.1"), HD_OK);
    CHECK_INT(access_from(s, p, "/except", "10.8.1.1", "127.0.0.1"), HD_OK);
    CHECK_INT(access_from(s, p, "/except", "10.9.1.1", "127.0.0.1"), 403);
    CHECK_INT(access_from(s, p, "/except-only", "10.8.1.1", "127.0.0.1"), HD_OK);
    CHECK_INT(access_from(s, p, "/except-only", "10.9.1.1", "127.0.0.1"), 403);
    hd_pool_destroy(p);
    hd_config_free(s);

    EXPECT_ERROR("Require all maybe\n", 1,
                 "Argument for 'Require all' must be 'granted' or 'denied'");
    EXPECT_ERROR("Require all\n", 1, "Argument for 'Require all' must be 'granted' or 'denied'");
    EXPECT_ERROR("Require ip\n", 1, "'require ip' requires an argument");
    EXPECT_ERROR("Require\n", 1, "Unknown Authz provider: ");
    EXPECT_ERROR("Require valid-user\n", 1, "Unknown Authz provider: valid-user");
    EXPECT_ERROR("Require ip foo\n", 1, "ip address 'foo' appears to be invalid");
    EXPECT_ERROR("Require ip 1.2.3.400\n", 1,
                 "ip address '1.2.3.400' appears to be invalid: The specified IP address is "
                 "invalid.");
    EXPECT_ERROR("Require ip 10.1/16\n", 1,
                 "ip address '10.1/16' appears to be invalid: The specified IP address is "
                 "invalid.");
    EXPECT_ERROR("Require ip 10.1.2.3/33\n", 1,
                 "ip address '10.1.2.3/33' appears to be invalid: The specified network mask is "
                 "invalid.");
    EXPECT_ERROR("Require ip 10.0.0.1 2001:db8::/129\n", 1,
                 "ip address '2001:db8::/129' appears to be invalid: The specified network mask "
                 "is invalid.");
    EXPECT_ERROR("Require ip ::ffff:1.2.3.4\n", 1,
                 "ip address '::ffff:1.2.3.4' appears to be invalid: The specified IP address is "
                 "invalid.");
}

/* ---- LoadModule, MPM, command line ----------------------------------- */

static void test_load_module(void)
{
    char *err;
    char want[PATH_MAX + 200];
    /* the path is ignored; loading twice or loading a static module is fine */
    hd_server_t *s = read_text("LoadModule mpm_prefork_module /no/such/file.so\n"
                               "LoadModule mime_module modules/mod_mime.so\n",
                               base, &err);
    CHECK(s != NULL);
    CHECK(s != NULL && s->mpm_module == hd_module_find("mpm_prefork_module"));
    hd_config_free(s);
    free(err);

    snprintf(want, sizeof(want),
             "Can't locate API module structure `foo_module' in file %s/modules/mod_foo.so: "
             "unknown built-in module foo_module",
             root);
    EXPECT_ERROR("LoadModule foo_module modules/mod_foo.so\n", 1, want);
    snprintf(want, sizeof(want),
             "Can't locate API module structure `mod_mime.c' in file /x.so: unknown built-in "
             "module mod_mime.c");
    EXPECT_ERROR("LoadModule mod_mime.c /x.so\n", 1, want);
    EXPECT_ERROR("LoadModule foo_module\n", 1,
                 "LoadModule takes two arguments, a module name and the name of a shared object "
                 "file to load it from (every module is built in: the file is not read)");
    EXPECT_ERROR("<Directory /a>\nLoadModule foo_module x\n</Directory>\n", 2,
                 "LoadModule not allowed in <Directory> context");

    /* no MPM */
    s = read_text("Listen 8080\n", types_only, &err);
    CHECK(s == NULL);
    snprintf(want, sizeof(want), "%s: No MPM loaded. Load one with LoadModule (", tmpconf);
    CHECK(err != NULL && strncmp(err, want, strlen(want)) == 0);
    CHECK(err != NULL && strstr(err, "mpm_prefork_module") != NULL);
    free(err);

    /* no Listen: core's post_config */
    const char *const no_listen[] = {base[0], base[2], NULL};
    s = read_text("ServerName x\n", no_listen, &err);
    CHECK(s == NULL);
    snprintf(want, sizeof(want), "%s: No Listen directive: at least one Listen is needed", tmpconf);
    CHECK_STR(err, want);
    free(err);
}

static void test_cmdline(void)
{
    const char *const pre[] = {base[0], base[1], base[2], "ServerName from-C", "Timeout 5", NULL};
    const char *const post[] = {"Timeout 9", NULL};
    write_file(tmpconf, "ServerName from-file\nTimeout 6\n");
    char *err;
    hd_server_t *s = read_with(tmpconf, pre, post, NULL, &err);
    CHECK(s != NULL);
    if (s != NULL) {
        CHECK_STR(hd_core_sconf(s)->server_name, "from-file"); /* -C comes before the file */
        CHECK_INT(hd_core_sconf(s)->timeout_s, 9);             /* -c after it */
    }
    hd_config_free(s);
    free(err);

    const char *const bad_pre[] = {base[0], "Nope", NULL};
    s = read_with(tmpconf, bad_pre, NULL, NULL, &err);
    CHECK(s == NULL);
    CHECK_STR(err, "(command line):2: Invalid command 'Nope', perhaps misspelled or defined by a "
                   "module not included in the server configuration");
    free(err);
    const char *const bad_post[] = {"ServerName a b", NULL};
    s = read_with(tmpconf, base, bad_post, NULL, &err);
    CHECK(s == NULL);
    CHECK_STR(err, "(command line):1: ServerName takes one argument, The hostname and port of "
                   "the server");
    free(err);

    /* -e overrides LogLevel */
    hd_config_args_t args = {.server_root = root,
                             .conf_file = tmpconf,
                             .pre_directives = base,
                             .cmdline_log_level = HD_LOG_DEBUG};
    write_file(tmpconf, "LogLevel error\n");
    s = hd_config_read(&args, 3, &err);
    CHECK(s != NULL);
    if (s != NULL) {
        CHECK_INT(hd_core_sconf(s)->log_level, HD_LOG_DEBUG);
        CHECK_INT(s->generation, 3);
        CHECK_INT(s->cmdline_log_level, HD_LOG_DEBUG);
    }
    hd_config_free(s);
    free(err);
}

/* ---- messages of the core's server directives ------------------------ */

static void test_core_errors(void)
{
    char want[PATH_MAX + 200];
    EXPECT_ERROR("Foo bar\n", 1,
                 "Invalid command 'Foo', perhaps misspelled or defined by a module not included "
                 "in the server configuration");
    EXPECT_ERROR("ServerName\n", 1,
                 "ServerName takes one argument, The hostname and port of the server");
    EXPECT_ERROR("KeepAlive maybe\n", 1, "KeepAlive must be On or Off");
    EXPECT_ERROR("KeepAlive\n", 1, "KeepAlive must be On or Off");
    EXPECT_ERROR("KeepAlive on off\n", 1, "KeepAlive must be On or Off");
    EXPECT_ERROR("EnableSendfile yes\n", 1, "EnableSendfile must be On or Off");
    EXPECT_ERROR("Timeout abc\n", 1, "Timeout must be a non-negative integer");
    EXPECT_ERROR("Timeout -5\n", 1, "Timeout must be a non-negative integer");
    EXPECT_ERROR("MaxKeepAliveRequests 99999999999\n", 1,
                 "MaxKeepAliveRequests must be a non-negative integer");
    EXPECT_ERROR("KeepAliveTimeout abc\n", 1, "KeepAliveTimeout has wrong format");
    EXPECT_ERROR("KeepAliveTimeout 5m\n", 1, "KeepAliveTimeout has wrong format");
    EXPECT_ERROR("LimitRequestLine abc\n", 1,
                 "LimitRequestLine \"abc\" must be a non-negative integer");
    EXPECT_ERROR("LimitRequestFields -1\n", 1,
                 "LimitRequestFields \"-1\" must be a non-negative integer (0 = no limit)");
    EXPECT_ERROR("LimitRequestFieldSize 100000\n", 1,
                 "LimitRequestFieldSize \"100000\" must be at most 65536");
    EXPECT_ERROR("LimitRequestBody abc\n", 1, "LimitRequestBody argument is not parsable.");
    EXPECT_ERROR("LimitRequestBody -1\n", 1, "LimitRequestBody requires a non-negative integer.");
    EXPECT_ERROR("ListenBacklog 0\n", 1, "ListenBacklog must be > 0");
    EXPECT_ERROR("ServerTokens bogus\n", 1,
                 "ServerTokens takes 1 argument: 'Prod(uctOnly)', 'Major', 'Minor', 'Min(imal)', "
                 "'OS', or 'Full'");
    EXPECT_ERROR("LogLevel\n", 1,
                 "LogLevel requires at least one argument, Level of verbosity in error logging");
    EXPECT_ERROR("LogLevel bogus\n", 1,
                 "Log level keyword must be one of "
                 "emerg/alert/crit/error/warn/notice/info/debug/trace1/.../trace8");
    EXPECT_ERROR("LogLevel warn core:bogus\n", 1,
                 "core:bogus: Log level keyword must be one of "
                 "emerg/alert/crit/error/warn/notice/info/debug/trace1/.../trace8");
    EXPECT_ERROR("LogLevel nomodule:info\n", 1, "Cannot find module nomodule");
    EXPECT_ERROR("ErrorLog |/bin/cat\n", 1, "Piped logs are not supported");
    EXPECT_ERROR("ServerRoot /no/such/dir\n", 1, "ServerRoot must be a valid directory");
    snprintf(want, sizeof(want),
             "DocumentRoot '%s/no-such-dir' is not a directory, or is not "
             "readable",
             root);
    EXPECT_ERROR("DocumentRoot no-such-dir\n", 1, want);
    EXPECT_ERROR("SetHandler a b\n", 1,
                 "SetHandler takes one argument, a handler name that overrides any other "
                 "configured handler");

    /* Listen; 127.0.0.1:8080 is already in the base */
    EXPECT_ERROR("Listen 127.0.0.1:8080\n", 1,
                 "Cannot define multiple Listeners on the same IP:port");
    EXPECT_ERROR("Listen 8081\nListen 0.0.0.0:8081\n", 2,
                 "Cannot define multiple Listeners on the same IP:port");
    EXPECT_ERROR("Listen 127.0.0.1\n", 1, "Port must be specified");
    EXPECT_ERROR("Listen 127.0.0.1:abc\n", 1, "Port must be specified");
    EXPECT_ERROR("Listen [::1]\n", 1, "Port must be specified");
    EXPECT_ERROR("Listen 127.0.0.1:99999\n", 1, "Invalid address or port");
    EXPECT_ERROR("Listen *:0\n", 1, "Invalid address or port");
    EXPECT_ERROR("Listen 300.1.1.1:80\n", 1, "Invalid address or port");
    EXPECT_ERROR("Listen\n", 1,
                 "Listen takes 1-2 arguments, A port number or a numeric IP address and a port "
                 "number, and an optional protocol");
    EXPECT_ERROR("Listen 80 http extra\n", 1,
                 "Listen takes 1-2 arguments, A port number or a numeric IP address and a port "
                 "number, and an optional protocol");

    /* ServerRoot changes what later relative paths mean */
    char *err;
    hd_server_t *s = read_text("ServerRoot /tmp\nPidFile x.pid\n", base, &err);
    CHECK(s != NULL);
    if (s != NULL) {
        CHECK_STR(s->server_root, "/tmp");
        CHECK_STR(hd_core_sconf(s)->pid_file, "/tmp/x.pid");
    }
    hd_config_free(s);
    free(err);
}

/* Listen's protocol (https for port 443) selects the AcceptFilter. */
static void test_accept_filter(void)
{
    char *err;
    hd_server_t *s = read_text("Listen 8081\nListen 127.0.0.1:443\nListen 8082 FTP\n"
                               "AcceptFilter ftp none\nAcceptFilter HTTPS httpready\n"
                               "AcceptFilter https none\n",
                               base, &err);
    CHECK(s != NULL);
    if (s != NULL) {
        const char *want[] = {"http", "http", "https", "ftp"}; /* base's 8080 first */
        int i = 0;
        for (const hd_listen_t *l = s->listeners; l != NULL && i < 4; l = l->next, i++) {
            CHECK_STR(l->protocol, want[i]);
        }
        CHECK_INT(i, 4);
        CHECK_STR(hd_core_accept_filter(s, "http"), "data");
        CHECK_STR(hd_core_accept_filter(s, "ftp"), "none");
        CHECK_STR(hd_core_accept_filter(s, "https"), "none"); /* the last one wins */
    }
    hd_config_free(s);
    free(err);
    EXPECT_ERROR("AcceptFilter http\n", 1,
                 "AcceptFilter takes two arguments, Accept filter for a protocol: \"none\" hands "
                 "connections over at once; any other (data, httpready) waits until the client "
                 "has sent data (TCP_DEFER_ACCEPT)");
    EXPECT_ERROR("<Directory /a>\nAcceptFilter http none\n</Directory>\n", 2,
                 "AcceptFilter not allowed in <Directory> context");
}

static void test_list_directives(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    hd_config_list_directives(f);
    fclose(f);
    CHECK(strstr(text, "Listen (core.c)\n\tA port number or a numeric IP address and a port "
                       "number, and an optional protocol\n\tAllowed in *.conf only outside "
                       "<Directory>, <Files>, <Location>, or <If>\n") != NULL);
    CHECK(strstr(text, "Options (core.c)\n\tSet a number of attributes for a given "
                       "directory\n\tAllowed in *.conf anywhere\n") != NULL);
    CHECK(strstr(text, "Require (mod_authz_core.c)\n") != NULL);
    free(text);

    const hd_command_t *c;
    char buf[64];
    for (c = hd_core_module.commands; strcmp(c->name, "Options") != 0; c++) {
    }
    hd_config_directive_context_text(c, buf, sizeof(buf));
    CHECK_STR(buf, "server config, directory");
    for (c = hd_core_module.commands; strcmp(c->name, "Listen") != 0; c++) {
    }
    hd_config_directive_context_text(c, buf, sizeof(buf));
    CHECK_STR(buf, "server config");
}

int main(void)
{
    if (getcwd(root, sizeof(root)) == NULL || mkdtemp(tmpdir) == NULL) {
        perror("test_config");
        return 1;
    }
    snprintf(tmpconf, sizeof(tmpconf), "%s/t.conf", tmpdir);
    RUN(test_basic);
    RUN(test_defaults);
    RUN(test_lexer);
    RUN(test_include);
    RUN(test_define);
    RUN(test_ifmodule);
    RUN(test_sections);
    RUN(test_merge);
    RUN(test_options);
    RUN(test_error_document);
    RUN(test_require);
    RUN(test_load_module);
    RUN(test_cmdline);
    RUN(test_core_errors);
    RUN(test_accept_filter);
    RUN(test_list_directives);
    unlink(tmpconf);
    rmdir(tmpdir);
    hd_pool_recycler_drain();
    TEST_DONE();
}
