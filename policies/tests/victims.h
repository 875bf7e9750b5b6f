/* Shared by the policy unit tests: the victims a policy offers for slab class
 * 1, coldest first, as a string of the items' test ids ("0 1 2"). */
#ifndef AC_TEST_VICTIMS_H
#define AC_TEST_VICTIMS_H
#include <string.h>
#include "check.h"

static const char *victims_of(const struct ac_policy_ops *p, int max) {
    static char s[128];
    item *out[16];
    int n = p->pick_victims(1, out, max);
    s[0] = '\0';
    for (int i = 0; i < n; i++)
        snprintf(s + strlen(s), sizeof(s) - strlen(s), i ? " %d" : "%d", out[i]->id);
    return s;
}

#define CHECK_VICTIMS_OF(p, max, want) do { \
    const char *got_ = victims_of(p, max); \
    if (strcmp(got_, want) == 0) checks_passed++; \
    else { checks_failed++; fprintf(stderr, "%s:%d: victims \"%s\", want \"%s\"\n", \
                                    __FILE__, __LINE__, got_, want); } \
} while (0)

#endif
