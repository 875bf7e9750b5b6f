/* The policy interface of memcached-ac: access tracking and the eviction
 * choice, the two components of anti-caching above the cold tier (Zhang et
 * al. ICDE 2015 §IV; ac_tier.h for the other two). One ops table per policy,
 * selected with -o ac_policy=NAME (ac_registry.c). */
#ifndef AC_POLICY_H
#define AC_POLICY_H
/* memcached.h (no include guard) must be included first. */
#include "ac_opt.h"

struct ac_policy_ops {
    const char *name;
    const char *summary;
    /* The tiers it works over, NULL-terminated; the first is its default. */
    const char *const *tiers;
    /* Its -o ac_* options (ac_opt.h); unused entries NULL. */
    const struct ac_opt_table *options[AC_MAX_OPT_TABLES];
    /* A read of a spilled item brings it back into RAM (H-Store); false: it is
     * served from its record and stays cold until the policy migrates it
     * (Siberia). Modifies always bring it back. */
    bool   fetch_on_read;
    /* Book-keeping it allocates at start for a server of maxbytes, charged
     * against -m (may be NULL: none). */
    size_t (*fixed_bytes)(size_t maxbytes);
    int    (*init)(void);                       /* its options are set by then */
    void   (*on_insert)(item *it);              /* linked into RAM (item lock held) */
    void   (*on_access)(item *it);              /* hit in RAM: hot path, O(1), no I/O */
    void   (*on_remove)(item *it);              /* unlinked from RAM */
    /* A block merge brought it back without a request for it (item lock
     * held): it goes where the coldest items are. NULL: left as inserted. */
    void   (*on_merged)(item *it);
    /* Up to max candidates of class clsid, coldest first. They are hints: the
     * caller locks and re-validates each one before spilling it. */
    int    (*pick_victims)(unsigned int clsid, item **out, int max);
    size_t (*metadata_bytes)(void);             /* tracking memory it holds now */
    void   (*stats)(ADD_STAT add_stats, void *c);
    void   (*shutdown)(void);                   /* at a failed start: stop threads; may be NULL */
};

extern const struct ac_policy_ops ac_policy_none, ac_policy_lru, ac_policy_alru, ac_policy_logging,
    ac_policy_effpaging, ac_policy_vma;

/* ac_room.c: the page epoch. A policy that keeps item pointers as hints
 * beyond the spill lock (alru's pools, logging's victim lists) notes it when
 * it takes them and drops them unread once it has moved on: the slab page
 * they pointed into may have been freed (memcached releases pool pages). */
unsigned ac_page_epoch(void);

/* alru: replaces the clock source (before init; for tests with a scripted clock) */
void ac_alru_set_clock(uint32_t (*now)(void));

/* ac_core.c: what the slab allocator gets of -m (after the book-keeping
 * charged at start), and whether the in-process driver is the only client (no
 * socket: every access to item memory is the process's own). */
size_t ac_slab_limit(void);
bool ac_in_process(void);
/* ac_room.c: slab pages are carved from [base, base + len) instead of malloc'd
 * (policy vma, at init); memcached keeps its malloc mode: the budget moves,
 * pages are borrowed and released (released ones are reused). The mapping
 * needs room past the limit: ac_slab_headroom() bytes (each class's first
 * page, borrowed pages). */
void ac_page_source(char *base, size_t len);
size_t ac_slab_headroom(void);
/* Pages carved, reused from the released ones, released so far. */
void ac_page_source_stats(uint64_t *carved, uint64_t *reused, uint64_t *released);

/* vma: starts a new epoch now, as its reset thread does every ac_vma_reset (tests) */
void ac_vma_reset_now(void);

#endif
