/* The evicted table (H-Store anti-caching, DeBrabant et al. VLDB 2013 §3.1): for
 * every spilled item, a fixed-size in-memory entry mapping a 64-bit fingerprint of
 * its key to the record's location in the spill store. The key itself lives only
 * in the on-disk record, which the fetch path compares, so fingerprint collisions
 * cost a disk read, never a wrong answer. The table holds spilled items only and
 * grows and shrinks with them: 256 stripes (low 8 bits of the fingerprint), each
 * with its own lock and its own open-addressing array of 16-byte slots (fingerprint
 * + location packed into 64 bits), kept between 68 % and 90 % full (at least 8
 * slots) by rebuilding that one stripe. An entry costs 16-23.5 bytes including its
 * index (~20 on average, as the paper assumes) plus 16 KiB of stripe headers in all;
 * ac_evicted_bytes() is what to charge against the budget as it changes. */
#ifndef AC_EVICTED_H
#define AC_EVICTED_H
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "loc.h"
#include "fp.h"


#define AC_EVICTED_STRIPES 256

struct ac_evicted_stripe;                  /* lock + slot array, in ac_evicted.c */

struct ac_evicted {
    struct ac_evicted_stripe *stripes;     /* AC_EVICTED_STRIPES, allocated at init */
    size_t max_entries;                    /* 0 = no cap */
    size_t count;                          /* entries (atomic) */
    size_t bytes;                          /* slot arrays + stripe headers (atomic) */
    unsigned offset_bits, len_bits;        /* location packing; the block id has the rest */
    uint32_t max_block;
};


/* max_entries 0 = no cap. A location is packed into 64 bits: offset_bits for the
 * offset, len_bits (>= 1) for the length, the rest (>= 16) for the block id.
 * Returns 0, or -1 on a bad packing or no memory (the table is then empty). */
int ac_evicted_init(struct ac_evicted *t, size_t max_entries, unsigned offset_bits, unsigned len_bits);
/* Frees everything; safe after a failed init. */
void ac_evicted_destroy(struct ac_evicted *t);
/* Returns 0; -1 when max_entries are held or there is no memory to grow;
 * -2 when loc does not fit the packing (block id, offset or len too large, or len 0). */
int ac_evicted_insert(struct ac_evicted *t, uint64_t fp, const struct ac_loc *loc);
/* Copies up to max locations stored under fp into out, oldest first; returns how many exist. */
int ac_evicted_find(struct ac_evicted *t, uint64_t fp, struct ac_loc *out, int max);
/* Removes the entry (fp, loc) (matched on fp, block, offset); returns true if it was there. */
bool ac_evicted_remove(struct ac_evicted *t, uint64_t fp, const struct ac_loc *loc);
/* Points the entry (fp, from) at to instead, in place (no slot taken: works
 * with the table at max_entries; a find lists it where from was). 0; -1 when
 * (fp, from) is not there; -2 when to does not fit the packing. */
int ac_evicted_move(struct ac_evicted *t, uint64_t fp, const struct ac_loc *from, const struct ac_loc *to);
/* Entries now (never below the entries a find can see). */
size_t ac_evicted_count(struct ac_evicted *t);
/* Bytes allocated now: slot arrays + stripe headers (an atomic read). */
size_t ac_evicted_bytes(struct ac_evicted *t);
/* The largest block id an entry can hold. */
uint32_t ac_evicted_max_block(const struct ac_evicted *t);

#endif
