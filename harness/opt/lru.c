/* Exact LRU for all capacities at once: Mattson et al. (IBM Systems Journal,
 * 1970) stack distances. The reuse interval (p, q = next[p]) has stack distance
 *   d = #distinct other keys requested in (p, q) = #{j in (p, q) : next[j] > q}
 *     = (q - p - 1) - #{j > p : next[j] < q}
 * (a j in (p, q) is the last request of its key before q iff next[j] > q, and
 * every j > p with next[j] < q lies inside (p, q)). A backward sweep records
 * the next[j] values of the requests already passed and asks, per request, how
 * many of them are below q. next[] is injective, so the recorded values form a
 * set: a bitmap over positions holds them, and a Fenwick tree (Fenwick 1994)
 * counts them per block of 512 positions. A query is a Fenwick prefix over
 * whole blocks plus a popcount inside q's block; the tree has n / 512 entries
 * (0.8 MB for 10^8 requests), so it stays in cache. An LRU cache of c objects
 * hits exactly the reuses with d < c.
 * Writes: every request is an access (a write moves its key to the top of
 * the stack, inserting it if absent: write-allocate), so all reuse intervals
 * enter the sweep, but only those ending at a scored read (a READ or RMW at
 * index >= score_from: bit q of nu->scored) are counted in the histogram. */
#include <stdio.h>
#include <stdlib.h>
#include "opt_internal.h"

#define BLOCK_SHIFT 9                       /* 512 positions = 8 bitmap words per block */
#define WORDS_PER_BLOCK (1u << (BLOCK_SHIFT - 6))

uint64_t ac_lru_bytes(uint64_t n) {
    return ac_bitmap_bytes(n) + ((n >> BLOCK_SHIFT) + 2) * sizeof(uint32_t);
}

static inline unsigned popcount64(uint64_t x) { return (unsigned)__builtin_popcountll(x); }

/* The sweep; returns -1 (after filling *bad) on an internal inconsistency. */
static inline __attribute__((always_inline)) int sweep(const uint32_t *next, const uint64_t *scored,
                                                       uint64_t n, uint64_t distinct,
                                                       uint64_t *bits, uint32_t *fw, uint64_t nblocks,
                                                       uint64_t *hist, uint64_t *bad) {
    for (uint64_t p = n; p-- > 0;) {
        uint32_t q = next[p];
        if (q == AC_NONE)
            continue;
        uint64_t blk = (uint64_t)q >> BLOCK_SHIFT, word = (uint64_t)q >> 6;
        uint64_t below = popcount64(bits[word] & (((uint64_t)1 << (q & 63)) - 1));
        for (uint64_t w = blk * WORDS_PER_BLOCK; w < word; w++)
            below += popcount64(bits[w]);
        for (uint64_t x = blk; x > 0; x &= x - 1)      /* blocks 0 .. blk-1: indices 1..blk */
            below += fw[x];
        uint64_t d = (uint64_t)(q - p - 1) - below;
        if (d >= distinct) {
            *bad = d;
            return -1;
        }
        if (!scored || ac_bit_get(scored, q))
            hist[d]++;
        bits[word] |= (uint64_t)1 << (q & 63);
        for (uint64_t x = blk + 1; x <= nblocks; x += x & (~x + 1))
            fw[x]++;
    }
    return 0;
}

/* Two builds of the sweep: one with the POPCNT instruction (chosen at run time
 * when the CPU has it; the library itself is built for the baseline ISA). */
#if defined(__x86_64__) || defined(__i386__)
static __attribute__((target("popcnt"))) int sweep_popcnt(const uint32_t *next, const uint64_t *scored,
                                                          uint64_t n, uint64_t distinct,
                                                          uint64_t *bits, uint32_t *fw, uint64_t nblocks,
                                                          uint64_t *hist, uint64_t *bad) {
    return sweep(next, scored, n, distinct, bits, fw, nblocks, hist, bad);
}
#endif
static int sweep_generic(const uint32_t *next, const uint64_t *scored, uint64_t n, uint64_t distinct,
                         uint64_t *bits, uint32_t *fw, uint64_t nblocks, uint64_t *hist, uint64_t *bad) {
    return sweep(next, scored, n, distinct, bits, fw, nblocks, hist, bad);
}

int ac_lru_hist(const struct ac_nextuse *nu, uint64_t limit, uint64_t *hist,
                char *err, size_t errlen) {
    const uint64_t n = nu->n, nblocks = (n >> BLOCK_SHIFT) + 1;
    if (ac_mem_check(ac_nextuse_held(nu) + ac_lru_bytes(n), limit,
                     "the LRU stack-distance pass", err, errlen))
        return -1;
    uint64_t *bits = calloc(ac_bitmap_bytes(n) / 8, sizeof *bits);
    uint32_t *fw = calloc(nblocks + 1, sizeof *fw);     /* fw[1..nblocks], block b at index b + 1 */
    if (!bits || !fw) {
        free(bits);
        free(fw);
        return ac_fail(err, errlen, "out of memory in the LRU pass");
    }
    memset(hist, 0, nu->distinct * sizeof *hist);
    uint64_t bad = 0;
    int rc;
#if defined(__x86_64__) || defined(__i386__)
    if (__builtin_cpu_supports("popcnt"))
        rc = sweep_popcnt(nu->next, nu->scored, n, nu->distinct, bits, fw, nblocks, hist, &bad);
    else
#endif
        rc = sweep_generic(nu->next, nu->scored, n, nu->distinct, bits, fw, nblocks, hist, &bad);
    free(bits);
    free(fw);
    if (rc != 0)
        return ac_fail(err, errlen, "internal error: stack distance %llu >= %llu keys",
                       (unsigned long long)bad, (unsigned long long)nu->distinct);
    return 0;
}
