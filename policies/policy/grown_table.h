/* A table a policy grows by doubling (s3fifo's ghost, wtinylfu's sketch),
 * mapped anonymous: a replaced one goes back to the kernel at once, where
 * malloc would keep a freed block below its mmap threshold in the heap,
 * resident and charged to nobody; a new one reads as zeros. */
#ifndef AC_GROWN_TABLE_H
#define AC_GROWN_TABLE_H
#include <stddef.h>
#include <sys/mman.h>

/* bytes of zeros, or NULL */
static inline void *ac_table_map(size_t bytes) {
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static inline void ac_table_unmap(void *p, size_t bytes) {
    if (p != NULL)
        munmap(p, bytes);
}

#endif
