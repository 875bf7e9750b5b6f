/* Sets an integer option of a component's table by its key, as -o would have
 * (the unit tests link a policy without the option parser). */
#ifndef AC_SET_OPTION_H
#define AC_SET_OPTION_H
#include "check.h"
#include <stdint.h>
#include <string.h>

static inline void set_option(const struct ac_opt_table *t, const char *key, uint64_t v) {
    for (size_t i = 0; i < t->n; i++) {
        const struct ac_opt *o = &t->opts[i];
        if (strcmp(o->key, key) != 0)
            continue;
        char *field = (char *)t->values + o->off;
        if (o->size == sizeof(uint32_t)) {
            uint32_t x = (uint32_t)v;
            memcpy(field, &x, sizeof(x));
        } else {
            memcpy(field, &v, sizeof(v));
        }
        return;
    }
    CHECK(!"set_option: no such option");
}

#endif
