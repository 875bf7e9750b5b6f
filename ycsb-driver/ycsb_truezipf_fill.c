/* truezipf in bulk: ycsb_truezipf_fill, the same keys as that many calls of
 * ycsb_truezipf_next, computed in blocks; see ycsb_gen.h.
 *
 * Per block of attempts: the RNG words in order (the stream is sequential),
 * then the table's fast path for all of them without branches (so the
 * compiler can vectorise it: gathers of the cells, the polynomial, the
 * decision as a select), then in order the undecided ones through the exact
 * path and the accepted ranks packed, then the permutation of all of them
 * (branch-free rounds; the rare cycle-walk step afterwards).  A block never
 * draws more attempts than keys still wanted, so the RNG ends where the
 * one-at-a-time calls leave it, and the keys are identical (tests/
 * test_truezipf.c).  The two loops are compiled for AVX-512 and AVX2 as well
 * as the baseline, chosen at load time (GCC's target_clones, x86-64 only),
 * with -O3 (Makefile).  A fused multiply-add in the polynomial changes xa in
 * its last bits only, which the cells' error bound covers. */
#include "ycsb_gen.h"

#define LOCAL_BITS (53 - YCSB_TRUEZIPF_CELL_BITS)
#define LOCAL_MASK ((UINT64_C(1) << LOCAL_BITS) - 1)
#define LOCAL_HALF (INT64_C(1) << (LOCAL_BITS - 1))
#define BLOCK 256

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12 && \
    !defined(__SANITIZE_ADDRESS__)
#define CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define CLONES
#endif

/* k[i] = the rank the table decides for a[i], or 0 (exact path needed) */
CLONES static void fast_block(const struct ycsb_truezipf *z, const uint64_t *a, int64_t *k,
                              size_t m)
{
    const struct ycsb_zipf_cell *cells = z->cells;
    for (size_t i = 0; i < m; i++) {
        const struct ycsb_zipf_cell *c = &cells[a[i] >> LOCAL_BITS];
        double w = (double)((int64_t)(a[i] & LOCAL_MASK) - LOCAL_HALF) * 0x1p-53;
        double xa = c->c0 + w * (c->c1 + w * c->c2);
        int64_t kk = (int64_t)(xa + 0.5);
        double fr = xa - (double)kk;
        k[i] = (fr >= c->lo && fr < c->hi) ? kk : 0;
    }
}

/* ranks 1..n -> base + one step of the permutation network of rank - 1 */
CLONES static void perm_block(const struct ycsb_perm *p, int64_t base, int64_t *v, size_t m)
{
    for (size_t i = 0; i < m; i++)
        v[i] = base + (int64_t)ycsb_perm_step(p, (uint64_t)v[i] - 1);
}

void ycsb_truezipf_fill(const struct ycsb_truezipf *z, struct ycsb_rng *r, int64_t *out,
                        size_t count)
{
    uint64_t a[BLOCK];
    int64_t k[BLOCK];
    size_t done = 0;
    while (done < count) {
        size_t m = count - done < BLOCK ? count - done : BLOCK;
        for (size_t i = 0; i < m; i++)
            a[i] = ycsb_rng_step(r) >> 11;
        fast_block(z, a, k, m);
        size_t got = done;
        for (size_t i = 0; i < m; i++) {
            int64_t rank = k[i] != 0 ? k[i] : ycsb_truezipf_attempt_exact(z, a[i]);
            out[got] = rank;
            got += rank > 0;
        }
        perm_block(&z->perm, z->base, out + done, got - done);
        for (size_t i = done; i < got; i++) {
            uint64_t x = (uint64_t)(out[i] - z->base);
            if (x >= z->perm.n) {           /* the cycle-walk, rarely needed */
                do
                    x = ycsb_perm_step(&z->perm, x);
                while (x >= z->perm.n);
                out[i] = z->base + (int64_t)x;
            }
        }
        done = got;
    }
}
