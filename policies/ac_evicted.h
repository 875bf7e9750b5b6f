/* The evicted table (H-Store anti-caching, DeBrabant et al. VLDB 2013 §3.1): for
 * every spilled item, a fixed-size in-memory entry mapping a 64-bit fingerprint of
 * its key to the record's location in the spill store. The key itself lives only
 * in the on-disk record, which the fetch path compares, so fingerprint collisions
 * cost a disk read, never a wrong answer. Entries are 24 bytes (close to the
 * 20-byte representation of Zhang et al. ICDE 2015 Table III) and preallocated at
 * start-up, so the table's memory is charged against the server's budget. */
#ifndef AC_EVICTED_H
#define AC_EVICTED_H
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ac_loc {
    uint32_t block;   /* block id in the store */
    uint32_t offset;  /* byte offset of the record inside the block */
    uint32_t len;     /* record length */
};

#define AC_EVICTED_STRIPES 1024

struct ac_evicted {
    struct ac_evicted_entry *entries;  /* capacity entries; index + 1 is a link */
    uint32_t *buckets;                 /* heads of the chains, power of two */
    uint64_t mask;
    size_t capacity;
    uint32_t free_head;                /* free list of entries, under free_lock */
    size_t count;                      /* entries in use (atomic) */
    pthread_mutex_t free_lock;
    pthread_mutex_t stripes[AC_EVICTED_STRIPES];
};

/* Fingerprint of a key: FNV-1a 64 (Fowler, Noll, Vo), a hash independent of
 * memcached's own key hash. */
uint64_t ac_key_fp(const char *key, size_t nkey);

int ac_evicted_init(struct ac_evicted *t, size_t capacity);
void ac_evicted_destroy(struct ac_evicted *t);
/* Bytes the table occupies (entries + buckets), fixed at init. */
size_t ac_evicted_bytes_for(size_t capacity);
/* Returns 0, or -1 when the table is full. */
int ac_evicted_insert(struct ac_evicted *t, uint64_t fp, const struct ac_loc *loc);
/* Copies up to max locations stored under fp into out; returns how many exist. */
int ac_evicted_find(struct ac_evicted *t, uint64_t fp, struct ac_loc *out, int max);
/* Removes the entry (fp, loc); returns true if it was there. */
bool ac_evicted_remove(struct ac_evicted *t, uint64_t fp, const struct ac_loc *loc);
size_t ac_evicted_count(struct ac_evicted *t);

#endif
