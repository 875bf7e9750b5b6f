/* The checks a policy makes on a candidate before offering it as a victim of
 * slab class clsid (pick_victims): it is resident in that class, and it is not
 * already among the victims chosen in this call. The pointer may be a stale
 * hint (a pool or victim-list entry, a sampled chunk); ac_grab_item
 * re-validates what is offered. Used by policies alru, sieve and logging (and
 * the unit tests of alru and sieve, through their files; test_victim_checks).
 * A list kept from one round to the next (logging's) holds each entry's CAS
 * beside its pointer: a chunk freed (an update, a delete) and reused by
 * another item since holds that item, with a new CAS, and is not offered. With
 * CAS off (-C) every CAS is 0 and only the class and linked checks remain. */
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

/* An entry of a victim list: the chunk and the CAS of the item it held when
 * listed. */
struct ac_listed {
    item *it;
    uint64_t cas;
};

/* An entry for a resident item (read under a lock that keeps it resident). */
static inline struct ac_listed ac_listed_of(item *it) {
    return (struct ac_listed){ it, ITEM_get_cas(it) };
}

/* The listed item is still there: resident in class clsid, the same CAS. */
static inline bool ac_still_listed(struct ac_listed e, unsigned int clsid) {
    return ac_is_resident(e.it, clsid) && ITEM_get_cas(e.it) == e.cas;
}

#endif
