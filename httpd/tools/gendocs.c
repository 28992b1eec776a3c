/*
 * hd_gendocs: writes the manual's directive pages from the modules' directive
 * tables, the same tables the config reader uses and `httpd -L` prints, so
 * the manual cannot drift from the code.
 *
 *   hd_gendocs <outdir>
 *
 * writes one page per compiled-in module, named after its source file
 * (core.html, mod_mime.html, mod_mpm_prefork.html ...; see page_base), and
 * <outdir>/directives.html, an alphabetical index. The output depends only on
 * the tables (no dates, no commit), so a rebuild leaves the files unchanged.
 *
 * A build tool, not part of the server: it uses plain stdio. Each file is
 * written to a temporary name beside it and renamed into place, so a reader
 * (or an interrupted build) never sees half a page.
 */
#include "config.h"
#include "hd.h"
#include "module.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define NAME_MAX_LEN 128

typedef struct {
    const hd_command_t *cmd;
    const hd_module_t *module;
} entry_t;

static const char *outdir;

/* Everything that comes from a table goes through here: help texts may hold
 * "<Directory>" or quotes. */
static void put_esc(FILE *f, const char *s)
{
    for (; s != NULL && *s != '\0'; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&#39;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

/*
 * "mod_mime.c" -> "mod_mime", "core.c" -> "core". A module whose source file
 * is named otherwise (the prefork MPM's is "prefork.c", as Apache's, so that
 * <IfModule prefork.c> works) gets "mod_" + its name: "mod_mpm_prefork". Every
 * page but core.html is then mod_*.html, which .gitignore expects of generated
 * pages. Anything but [A-Za-z0-9_.-] becomes '_' so a table can never make us
 * write outside outdir.
 */
static void page_base(const hd_module_t *m, char *buf, size_t size)
{
    const char *src = m->source_name != NULL ? m->source_name : "";
    char raw[NAME_MAX_LEN];
    size_t n = strlen(src);
    if ((strncmp(src, "mod_", 4) == 0 || strcmp(src, "core.c") == 0) && n > 2 &&
        strcmp(src + n - 2, ".c") == 0) {
        snprintf(raw, sizeof(raw), "%.*s", (int)(n - 2), src);
    } else {
        snprintf(raw, sizeof(raw), "mod_%s", m->name);
    }
    size_t i;
    for (i = 0; raw[i] != '\0' && i + 1 < size; i++) {
        char c = raw[i];
        buf[i] = (isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.') ? c : '_';
    }
    buf[i] = '\0';
    if (i == 0 || buf[0] == '.') {
        snprintf(buf, size, "module_%d", m->index);
    }
}

/* Apache's anchors: the directive name in lower case ("<Directory" ->
 * "directory"), so links like core.html#documentroot keep working. */
static void anchor_of(const char *name, char *buf, size_t size)
{
    size_t o = 0;
    for (const char *p = name; *p != '\0' && o + 1 < size; p++) {
        unsigned char c = (unsigned char)*p;
        if (isalnum(c) || c == '_' || c == '-') {
            buf[o++] = (char)tolower(c);
        }
    }
    buf[o] = '\0';
}

static bool is_section(const hd_command_t *cmd)
{
    return cmd->name[0] == '<';
}

/* Name as a reader knows it: "<Directory" is shown as "<Directory>". */
static void put_name(FILE *f, const hd_command_t *cmd)
{
    put_esc(f, cmd->name);
    if (is_section(cmd) && cmd->name[strlen(cmd->name) - 1] != '>') {
        put_esc(f, ">");
    }
}

static void put_syntax(FILE *f, const hd_command_t *cmd)
{
    const char *syn = cmd->syntax != NULL ? cmd->syntax : "";
    if (is_section(cmd)) {
        if (syn[0] == '<') {
            put_esc(f, syn);
            return;
        }
        /* "<Directory" + "directory-path" -> "<Directory directory-path> ... </Directory>" */
        const char *base = cmd->name + 1;
        size_t blen = strcspn(base, ">");
        fputs("&lt;", f);
        fprintf(f, "%.*s", (int)blen, base);
        if (syn[0] != '\0') {
            fputc(' ', f);
            put_esc(f, syn);
        }
        fputs("&gt; ... &lt;/", f);
        fprintf(f, "%.*s", (int)blen, base);
        fputs("&gt;", f);
        return;
    }
    put_esc(f, cmd->name);
    if (syn[0] != '\0') {
        fputc(' ', f);
        put_esc(f, syn);
    }
}

/* A default written either as "On" or as "KeepAlive On" reads the same. */
static void put_default(FILE *f, const hd_command_t *cmd)
{
    size_t n = strlen(cmd->name);
    if (strncasecmp(cmd->dflt, cmd->name, n) == 0 &&
        (cmd->dflt[n] == ' ' || cmd->dflt[n] == '\0')) {
        put_esc(f, cmd->dflt);
        return;
    }
    put_esc(f, cmd->name);
    if (cmd->dflt[0] != '\0') {
        fputc(' ', f);
        put_esc(f, cmd->dflt);
    }
}

/* Apache's vocabulary: "directory" covers <Directory>, <Location> and
 * <Files>; where only some of those are allowed we say which. */
static void put_context(FILE *f, unsigned ctx)
{
    bool first = true;
    if (ctx & HD_CTX_MAIN) {
        fputs("server config", f);
        first = false;
    }
    if (ctx & HD_CTX_DIR) {
        fputs(first ? "directory" : ", directory", f);
        first = false;
        if ((ctx & HD_CTX_DIR) != HD_CTX_DIR) {
            static const struct {
                unsigned bit;
                const char *text;
            } parts[] = {
                {HD_CTX_DIRECTORY, "&lt;Directory&gt;"},
                {HD_CTX_LOCATION, "&lt;Location&gt;"},
                {HD_CTX_FILES, "&lt;Files&gt;"},
            };
            const char *sep = " (";
            for (size_t i = 0; i < HD_ARRAY_SIZE(parts); i++) {
                if (ctx & parts[i].bit) {
                    fprintf(f, "%s%s", sep, parts[i].text);
                    sep = ", ";
                }
            }
            fputs(" only)", f);
        }
    }
    if (first) {
        fputs("none", f);
    }
}

static void put_status(FILE *f, const hd_module_t *m)
{
    if (m->mpm != NULL) {
        fprintf(f,
                "MPM: compiled in, runs when loaded with <code>LoadModule %s_module</code>;"
                " exactly one MPM is loaded",
                m->name);
    } else if (m->always_loaded) {
        fputs("Compiled in, always active", f);
    } else {
        fprintf(f, "Compiled in, active after <code>LoadModule %s_module</code>", m->name);
    }
}

static void put_header(FILE *f, const char *title, const char *crumb)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
          f);
    fputs("<title>", f);
    put_esc(f, title);
    fputs(" - httpd " HD_VERSION " manual</title>\n"
          "<link rel=\"stylesheet\" href=\"../style.css\">\n</head>\n<body>\n"
          "<!-- Generated by hd_gendocs from the directive tables: edit the tables, "
          "not this file. -->\n"
          "<nav class=\"crumbs\"><a href=\"../index.html\">Manual</a>",
          f);
    if (crumb != NULL) {
        fputs(" &rsaquo; <a href=\"directives.html\">Directives</a> &rsaquo; ", f);
        put_esc(f, crumb);
    } else {
        fputs(" &rsaquo; Directives", f);
    }
    fputs("</nav>\n<main>\n", f);
}

static void put_footer(FILE *f)
{
    fputs("</main>\n<footer>httpd " HD_VERSION " &middot; "
          "<a href=\"../index.html\">Manual</a> &middot; "
          "<a href=\"directives.html\">Directive index</a></footer>\n</body>\n</html>\n",
          f);
}

/* Writes into a temporary file beside the target; finish_file renames it. */
static FILE *start_file(const char *name, char *tmp, size_t tmpsize)
{
    int n = snprintf(tmp, tmpsize, "%s/.%s.tmp%ld", outdir, name, (long)getpid());
    if (n < 0 || (size_t)n >= tmpsize) {
        fprintf(stderr, "hd_gendocs: path too long: %s/%s\n", outdir, name);
        return NULL;
    }
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        fprintf(stderr, "hd_gendocs: %s: %s\n", tmp, strerror(errno));
    }
    return f;
}

static int finish_file(FILE *f, const char *name, const char *tmp)
{
    char path[4096];
    int n = snprintf(path, sizeof(path), "%s/%s", outdir, name);
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0) {
        bad = true;
    }
    if (bad || n < 0 || (size_t)n >= sizeof(path)) {
        fprintf(stderr, "hd_gendocs: %s: write failed\n", tmp);
        remove(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        fprintf(stderr, "hd_gendocs: rename %s -> %s: %s\n", tmp, path, strerror(errno));
        remove(tmp);
        return -1;
    }
    return 0;
}

static int cmp_entry(const void *a, const void *b)
{
    const entry_t *x = a, *y = b;
    const char *xn = x->cmd->name + (x->cmd->name[0] == '<');
    const char *yn = y->cmd->name + (y->cmd->name[0] == '<');
    int c = strcasecmp(xn, yn);
    if (c == 0) {
        c = x->module->index - y->module->index;
    }
    return c;
}

/* Every directive, sorted as Apache's index is (sections by their name). */
static entry_t *collect(const hd_module_t *only, size_t *count)
{
    size_t n = 0;
    for (int i = 0; hd_builtin_modules[i] != NULL; i++) {
        const hd_module_t *m = hd_builtin_modules[i];
        if ((only == NULL || only == m) && m->commands != NULL) {
            for (const hd_command_t *c = m->commands; c->name != NULL; c++) {
                n++;
            }
        }
    }
    entry_t *v = calloc(n + 1, sizeof(*v));
    if (v == NULL) {
        fputs("hd_gendocs: out of memory\n", stderr);
        exit(1);
    }
    size_t k = 0;
    for (int i = 0; hd_builtin_modules[i] != NULL; i++) {
        const hd_module_t *m = hd_builtin_modules[i];
        if ((only == NULL || only == m) && m->commands != NULL) {
            for (const hd_command_t *c = m->commands; c->name != NULL; c++) {
                v[k].cmd = c;
                v[k].module = m;
                k++;
            }
        }
    }
    qsort(v, n, sizeof(*v), cmp_entry);
    *count = n;
    return v;
}

static void put_directive(FILE *f, const hd_command_t *cmd, const char *page)
{
    char anchor[NAME_MAX_LEN];
    anchor_of(cmd->name, anchor, sizeof(anchor));
    fprintf(f, "<section class=\"directive\" id=\"%s\">\n<h2><a href=\"#%s\">", anchor, anchor);
    put_name(f, cmd);
    fputs("</a> directive</h2>\n<table class=\"directive\">\n<tr><th>Description:</th><td>", f);
    put_esc(f, cmd->help != NULL ? cmd->help : "");
    fputs("</td></tr>\n<tr><th>Syntax:</th><td><code>", f);
    put_syntax(f, cmd);
    fputs("</code></td></tr>\n<tr><th>Default:</th><td>", f);
    if (cmd->dflt != NULL) {
        fputs("<code>", f);
        put_default(f, cmd);
        fputs("</code>", f);
    } else {
        fputs("none", f);
    }
    fputs("</td></tr>\n<tr><th>Context:</th><td>", f);
    put_context(f, cmd->contexts);
    fputs("</td></tr>\n<tr><th>Module:</th><td>", f);
    put_esc(f, page);
    fputs("</td></tr>\n</table>\n</section>\n", f);
}

/* Hand-written pages that say more about a module than its directives do. */
static const struct {
    const char *module;
    const char *href;
    const char *text;
} see_also[] = {
    {"status", "../status.html",
     "Every field of every status format (HTML, ?auto, ?json, ?metrics) is described in"},
    {"log_config", "../logs.html", "Log formats, buffering and rotation are described in"},
    {"core", "../configuring.html", "How configuration files are read is described in"},
};

static void put_see_also(FILE *f, const hd_module_t *m)
{
    for (size_t i = 0; i < sizeof(see_also) / sizeof(see_also[0]); i++) {
        if (strcmp(see_also[i].module, m->name) == 0) {
            fprintf(f, "<p>%s <a href=\"%s\">%s</a>.</p>\n", see_also[i].text, see_also[i].href,
                    see_also[i].href + 3);
        }
    }
}

static int write_module_page(const hd_module_t *m)
{
    char page[NAME_MAX_LEN], file[NAME_MAX_LEN + 8], tmp[4096];
    page_base(m, page, sizeof(page));
    snprintf(file, sizeof(file), "%s.html", page);
    FILE *f = start_file(file, tmp, sizeof(tmp));
    if (f == NULL) {
        return -1;
    }
    bool core = strcmp(m->name, "core") == 0;
    char title[NAME_MAX_LEN + 16];
    if (core) {
        snprintf(title, sizeof(title), "Core features");
    } else {
        snprintf(title, sizeof(title), "Module %s", page);
    }
    put_header(f, title, page);
    fputs("<h1>", f);
    put_esc(f, title);
    fputs("</h1>\n<table class=\"module\">\n<tr><th>Module identifier:</th><td><code>", f);
    put_esc(f, m->name);
    fputs("_module</code></td></tr>\n<tr><th>Source file:</th><td><code>", f);
    put_esc(f, m->source_name != NULL ? m->source_name : m->name);
    fputs("</code></td></tr>\n<tr><th>Status:</th><td>", f);
    put_status(f, m);
    fputs("</td></tr>\n</table>\n", f);
    put_see_also(f, m);

    size_t n;
    entry_t *v = collect(m, &n);
    if (n == 0) {
        fputs("<p>This module has no directives.</p>\n", f);
    } else {
        fputs("<h2>Directives</h2>\n<ul class=\"toc\">\n", f);
        for (size_t i = 0; i < n; i++) {
            char anchor[NAME_MAX_LEN];
            anchor_of(v[i].cmd->name, anchor, sizeof(anchor));
            fprintf(f, "<li><a href=\"#%s\">", anchor);
            put_name(f, v[i].cmd);
            fputs("</a></li>\n", f);
        }
        fputs("</ul>\n", f);
        for (size_t i = 0; i < n; i++) {
            put_directive(f, v[i].cmd, page);
        }
    }
    free(v);
    put_footer(f);
    return finish_file(f, file, tmp);
}

static int write_index(void)
{
    char tmp[4096];
    FILE *f = start_file("directives.html", tmp, sizeof(tmp));
    if (f == NULL) {
        return -1;
    }
    put_header(f, "Directive index", NULL);
    fputs("<h1>Directive index</h1>\n"
          "<p>Every configuration directive this server knows, generated from the same "
          "tables that the configuration reader uses and that <code>httpd -L</code> "
          "prints. A directive not listed here is an error in a configuration file.</p>\n"
          "<h2>Modules</h2>\n<ul class=\"modules\">\n",
          f);
    for (int i = 0; hd_builtin_modules[i] != NULL; i++) {
        const hd_module_t *m = hd_builtin_modules[i];
        char page[NAME_MAX_LEN];
        page_base(m, page, sizeof(page));
        fprintf(f, "<li><a href=\"%s.html\">", page);
        put_esc(f, page);
        fputs("</a> &mdash; ", f);
        put_status(f, m);
        fputs("</li>\n", f);
    }
    fputs("</ul>\n<h2>Directives</h2>\n", f);

    size_t n;
    entry_t *v = collect(NULL, &n);
    /* A jump bar of the initials in use, as Apache's index has. */
    fputs("<p class=\"letters\">", f);
    int last = 0;
    for (size_t i = 0; i < n; i++) {
        int c = toupper((unsigned char)v[i].cmd->name[v[i].cmd->name[0] == '<']);
        if (c != last) {
            fprintf(f, "%s<a href=\"#letter-%c\">%c</a>", last ? " " : "", tolower(c), c);
            last = c;
        }
    }
    fputs("</p>\n<table class=\"index\">\n<thead><tr><th>Directive</th><th>Module</th>"
          "<th>Context</th><th>Description</th></tr></thead>\n<tbody>\n",
          f);
    last = 0;
    for (size_t i = 0; i < n; i++) {
        const hd_command_t *cmd = v[i].cmd;
        int c = toupper((unsigned char)cmd->name[cmd->name[0] == '<']);
        char page[NAME_MAX_LEN], anchor[NAME_MAX_LEN];
        page_base(v[i].module, page, sizeof(page));
        anchor_of(cmd->name, anchor, sizeof(anchor));
        if (c != last) {
            fprintf(f, "<tr id=\"letter-%c\">", tolower(c));
            last = c;
        } else {
            fputs("<tr>", f);
        }
        fprintf(f, "<td><a href=\"%s.html#%s\"><code>", page, anchor);
        put_name(f, cmd);
        fprintf(f, "</code></a></td><td><a href=\"%s.html\">%s</a></td><td>", page, page);
        put_context(f, cmd->contexts);
        fputs("</td><td>", f);
        put_esc(f, cmd->help != NULL ? cmd->help : "");
        fputs("</td></tr>\n", f);
    }
    free(v);
    fputs("</tbody>\n</table>\n", f);
    put_footer(f);
    return finish_file(f, "directives.html", tmp);
}

int main(int argc, char *argv[])
{
    if (argc != 2 || argv[1][0] == '\0' || argv[1][0] == '-') {
        fputs("usage: hd_gendocs <outdir>\n"
              "Writes <outdir>/<module>.html and <outdir>/directives.html from the "
              "directive tables.\n",
              stderr);
        return 2;
    }
    outdir = argv[1];
    if (mkdir(outdir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "hd_gendocs: %s: %s\n", outdir, strerror(errno));
        return 1;
    }
    hd_modules_init();

    int rc = 0;
    for (int i = 0; hd_builtin_modules[i] != NULL; i++) {
        if (write_module_page(hd_builtin_modules[i]) != 0) {
            rc = 1;
        }
    }
    if (write_index() != 0) {
        rc = 1;
    }
    return rc;
}
