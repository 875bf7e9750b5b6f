/* The policy interface of memcached-ac: access tracking and the eviction
 * choice, the two components of anti-caching above the cold tier (Zhang et
 * al. ICDE 2015 §IV; ac_tier.h for the other two). One ops table per policy,
 * selected with -o ac_policy=NAME and listed once in ac_components.def. What a
 * policy may call in the core is ac_services.h. */
#ifndef AC_POLICY_H
#define AC_POLICY_H
/* memcached.h (no include guard) must be included first. */
#include "ac_opt.h"
#include "ac_tier.h"

/* Mandatory: name, summary, default_tier, tier_shapes, on_insert, on_access,
 * on_remove, pick_victims, metadata_bytes. Every other member may be NULL
 * (false, 0): in_process_only, fixed_bytes (nothing allocated at start), init,
 * on_fetched (on_access is called), on_merged (left as inserted), stats,
 * shutdown, page_alloc and page_release (memcached's malloc), phase_begin
 * (nothing to do), options. */
struct ac_policy_ops {
    const char *name;
    const char *summary;
    /* The tier it runs over when -o names none (a tier it works over). */
    const char *default_tier;
    /* What it needs of a tier (ac_tier.h): one of the shapes in tier_shapes
     * (AC_CAP_EVICT, AC_CAP_SPILL, AC_CAP_PAGE) and every feature in
     * tier_needs. The registry refuses any other pair. */
    unsigned tier_shapes;
    unsigned tier_needs;
    /* Its -o ac_* options (ac_opt.h); unused entries NULL. */
    const struct ac_opt_table *options[AC_MAX_OPT_TABLES];
    /* It runs only with the in-process driver (no network clients: vma's
     * protected memory cannot be read by the kernel for a socket). */
    bool   in_process_only;
    /* A read of a spilled item brings it back into RAM (H-Store); false: it is
     * served from its record and stays cold until the policy migrates it
     * (Siberia). Modifies always bring it back. */
    bool   fetch_on_read;
    /* Book-keeping it allocates at start for a server of maxbytes, charged
     * against -m. */
    size_t (*fixed_bytes)(size_t maxbytes);
    int    (*init)(void);                       /* its options are set by then */
    void   (*on_insert)(item *it);              /* linked into RAM (item lock held) */
    void   (*on_access)(item *it);              /* hit in RAM: hot path, O(1), no I/O */
    /* Called instead of on_access for an item a spilling tier's lookup read
     * back for the request (a disk hit: in cache terms a miss). The lookup
     * linked it (on_insert just ran) unless fetch_on_read is false or memory
     * ran out (a transient copy, AC_ITEM_TRANSIENT: no on_insert). A policy
     * whose paper treats a miss unlike a hit sets it, so that the read-back
     * enters as a missed object does (SIEVE unvisited, S3-FIFO at frequency
     * 0), not as a hit as well; NULL: on_access, as for a hit in RAM (lru,
     * alru, logging). Paging tiers have no read-back: every access there is
     * on_access. Item lock held; hot path, O(1), no I/O. */
    void   (*on_fetched)(item *it);
    void   (*on_remove)(item *it);              /* unlinked from RAM */
    /* A block merge brought it back without a request for it (item lock
     * held): it goes where the coldest items are. */
    void   (*on_merged)(item *it);
    /* Up to max candidates of class clsid, coldest first. They are hints: the
     * caller locks and re-validates each one before spilling it. A policy over
     * a paging tier returns none. */
    int    (*pick_victims)(unsigned int clsid, item **out, int max);
    /* Optional: the page epoch moved (ac_services.h), pages released before
     * it are about to be freed. A policy that reads hints outside the spill
     * lock, under locks of its own, waits here until no reader of the old
     * epoch holds them. */
    void   (*epoch_moved)(void);
    size_t (*metadata_bytes)(void);             /* tracking memory it holds now */
    void   (*stats)(ADD_STAT add_stats, void *c);
    void   (*shutdown)(void);                   /* at a failed start: stop threads */
    /* The in-process driver is about to start a phase: "load", "warmup" or
     * "run" (the measured one). Called from the driver's main thread while
     * its threads wait at the phase's gate, so no request is in flight; the
     * phase starts when it returns. Never called with network clients. */
    void   (*phase_begin)(const char *phase);
    /* Its own source of slab pages (vma: its protected mapping), used while
     * memcached keeps its malloc mode: a page of size bytes or NULL; a page
     * memcached released, to take back. */
    void  *(*page_alloc)(size_t size);
    void   (*page_release)(void *page);
};

#endif
