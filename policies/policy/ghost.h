/* S3-FIFO's ghost queue (ghost.c): key fingerprints only, in FIFO order,
 * for policy s3fifo. Each call takes the ghost's own mutex, the innermost
 * lock of the caller (s3fifo.c's lock order). */
#ifndef AC_GHOST_H
#define AC_GHOST_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Empty, at its smallest capacity; false: no memory (it is then unusable). */
bool ac_ghost_reset(void);
/* fp enters at the head (moved there if present); the oldest keys leave
 * while more than bound are live. */
void ac_ghost_add(uint64_t fp, uint64_t bound);
/* fp was in the ghost: it is taken out (a ghost hit). */
bool ac_ghost_take(uint64_t fp);
/* keys live now; bytes of its tables as mapped */
uint32_t ac_ghost_live(void);
size_t ac_ghost_bytes(void);

#endif
