/* Cleaning of the tuple store's log (tier tuples): cold_gc.c. */
#ifndef AC_COLD_GC_H
#define AC_COLD_GC_H
#include "store/tuple_store.h"

/* The segment size for a server: a quarter of -m as a power of two, at most
 * 64 MiB, and room for four of the largest items. */
size_t ac_cold_gc_segment_bytes(size_t maxbytes, size_t item_size_max);
/* Starts the cleaning thread over store; it also calls tick (may be NULL)
 * every time it looks for a segment (20 ms when idle). 0, or -1 after
 * printing why. */
int ac_cold_gc_start(struct ac_tuple_store *store, void (*tick)(void));
/* Stops it (waits for the segment in progress); a no-op when not started. */
void ac_cold_gc_stop(void);

#endif
