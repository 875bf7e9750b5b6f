/* Minimal checks for the C unit tests: a failed CHECK prints its location and
 * the run goes on; check_report prints "NAME: N passed, N failed". */
#ifndef AC_OPT_CHECK_H
#define AC_OPT_CHECK_H
#include <stdio.h>

static int checks_passed, checks_failed;

#define CHECK(cond) do { \
    if (cond) checks_passed++; \
    else { checks_failed++; fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } \
} while (0)

#define CHECK_EQ(a, b) do { \
    unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b); \
    if (a_ == b_) checks_passed++; \
    else { checks_failed++; fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%llu != %llu)\n", \
                                    __FILE__, __LINE__, #a, #b, a_, b_); } \
} while (0)

static inline int check_report(const char *name) {
    printf("%s: %d passed, %d failed\n", name, checks_passed, checks_failed);
    return checks_failed != 0;
}

#endif
