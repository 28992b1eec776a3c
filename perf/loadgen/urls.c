/*
 * What to load: the target URL (loopback only, by this machine's policy),
 * the URL list from the argument, a weighted file or a document root, and
 * each URL's request built once as bytes so that sending one is one write.
 */
#include "loadgen.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_URLS 100000
#define MAX_WEIGHT 1e9
#define MAX_DEPTH 32

static const char *fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static const char *fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return err;
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "hd_loadgen: out of memory\n");
        exit(2);
    }
    return p;
}

static bool is_loopback4(const struct in_addr *a)
{
    return (ntohl(a->s_addr) >> 24) == 127;
}

static bool is_loopback6(const struct in6_addr *a)
{
    if (IN6_IS_ADDR_LOOPBACK(a))
        return true;
    /* ::ffff:127.x.y.z is IPv4 loopback by another name */
    return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
}

const char *lg_parse_target(lg_config_t *cfg, const char *url, char *err, size_t errlen)
{
    const char *auth, *end, *host_end, *p;
    char host[256];
    size_t hl;
    unsigned long port = 80;

    if (strncasecmp(url, "https://", 8) == 0)
        return fail(err, errlen, "only http:// is supported, not https: %s", url);
    if (strncasecmp(url, "http://", 7) != 0)
        return fail(err, errlen, "the target must be http://HOST:PORT[/path], not '%s'", url);
    auth = url + 7;
    end = auth + strcspn(auth, "/?#");
    if (memchr(auth, '@', (size_t)(end - auth)))
        return fail(err, errlen, "user information in the URL is not supported: %s", url);
    if (*auth == '[') {
        host_end = memchr(auth, ']', (size_t)(end - auth));
        if (host_end == NULL)
            return fail(err, errlen, "unclosed '[' in the URL: %s", url);
        hl = (size_t)(host_end - auth - 1);
        if (hl >= sizeof(host))
            return fail(err, errlen, "host too long in %s", url);
        memcpy(host, auth + 1, hl);
        p = host_end + 1;
    } else {
        host_end = memchr(auth, ':', (size_t)(end - auth));
        if (host_end == NULL)
            host_end = end;
        hl = (size_t)(host_end - auth);
        if (hl >= sizeof(host))
            return fail(err, errlen, "host too long in %s", url);
        memcpy(host, auth, hl);
        p = host_end;
    }
    host[hl] = '\0';
    if (hl == 0)
        return fail(err, errlen, "no host in the URL: %s", url);
    if (p < end) {
        char *q;

        if (*p != ':')
            return fail(err, errlen, "junk after the host in the URL: %s", url);
        errno = 0;
        port = strtoul(p + 1, &q, 10);
        if (q != end || q == p + 1 || errno || port == 0 || port > 65535)
            return fail(err, errlen, "bad port in the URL: %s", url);
    }

    memset(&cfg->addr, 0, sizeof(cfg->addr));
    if (strcasecmp(host, "localhost") == 0 || strchr(host, ':') == NULL) {
        struct sockaddr_in *sin = (struct sockaddr_in *)&cfg->addr;

        if (strcasecmp(host, "localhost") == 0) {
            inet_pton(AF_INET, "127.0.0.1", &sin->sin_addr);
        } else if (inet_pton(AF_INET, host, &sin->sin_addr) != 1) {
            return fail(err, errlen, "host '%s' is not an IP address or localhost "
                        "(no name lookups)", host);
        }
        if (!is_loopback4(&sin->sin_addr))
            return fail(err, errlen, "refusing %s: only loopback targets (127.0.0.0/8, ::1) "
                        "are allowed on this machine", host);
        sin->sin_family = AF_INET;
        sin->sin_port = htons((uint16_t)port);
        cfg->addrlen = sizeof(*sin);
    } else {
        struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&cfg->addr;

        if (inet_pton(AF_INET6, host, &sin6->sin6_addr) != 1)
            return fail(err, errlen, "host '%s' is not an IP address", host);
        if (!is_loopback6(&sin6->sin6_addr))
            return fail(err, errlen, "refusing %s: only loopback targets (127.0.0.0/8, ::1) "
                        "are allowed on this machine", host);
        sin6->sin6_family = AF_INET6;
        sin6->sin6_port = htons((uint16_t)port);
        cfg->addrlen = sizeof(*sin6);
    }

    /* the Host header names the server as the URL does */
    snprintf(cfg->host, sizeof(cfg->host), "%.*s", (int)(end - auth), auth);

    p = end;
    hl = strcspn(p, "#");
    if (hl >= sizeof(cfg->path))
        return fail(err, errlen, "path too long in the URL");
    for (size_t i = 0; i < hl; i++) {
        if ((unsigned char)p[i] <= ' ' || p[i] == 0x7f)
            return fail(err, errlen, "space or control character in the URL path: %s", url);
    }
    if (hl > 0 && *p == '?') {
        /* "http://h:p?q" means "/?q" */
        snprintf(cfg->path, sizeof(cfg->path), "/%.*s", (int)hl, p);
    } else {
        memcpy(cfg->path, p, hl);
        cfg->path[hl] = '\0';
    }
    return NULL;
}

/* Percent-encodes a file path for the request line: unreserved bytes and "/" stay. */
static char *encode_path(const char *raw)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(raw), i, o = 0;
    char *out = xrealloc(NULL, 3 * n + 2);

    if (raw[0] != '/')
        out[o++] = '/';
    for (i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)raw[i];

        if (isalnum(ch) || strchr("/-._~!$&'()*+,;=:@", ch)) {
            out[o++] = (char)ch;
        } else {
            out[o++] = '%';
            out[o++] = hex[ch >> 4];
            out[o++] = hex[ch & 15];
        }
    }
    out[o] = '\0';
    return out;
}

static void add_url(lg_config_t *cfg, char *path, double weight)
{
    if (cfg->nurls % 64 == 0)
        cfg->urls = xrealloc(cfg->urls, (cfg->nurls + 64) * sizeof(*cfg->urls));
    memset(&cfg->urls[cfg->nurls], 0, sizeof(*cfg->urls));
    cfg->urls[cfg->nurls].path = path;
    cfg->urls[cfg->nurls].weight = weight;
    cfg->nurls++;
}

static const char *load_file(lg_config_t *cfg, char *err, size_t errlen)
{
    FILE *f = fopen(cfg->url_file, "r");
    char line[8192];
    unsigned lineno = 0;

    if (f == NULL)
        return fail(err, errlen, "cannot open URL list %s: %s", cfg->url_file, strerror(errno));
    while (fgets(line, sizeof(line), f)) {
        char *s = line, *tok[3] = { NULL, NULL, NULL };
        int ntok = 0;

        lineno++;
        if (strchr(line, '\n') == NULL && !feof(f)) {
            fclose(f);
            return fail(err, errlen, "%s:%u: line too long", cfg->url_file, lineno);
        }
        s[strcspn(s, "#")] = '\0';
        for (char *t = strtok(s, " \t\r\n"); t; t = strtok(NULL, " \t\r\n")) {
            if (ntok == 3)
                break;
            tok[ntok++] = t;
        }
        if (ntok == 0)
            continue;
        if (ntok == 3) {
            fclose(f);
            return fail(err, errlen, "%s:%u: expected \"weight path\" or \"path\"",
                        cfg->url_file, lineno);
        }
        {
            /* "weight path" as documented, or "path weight": a path starts with '/' */
            const char *path = tok[0], *wtok = ntok == 2 ? tok[1] : NULL;
            double weight = 1;

            if (ntok == 2 && tok[0][0] != '/') {
                path = tok[1];
                wtok = tok[0];
            }
            if (wtok) {
                char *q;

                errno = 0;
                weight = strtod(wtok, &q);
                if (*q || q == wtok || errno || !(weight > 0) || weight > MAX_WEIGHT) {
                    fclose(f);
                    return fail(err, errlen, "%s:%u: weight '%s' is not a number above 0 "
                                "and at most %.0f", cfg->url_file, lineno, wtok, MAX_WEIGHT);
                }
            }
            if (path[0] != '/') {
                fclose(f);
                return fail(err, errlen, "%s:%u: path '%s' does not start with '/'",
                            cfg->url_file, lineno, path);
            }
            if (cfg->nurls == MAX_URLS) {
                fclose(f);
                return fail(err, errlen, "%s: more than %d URLs", cfg->url_file, MAX_URLS);
            }
            add_url(cfg, strdup(path), weight);
        }
    }
    fclose(f);
    if (cfg->nurls == 0)
        return fail(err, errlen, "%s: no URLs in the list", cfg->url_file);
    return NULL;
}

static bool wanted_name(const char *name)
{
    size_t n = strlen(name);

    return (n > 5 && strcmp(name + n - 5, ".html") == 0) ||
           (n > 4 && strcmp(name + n - 4, ".htm") == 0);
}

/* Collects the pages under @dir (relative name @rel) into @cfg, depth first. */
static int walk(lg_config_t *cfg, const char *dir, const char *rel, int depth)
{
    DIR *d;
    struct dirent *e;

    if (depth > MAX_DEPTH || (d = opendir(dir)) == NULL)
        return -1;
    while ((e = readdir(d)) != NULL) {
        char full[4096], sub[4096];
        struct stat lst, st;

        if (e->d_name[0] == '.')
            continue;
        if (snprintf(full, sizeof(full), "%s/%s", dir, e->d_name) >= (int)sizeof(full) ||
            snprintf(sub, sizeof(sub), "%s/%s", rel, e->d_name) >= (int)sizeof(sub))
            continue;
        if (lstat(full, &lst) < 0)
            continue;
        /* directories only when real, so that a link cannot make a loop */
        if (S_ISDIR(lst.st_mode)) {
            walk(cfg, full, sub, depth + 1);
            continue;
        }
        if (!wanted_name(e->d_name) || stat(full, &st) < 0 || !S_ISREG(st.st_mode))
            continue;
        if (cfg->nurls < MAX_URLS)
            add_url(cfg, encode_path(sub), 1);
    }
    closedir(d);
    return 0;
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const lg_url_t *)a)->path, ((const lg_url_t *)b)->path);
}

static const char *load_docroot(lg_config_t *cfg, char *err, size_t errlen)
{
    char dir[4096], rel[4096];
    const char *sub = cfg->path[0] ? cfg->path : "/";
    size_t n;

    if (strchr(sub, '?') || strchr(sub, '%') || strstr(sub, "/../") ||
        (strlen(sub) >= 3 && strcmp(sub + strlen(sub) - 3, "/..") == 0))
        return fail(err, errlen, "with --docroot the URL path names a directory under it, "
                    "not '%s'", sub);
    snprintf(rel, sizeof(rel), "%s", sub);
    n = strlen(rel);
    while (n > 0 && rel[n - 1] == '/')
        rel[--n] = '\0';
    if (snprintf(dir, sizeof(dir), "%s%s", cfg->docroot, rel) >= (int)sizeof(dir))
        return fail(err, errlen, "--docroot path too long");
    {
        struct stat st;

        if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
            return fail(err, errlen, "--docroot: %s is not a directory", dir);
    }
    walk(cfg, dir, rel, 0);
    if (cfg->nurls == 0)
        return fail(err, errlen, "--docroot: no .html files under %s", dir);
    qsort(cfg->urls, cfg->nurls, sizeof(*cfg->urls), by_path);
    return NULL;
}

static bool user_has(const lg_config_t *cfg, const char *name)
{
    size_t n = strlen(name);

    for (size_t i = 0; i < cfg->nheaders; i++) {
        if (strncasecmp(cfg->headers[i], name, n) == 0 && cfg->headers[i][n] == ':')
            return true;
    }
    return false;
}

static void build_request(const lg_config_t *cfg, lg_url_t *u)
{
    size_t cap = strlen(u->path) + strlen(cfg->host) + 256, len;
    char *r;

    for (size_t i = 0; i < cfg->nheaders; i++)
        cap += strlen(cfg->headers[i]) + 2;
    r = xrealloc(NULL, cap);
    len = (size_t)snprintf(r, cap, "GET %s HTTP/1.1\r\n", u->path);
    if (!user_has(cfg, "Host"))
        len += (size_t)snprintf(r + len, cap - len, "Host: %s\r\n", cfg->host);
    if (!user_has(cfg, "User-Agent"))
        len += (size_t)snprintf(r + len, cap - len, "User-Agent: hd_loadgen/" LG_VERSION "\r\n");
    for (size_t i = 0; i < cfg->nheaders; i++)
        len += (size_t)snprintf(r + len, cap - len, "%s\r\n", cfg->headers[i]);
    if (!cfg->keepalive && !user_has(cfg, "Connection"))
        len += (size_t)snprintf(r + len, cap - len, "Connection: close\r\n");
    len += (size_t)snprintf(r + len, cap - len, "\r\n");
    u->req = r;
    u->req_len = len;
}

void lg_config_free(lg_config_t *cfg)
{
    for (size_t i = 0; i < cfg->nurls; i++) {
        free(cfg->urls[i].path);
        free(cfg->urls[i].req);
    }
    free(cfg->urls);
    free(cfg->cumw);
    free(cfg->headers);
    cfg->urls = NULL;
    cfg->nurls = 0;
}

const char *lg_load_urls(lg_config_t *cfg, char *err, size_t errlen)
{
    const char *e = NULL;

    if (cfg->url_file && cfg->docroot)
        return fail(err, errlen, "give -u FILE or --docroot DIR, not both");
    if (cfg->url_file) {
        if (cfg->path[0] && strcmp(cfg->path, "/") != 0)
            return fail(err, errlen, "-u %s names the paths: the URL must not have one ('%s')",
                        cfg->url_file, cfg->path);
        cfg->url_source = LG_SRC_FILE;
        e = load_file(cfg, err, errlen);
    } else if (cfg->docroot) {
        cfg->url_source = LG_SRC_DOCROOT;
        e = load_docroot(cfg, err, errlen);
    } else {
        cfg->url_source = LG_SRC_ARGUMENT;
        add_url(cfg, strdup(cfg->path[0] ? cfg->path : "/"), 1);
    }
    if (e)
        return e;
    cfg->cumw = xrealloc(NULL, cfg->nurls * sizeof(*cfg->cumw));
    cfg->total_weight = 0;
    for (size_t i = 0; i < cfg->nurls; i++) {
        cfg->total_weight += cfg->urls[i].weight;
        cfg->cumw[i] = cfg->total_weight;
        build_request(cfg, &cfg->urls[i]);
    }
    return NULL;
}
