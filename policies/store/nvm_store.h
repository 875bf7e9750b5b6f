/* The cold store of tier "nvm": spilled records in a byte-addressable region
 * that stands for non-volatile memory (Arulraj, DeBrabant, Pavlo et al.: H-Store's
 * anti-cache kept in "an NVM-optimized hash table rather than disk"). Nothing
 * per record lives in DRAM: the region holds
 *  - the index, an open-addressing hash table of 24-byte slots {fingerprint,
 *    offset, length, state} with linear probing and backward-shift deletion
 *    (Knuth, TAOCP vol. 3, 6.4 Algorithm R: no tombstones, so no rebuild), and
 *  - the records, each in a chunk of a size class (64 B to the largest record,
 *    ×1.25 a class, multiples of a cache line); a freed chunk goes on its
 *    class's free list, whose links are kept in the chunks themselves. Space a
 *    class took stays that class's (a workload whose sizes drift can find the
 *    region full while other classes have free chunks: stats say both).
 * Every cache line of the region read or written is counted, and every access
 * (a run of contiguous lines), and the caller pays the emulated latency for
 * them (store/nvm_delay.h) outside the lock.
 * One mutex serialises the index and the allocator; a record's bytes are
 * copied outside it (the caller holds its key, so its chunk is not freed
 * meanwhile). The region is mapped from a file (allocated in full by whoever
 * made it: its pages are charged to that process's cgroup, not to ours) or,
 * without one, a memfd of ours. No memcached dependency. */
#ifndef AC_NVM_STORE_H
#define AC_NVM_STORE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "loc.h"     /* struct ac_loc: block = offset >> 32, offset = low 32 bits */

struct ac_nvm_store;

/* What an operation cost in the region: the cache lines it touched, and its
 * accesses, each a run of contiguous lines (a record's bytes, a probe
 * sequence of adjacent slots, a free-list link): the first line of a run
 * waits for the device, the prefetcher streams the rest. */
struct ac_nvm_cost {
    uint64_t lines, accesses;
};

struct ac_nvm_stats {
    uint64_t region_bytes;       /* the whole region */
    uint64_t index_slots, index_bytes;
    uint64_t records, live_bytes;   /* live records and their bytes */
    uint64_t chunk_bytes;        /* bytes of the chunks they occupy */
    uint64_t carved_bytes;       /* record area handed out to the classes so far */
    uint64_t area_bytes;         /* the record area */
    uint64_t free_chunk_bytes;   /* bytes of chunks on the free lists */
    uint64_t puts, put_bytes, gets, drops, full;   /* full: puts refused, region or index full */
    uint64_t lines_read, lines_written; /* cache lines of the region touched */
    uint64_t accesses;                  /* runs of contiguous lines touched */
};

/* Maps the region: the file at path (NULL: a memfd of region_bytes), which
 * must be allocated in full (st_blocks cover st_size: its pages exist, so
 * touching them charges no one new); slots: index slots (0: a power of two
 * >= region / 512, at least 1024), at most a quarter of the region. NULL
 * with a message in err. */
struct ac_nvm_store *ac_nvm_open(const char *path, size_t region_bytes, size_t slots, char *err, size_t errlen);
/* The record area and its length: scratch until the first put (the latency
 * calibration chases pointers through it). */
void *ac_nvm_area(struct ac_nvm_store *s, size_t *len);
/* Stores the record under fp: 0; -ENOSPC (no chunk of its class left);
 * -ENOBUFS (the index is 3/4 full); -EFBIG (larger than the largest chunk).
 * Each operation adds what it touched to *cost (for the caller's delay). */
int ac_nvm_put(struct ac_nvm_store *s, uint64_t fp, const void *rec, size_t len, struct ac_loc *loc,
               struct ac_nvm_cost *cost);
/* Locations stored under fp (up to max copied); how many exist. */
int ac_nvm_find(struct ac_nvm_store *s, uint64_t fp, struct ac_loc *out, int max, struct ac_nvm_cost *cost);
/* Copies loc->len bytes of the record at loc: 0, -EINVAL (not inside the area). */
int ac_nvm_get(struct ac_nvm_store *s, const struct ac_loc *loc, void *buf, struct ac_nvm_cost *cost);
/* Forgets (fp, loc) and frees its chunk: 1 done, 0 not there. */
int ac_nvm_remove(struct ac_nvm_store *s, uint64_t fp, const struct ac_loc *loc, struct ac_nvm_cost *cost);
void ac_nvm_stats(struct ac_nvm_store *s, struct ac_nvm_stats *out);
/* The region's backing: "memfd" or the file's path. */
const char *ac_nvm_backing(struct ac_nvm_store *s);
/* Unmaps and closes (the file stays: whoever made it removes it). */
void ac_nvm_close(struct ac_nvm_store *s);

/* Cache lines the n bytes at byte offset off span. */
static inline uint64_t ac_nvm_lines(uint64_t off, uint64_t n) {
    return n == 0 ? 0 : (off + n - 1) / 64 - off / 64 + 1;
}

#endif
