/*
 * mod_authz_core: Require. The Require lines of one section form a
 * RequireAny: the client is let in when one of them matches. "Require not
 * ..." lines veto: a client they match is refused. Apache refuses a
 * negated Require outside <RequireAll>; here it means "everyone (or everyone
 * the positive lines let in) except ...". A section's Require lines replace
 * the inherited ones (AuthMerging Off), and with none configured anywhere
 * access is granted.
 */
#include "authz_core/authz_core.h"
#include "config.h"
#include "log.h"
#include "module.h"
#include "pool.h"
#include "request.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum { RULE_ALL_GRANTED, RULE_ALL_DENIED, RULE_LOCAL, RULE_IP } rule_kind_t;

typedef struct {
    int family;       /* AF_INET or AF_INET6 */
    uint8_t addr[16]; /* network order, already masked */
    uint8_t mask[16];
} subnet_t;

typedef struct {
    rule_kind_t kind;
    bool negate;
    subnet_t *nets;
    int nnets;
} rule_t;

typedef struct {
    rule_t *rules;
    int nrules;
} authz_dir_t;

static void *authz_create_dir(hd_pool_t *p, const char *path)
{
    return hd_pcalloc(p, sizeof(authz_dir_t));
}

/* The messages of APR's apr_ipsubnet_create errors, as mod_authz_host prints them. */
#define BAD_IP "The specified IP address is invalid."
#define BAD_MASK "The specified network mask is invalid."

static void mask_bits(uint8_t *mask, int bits, int len)
{
    memset(mask, 0, 16);
    for (int i = 0; i < len; i++) {
        int b = bits - 8 * i;
        mask[i] = b >= 8 ? 0xff : b <= 0 ? 0 : (uint8_t)(0xff << (8 - b));
    }
}

/* "10.1" and "10.1." mean 10.1.0.0/16, as APR's parse_network. */
static bool parse_partial_v4(const char *s, subnet_t *net)
{
    int octets = 0;
    memset(net, 0, sizeof(*net));
    while (*s != '\0') {
        if (!isdigit((unsigned char)*s) || octets == 4) {
            return false;
        }
        int v = 0;
        while (isdigit((unsigned char)*s)) {
            v = v * 10 + (*s++ - '0');
            if (v > 255) {
                return false;
            }
        }
        net->addr[octets++] = (uint8_t)v;
        if (*s == '.') {
            s++;
        }
    }
    if (octets == 0) {
        return false;
    }
    net->family = AF_INET;
    mask_bits(net->mask, 8 * octets, 4);
    return true;
}

static const char *parse_subnet(hd_pool_t *p, const char *word, subnet_t *net)
{
    const char *slash = strchr(word, '/');
    char *ip = slash ? hd_pstrndup(p, word, (size_t)(slash - word)) : hd_pstrdup(p, word);
    const char *mask = slash ? slash + 1 : NULL;
    const char *why = NULL;

    bool v6 = strchr(ip, ':') != NULL;
    if (!v6 && (ip[0] == '\0' || strspn(ip, "0123456789.") != strlen(ip))) {
        return hd_psprintf(p, "ip address '%s' appears to be invalid", word);
    }
    memset(net, 0, sizeof(*net));
    if (v6) {
        struct in6_addr a6;
        if (inet_pton(AF_INET6, ip, &a6) != 1 || IN6_IS_ADDR_V4MAPPED(&a6)) {
            why = BAD_IP;
        } else {
            net->family = AF_INET6;
            memcpy(net->addr, &a6, 16);
            mask_bits(net->mask, 128, 16);
        }
    } else if (mask == NULL) {
        if (!parse_partial_v4(ip, net)) {
            why = BAD_IP;
        }
    } else {
        struct in_addr a4;
        if (inet_pton(AF_INET, ip, &a4) != 1) {
            why = BAD_IP;
        } else {
            net->family = AF_INET;
            memcpy(net->addr, &a4, 4);
        }
    }
    if (why == NULL && mask != NULL) {
        int max = net->family == AF_INET ? 32 : 128;
        char *end;
        long bits = strtol(mask, &end, 10);
        struct in_addr m4;
        if (strchr(mask, '.') != NULL) {
            if (net->family != AF_INET || inet_pton(AF_INET, mask, &m4) != 1) {
                why = BAD_MASK;
            } else {
                memcpy(net->mask, &m4, 4);
            }
        } else if (mask[0] == '\0' || *end != '\0' || bits <= 0 || bits > max) {
            why = BAD_MASK;
        } else {
            mask_bits(net->mask, (int)bits, max / 8);
        }
    }
    if (why != NULL) {
        return hd_psprintf(p, "ip address '%s' appears to be invalid: %s", word, why);
    }
    for (int i = 0; i < 16; i++) {
        net->addr[i] &= net->mask[i];
    }
    return NULL;
}

static const char *cmd_require(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[])
{
    authz_dir_t *d = mconfig;
    int i = 0;
    rule_t rule = {0};
    if (argc > 0 && strcasecmp(argv[0], "not") == 0) {
        rule.negate = true;
        i++;
    }
    const char *provider = i < argc ? argv[i++] : "";
    if (strcasecmp(provider, "all") == 0) {
        if (argc - i != 1 ||
            (strcasecmp(argv[i], "granted") != 0 && strcasecmp(argv[i], "denied") != 0)) {
            return "Argument for 'Require all' must be 'granted' or 'denied'";
        }
        rule.kind = strcasecmp(argv[i], "granted") == 0 ? RULE_ALL_GRANTED : RULE_ALL_DENIED;
    } else if (strcasecmp(provider, "local") == 0) {
        rule.kind = RULE_LOCAL;
    } else if (strcasecmp(provider, "ip") == 0) {
        if (i >= argc) {
            return "'require ip' requires an argument";
        }
        rule.kind = RULE_IP;
        rule.nnets = argc - i;
        rule.nets = hd_palloc(cmd->pool, (size_t)rule.nnets * sizeof(subnet_t));
        for (int k = 0; k < rule.nnets; k++) {
            const char *err = parse_subnet(cmd->temp_pool, argv[i + k], &rule.nets[k]);
            if (err != NULL) {
                return err;
            }
        }
    } else {
        return hd_psprintf(cmd->temp_pool, "Unknown Authz provider: %s", provider);
    }
    rule_t *rules = hd_palloc(cmd->pool, (size_t)(d->nrules + 1) * sizeof(rule_t));
    if (d->nrules > 0) {
        memcpy(rules, d->rules, (size_t)d->nrules * sizeof(rule_t));
    }
    rules[d->nrules] = rule;
    d->rules = rules;
    d->nrules++;
    return NULL;
}

/* ---- matching -------------------------------------------------------- */

/* The peer as IPv4 (4 bytes) when it is IPv4 or IPv4-mapped IPv6, else IPv6 (16). */
static int peer_addr(const hd_conn_t *c, uint8_t out[16])
{
    if (c->peer.ss_family == AF_INET) {
        memcpy(out, &((const struct sockaddr_in *)&c->peer)->sin_addr, 4);
        return AF_INET;
    }
    if (c->peer.ss_family == AF_INET6) {
        const struct in6_addr *a6 = &((const struct sockaddr_in6 *)&c->peer)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(a6)) {
            memcpy(out, a6->s6_addr + 12, 4);
            return AF_INET;
        }
        memcpy(out, a6->s6_addr, 16);
        return AF_INET6;
    }
    return AF_UNSPEC;
}

static bool subnet_match(const subnet_t *net, int family, const uint8_t *addr)
{
    if (net->family != family) {
        return false;
    }
    int len = family == AF_INET ? 4 : 16;
    for (int i = 0; i < len; i++) {
        if ((addr[i] & net->mask[i]) != net->addr[i]) {
            return false;
        }
    }
    return true;
}

bool hd_authz_client_is_local(const hd_conn_t *c)
{
    uint8_t a[16];
    int family = peer_addr(c, a);
    if (family == AF_INET && a[0] == 127) {
        return true;
    }
    if (family == AF_INET6 && memcmp(a, &in6addr_loopback, 16) == 0) {
        return true;
    }
    return c->client_ip[0] != '\0' && strcmp(c->client_ip, c->local_ip) == 0;
}

static bool rule_matches(const rule_t *rule, const hd_conn_t *c)
{
    switch (rule->kind) {
    case RULE_ALL_GRANTED:
        return true;
    case RULE_ALL_DENIED:
        return false;
    case RULE_LOCAL:
        return hd_authz_client_is_local(c);
    case RULE_IP: {
        uint8_t a[16];
        int family = peer_addr(c, a);
        for (int i = 0; i < rule->nnets; i++) {
            if (subnet_match(&rule->nets[i], family, a)) {
                return true;
            }
        }
        return false;
    }
    }
    return false;
}

static int authz_access_checker(hd_request_t *r)
{
    const authz_dir_t *d = hd_get_dir_config(r, &hd_authz_core_module);
    if (d == NULL || d->nrules == 0) {
        return HD_OK;
    }
    bool positive = false, granted = false, vetoed = false;
    for (int i = 0; i < d->nrules; i++) {
        const rule_t *rule = &d->rules[i];
        bool m = rule_matches(rule, r->c);
        if (rule->negate) {
            vetoed |= m;
        } else {
            positive = true;
            granted |= m;
        }
    }
    if ((granted || !positive) && !vetoed) {
        return HD_OK;
    }
    hd_log_rerror(r, HD_LOG_ERR, "authz_core", "AH01630: client denied by server configuration: %s",
                  r->filename ? r->filename : r->uri);
    return 403;
}

static const hd_command_t authz_commands[] = {
    {"Require", cmd_require, 0, HD_TAKE_ARGV, HD_CTX_ANY, HD_CONF_DIR,
     "[not] all granted|all denied|local|ip address [address] ...", NULL,
     "specifies authorization directives which must be passed in order to authorize a request"},
    {.name = NULL},
};

hd_module_t hd_authz_core_module = {
    .name = "authz_core",
    .source_name = "mod_authz_core.c",
    .always_loaded = true,
    .commands = authz_commands,
    .create_dir_config = authz_create_dir,
    .access_checker = authz_access_checker,
};
