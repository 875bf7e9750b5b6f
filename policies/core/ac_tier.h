/* The cold-tier interface of memcached-ac: book-keeping (which items are not
 * in RAM, and where) and data swapping (moving them to and from disk), the two
 * components of anti-caching below the policy (Zhang et al. ICDE 2015 §IV).
 * One descriptor per tier, selected with -o ac_tier=NAME and listed once in
 * ac_components.def.
 *
 * A tier has one of two shapes, each with its own ops table; the core takes
 * the shape once at start (ac_core.c) and never asks again:
 *  - a spilling tier (.spill: blocks, tuples) takes self-checking records
 *    (store/record.h) under the 64-bit fingerprint of their key, hands back a
 *    location and reads a record back by location; items leave RAM when a
 *    policy picks them;
 *  - a paging tier (.page: swap, mmapfile, uvmm) provides the slab memory,
 *    which it pages itself (the kernel, or a user-space pager), and reports the
 *    pages a thread waited for, from which the core counts its disk hits.
 * Tier "none" has neither: memcached evicts (stock).
 * What a tier offers is declared in .caps; a policy declares what it needs of
 * a tier (ac_policy.h); the registry pairs them (ac_registry.c). */
#ifndef AC_TIER_H
#define AC_TIER_H
/* memcached.h (no include guard) must be included first. */
#include "ac_opt.h"
#include "store/io_engine.h"
#include "store/loc.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Capabilities (bits of ac_tier.caps, and what a policy needs). Shapes,
 * exactly one per tier: */
#define AC_CAP_EVICT     0x01u   /* nothing leaves RAM but by memcached's eviction (tier none) */
#define AC_CAP_SPILL     0x02u   /* a spilling tier (.spill) */
#define AC_CAP_PAGE      0x04u   /* a paging tier (.page) */
#define AC_CAP_SHAPES    (AC_CAP_EVICT | AC_CAP_SPILL | AC_CAP_PAGE)
/* Features: */
#define AC_CAP_ANON      0x10u   /* paging: anonymous memory, so a policy may map and lock regions of it itself */
#define AC_CAP_BLOCKS    0x20u   /* spilling: records in blocks, merged whole (read_block, begin_merge, merge_done) */
#define AC_CAP_READ_AHEAD 0x40u  /* spilling: reads without waiting (read_token, read_start, read_valid) */
#define AC_CAP_MOVE      0x80u   /* spilling: a record copied to a new place in one step (move) */
#define AC_CAP_FILES     0x100u  /* keeps files in the spill directory (.files not empty) */

enum { AC_TIER_FULL = 1,         /* put: the open block is packed; flush, then put again */
       AC_TIER_NO_ROOM = 2 };    /* put: the book-keeping cannot take another item */

/* What `stats anticache` shows of every tier (zeros where it has no such thing). */
struct ac_tier_stats {
    uint64_t spilled;            /* items spilled now (stub_items) */
    uint64_t table_bytes;        /* per-item book-keeping in memory now */
    uint64_t table_max;          /* items it may hold at most (0: no cap) */
    uint64_t bytes_on_disk, live_bytes, open_bytes;
    uint64_t blocks_written, bytes_written, record_reads, block_reads;
    uint64_t io_errors;
};

/* ac_record.c: the options of the records the core builds (ac_compress); a
 * spilling tier lists this table in its .options. */
extern const struct ac_opt_table ac_record_options;
/* ac_io.c: the spill files' I/O engine (ac_io, ac_io_threads, ac_fault); spilling tiers list it too. */
extern const struct ac_opt_table ac_io_options;
extern const struct ac_opt_table ac_compact_options;   /* ac_compact.c: tiers with blocks */
bool ac_compact_copies(void);                          /* ac_compact=copy (spill->move is used) */

/* The operations of a spilling tier. Mandatory: put, find, peek, maybe, read,
 * drop. The others may be NULL, in groups: flush; the reads ahead (read_token,
 * read_start, read_valid: AC_CAP_READ_AHEAD); move (AC_CAP_MOVE); the block
 * merges (read_block, begin_merge, merge_done: AC_CAP_BLOCKS). */
struct ac_spill_ops {
    /* Stores the record under fp: 0; AC_TIER_FULL; AC_TIER_NO_ROOM; -errno
     * (a write failed: ENOSPC/EDQUOT when the file system is full). */
    int    (*put)(uint64_t fp, const void *rec, size_t len, struct ac_loc *loc);
    /* Writes what put buffered (one sequential write); 0 or -errno. NULL:
     * put writes at once. */
    int    (*flush)(void);
    /* A lookup: the locations stored under fp (up to max copied), how many
     * exist, or -errno. Counted (filter lookups, index reads). */
    int    (*find)(uint64_t fp, struct ac_loc *out, int max);
    /* The same without counting, and without I/O when the tier can rule fp
     * out in memory: for book-keeping checks. */
    int    (*peek)(uint64_t fp, struct ac_loc *out, int max);
    /* fp may be spilled: an answer from memory alone (no I/O, not counted),
     * never a false "no". */
    bool   (*maybe)(uint64_t fp);
    int    (*read)(const struct ac_loc *loc, void *buf);      /* loc->len bytes; 0 or -errno */
    /* Reads without waiting (core/ac_prefetch.c). read_token, while the
     * record is known live at loc (the key's lock held, the entry found): a
     * name for what loc points into now. read_start sends the read of
     * loc->len bytes at loc out on ring r (req is the caller's; buf holds
     * ac_io_span_cap(loc->len) bytes, aligned to AC_IO_BUF_ALIGN: the record
     * lands at buf + req->skip, a direct read being widened) and returns 0,
     * or 1 when the bytes are there already (no I/O), or -errno (nothing
     * sent; -ESTALE: the space was taken again since the token). Nothing is
     * held while the read is in flight. read_valid, with the record live at
     * loc again (lock held, entry found): the bytes read are the record's
     * (the space was not taken again since the token). */
    uint64_t (*read_token)(const struct ac_loc *loc);
    int    (*read_start)(const struct ac_loc *loc, void *buf, struct ac_io_ring *r, struct ac_io_req *req,
                         uint64_t token);
    bool   (*read_valid)(const struct ac_loc *loc, uint64_t token);
    /* Forgets (fp, loc): -1 not there; 0 done; 1 done, and loc's block fell
     * below the compaction threshold: it is claimed for a whole-block merge
     * (tiers with blocks; the caller merges it or releases the claim). */
    int    (*drop)(uint64_t fp, const struct ac_loc *loc);
    /* Stores rec (len bytes, the record at from, fp's entry) anew and points
     * fp's entry at the new place instead of from, with no second entry at any
     * time (lazy compaction by copy): 0 (*to set, from forgotten); AC_TIER_FULL
     * (flush, then again); -1 from is not fp's entry; -errno. */
    int    (*move)(uint64_t fp, const void *rec, size_t len, const struct ac_loc *from, struct ac_loc *to);
    /* Whole-block merges. */
    ssize_t (*read_block)(uint32_t block, void **buf);       /* malloc'd; length or -errno */
    bool   (*begin_merge)(uint32_t block, bool requested);   /* true: the caller merges it */
    void   (*merge_done)(uint32_t block);
};

/* The operations of a paging tier. map and thread_page_ins mandatory. */
struct ac_page_ops {
    /* The slab memory: a mapping of len bytes that the tier pages; random: no
     * read-around on a fault (MADV_RANDOM). NULL after printing why. */
    void  *(*map)(size_t len, bool random);
    /* Pages the calling thread has waited for so far (the kernel tiers: its
     * major faults, getrusage RUSAGE_THREAD; a user-space pager: the faults it
     * served for the thread). A read during which it rose is a disk hit. */
    uint64_t (*thread_page_ins)(void);
    /* May be NULL. The n bytes at p were accessed (an item read or linked):
     * a user-space pager's access marks (uvmm). */
    void  (*touched)(const void *p, size_t n);
    /* May be NULL. checking: the tier checks pages on the item path (chosen at
     * open); check: the n bytes at p are about to be read: pages of them not
     * in memory are brought in by the calling thread itself (a page in flight
     * is left to the fault path). */
    bool  (*checking)(void);
    void  (*check)(const void *p, size_t n);
};

/* A tier. Mandatory: name, summary, caps, files, fixed_bytes, open, close,
 * charged_bytes, get_stats, and the ops table of its shape (.spill or .page;
 * neither for tier none). stats may be NULL. */
struct ac_tier {
    const char *name;
    const char *summary;
    unsigned caps;               /* AC_CAP_*: its shape and features */
    const char *const *files;    /* the files it creates in the spill directory, NULL-terminated */
    /* Its -o ac_* options (ac_opt.h); unused entries NULL. */
    const struct ac_opt_table *options[AC_MAX_OPT_TABLES];
    /* Book-keeping allocated at start for a server of maxbytes, charged
     * against -m before the slab allocator gets the rest. */
    size_t (*fixed_bytes)(size_t maxbytes);
    /* Opens its files in dir (spilling tiers) or prepares (paging tiers). */
    int    (*open)(const char *dir, size_t maxbytes, char *err, size_t errlen);
    /* At exit or a failed start: stops its threads, closes, removes its files. */
    void   (*close)(void);
    /* Per-item book-keeping held now beyond fixed_bytes (charged as it grows). */
    size_t (*charged_bytes)(void);
    void   (*get_stats)(struct ac_tier_stats *out);
    /* Its own lines of `stats anticache` (may be NULL). */
    void   (*stats)(ADD_STAT add_stats, void *c);
    const struct ac_spill_ops *spill;   /* AC_CAP_SPILL */
    const struct ac_page_ops *page;     /* AC_CAP_PAGE */
};

#endif
