/* The eviction-policy interface of memcached-ac: one ops table per approach,
 * registered by name (ac_core.c), selected with -o ac_policy=NAME. */
#ifndef AC_POLICY_H
#define AC_POLICY_H
/* memcached.h (no include guard) must be included first. */
#include "ac_options.h"

struct ac_policy_ops {
    const char *name;
    const char *summary;
    int    (*init)(const struct ac_options *opts);
    void   (*on_insert)(item *it);              /* linked into RAM (item lock held) */
    void   (*on_access)(item *it);              /* hit in RAM: hot path, O(1), no I/O */
    void   (*on_remove)(item *it);              /* unlinked from RAM */
    /* A block merge brought it back without a request for it (item lock
     * held): it goes where the coldest items are. NULL: left as inserted. */
    void   (*on_merged)(item *it);
    /* Up to max candidates of class clsid, coldest first. They are hints: the
     * caller locks and re-validates each one before spilling it. */
    int    (*pick_victims)(unsigned int clsid, item **out, int max);
    void   (*tick)(void);                       /* maintenance thread, may be NULL */
    size_t (*metadata_bytes)(void);             /* tracking memory, for fair provisioning */
    void   (*stats)(ADD_STAT add_stats, void *c);
    /* Policies with their own cold store (logging): the bytes of book-keeping
     * they allocate at start-up, charged against -m; ac_init then opens neither
     * the block store nor the evicted table, and init must set ac.cold. NULL for
     * the block-store policies. */
    size_t (*fixed_bytes)(size_t maxbytes);
    void   (*shutdown)(void);                   /* at exit: stop threads, close stores; may be NULL */
    /* Kernel-side policies (ospaging): no spill store, no evicted table, no
     * book-keeping charged; init may set ac_slab_base (the slab allocator's
     * memory). Reads are classified by the thread's major faults. */
    bool   kernel_paged;
};

const struct ac_policy_ops *ac_policy_by_name(const char *name);

extern const struct ac_policy_ops ac_policy_none;
extern const struct ac_policy_ops ac_policy_lru;
extern const struct ac_policy_ops ac_policy_alru;
extern const struct ac_policy_ops ac_policy_logging;
extern const struct ac_policy_ops ac_policy_ospaging;
extern const struct ac_policy_ops ac_policy_effpaging;

/* ac_room.c: the page epoch. A policy that keeps item pointers as hints
 * beyond the spill lock (alru's pools, logging's victim lists) notes it when
 * it takes them and drops them unread once it has moved on: the slab page
 * they pointed into may have been freed (memcached releases pool pages). */
unsigned ac_page_epoch(void);

/* alru: replaces the clock source (before init; for tests with a scripted clock) */
void ac_alru_set_clock(uint32_t (*now)(void));

#endif
