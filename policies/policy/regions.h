/* effpaging's two regions of slab memory (regions.c), as slabs.c sees them:
 * a hot region [ac_hot_lo, ac_hot_hi) and a cold one. slabs.c keeps the free
 * chunks of each region on a list of their own and takes a chunk or a new
 * page from the region ac_region_want() names for this thread (AC_WANT_HOT,
 * else cold), then, unless AC_WANT_STRICT, from the other one. Set at
 * start-up, before slabs_init; ac_slab_regions stays false for every other
 * policy. Included by core/ac_hooks.h for the patched slabs.c. */
#ifndef AC_REGIONS_H
#define AC_REGIONS_H
#include <stdbool.h>
#include <stddef.h>

extern bool ac_slab_regions;
extern char *ac_hot_lo, *ac_hot_hi;
#define AC_WANT_HOT 1u
#define AC_WANT_STRICT 2u
static inline bool ac_region_hot(const void *p) {
    return (const char *)p >= ac_hot_lo && (const char *)p < ac_hot_hi;
}
unsigned int ac_region_want(void);
void ac_region_set(unsigned int want);
/* A slab page of size bytes from the wanted region (slabs_lock held), or NULL. */
void *ac_region_page(size_t size);

/* The policy's side (memcached.h included first, as everywhere). */
/* The slab memory [base, base + total) splits into a hot region of hot bytes
 * at its start and a cold one. */
void ac_regions_init(char *base, size_t hot, size_t total);
/* Bytes of each region handed out as slab pages so far. */
void ac_regions_used(size_t *hot, size_t *cold);
/* Moves a resident item of class clsid (a hint) into a chunk of the hot
 * (to_hot) or the cold region: copy, relink in place of the old one (same CAS,
 * same age), free the old chunk. 1: moved; 0: skipped (gone, busy, already
 * there, chunked); -1: the region has no free chunk of the class. */
int ac_relocate(item *it, unsigned int clsid, bool to_hot);
/* A cold item just linked at the head of its hash chain (item lock held): the
 * hot items directly behind it move in front of it, so no hot lookup walks
 * through it. Returns how many moved. */
int ac_hot_first(item *it);

#endif
