/* A latency histogram: 8 buckets per power of two of nanoseconds (a value is
 * at most 12.5 % above its bucket's lower bound), counted with relaxed atomics
 * by any thread. Used for the I/O engine's reads (io_engine.c: every spill
 * file read of every tier, stats io_read_ns_*) and uvmm's fetches. A bucket is
 * named by its lower bound; stats print the nonzero ones, so that a reader can
 * subtract the histogram at one time from a later one and take quantiles of
 * the window between (the harness's run-window spill_read_us_p50/p99). */
#ifndef AC_LATHIST_H
#define AC_LATHIST_H
#include <stdint.h>

#define AC_LATHIST_SUB 8                       /* buckets per power of two */
#define AC_LATHIST_N (40 * AC_LATHIST_SUB)     /* up to 2^42 ns (73 min) */

struct ac_lathist {
    uint64_t n[AC_LATHIST_N];
};

static inline unsigned ac_lathist_bucket(uint64_t ns) {
    if (ns < AC_LATHIST_SUB)
        return (unsigned)ns;
    unsigned lg = 63u - (unsigned)__builtin_clzll(ns);
    unsigned b = (lg - 2) * AC_LATHIST_SUB + (unsigned)((ns >> (lg - 3)) & (AC_LATHIST_SUB - 1));
    return b < AC_LATHIST_N ? b : AC_LATHIST_N - 1;
}

/* The bucket's lower bound in ns. */
static inline uint64_t ac_lathist_value(unsigned b) {
    if (b < AC_LATHIST_SUB)
        return b;
    unsigned lg = b / AC_LATHIST_SUB + 2, sub = b % AC_LATHIST_SUB;
    return (1ull << lg) + ((uint64_t)sub << (lg - 3));
}

static inline void ac_lathist_add(struct ac_lathist *h, uint64_t ns) {
    __atomic_add_fetch(&h->n[ac_lathist_bucket(ns)], 1, __ATOMIC_RELAXED);
}

static inline uint64_t ac_lathist_count(const struct ac_lathist *h) {
    uint64_t total = 0;
    for (unsigned b = 0; b < AC_LATHIST_N; b++)
        total += __atomic_load_n(&h->n[b], __ATOMIC_RELAXED);
    return total;
}

/* The lower bound of the bucket holding the q-quantile: the value of rank
 * ceil(q n) of n (nearest rank, at least 1), as the driver's latency
 * quantiles (ycsb-driver/ycsb_hist.c); 0 when empty. */
static inline uint64_t ac_lathist_quantile(const struct ac_lathist *h, double q) {
    uint64_t total = ac_lathist_count(h), seen = 0;
    if (total == 0)
        return 0;
    double rank = q * (double)total;
    uint64_t want = (uint64_t)rank + ((double)(uint64_t)rank < rank);
    if (want == 0)
        want = 1;
    for (unsigned b = 0; b < AC_LATHIST_N; b++) {
        seen += __atomic_load_n(&h->n[b], __ATOMIC_RELAXED);
        if (seen >= want)
            return ac_lathist_value(b);
    }
    return 0;
}

#endif
