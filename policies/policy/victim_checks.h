/* The checks a policy makes on a candidate before offering it as a victim of
 * slab class clsid (pick_victims): it is resident in that class, and it is not
 * already among the victims chosen in this call. The pointer may be a stale
 * hint (a pool or victim-list entry, a sampled chunk); ac_grab_item
 * re-validates what is offered. Used by policies alru, sieve and logging (and
 * the unit tests of alru and sieve, through their files). */
#ifndef AC_VICTIM_CHECKS_H
#define AC_VICTIM_CHECKS_H
/* memcached.h (or the test's stand-in) must be included first. */
#include <stdbool.h>

/* Linked in the hash table, not a free chunk, and of class clsid. */
static inline bool ac_is_resident(const item *it, unsigned int clsid) {
    return (it->it_flags & (ITEM_LINKED | ITEM_SLABBED)) == ITEM_LINKED && ITEM_clsid(it) == clsid;
}

/* it is one of out[0..n). */
static inline bool ac_chosen(const item *it, item *const *out, int n) {
    for (int i = 0; i < n; i++)
        if (out[i] == it)
            return true;
    return false;
}

#endif
