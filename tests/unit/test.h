/*
 * A minimal unit-test harness: CHECK records a failure and goes on,
 * TEST_MAIN runs every test and exits non-zero if any check failed.
 */
#ifndef HD_TEST_H
#define HD_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hd_test_failures;
static int hd_test_checks;

#define CHECK(cond)                                                                 \
    do {                                                                            \
        hd_test_checks++;                                                           \
        if (!(cond)) {                                                              \
            hd_test_failures++;                                                     \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                           \
    } while (0)

#define CHECK_INT(a, b)                                                                      \
    do {                                                                                     \
        long long a_ = (long long)(a), b_ = (long long)(b);                                  \
        hd_test_checks++;                                                                    \
        if (a_ != b_) {                                                                      \
            hd_test_failures++;                                                              \
            fprintf(stderr, "%s:%d: %s == %lld, expected %lld\n", __FILE__, __LINE__, #a, a_, \
                    b_);                                                                     \
        }                                                                                    \
    } while (0)

#define CHECK_STR(a, b)                                                                   \
    do {                                                                                  \
        const char *a_ = (a), *b_ = (b);                                                  \
        hd_test_checks++;                                                                 \
        if (a_ == NULL || b_ == NULL || strcmp(a_, b_) != 0) {                            \
            hd_test_failures++;                                                           \
            fprintf(stderr, "%s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a, \
                    a_ ? a_ : "(null)", b_ ? b_ : "(null)");                              \
        }                                                                                 \
    } while (0)

#define RUN(test)                                   \
    do {                                            \
        int before_ = hd_test_failures;             \
        test();                                     \
        printf("%s %s\n", hd_test_failures == before_ ? "ok  " : "FAIL", #test); \
    } while (0)

#define TEST_DONE()                                                                   \
    do {                                                                              \
        printf("%d checks, %d failed\n", hd_test_checks, hd_test_failures);           \
        return hd_test_failures ? 1 : 0;                                              \
    } while (0)

#endif
