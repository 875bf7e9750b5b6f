/* State shared by the anti-caching core (core/), and what the core offers
 * policies and tiers. */
#ifndef AC_INTERNAL_H
#define AC_INTERNAL_H
/* memcached.h (no include guard) must be included first. */
#include "ac_hooks.h"
#include "ac_policy.h"
#include "ac_tier.h"
#include "store/fp.h"
#include "store/io_engine.h"
#include "store/record.h"

struct ac_state {
    const struct ac_policy_ops *policy;
    const struct ac_tier_ops *tier;
    size_t tier_fixed;             /* the tier's book-keeping allocated at start */
    size_t fixed_charge;           /* all book-keeping charged against -m at start (tier + policy) */
    size_t item_limit;             /* what the slab allocator gets of -m now (ac_room.c lowers it
                                      as the evicted table grows) */
    pthread_mutex_t spill_lock;    /* one spill round at a time; item-pointer hints are read under it */
    unsigned page_epoch;           /* moves on (under spill_lock) before released slab pages are freed */
    char dir[1100];
};

struct ac_counters {
    uint64_t spilled_items, spilled_bytes, fetched_items, fetched_bytes;
    uint64_t rescued_items;        /* spilled on behalf of the slab mover / tail repair */
    uint64_t merged_blocks, merged_items;
    uint64_t copied_blocks, copied_items, copied_bytes, copy_skipped;   /* ac_compact=copy */
    uint64_t checksum_errors, read_errors, fetch_nomem;
    uint64_t read_through_items;   /* reads served from a record without memory for it */
    uint64_t migrate_reads_saved;  /* migrations that used the bytes of their first read (no second read) */
    uint64_t spill_failures;       /* a spill that could not be done (table full, I/O) */
    uint64_t overwritten_unread;   /* spilled records a plain set dropped without reading */
    /* ac_compress: value bytes offered to the codec, and as stored; records left as they were */
    uint64_t compress_in_bytes, compress_out_bytes, compress_skipped;
    /* bytes of records and of whole blocks the core read from the tier (disk reads beyond
     * them are the read amplification: readahead, page granularity, index reads) */
    uint64_t record_read_bytes, block_read_bytes;
    /* ac_room.c: allocations given up, by reason; the slow path's other events */
    uint64_t refused_items, refused_disk_full, refused_io_error, refused_table_full, refused_timeout;
    uint64_t alloc_room_taken;     /* spilled, but another request took the room: again */
    uint64_t alloc_waits;          /* allocations that had to wait for held chunks or a page */
    uint64_t pages_borrowed, pages_repaid;
};

/* Why an allocation was given up (ac_room.c counts it). */
enum ac_refusal {
    AC_REFUSED_NONE = 0,
    AC_REFUSED_DISK_FULL,          /* a spill write found the file system full (ENOSPC, EDQUOT) */
    AC_REFUSED_IO_ERROR,           /* a spill write failed otherwise */
    AC_REFUSED_TABLE_FULL,         /* the evicted table cannot take more: ac_evicted_max entries,
                                      no memory to grow, or a block id beyond what an entry holds */
    AC_REFUSED_TIMEOUT,            /* nothing to spill or borrow within ac_alloc_wait */
};

extern struct ac_state ac;
extern struct ac_counters ac_cnt;
#define AC_COUNT(field, n) __atomic_add_fetch(&ac_cnt.field, (n), __ATOMIC_RELAXED)
#define AC_READ(field) __atomic_load_n(&ac_cnt.field, __ATOMIC_RELAXED)

/* ac_core.c, kernel-paged policies: a lookup begins (not in the in-process
 * driver's own window): notes this thread's major-fault count. */
void ac_fault_mark(void);
/* ac_spill.c: the codec spilled records use ("none", "lz4", "zstd"). */
const char *ac_compression(void);
/* ac_prefetch.c: the bytes of the record (fp, loc) this thread's prefetcher read
 * ahead, when they are still the record's (item lock held), else NULL; and
 * its lines of `stats anticache`. */
char *ac_prefetched(uint64_t fp, const struct ac_loc *loc);
/* ac_prefetch.c: the read of fp's record at loc goes out on p with no key lock
 * held (a migration, which knows the place but not the key): its slot, or -1. */
int ac_prefetch_at(struct ac_prefetcher *p, uint64_t fp, const struct ac_loc *loc);
/* ac_prefetch.c: a prefetcher for a policy's migration thread (its reads
 * counted as migrate_prefetch_*, not prefetch_*). */
struct ac_prefetcher *ac_prefetcher_new_migration(unsigned depth, char *err, size_t errlen);
void ac_prefetch_stats(ADD_STAT add_stats, void *c);
/* ac_spill.c: one record of a block being walked, as read (no lock held). */
struct ac_walk {
    struct ac_record r;        /* parsed; r.key, r.value point into rec */
    const char *rec;           /* the record's bytes (r.len of them) */
    struct ac_loc loc;         /* where it lies */
    uint64_t fp;               /* its key's fingerprint */
};
/* Reads a block the caller claimed (tier->begin_merge), calls each for every
 * record in it (each returns false to stop), then releases the claim: 1 every
 * record visited; 0 stopped (by each, or at a damaged record: counted); -1
 * the block could not be read. */
int ac_walk_block(uint32_t block, bool (*each)(const struct ac_walk *w, void *arg), void *arg);
/* fp's evicted-table entries include loc (a check from memory, not counted). */
bool ac_spilled_at(uint64_t fp, const struct ac_loc *loc);
/* ac_spill.c: brings every live record of a block the caller claimed
 * (tier->begin_merge) back into RAM, then releases the claim (H-Store's
 * block merge; block-mates whose keys are locked stay spilled). */
void ac_merge_block(uint32_t block);
/* ac_compact.c (ac_compact, ac_compact_thread): compacts a claimed block
 * (lazy: lazy compaction's claim, merged or copied as ac_compact says; else
 * ac_merge=block's merge), in place or in the compactor thread; start runs
 * the thread when the option asks for it (0, or -1 said on stderr). */
void ac_compact(uint32_t block, bool lazy);
int ac_compact_start(void);
void ac_compact_stats(ADD_STAT add_stats, void *c);
/* Parked gets (ac_park.c): take consumes this thread's permission to park the
 * current lookup (true if it had one); mark says the lookup was parked (its
 * key may be spilled: a fetcher reads it). */
bool ac_park_take(void);
void ac_park_mark(void);
void ac_park_stats(ADD_STAT add_stats, void *c);
void ac_park_stop(void);          /* before the tier closes: fetchers finish and exit */
/* ac_io.c: the values of its options */
struct ac_io_settings {
    unsigned engine;                 /* ac_io: an AC_IO_* */
    uint64_t threads;                /* ac_io_threads */
    unsigned fault;                  /* ac_fault: an AC_FAULT_* ... */
    uint64_t fault_count;            /* ... and how many requests it hits (0 with none) */
    unsigned direct;                 /* ac_io_direct: 1 on, 0 off */
};
extern struct ac_io_settings ac_io_opts;
/* ac_io.c: starts the I/O engine ac_io asks for (or its fallback, said on
 * stderr) and arms ac_fault; its lines of `stats anticache`. */
void ac_io_init(void);
void ac_io_stats(ADD_STAT add_stats, void *c);
/* ac_core.c, kernel tiers: the slab memory, len bytes, mapped by the tier
 * (once; later calls return the same); random: MADV_RANDOM on it (policy
 * none: OS paging; effpaging maps without). NULL after printing why. */
void *ac_slab_memory(size_t len, bool random);
/* ac_room.c: a policy set a page source (ac_page_source). */
bool ac_page_source_set(void);
/* ac_spill.c: marks the item this thread fetched last (for disk-hit counting). */
bool ac_take_fetched(item *it);
/* ac_spill.c: a key is linked into RAM: any spilled copy of it is stale. */
void ac_drop_stale_copies(item *it);
/* ac_spill.c: locks a resident item of class clsid that was found without its
 * lock (a hint) and takes a reference, after re-validating it; returns the
 * lock (item_trylock_unlock) with *hvp its hash, or NULL: gone, moved, locked
 * or in use by a request. */
void *ac_grab_item(item *it, unsigned int clsid, uint32_t *hvp);
/* The tier spills items (blocks, tuples); false: the kernel pages the slab
 * memory it mapped (swap, mmapfile). */
static inline bool ac_tier_spills(void) {
    return ac.tier->put != NULL;
}
/* ac_options.c: -1 after printing why when an option was given for a
 * component other than p, t and the core (it would have no effect). */
int ac_options_check_used(const struct ac_policy_ops *p, const struct ac_tier_ops *t);
/* ac_options.c: "ac_x or ac_y", the options of p and t that size book-keeping
 * charged against -m, for messages ("" when none). */
void ac_options_bookkeeping(const struct ac_policy_ops *p, const struct ac_tier_ops *t, char *buf, size_t n);
/* ac_registry.c: the policy and the tier -o asked for (an approach name such
 * as ospaging stands for its pair); -1 after printing why. */
int ac_resolve(const struct ac_policy_ops **p, const struct ac_tier_ops **t);
/* policy/none.c: the ops of a policy that tracks nothing and picks nothing. */
void ac_no_op(item *it);
int ac_no_victims(unsigned int clsid, item **out, int max);
/* cgmem.c: the memory limit of this process's cgroup (v1 memory controller:
 * the hierarchical limit; v2: the lowest memory.max on the path) and its
 * usage now. *limit is UINT64_MAX when there is none. path: the group's
 * directory, for messages. 0, or -1 when /proc/self/cgroup is unreadable. */
int ac_cgroup_memory(uint64_t *limit, uint64_t *usage, char *path, size_t n);
/* regions.c (effpaging): the slab memory [base, base + total) splits into a hot
 * region of hot bytes at its start and a cold one. */
void ac_regions_init(char *base, size_t hot, size_t total);
/* Bytes of each region handed out as slab pages so far. */
void ac_regions_used(size_t *hot, size_t *cold);
/* Moves a resident item of class clsid (a hint) into a chunk of the hot
 * (to_hot) or the cold region: copy, relink in place of the old one (same CAS,
 * same age), free the old chunk. 1: moved; 0: skipped (gone, busy, already
 * there, chunked); -1: the region has no free chunk of the class. */
int ac_relocate(item *it, unsigned int clsid, bool to_hot);
/* ac_spill.c, spill_lock held: spills a block of class clsid's coldest items
 * (cold-store policies: a batch). Returns how many left RAM; *why says what
 * the store could not do (AC_REFUSED_NONE: nothing failed). */
int ac_make_room_locked(unsigned int clsid, enum ac_refusal *why);
/* Why a request cannot be served although its key exists or memory could be
 * had: the core's functions return it; at the hooks (ac_item_find,
 * ac_item_for_update, ac_alloc) ac_answer_error hands it to memcached's reply
 * code, which gets only a NULL item from them (ac_hooks.h). */
enum ac_error {
    AC_ERR_NONE = 0,
    AC_ERR_READ,                   /* reading a spilled record failed */
    AC_ERR_CHECKSUM,               /* a spilled record failed its checksum */
    AC_ERR_NOMEM_FETCH,            /* no memory to bring a spilled item back for a modify */
    AC_ERR_NOMEM_STORE,            /* an allocation was refused (ac_room.c) */
};
/* The reply text of e (NULL for AC_ERR_NONE). */
const char *ac_error_text(enum ac_error e);
/* ac_spill.c: the current request answers e instead of NOT_FOUND / NOT_STORED
 * (see ac_text_reply); AC_ERR_NONE clears it. */
void ac_answer_error(enum ac_error e);
/* ac_room.c: while on, this thread's allocations only try (one spill round, no
 * borrowing, no waiting, no refusal counted): optional work. Nests. */
void ac_alloc_optional(bool on);
/* ac_room.c: while on, this thread's allocations take a free chunk of the
 * class or fail (no spill round at all): a block merge's block-mates, which
 * go to the cold end and would be a spill round's first victims. Nests. */
void ac_alloc_free_only(bool on);
/* ac_core.c: the book-keeping charged against -m now: the fixed part and the
 * evicted table as it is. */
size_t ac_charged_bytes(void);
/* ac_room.c: the book-keeping grew or shrank: the item memory follows (the
 * room thread lowers or raises the slab allocator's limit). Cheap. */
void ac_budget_changed(void);
/* ac_room.c: the slab memory is within the budget and no change is pending. */
bool ac_budget_settled(void);
/* ac_room.c: starts the thread that repays borrowed pages (spilling policies). */
int ac_room_init(void);
void ac_room_shutdown(void);
unsigned ac_pages_owed(void);
/* ac_spill.c: spills the given resident items of class clsid (hints taken at
 * page epoch `epoch`, re-validated under the spill lock; none if the epoch
 * moved on); returns how many left RAM. */
int ac_spill_items(unsigned int clsid, item **cand, int n, unsigned epoch);
/* ac_spill.c: brings the spilled records under the n fingerprints fps (at most
 * AC_MIGRATE_BATCH) back into RAM (the caller holds no item lock; a policy's
 * migration). With pf (the calling thread's prefetcher, or NULL) their reads
 * are in flight together first. Returns how many came back; *nomem is set
 * when memory could not be had (the keys after that one were left). */
#define AC_MIGRATE_BATCH 32
int ac_migrate_in(const uint64_t *fps, int n, struct ac_prefetcher *pf, bool *nomem);
/* ac_spill.c: fp may be spilled (the tier's answer from memory alone: no
 * I/O, not counted, never a false no). */
bool ac_maybe_spilled(uint64_t fp);

#endif
