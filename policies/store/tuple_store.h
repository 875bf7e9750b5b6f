/* The tuple-level cold store of policy "logging" (Siberia, Levandoski et al.
 * ICDE 2013; Stoica & Ailamaki's cold store keeps single tuples, not blocks):
 * one record per item (store/record.h, checksummed) appended to a log file,
 * cold.dat, and an on-disk index, cold.idx: an open-addressing hash table
 * (linear probing, tombstones) of 24-byte slots {key fingerprint, offset,
 * length, state}. Nothing per record is kept in memory: a lookup reads index
 * slots with pread, a put appends the record and writes one slot. The index
 * doubles (rehashed into cold.idx.new, then renamed) when live + dead slots
 * pass 60 % of it. The log is cut into segments (ac_tuple_open's seg_bytes):
 * removed records leave dead bytes in theirs, and cleaning (ac_tuple_gc_*,
 * driven by a caller that can lock the keys: policies/cold_gc.c) moves the live
 * records of a mostly dead segment to the head and punches the segment out of
 * the file for reuse, so the disk holds at most about twice the live bytes.
 * One mutex serialises the store; no memcached dependency. */
#ifndef AC_TUPLE_STORE_H
#define AC_TUPLE_STORE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "io_engine.h"
#include "loc.h"     /* struct ac_loc: block = offset >> 32, offset = low 32 bits */

struct ac_tuple_store;

#define AC_TUPLE_SEG_DEFAULT (64u << 20)

/* A live record found by cleaning. */
struct ac_tuple_ref { uint64_t fp; struct ac_loc loc; };

struct ac_tuple_stats {
    uint64_t records;        /* live records */
    uint64_t live_bytes;     /* their bytes */
    uint64_t file_bytes;     /* bytes of the log on disk: live and dead records of its segments */
    uint64_t seg_bytes, segments;   /* segment size; segments in use */
    uint64_t gc_segments;    /* segments cleaned (punched out, reusable) */
    uint64_t gc_moved_records, gc_moved_bytes;   /* live records cleaning moved */
    uint64_t gc_punch_failures;
    uint64_t index_slots;    /* slots of the on-disk index */
    uint64_t index_bytes;
    uint64_t puts, removes, gets, index_reads, index_writes, index_grows;
    uint64_t put_bytes;      /* record bytes the puts wrote */
    uint64_t io_errors;
};

/* Creates cold.dat and cold.idx (new files, 0600: store/spill_file.h) in dir.
 * seg_bytes: the segment size (0: AC_TUPLE_SEG_DEFAULT), at least the largest
 * record (a larger one is refused with -EFBIG). NULL with a message in err. */
struct ac_tuple_store *ac_tuple_open(const char *dir, size_t seg_bytes, char *err, size_t errlen);
/* Appends a record (len bytes) under fingerprint fp. 0, or -errno (nothing
 * stored; the record's bytes may be dead in the log). */
int ac_tuple_put(struct ac_tuple_store *s, uint64_t fp, const void *rec, size_t len, struct ac_loc *loc);
/* Locations stored under fp (up to max copied); returns how many exist, or -errno. */
int ac_tuple_find(struct ac_tuple_store *s, uint64_t fp, struct ac_loc *out, int max);
/* Reads loc->len bytes of the record at loc; 0 or -errno (-EIO on a short read).
 * The store's lock is not held during the read: the caller keeps the record
 * where it is (tier tuples: the key's item lock, which the cleaner honours). */
int ac_tuple_get(struct ac_tuple_store *s, const struct ac_loc *loc, void *buf);
/* The same without waiting (tier tuples' read_start, core/ac_prefetch.c):
 * ac_tuple_token while the record is known live at loc (its key's lock held)
 * names its segment's incarnation; ac_tuple_get_start sends the read out on
 * ring r (buf of ac_io_span_cap(loc->len) bytes, aligned: the record lands at
 * buf + req->skip; 0 sent, -ESTALE the segment was punched out since the
 * token, -errno); ac_tuple_get_valid, with the record live at loc again: the
 * bytes read are its (the segment was not punched out and reused since). */
uint64_t ac_tuple_token(struct ac_tuple_store *s, const struct ac_loc *loc);
int ac_tuple_get_start(struct ac_tuple_store *s, const struct ac_loc *loc, void *buf, struct ac_io_ring *r,
                       struct ac_io_req *req, uint64_t token);
bool ac_tuple_get_valid(struct ac_tuple_store *s, const struct ac_loc *loc, uint64_t token);
/* Removes (fp, loc) from the index: 1 removed, 0 not there, -errno. */
int ac_tuple_remove(struct ac_tuple_store *s, uint64_t fp, const struct ac_loc *loc);
/* Calls fn for every live fingerprint (a sequential read of the index), with
 * the store locked: no put or remove runs meanwhile. Returns the count or -errno. */
long ac_tuple_foreach(struct ac_tuple_store *s, void (*fn)(uint64_t fp, void *arg), void *arg);
/* Cleaning. gc_pick: the segment with the fewest live bytes (not the head) in
 * *seg; true when cleaning is due (the log's bytes on disk exceed twice the
 * live bytes plus two segments). gc_list: its live records (malloc'd array in
 * *out, the count, or -errno). relocate: appends the record rec (read by the
 * caller from loc, which it holds the key's lock for) at the head and points
 * fp's slot there; 1 moved, 0 no longer live at loc, -errno. gc_release: a
 * segment with no live bytes left is punched out and becomes free. */
bool ac_tuple_gc_pick(struct ac_tuple_store *s, uint32_t *seg);
long ac_tuple_gc_list(struct ac_tuple_store *s, uint32_t seg, struct ac_tuple_ref **out);
int ac_tuple_relocate(struct ac_tuple_store *s, uint64_t fp, const struct ac_loc *loc, const void *rec);
bool ac_tuple_gc_release(struct ac_tuple_store *s, uint32_t seg);
void ac_tuple_stats(struct ac_tuple_store *s, struct ac_tuple_stats *out);
/* Closes and removes both files. */
void ac_tuple_close(struct ac_tuple_store *s);

#endif
