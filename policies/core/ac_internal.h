/* What the files of the anti-caching core (core/) share, in the order of
 * their one-way chain (each file uses only those above it; policies/tests/
 * core_deps.py checks it from the objects):
 *
 *   ac_state      the core's state, counters, error texts, the thread record
 *   ac_prefetch   reads of spilled records kept in flight
 *   ac_record     records: built from items, read at a location, verified
 *   ac_budget     the budget (-m minus book-keeping), borrowed pages repaid
 *   ac_spill      spill rounds: the policy's victims written to the tier
 *   ac_room       room for an allocation (memcached's allocator calls ac_alloc)
 *   ac_materialize a record made an item again; block merges
 *   ac_compact    lazy compaction of claimed blocks
 *   ac_fetch      the lookup of a key not in RAM; overwrites; migrations
 *   ac_park       parked gets: fetcher threads for network gets
 *   ac_hooks      the request path's hooks (ac_item_find, hit counting)
 *   ac_core       start-up, shutdown, `stats anticache`
 * (ac_options, ac_registry, ac_io, ac_size, ac_spilldir and cgmem stand
 * beside them: settings, the component list, the I/O engine, sizes, the spill
 * directory, the cgroup's limit.)
 *
 * A request carries one explicit context down the chain, struct ac_lookup.
 * The only per-thread state is struct ac_thread at the memcached boundary:
 * what must cross memcached's own code, which has no parameter for it (the
 * error a NULL item means, the item a lookup read from disk, the permission
 * to park, the lookup whose allocation re-enters through ac_alloc). */
#ifndef AC_INTERNAL_H
#define AC_INTERNAL_H
/* memcached.h (no include guard) must be included first. */
#include "ac_hooks.h"
#include "ac_policy.h"
#include "ac_services.h"
#include "ac_tier.h"
#include "store/fp.h"
#include "store/io_engine.h"
#include "store/record.h"

/* ------------------------------------------------------------ ac_state.c */

struct ac_state {
    const struct ac_policy_ops *policy;
    const struct ac_tier *tier;
    /* the tier's shape, taken once at start: exactly one of these is set
     * while anti-caching is on (none for the stock cache) */
    const struct ac_spill_ops *spill;
    const struct ac_page_ops *page;
    bool io;                       /* the tier moves data through the I/O engine (lists ac_io_options) */
    size_t tier_fixed;             /* the tier's book-keeping allocated at start */
    size_t fixed_charge;           /* all book-keeping charged against -m at start (tier + policy) */
    size_t item_limit;             /* what the slab allocator gets of -m now (ac_budget.c lowers it
                                      as the evicted table grows) */
    pthread_mutex_t spill_lock;    /* one spill round at a time; item-pointer hints are read under it */
    unsigned page_epoch;           /* moves on (under spill_lock) before released slab pages are freed */
    char dir[1100];
};

struct ac_counters {
    uint64_t spilled_items, spilled_bytes, fetched_items, fetched_bytes;
    uint64_t rescued_items;        /* spilled on behalf of the slab mover / tail repair */
    uint64_t merged_blocks, merged_items;
    uint64_t copied_blocks, copied_items, copied_bytes, copy_skipped;   /* ac_compact=copy; whole merges */
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
    uint64_t refused_items, refused_disk_full, refused_io_error, refused_table_full, refused_timeout,
        refused_nomem;
    uint64_t alloc_room_taken;     /* spilled, but another request took the room: again */
    uint64_t alloc_waits;          /* allocations that had to wait for held chunks or a page */
    uint64_t pages_borrowed, pages_repaid;
    uint64_t spill_lock_waits, spill_lock_wait_ns;   /* ac_spill_lock: takers that found it held, their wait */
};

extern struct ac_state ac;
extern struct ac_counters ac_cnt;
#define AC_COUNT(field, n) __atomic_add_fetch(&ac_cnt.field, (n), __ATOMIC_RELAXED)
#define AC_READ(field) __atomic_load_n(&ac_cnt.field, __ATOMIC_RELAXED)

/* Why a request cannot be served although its key exists or memory could be
 * had: the core's functions return it (struct ac_lookup's error); at the hooks
 * it becomes the reply text memcached's reply code asks for (ac_hooks.h). */
enum ac_error {
    AC_ERR_NONE = 0,
    AC_ERR_READ,                   /* reading a spilled record failed */
    AC_ERR_CHECKSUM,               /* a spilled record failed its checksum */
    AC_ERR_NOMEM_FETCH,            /* no memory to bring a spilled item back for a modify */
    AC_ERR_NOMEM_STORE,            /* an allocation was refused (ac_room.c) */
};
/* The reply text of e (NULL for AC_ERR_NONE). */
const char *ac_error_text(enum ac_error e);

/* Why an allocation was given up (ac_room.c counts it). */
enum ac_refusal {
    AC_REFUSED_NONE = 0,
    AC_REFUSED_DISK_FULL,          /* a spill write found the file system full (ENOSPC, EDQUOT) */
    AC_REFUSED_IO_ERROR,           /* a spill write failed otherwise */
    AC_REFUSED_TABLE_FULL,         /* the evicted table cannot take more: ac_evicted_max entries,
                                      no memory to grow, or a block id beyond what an entry holds */
    AC_REFUSED_TIMEOUT,            /* nothing to spill or borrow within ac_alloc_wait */
    AC_REFUSED_NOMEM,              /* no memory for the record being built */
};

/* A thread's growable buffers (records built and read, values expanded). */
struct ac_buf { char *p; size_t cap; };
struct ac_scratch {
    struct ac_buf spill;           /* a record being built for the tier */
    struct ac_buf fetch;           /* a record read from the tier (a fetch may spill while it holds it) */
    struct ac_buf codec;           /* a record being compressed */
    struct ac_buf value;           /* a compressed value expanded */
};
/* b's memory, at least n bytes (realloc'd), or NULL. */
char *ac_buf_get(struct ac_buf *b, size_t n);

/* How an allocation made for a lookup may get room (ac_room.c). */
enum ac_alloc_mode {
    AC_ALLOC_FULL = 0,             /* spill, borrow, wait; refused by reason (a request's) */
    AC_ALLOC_TRY,                  /* one spill round, no borrowing, no waiting, no refusal counted
                                      (a policy's migration: optional work) */
    AC_ALLOC_FREE_ONLY,            /* a free chunk of the class or nothing (a block merge's
                                      block-mates: a spill round would take them first) */
};

/* One lookup of a key not in RAM, created by whoever starts it (ac_item_find,
 * a migration, a block merge) and passed down: lookup -> fetch -> materialize
 * -> (memcached's allocator ->) make room. */
struct ac_lookup {
    const char *key;
    size_t nkey;
    uint32_t hv;                   /* memcached's hash of the key: its item lock is held */
    uint64_t fp;                   /* the key's 64-bit fingerprint (the tier's key) */
    bool update;                   /* memcached's do_update: a read (may be served from the record) */
    bool may_park;                 /* a network get that may be left to a fetcher (ac_park.c) */
    enum ac_alloc_mode alloc;      /* how its allocations get room */
    struct ac_prefetcher *pf;      /* reads sent ahead on this thread, or NULL */
    struct ac_scratch *scratch;    /* this thread's buffers */
    /* what it came to: */
    bool parked;                   /* left to a fetcher, not read */
    bool disk;                     /* served after a read of the tier */
    bool sole_copy;                /* the key's only spilled copy was dropped to link it (no
                                      stale copy can be left: ac_item_linked need not look) */
    enum ac_error error;           /* why there is no item although the key has a record */
};

/* The per-thread record at the memcached boundary. */
struct ac_hit_slot;
struct ac_thread {
    struct ac_lookup *lookup;      /* the lookup materializing an item now: memcached's
                                      allocator and link re-enter through ac_alloc and
                                      ac_item_linked (NULL otherwise) */
    const char *error;             /* the text the current command answers instead of a miss */
    item *fetched;                 /* the item the last lookup read from the tier: its access
                                      is a disk hit */
    struct ac_prefetcher *pf;      /* the in-process driver's reads ahead in use (ac_prefetcher_use) */
    int park;                      /* AC_PARK_*: proto_text's permission, the lookup's answer */
    bool may_borrow, borrowed;     /* ac_room.c: this allocation may take a page past the limit */
    /* paging tiers: pages waited for at the start of the current read; the
     * in-process driver opened the window itself (external) */
    uint64_t page_ins_start;
    uint64_t write_page_ins_start;     /* a store's window (in-process driver) */
    bool window_external, window_accessed;
    struct ac_hit_slot *hit_slot;  /* its hit counters' cache line */
    bool hit_slot_shared;          /* another thread counts on that line too */
    uint64_t disk_hits;            /* its reads served after a tier read, for the driver */
    /* ac_park.c: the get command being parsed: its first response, and its
     * parked keys' command record once one is parked */
    void *park_first, *park_cmd;
    struct ac_scratch scratch;
};
enum { AC_PARK_NONE, AC_PARK_ALLOWED, AC_PARK_PARKED };
/* The calling thread's record. Only the boundary uses it: the hooks memcached
 * and the in-process driver call, and the entry points of the core's own
 * threads; everything below them takes a struct ac_lookup or its parts. */
struct ac_thread *ac_thread(void);

/* The book-keeping charged against -m now: the fixed part and what the tier
 * holds per item. */
size_t ac_charged_bytes(void);

/* --------------------------------------------------------- ac_prefetch.c */

/* The bytes of the record (fp, loc) that p read ahead, when they are still
 * the record's (item lock held, entry found), else NULL (p may be NULL). */
char *ac_prefetched(struct ac_prefetcher *p, uint64_t fp, const struct ac_loc *loc);
/* The read of fp's record at loc goes out on p with no key lock held (a
 * migration, which knows the place but not the key): its slot, or -1. */
int ac_prefetch_at(struct ac_prefetcher *p, uint64_t fp, const struct ac_loc *loc);
void ac_prefetch_stats(ADD_STAT add_stats, void *c);

/* ----------------------------------------------------------- ac_record.c */

/* The codec spilled records use ("none", "lz4", "zstd"). */
const char *ac_compression(void);
/* An item's client flags (0 when it has none): they follow the key, unaligned,
 * so they are copied out (memcached's FLAGS_CONV loads them as a uint32_t). */
uint32_t ac_item_client_flags(item *it);
/* The record of a resident item, built in s->spill (*lenp bytes), or NULL. */
char *ac_item_record(struct ac_scratch *s, item *it, size_t *lenp);
/* Parses and verifies a record of exactly len bytes and expands its value
 * (into s->value: r->value then points there). */
enum ac_error ac_record_verify(struct ac_scratch *s, const char *buf, size_t len, struct ac_record *r);
/* Only the expansion of a parsed record's value. */
enum ac_error ac_record_expand_value(struct ac_scratch *s, struct ac_record *r);
/* The one way a record is read: the record at loc, from what pf read ahead
 * when it still is the record's (or, AC_RR_SEEN, from what s->fetch holds
 * already: the caller read it and the tier says the place was not taken
 * again), else from the tier into s->fetch; verified (*r then points into
 * that buffer); bytes read before that do not verify are read again. key
 * (nkey bytes), when not NULL: the record must be that key's
 * (AC_READ_OTHER_KEY otherwise: another key with the same fingerprint).
 * AC_READ_FAILED with *err: unreadable (AC_ERR_READ) or damaged
 * (AC_ERR_CHECKSUM). Counted: the bytes read (record_read_bytes; AC_RR_MIGRATE:
 * bytes not read again count migrate_reads_saved instead), and with
 * AC_RR_COUNT the failures (read_errors, checksum_errors). */
#define AC_RR_COUNT   1u           /* a request's read: its failure is counted */
#define AC_RR_HEADER  2u           /* header and key only: the value is not expanded */
#define AC_RR_SEEN    4u           /* s->fetch holds the bytes at loc, still valid */
#define AC_RR_MIGRATE 8u           /* a migration's read (see above) */
enum ac_read { AC_READ_OK, AC_READ_OTHER_KEY, AC_READ_FAILED };
enum ac_read ac_read_record_at(struct ac_scratch *s, struct ac_prefetcher *pf, uint64_t fp,
                               const struct ac_loc *loc, unsigned how, const char *key, size_t nkey,
                               struct ac_record *r, enum ac_error *err);
/* The tier's read of loc into buf, its bytes counted (record_read_bytes). */
int ac_tier_read(const struct ac_loc *loc, void *buf);
/* The item is expired or flushed. */
bool ac_item_dead(item *it);

/* ----------------------------------------------------------- ac_budget.c */

/* The book-keeping grew or shrank: the item memory follows (the room thread
 * lowers or raises the slab allocator's limit). Cheap. */
void ac_budget_changed(void);
/* The slab memory is within the budget and no change is pending. */
bool ac_budget_settled(void);
/* The thread that applies the budget and repays borrowed pages (spilling
 * tiers): started, stopped. */
int ac_budget_init(void);
void ac_budget_shutdown(void);
unsigned ac_pages_owed(void);
/* The allocation may take one page past the memory limit while fewer than
 * ac_borrow_pages are owed: the allocation (slabs_alloc) under that
 * permission, or NULL. */
void *ac_borrow_alloc(struct ac_thread *th, size_t ntotal, unsigned int id);

/* ------------------------------------------------------------ ac_spill.c */

/* What a spill round (ac_make_room_locked) came to. */
enum ac_room_outcome {
    AC_ROOM_MADE,                  /* items left RAM: the allocation may try again */
    AC_ROOM_NONE,                  /* nothing could be spilled (every chunk held): borrow or wait */
    AC_ROOM_REFUSED,               /* the tier cannot take more: refused, for the reason why */
};
struct ac_room {
    enum ac_room_outcome outcome;
    int spilled;                   /* items that left RAM */
    enum ac_refusal why;           /* AC_ROOM_REFUSED: the tier's reason */
};
/* spill_lock held: spills a block of class clsid's coldest items (a tier that
 * writes at once: a batch). */
struct ac_room ac_make_room_locked(struct ac_scratch *s, unsigned int clsid);
/* Spills the given resident items (hints taken at page epoch `epoch`,
 * re-validated under the spill lock; none if the epoch moved on). */
int ac_spill_batch_items(struct ac_scratch *s, unsigned int clsid, item **cand, int n, unsigned epoch);
/* A live item memcached is about to drop, spilled: true when it may be dropped. */
bool ac_spill_rescue(struct ac_scratch *s, item *it, bool may_block);

/* ------------------------------------------------------------- ac_room.c */
/* (ac_alloc and ac_rescue, the hooks, only: ac_hooks.h) */

/* ------------------------------------------------------ ac_materialize.c */

/* Builds a resident item from a verified record of lk's key at loc and links
 * it in place of the tier's entry (item lock held). *claimed: the drop left
 * loc's block below the compaction threshold and claimed it. NULL: no memory
 * (as lk->alloc allows), or the entry is gone. */
item *ac_materialize(struct ac_lookup *lk, const struct ac_record *r, const struct ac_loc *loc, bool *claimed);
/* A read served from the record: a transient copy (slab class 0, never
 * linked), the item stays spilled; NULL (the record dropped) when it is
 * expired or flushed, or no memory. */
item *ac_read_through(const struct ac_record *r, uint64_t fp, const struct ac_loc *loc);
/* Drops the spilled record (fp, loc), releasing a claim the drop made: true
 * if it was there. */
bool ac_drop_spilled(uint64_t fp, const struct ac_loc *loc);
/* fp's entries include loc (a check from memory, not counted). */
bool ac_spilled_at(uint64_t fp, const struct ac_loc *loc);
/* One record of a block being walked, as read (no lock held). */
struct ac_walk {
    struct ac_record r;        /* parsed; r.key, r.value point into rec */
    const char *rec;           /* the record's bytes (r.len of them) */
    struct ac_loc loc;         /* where it lies */
    uint64_t fp;               /* its key's fingerprint */
};
/* Reads a block the caller claimed (begin_merge), calls each for every record
 * in it (each returns false to stop), then releases the claim: 1 every record
 * visited; 0 stopped (by each, or at a damaged record: counted); -1 the block
 * could not be read. */
int ac_walk_block(uint32_t block, bool (*each)(const struct ac_walk *w, void *arg), void *arg);
/* The key lock of hash value hv for one record of a block walk: taken
 * (item_trylock); or the lock the walk's caller holds already (*held: the
 * hash value of the key a fetch holds while it compacts in place; NULL: none),
 * which it may use and must not release; or NULL: another thread has it. */
void *ac_walk_lock(uint32_t hv, const uint32_t *held);
void ac_walk_unlock(void *lk);
/* Brings every live record of a claimed block back into RAM into free chunks
 * only, then releases the claim (H-Store's block merge; block-mates whose keys
 * another thread has locked stay spilled). whole (ac_merge=block's merge of the
 * fetched record's block): the block-mates that find no free chunk are moved
 * to the open block (ac_move_spilled; tiers with move), so that nothing live is left in the
 * block and its extent goes back to the store; else (lazy compaction's merge)
 * they stay, for a later claim. s: the calling thread's buffers; held: as for
 * ac_walk_lock. */
void ac_merge_block(struct ac_scratch *s, uint32_t block, bool whole, const uint32_t *held);
/* Under the key lock of w's record: the record moved to the open block as it
 * is (spill->move: its entry points there at once), the open block written
 * when full; counted in copied_items / copied_bytes. 1 moved; 0 it stays (no
 * longer spilled there, or the move failed: copy_skipped); -1 the open block
 * could not be written (copy_skipped; the rest of a walk stays too). */
int ac_move_spilled(const struct ac_walk *w);

/* ---------------------------------------------------------- ac_compact.c */

/* Compacts a claimed block (lazy: lazy compaction's claim, merged or copied
 * as ac_compact says; else ac_merge=block's whole merge), in place (with the
 * caller's buffers s, and the key lock of hash value *held that the caller
 * holds, or NULL) or in the compactor thread. */
void ac_compact(struct ac_scratch *s, uint32_t block, bool lazy, const uint32_t *held);
/* Runs the compactor thread when ac_compact_thread asks for it (0, or -1
 * said on stderr). */
int ac_compact_start(void);
void ac_compact_stats(ADD_STAT add_stats, void *c);

/* ------------------------------------------------------------ ac_fetch.c */

/* The lookup of lk's key, not in RAM (item lock held): parked (lk->parked),
 * fetched back into RAM, served from its record (read-through), or none;
 * lk->error says why none when the key has a record that could not be used;
 * lk->disk that a read of the tier served it. */
item *ac_fetch(struct ac_lookup *lk);
/* A key is being linked into RAM: any spilled copy of it is stale. */
void ac_drop_stale_copies(struct ac_scratch *s, item *it);
/* A plain set of a key not in RAM: its spilled records dropped unread. */
void ac_overwrite(uint64_t fp);

/* ------------------------------------------------------------- ac_park.c */

void ac_park_stats(ADD_STAT add_stats, void *c);
void ac_park_stop(void);          /* before the tier closes: fetchers finish and exit */

/* ------------------------------------------------------------ ac_hooks.c */

/* Memory and disk hits so far (every thread's). */
void ac_hit_totals(uint64_t *mem, uint64_t *disk);
/* Pages waited for while serving reads (paging tiers). */
uint64_t ac_read_page_ins(void);
uint64_t ac_write_page_ins(void);

/* --------------------------------------------------------- ac_extstore.c */

struct thread_stats;                 /* memcached.h's (not in the unit tests' fake one) */
/* With extstore: memory hits less the reads that went to disk, disk hits, misses and items
 * lost with extstore's own (ac_extstore.c says how). Unchanged without it. */
void ac_extstore_adjust(const struct thread_stats *ts, uint64_t *mem_hits, uint64_t *disk_hits,
                        uint64_t *misses, uint64_t *lost);
/* extstore's reads, writes and drops as stats anticache's ext_* */
void ac_extstore_stats(ADD_STAT add_stats, void *c, const struct thread_stats *ts, uint64_t ram_evictions);

/* ------------------------------------------- beside the chain: ac_io.c ... */

/* ac_io.c: the values of its options */
struct ac_io_settings {
    unsigned engine;                 /* ac_io: an AC_IO_* */
    uint64_t threads;                /* ac_io_threads */
    unsigned fault;                  /* ac_fault: an AC_FAULT_* ... */
    uint64_t fault_count;            /* ... and how many requests it hits (0 with none) */
    unsigned direct;                 /* ac_io_direct: 1 on, 0 off */
};
extern struct ac_io_settings ac_io_opts;
/* Starts the I/O engine ac_io asks for (or its fallback, said on stderr) and
 * arms ac_fault; its lines of `stats anticache`. */
void ac_io_init(void);
void ac_io_stats(ADD_STAT add_stats, void *c);
/* ac_options.c: -1 after printing why when an option was given for a
 * component other than p, t and the core (it would have no effect). */
int ac_options_check_used(const struct ac_policy_ops *p, const struct ac_tier *t);
/* ac_options.c: "ac_x or ac_y", the options of p and t that size book-keeping
 * charged against -m, for messages ("" when none). */
void ac_options_bookkeeping(const struct ac_policy_ops *p, const struct ac_tier *t, char *buf, size_t n);
/* ac_registry.c: the policy and the tier named (pname may be an approach name
 * such as ospaging, standing for its pair; tname "" is the policy's default);
 * -1 after printing why. */
int ac_resolve(const char *pname, const char *tname, const struct ac_policy_ops **p, const struct ac_tier **t);
/* ac_registry.c: the components, by index (NULL past the last). */
const struct ac_policy_ops *ac_policy_at(size_t i);
const struct ac_tier *ac_tier_at(size_t i);
/* ac_registry.c: the tier can serve under the policy (capabilities). */
bool ac_pair_valid(const struct ac_policy_ops *p, const struct ac_tier *t);

#endif
