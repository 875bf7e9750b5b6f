/* The tuple-level cold store of policy "logging" (Siberia, Levandoski et al.
 * ICDE 2013; Stoica & Ailamaki's cold store keeps single tuples, not blocks):
 * one record per item (store/record.h, checksummed) appended to a log file,
 * cold.dat, and an on-disk index, cold.idx: an open-addressing hash table
 * (linear probing, tombstones) of 24-byte slots {key fingerprint, offset,
 * length, state}. Nothing per record is kept in memory: a lookup reads index
 * slots with pread, a put appends the record and writes one slot. The index
 * doubles (rehashed into cold.idx.new, then renamed) when live + dead slots
 * pass 60 % of it. Removed records leave dead bytes in the log (counted; no
 * compaction). One mutex serialises the store; no memcached dependency. */
#ifndef AC_TUPLE_STORE_H
#define AC_TUPLE_STORE_H
#include <stddef.h>
#include <stdint.h>
#include "../ac_evicted.h"     /* struct ac_loc: block = offset >> 32, offset = low 32 bits */

struct ac_tuple_store;

struct ac_tuple_stats {
    uint64_t records;        /* live records */
    uint64_t live_bytes;     /* their bytes */
    uint64_t file_bytes;     /* log length, dead bytes included */
    uint64_t index_slots;    /* slots of the on-disk index */
    uint64_t index_bytes;
    uint64_t puts, removes, gets, index_reads, index_writes, index_grows;
    uint64_t io_errors;
};

/* Creates cold.dat and cold.idx (0600) in dir, replacing files left by an
 * earlier run. NULL with a message in err on failure. */
struct ac_tuple_store *ac_tuple_open(const char *dir, char *err, size_t errlen);
/* Appends a record (len bytes) under fingerprint fp. 0, or -errno (nothing
 * stored; the record's bytes may be dead in the log). */
int ac_tuple_put(struct ac_tuple_store *s, uint64_t fp, const void *rec, size_t len, struct ac_loc *loc);
/* Locations stored under fp (up to max copied); returns how many exist, or -errno. */
int ac_tuple_find(struct ac_tuple_store *s, uint64_t fp, struct ac_loc *out, int max);
/* Reads loc->len bytes of the record at loc; 0 or -errno (-EIO on a short read). */
int ac_tuple_get(struct ac_tuple_store *s, const struct ac_loc *loc, void *buf);
/* Removes (fp, loc) from the index: 1 removed, 0 not there, -errno. */
int ac_tuple_remove(struct ac_tuple_store *s, uint64_t fp, const struct ac_loc *loc);
/* Calls fn for every live fingerprint (a sequential read of the index), with
 * the store locked: no put or remove runs meanwhile. Returns the count or -errno. */
long ac_tuple_foreach(struct ac_tuple_store *s, void (*fn)(uint64_t fp, void *arg), void *arg);
void ac_tuple_stats(struct ac_tuple_store *s, struct ac_tuple_stats *out);
/* Closes and removes both files. */
void ac_tuple_close(struct ac_tuple_store *s);

#endif
