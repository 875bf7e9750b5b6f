/* Where a spilled record lives in a spill store. */
#ifndef AC_LOC_H
#define AC_LOC_H
#include <stdbool.h>
#include <stdint.h>

struct ac_loc {
    uint32_t block;   /* block (or segment) id in the store */
    uint32_t offset;  /* byte offset of the record inside it */
    uint32_t len;     /* record length */
};

/* Records one key fingerprint may have in a store that a lookup looks at: its
 * own and those of other keys sharing the 64-bit fingerprint (or stale copies
 * awaiting a drop). Every array of locations is this long. */
#define AC_LOCS 4

/* The same record: the same place and length. */
static inline bool ac_loc_same(const struct ac_loc *a, const struct ac_loc *b) {
    return a->block == b->block && a->offset == b->offset && a->len == b->len;
}

#endif
