/* Where a spilled record lives in a spill store. */
#ifndef AC_LOC_H
#define AC_LOC_H
#include <stdint.h>

struct ac_loc {
    uint32_t block;   /* block (or segment) id in the store */
    uint32_t offset;  /* byte offset of the record inside it */
    uint32_t len;     /* record length */
};

#endif
