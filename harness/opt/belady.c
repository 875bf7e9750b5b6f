/* Belady's OPT for unit-size objects with write-allocate (Belady, "A study
 * of replacement algorithms for a virtual-storage computer", IBM Systems
 * Journal 1966; MIN with bypass: Mattson, Gecsei, Slutz, Traiger, IBM Systems
 * Journal 1970).
 *
 * Model (ac_opt.h): a schedule is a sequence of cache contents S_0 = {},
 * S_i (after request i) with S_i a subset of S_{i-1} + {k_i}, |S_i| <= C, and
 * k_i in S_i when request i writes (UPDATE, INSERT, RMW). A READ or RMW at
 * i >= score_from scores a hit when k_i is in S_{i-1}.
 *   bypass: any such schedule (a read miss may leave k_i out; objects may be
 *           dropped at any time);
 *   demand: every request whose key is absent brings it in, evicting one
 *           object only when the cache is full; nothing else is dropped.
 *
 * Value of an object. Define nu(i) = the next request of k_i after i if that
 * one is a scored read, else none (its next request writes k_i, is a read
 * before score_from, or does not exist). Keeping k_i after i is worth
 * something only if nu(i) exists: when the next request writes k_i, it is
 * placed again anyway (the write's constraint holds whether or not k_i was
 * kept); when it is an unscored read, bypass may bring k_i in there for free
 * and demand must; in both cases dropping k_i earlier loses no scored hit and
 * only frees a slot. Such "dead" objects are therefore treated as free space
 * (in demand they stay in the cache but are the first victims, which is the
 * same thing: a dead object is evicted exactly when its slot is needed).
 *
 * The replay keeps the live objects, each named by nu (the position of its
 * next useful read), in a max-heap, and a bitmap over positions (bit i set =
 * the object whose next useful read is i is cached, so request i hits). At
 * request i with key k and t = nu(i):
 *   hit (bit i set): k stays; it becomes live with t, or dead if t is none;
 *   miss, forced (a write; in demand every miss): if the cache is full of
 *     live objects, evict the one with the farthest next useful read; then k
 *     is live with t, or dead (free space) if t is none;
 *   miss, optional (a read in bypass, scored or not): admit k iff t exists
 *     and there is room or t is sooner than the farthest live one (evicted).
 *
 * Why this is optimal (the brute force over all schedules in
 * tests/exhaustive.h confirms it on every short trace). Take an optimal
 * schedule O that makes the replay's choices up to request i-1, so both hold
 * the same live set before i (O holds no dead object: dropping one costs
 * nothing, as argued above; drops O makes before it needs the slot are
 * postponed until then, which keeps a superset and loses nothing). If O's
 * choice at i differs, the replay then holds some p where O holds q, with
 * nu(p) sooner than nu(q): q is the replay's victim (the farthest next useful
 * read) or the newcomer it declined, p what O evicted instead or the newcomer
 * O declined. Let O' make the replay's choice and then copy O with p in q's
 * place. Neither p nor q is requested before nu(p) (a live object's next
 * request is its next useful read, and nu(p) < nu(q)), so O' can copy O
 * until then; if O drops q first, O' drops p and the two are equal. At nu(p)
 * O' hits where O misses. If O then loads p evicting q, they are equal with
 * O' one hit ahead; otherwise O' drops what O evicted (or p, if O leaves p
 * out) and holds O's set minus q: it can lose only the hit at nu(q), where it
 * takes q back (bypass: any read may admit; demand: the miss fetches it) and
 * the two are equal again. So O' has at least O's hits and agrees with the
 * replay one request longer; by induction the replay is optimal. For demand,
 * run the same argument allowing drops but forcing every fetch, then delay
 * each drop until a miss needs the slot: that is a demand schedule whose
 * cache is a superset at every step, and the replay is already of this form.
 *
 * A hit leaves the old heap entry stale (its bit is cleared); stale entries
 * are all smaller than the live ones, so the top is always live, and they are
 * swept out when the heap fills up (ac_heap_compact). */
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

uint64_t ac_belady_replay(const uint32_t *useful, const uint64_t *writes, uint64_t n, uint64_t cap,
                          int bypass, uint64_t *bits, struct ac_heap *h) {
    memset(bits, 0, ac_bitmap_bytes(n));
    h->size = 0;
    uint64_t live = 0, hits = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t t = useful[i];
        if (ac_bit_get(bits, i)) {            /* hit: the entry i goes stale */
            hits++;
            ac_bit_clear(bits, i);
            if (t != AC_NONE)
                heap_add(h, bits, t);
            else
                live--;
            continue;
        }
        /* a miss: forced in demand and for writes, optional for reads in bypass */
        int forced = !bypass || (writes && ac_bit_get(writes, i));
        if (t == AC_NONE) {                   /* dead after this request */
            if (forced && live == cap) {      /* it takes the top's slot */
                ac_bit_clear(bits, ac_heap_pop(h));
                live--;
            }
        } else if (live < cap) {              /* miss with room */
            heap_add(h, bits, t);
            live++;
        } else if (forced || t < ac_heap_top(h)) {   /* miss, evict the farthest */
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
    uint64_t need = ac_nextuse_held(nu) + ac_bitmap_bytes(nu->n) + 2 * maxcap * sizeof(uint32_t);
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
            hits[k] = nu->reuses;
            continue;
        }
        h.cap = 2 * caps[k];
        hits[k] = ac_belady_replay(nu->useful, nu->writes, nu->n, caps[k], bypass, bits, &h);
    }
    ac_heap_free(&h);
    free(bits);
    return 0;
}
