/* Tiny test helpers: CHECK(cond) and CHECK_EQ_* report file:line and keep
 * going; test_summary() prints the counts and gives the exit status. */
#ifndef YCSB_TEST_CHECK_H
#define YCSB_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

static int checks_run, checks_failed;

#define CHECK(cond)                                                                     \
    do {                                                                                \
        checks_run++;                                                                   \
        if (!(cond)) {                                                                  \
            checks_failed++;                                                            \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);    \
        }                                                                               \
    } while (0)

#define CHECK_EQ_I(a, b)                                                                \
    do {                                                                                \
        long long a_ = (long long)(a), b_ = (long long)(b);                             \
        checks_run++;                                                                   \
        if (a_ != b_) {                                                                 \
            checks_failed++;                                                            \
            fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", __FILE__,       \
                    __LINE__, #a, a_, #b, b_);                                          \
        }                                                                               \
    } while (0)

#define CHECK_EQ_S(a, b)                                                                \
    do {                                                                                \
        const char *a_ = (a), *b_ = (b);                                                \
        checks_run++;                                                                   \
        if (strcmp(a_, b_) != 0) {                                                      \
            checks_failed++;                                                            \
            fprintf(stderr, "%s:%d: got\n  \"%s\"\nexpected\n  \"%s\"\n", __FILE__,     \
                    __LINE__, a_, b_);                                                  \
        }                                                                               \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                           \
    do {                                                                                \
        double a_ = (a), b_ = (b);                                                      \
        checks_run++;                                                                   \
        if (!(a_ - b_ <= (tol) && b_ - a_ <= (tol))) {                                  \
            checks_failed++;                                                            \
            fprintf(stderr, "%s:%d: %s = %.17g, expected %.17g within %g\n", __FILE__,  \
                    __LINE__, #a, a_, b_, (double)(tol));                               \
        }                                                                               \
    } while (0)

static inline int test_summary(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, checks_run, checks_failed);
    return checks_failed ? 1 : 0;
}

#endif
