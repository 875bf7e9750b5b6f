/* Belady's OPT for unit-size objects (Belady 1966; MIN with bypass: Mattson
 * et al. 1970). An object in the cache is identified by the position of its
 * next request: the replay keeps those positions in a max-heap (the top is the
 * object used farthest in the future, the victim) and a bitmap over positions
 * (bit i set = the object requested at i is cached, so request i hits).
 *  demand: a miss always brings the object in, evicting the top when full;
 *  bypass: a miss is admitted only if its next use is sooner than the top's,
 *          and an object never requested again is never admitted.
 * A hit leaves the old entry in the heap as a dead entry (its bit is cleared);
 * dead entries are all smaller than the live ones, so the top is always live,
 * and they are swept out when the heap fills up (ac_heap_compact). */
#include <stdlib.h>
#include <stdio.h>
#include "maxheap.h"
#include "opt_internal.h"

static int bit_live(const void *ctx, uint32_t key) { return ac_bit_get(ctx, key); }

static inline void heap_add(struct ac_heap *h, uint64_t *bits, uint32_t t) {
    if (h->size == h->cap)
        ac_heap_compact(h, bit_live, bits);
    ac_heap_push(h, t);
    ac_bit_set(bits, t);
}

uint64_t ac_belady_replay(const uint32_t *next, uint64_t n, uint64_t cap, int bypass,
                          uint64_t *bits, struct ac_heap *h) {
    memset(bits, 0, ac_bitmap_bytes(n));
    h->size = 0;
    uint64_t live = 0, hits = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t t = next[i];
        if (ac_bit_get(bits, i)) {            /* hit: the entry i dies */
            hits++;
            ac_bit_clear(bits, i);
            if (t != AC_NONE)
                heap_add(h, bits, t);
            else
                live--;
        } else if (t == AC_NONE) {            /* miss, never requested again */
            if (!bypass && live == cap) {     /* demand: it takes the top's slot */
                ac_bit_clear(bits, ac_heap_pop(h));
                live--;
            }
        } else if (live < cap) {              /* miss with room */
            heap_add(h, bits, t);
            live++;
        } else if (!bypass || t < ac_heap_top(h)) {   /* miss, evict the farthest */
            ac_bit_clear(bits, ac_heap_top(h));
            ac_heap_replace_top(h, t);
            ac_bit_set(bits, t);
        }
    }
    return hits;
}

int ac_opt_unit(const struct ac_nextuse *nu, const uint64_t *caps, size_t ncaps,
                int bypass, uint64_t limit, uint64_t *hits, char *err, size_t errlen) {
    if (ac_check_caps(caps, ncaps, "object", err, errlen))
        return -1;
    uint64_t maxcap = 0, d = nu->distinct;
    for (size_t k = 0; k < ncaps; k++)
        if (caps[k] < d && caps[k] > maxcap)
            maxcap = caps[k];
    uint64_t need = ac_nextuse_bytes(nu->n) + ac_bitmap_bytes(nu->n) + 2 * maxcap * sizeof(uint32_t);
    char what[128];
    snprintf(what, sizeof what, "OPT (%s) for capacity %llu", bypass ? "bypass" : "demand",
             (unsigned long long)maxcap);
    if (ac_mem_check(need, limit, what, err, errlen))
        return -1;
    uint64_t *bits = malloc(ac_bitmap_bytes(nu->n));
    struct ac_heap h;
    if (!bits || ac_heap_init(&h, 2 * maxcap) != 0) {
        free(bits);
        return ac_fail(err, errlen, "out of memory in OPT");
    }
    for (size_t k = 0; k < ncaps; k++) {
        if (caps[k] >= d) {          /* everything fits: every reuse hits */
            hits[k] = nu->n - d;
            continue;
        }
        h.cap = 2 * caps[k];
        hits[k] = ac_belady_replay(nu->next, nu->n, caps[k], bypass, bits, &h);
    }
    ac_heap_free(&h);
    free(bits);
    return 0;
}
