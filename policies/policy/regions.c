/* Two regions of slab memory, for effpaging (Stoica & Ailamaki, "Enabling
 * efficient OS paging for main-memory OLTP databases", DaMoN 2013: hot tuples
 * in memory the process locks, cold tuples in memory the kernel may page).
 *
 * The slab allocator's memory [base, base + total) is cut in two: the hot
 * region [base, base + hot) and the cold region after it. Slab pages are
 * handed out from either region by a bump pointer each (under slabs_lock);
 * slabs.c keeps each region's free chunks on a list of their own, so a chunk
 * of a class is taken from the region the allocating thread wants (a free
 * chunk, else a new page there):
 *   request threads   hot first, cold when the hot region has no chunk of the
 *                     class and no page left (new and updated items are
 *                     recent, so likely hot; the next round corrects it);
 *   ac_relocate       exactly the region it moves an item into.
 * Pages never change region or class (the slab mover is off: ac_init).
 *
 * Hash chains: memcached's chained hash compares keys inside the items, so a
 * lookup touches every item ahead of its target in the bucket's chain. A cold
 * item ahead of a hot one would be faulted in by the hot item's reads (at 1M
 * items in 2^20 buckets, a perfect classifier still misses 18-35 % of reads
 * that way where 4-12 % are cold targets). assoc_insert links at the head, so
 * a cold item just linked is moved behind the hot items that follow it
 * (ac_hot_first); hot items relinked go to the head anyway. */
#include "memcached.h"
#include "ac_services.h"
#include "store/fp.h"
#include "regions.h"
#include <string.h>

bool ac_slab_regions = false;
char *ac_hot_lo, *ac_hot_hi;
static char *cold_hi;
static char *hot_next, *cold_next;         /* under slabs_lock */
static __thread unsigned int want = AC_WANT_HOT;

void ac_regions_init(char *base, size_t hot, size_t total) {
    ac_hot_lo = hot_next = base;
    ac_hot_hi = cold_next = base + hot;
    cold_hi = base + total;
    ac_slab_regions = true;
}

unsigned int ac_region_want(void) {
    return want;
}

void ac_region_set(unsigned int w) {
    want = w;
}

void *ac_region_page(size_t size) {
    bool hot = want & AC_WANT_HOT;
    char **next = hot ? &hot_next : &cold_next;
    char *end = hot ? ac_hot_hi : cold_hi;
    if ((size_t)(end - *next) < size)
        return NULL;
    char *p = *next;
    *next += size;
    return p;
}

void ac_regions_used(size_t *hot, size_t *cold) {
    /* a racy read of two pointers that only grow: good enough for stats */
    *hot = (size_t)(__atomic_load_n(&hot_next, __ATOMIC_RELAXED) - ac_hot_lo);
    *cold = (size_t)(__atomic_load_n(&cold_next, __ATOMIC_RELAXED) - ac_hot_hi);
}

/* The copy the slab mover makes (slabs.c, slab_rebalance_move): the header,
 * key and value of an unchunked item are one contiguous chunk. */
int ac_relocate(item *it, unsigned int clsid, bool to_hot) {
    uint32_t hv;
    void *lk = ac_grab_item(it, clsid, &hv);
    if (lk == NULL)
        return 0;
    int rc = 0;
    if ((it->it_flags & ITEM_CHUNKED) == 0 && ac_region_hot(it) != to_hot) {
        size_t ntotal = ITEM_ntotal(it);
        ac_region_set((to_hot ? AC_WANT_HOT : 0) | AC_WANT_STRICT);
        item *n = slabs_alloc(ntotal, clsid, 0);
        ac_region_set(AC_WANT_HOT);
        if (n == NULL) {
            rc = -1;
        } else {
            uint64_t cas = ITEM_get_cas(it);
            rel_time_t time = it->time;
            memcpy(n, it, ntotal);
            n->prev = n->next = n->h_next = NULL;
            n->it_flags &= ~ITEM_LINKED;
            n->refcount = 0;
            do_item_replace(it, n, hv);      /* links n (new CAS, now), unlinks it */
            ITEM_set_cas(n, cas);
            n->time = time;
            rc = 1;
        }
    }
    do_item_remove(it);                      /* our reference: frees the old chunk */
    item_trylock_unlock(lk);
    return rc;
}

/* Item it, just linked at the head of its hash chain (its item lock held) and
 * in the cold region: the hot items directly behind it move back in front of
 * it, in their order. Only it and hot (locked, resident) items are touched:
 * the walk stops at the first cold successor, and each assoc_delete walks
 * from the head over it and hot items only. A chain is short (load <= 1.5):
 * at most HOT_FIRST_MAX are moved. Returns how many moved. */
#define HOT_FIRST_MAX 16
int ac_hot_first(item *it) {
    item *hot[HOT_FIRST_MAX];
    int n = 0;
    for (item *s = it->h_next; s != NULL && ac_region_hot(s) && n < HOT_FIRST_MAX; s = s->h_next)
        hot[n++] = s;
    for (int i = n - 1; i >= 0; i--) {
        uint32_t hv = hash(ITEM_key(hot[i]), hot[i]->nkey);
        assoc_delete(ITEM_key(hot[i]), hot[i]->nkey, hv);
        assoc_insert(hot[i], hv);
    }
    return n;
}
