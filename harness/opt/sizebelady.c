/* Size-aware Belady: a feasible policy for variable object sizes, so its
 * misses are an upper bound on the optimal misses (exact OPT is NP-hard with
 * variable sizes). Choice made here: victims are taken in order of farthest
 * next use (Belady's rule, ignoring size); an object is bypassed when it does
 * not fit at all, when it is never requested again, or when, with the cache
 * still too full, its own next use is farther than the farthest cached one
 * (objects already evicted for it stay evicted: still feasible). A hit whose
 * size changed is re-admitted with the new size under the same rules. With
 * unit sizes this is exactly MIN with bypass. Objects are identified by the
 * position of their next useful read, as in belady.c (objects whose next
 * request is not a scored read are dead: free space); held[pos] keeps the
 * size of the cached object whose next useful read is pos.
 * Writes are write-allocate: a written object must be placed, so victims are
 * evicted (farthest first) until it fits, even when its own next use is the
 * farthest; one larger than the whole cache cannot be held and is written
 * around (as a server refuses an item larger than its memory). */
#include <stdio.h>
#include <stdlib.h>
#include "maxheap.h"
#include "opt_internal.h"

static int bit_live(const void *ctx, uint32_t key) { return ac_bit_get(ctx, key); }

static uint64_t replay(const struct ac_trace *tr, const uint32_t *next, const uint64_t *writes,
                       uint64_t n, uint64_t cap, uint64_t *bits, uint32_t *held, struct ac_heap *h) {
    memset(bits, 0, ac_bitmap_bytes(n));
    h->size = 0;
    uint64_t used = 0, hits = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t s = ac_trace_size(tr, i), t = next[i];
        if (ac_bit_get(bits, i)) {
            hits++;
            ac_bit_clear(bits, i);
            used -= held[i];
        }
        int forced = writes && ac_bit_get(writes, i);
        if ((t == AC_NONE && !forced) || s > cap)
            continue;
        while (used + s > cap) {
            while (!ac_bit_get(bits, ac_heap_top(h)))
                ac_heap_pop(h);                   /* stale entries (never the top, but cheap to check) */
            uint32_t far = ac_heap_top(h);
            if (t > far && !forced)
                break;                            /* the newcomer is the farthest: bypass it */
            ac_bit_clear(bits, far);
            used -= held[far];
            ac_heap_pop(h);
        }
        if (used + s > cap || t == AC_NONE)
            continue;                             /* bypassed, or placed dead (free space again) */
        if (h->size == h->cap)
            ac_heap_compact(h, bit_live, bits);
        ac_heap_push(h, t);
        ac_bit_set(bits, t);
        held[t] = s;
        used += s;
    }
    return hits;
}

int ac_size_belady(const struct ac_trace *t, const struct ac_nextuse *nu, const uint64_t *caps,
                   size_t ncaps, uint64_t limit, uint64_t *hits, char *err, size_t errlen) {
    if (ac_check_caps(caps, ncaps, "byte", err, errlen))
        return -1;
    const uint64_t n = nu->n, slots = 2 * (nu->distinct ? nu->distinct : 1);
    uint64_t need = ac_nextuse_held(nu) + ac_bitmap_bytes(n) + n * sizeof(uint32_t) + slots * sizeof(uint32_t);
    if (ac_mem_check(need, limit, "size-aware Belady", err, errlen))
        return -1;
    uint64_t *bits = malloc(ac_bitmap_bytes(n));
    uint32_t *held = malloc((n ? n : 1) * sizeof *held);
    struct ac_heap h = {0};
    if (!bits || !held || ac_heap_init(&h, slots) != 0) {
        free(bits);
        free(held);
        ac_heap_free(&h);
        return ac_fail(err, errlen, "out of memory in size-aware Belady");
    }
    for (size_t k = 0; k < ncaps; k++)
        hits[k] = replay(t, nu->useful, nu->writes, n, caps[k], bits, held, &h);
    ac_heap_free(&h);
    free(held);
    free(bits);
    return 0;
}
