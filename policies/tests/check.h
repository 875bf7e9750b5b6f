/* A minimal test harness for the C unit tests: CHECK records a failure with
 * its location and goes on; each test binary ends with "N passed, N failed". */
#ifndef AC_CHECK_H
#define AC_CHECK_H
#include <stdio.h>

static int checks_passed, checks_failed;

#define CHECK(cond) do { \
    if (cond) checks_passed++; \
    else { checks_failed++; fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } \
} while (0)

#define CHECK_EQ(a, b) do { \
    long long a_ = (long long)(a), b_ = (long long)(b); \
    if (a_ == b_) checks_passed++; \
    else { checks_failed++; fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n", \
                                    __FILE__, __LINE__, #a, #b, a_, b_); } \
} while (0)

static inline int check_report(const char *name) {
    printf("%s: %d passed, %d failed\n", name, checks_passed, checks_failed);
    return checks_failed != 0;
}

#endif
