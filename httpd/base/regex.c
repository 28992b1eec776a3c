/*
 * PCRE2 behind one small interface. The match data a match needs is kept per
 * thread (released when the thread ends), so matching a request allocates
 * nothing; patterns are JIT-compiled when the library supports it, and fall
 * back to the interpreter when it does not (the result is the same).
 */
#include "regex.h"

#include "pool.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <pthread.h>
#include <string.h>

/* Enough pairs for any pattern a config uses; more groups still match. */
#define OVECTOR_PAIRS 32

struct hd_regex {
    pcre2_code *code;
    const char *pattern;
    int groups;
};

static pthread_key_t match_key;
static pthread_once_t match_once = PTHREAD_ONCE_INIT;

static void match_data_free(void *md)
{
    pcre2_match_data_free(md);
}

static void match_key_init(void)
{
    pthread_key_create(&match_key, match_data_free);
}

static pcre2_match_data *thread_match_data(void)
{
    pthread_once(&match_once, match_key_init);
    pcre2_match_data *md = pthread_getspecific(match_key);
    if (md == NULL) {
        md = pcre2_match_data_create(OVECTOR_PAIRS, NULL);
        pthread_setspecific(match_key, md);
    }
    return md;
}

static void code_free(void *code)
{
    pcre2_code_free(code);
}

hd_regex_t *hd_regex_compile(hd_pool_t *pool, const char *pattern, unsigned flags,
                             const char **err)
{
    int ec;
    PCRE2_SIZE off;
    uint32_t options = (flags & HD_REGEX_ICASE) ? PCRE2_CASELESS : 0;
    pcre2_code *code =
        pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, options, &ec, &off, NULL);

    if (code == NULL) {
        PCRE2_UCHAR msg[256];
        if (pcre2_get_error_message(ec, msg, sizeof(msg)) < 0) {
            strcpy((char *)msg, "unknown error");
        }
        *err = hd_psprintf(pool, "%s at offset %zu", (const char *)msg, (size_t)off);
        return NULL;
    }
    hd_pool_cleanup_add(pool, code_free, code);
    /* Not every build or CPU has a JIT: the interpreter gives the same answers. */
    (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);

    hd_regex_t *re = hd_palloc(pool, sizeof(*re));
    uint32_t groups = 0;
    pcre2_pattern_info(code, PCRE2_INFO_CAPTURECOUNT, &groups);
    re->code = code;
    re->pattern = hd_pstrdup(pool, pattern);
    re->groups = (int)groups;
    return re;
}

const char *hd_regex_pattern(const hd_regex_t *re)
{
    return re->pattern;
}

int hd_regex_groups(const hd_regex_t *re)
{
    return re->groups;
}

bool hd_regex_match(const hd_regex_t *re, const char *subject, hd_regmatch_t *m, int nmatch)
{
    pcre2_match_data *md = thread_match_data();
    int rc = pcre2_match(re->code, (PCRE2_SPTR)subject, PCRE2_ZERO_TERMINATED, 0, 0, md, NULL);

    if (rc < 0) {
        return false;
    }
    if (m != NULL) {
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        /* rc == 0: more groups than the ovector holds; all of it is filled */
        int filled = rc == 0 ? OVECTOR_PAIRS : rc;
        if (nmatch > HD_REGEX_MAX_MATCH) {
            nmatch = HD_REGEX_MAX_MATCH;
        }
        for (int i = 0; i < nmatch; i++) {
            if (i < filled && ov[2 * i] != PCRE2_UNSET) {
                m[i].so = (int)ov[2 * i];
                m[i].eo = (int)ov[2 * i + 1];
            } else {
                m[i].so = m[i].eo = -1;
            }
        }
    }
    return true;
}

/* One pass that measures (out NULL) or writes; returns the length, or -1 past the limit. */
static long subst_pass(char *out, const char *tmpl, const char *subject, const hd_regmatch_t *m,
                       int nmatch)
{
    long len = 0;

    for (const char *p = tmpl; *p != '\0'; p++) {
        const char *piece = p;
        size_t n = 1;

        if (*p == '$' && p[1] >= '0' && p[1] <= '9') {
            int no = p[1] - '0';
            p++;
            if (no >= nmatch || m[no].so < 0 || m[no].eo < m[no].so) {
                continue;
            }
            piece = subject + m[no].so;
            n = (size_t)(m[no].eo - m[no].so);
        } else if (*p == '\\' && p[1] != '\0') {
            piece = ++p;
        }
        if (len + (long)n > HD_REGEX_SUBST_MAX) {
            return -1;
        }
        if (out != NULL) {
            memcpy(out + len, piece, n);
        }
        len += (long)n;
    }
    return len;
}

char *hd_regex_subst(hd_pool_t *pool, const char *tmpl, const char *subject,
                     const hd_regmatch_t *m, int nmatch)
{
    if (m == NULL) {
        nmatch = 0;
    }
    long len = subst_pass(NULL, tmpl, subject, m, nmatch);
    if (len < 0) {
        return NULL;
    }
    char *out = hd_pnalloc(pool, (size_t)len + 1);
    subst_pass(out, tmpl, subject, m, nmatch);
    out[len] = '\0';
    return out;
}

int hd_regex_subst_max_ref(const char *tmpl)
{
    int max = -1;

    for (const char *p = tmpl; *p != '\0'; p++) {
        if (*p == '\\' && p[1] != '\0') {
            p++;
        } else if (*p == '$' && p[1] >= '0' && p[1] <= '9') {
            int no = p[1] - '0';
            if (no > max) {
                max = no;
            }
            p++;
        }
    }
    return max;
}
