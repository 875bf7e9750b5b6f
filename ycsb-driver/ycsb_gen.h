/* YCSB 0.17 core generators (site.ycsb.generator), ported to C.
 *
 * The random source is ycsb_rng (not java.util.Random), so the numbers differ
 * from Java's, but every transformation of a uniform draw into a key is the
 * one YCSB applies.  Generators are plain structs without locks: each driver
 * thread owns copies (made by struct assignment from the workload's
 * templates); only the insert counter (ycsb_ackcounter) is shared and it is
 * thread-safe. */
#ifndef YCSB_GEN_H
#define YCSB_GEN_H

#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include "ycsb_rng.h"

/* ---- Zipfian (ZipfianGenerator.java; Gray et al., "Quickly Generating
 * Billion-Record Synthetic Databases", SIGMOD 1994) ---- */
#define YCSB_ZIPFIAN_CONSTANT 0.99
struct ycsb_zipfian {
    int64_t items;        /* max - min + 1 at construction */
    int64_t base;         /* min */
    double theta;         /* the zipfian constant: > 0, != 1 (> 1 allowed) */
    double zeta2theta;    /* zeta(2, theta) */
    double alpha;         /* 1 / (1 - theta) */
    double zetan;         /* zeta(countforzeta, theta) */
    int64_t countforzeta; /* item count zetan was computed for */
    double eta;           /* (1 - (2/items)^(1-theta)) / (1 - zeta2theta/zetan) */
    double halfpowtheta;  /* 0.5^theta, YCSB's second threshold (computed once) */
};

/* zeta(st..n): initialsum + sum_{i=st}^{n-1} 1/(i+1)^theta, summed in
 * ascending i like YCSB's zetastatic (so incremental sums are bit-identical
 * to from-scratch sums). */
double ycsb_zeta(int64_t st, int64_t n, double theta, double initialsum);
/* zeta(n, theta) by Euler-Maclaurin: exact sum of the first 1000 terms plus
 * integral, trapezoid end correction and the B2, B4 derivative terms of the
 * tail.  O(1000) instead of O(n); used for n = 1e10. */
double ycsb_zeta_approx(int64_t n, double theta);

/* ZipfianGenerator(min, max, theta): computes zeta(max-min+1) directly. */
void ycsb_zipfian_init(struct ycsb_zipfian *z, int64_t min, int64_t max, double theta);
/* ZipfianGenerator(min, max, theta, zetan): with a precomputed zeta. */
void ycsb_zipfian_init_zetan(struct ycsb_zipfian *z, int64_t min, int64_t max, double theta,
                             double zetan);
/* nextLong(itemcount): if itemcount grew, zetan is extended incrementally and
 * eta recomputed -- with the construction-time `items` in eta's first term,
 * exactly as YCSB 0.17 does; a smaller itemcount is used without recomputing
 * (YCSB's allowitemcountdecrease = false). */
int64_t ycsb_zipfian_next_n(struct ycsb_zipfian *z, struct ycsb_rng *r, int64_t itemcount);
int64_t ycsb_zipfian_next(struct ycsb_zipfian *z, struct ycsb_rng *r);
/* the draw for a given u in [0,1) (exposed for the unit tests); the general
 * case is clamped to base .. base + itemcount - 1 (see ycsb_zipfian.c) */
int64_t ycsb_zipfian_from_u(const struct ycsb_zipfian *z, double u, int64_t itemcount);

/* ---- ScrambledZipfianGenerator.java ---- */
#define YCSB_SCRAMBLED_ITEM_COUNT 10000000000LL
#define YCSB_SCRAMBLED_ZETAN 26.46902820178302   /* YCSB's zeta(1e10, 0.99) */
struct ycsb_scrambled {
    struct ycsb_zipfian gen;  /* Zipfian over 0..ITEM_COUNT */
    int64_t min, max, itemcount;
};
/* min + fnvhash64(zipfian(0..1e10)) % (max-min+1).  theta = 0.99 uses YCSB's
 * constant; any other theta uses ycsb_zeta_approx(1e10 + 1, theta), computed
 * once here and kept in the struct (copies share nothing). */
void ycsb_scrambled_init(struct ycsb_scrambled *g, int64_t min, int64_t max, double theta);
int64_t ycsb_scrambled_next(struct ycsb_scrambled *g, struct ycsb_rng *r);

/* ---- truezipf: Zipf(theta) over n keys (ours; not in YCSB) ----
 *
 * Rank r in 1..n has probability r^-theta / H(n, theta), H(n, theta) =
 * sum_{i=1}^{n} i^-theta, for any theta in (0, 10] including 1.  Sampled in
 * O(1) by rejection-inversion (W. Hormann and G. Derflinger, "Rejection-
 * inversion to generate variates from monotone discrete distributions", ACM
 * TOMACS 6(3), 1996) -- no zeta sum; see ycsb_truezipf.c.  Rank r becomes key
 * min + perm(r - 1), perm being ycsb_perm over n (fixed key, a bijection), so
 * the popular keys are spread over the key range.
 *
 * Every draw is a pure function of the RNG words it consumes (the struct is
 * read-only after init), so the chunked RNG streams give the same keys for
 * any thread count.  Copies (struct assignment) share the read-only table;
 * ycsb_truezipf_destroy on the original frees it. */
#define YCSB_TRUEZIPF_CELL_BITS 12   /* 4096 cells of the H^-1 table, 128 KiB */

/* the fast path's piecewise-quadratic approximation of x(U) = H^-1(y(U)) on
 * one cell of U: xa = c0 + w (c1 + w c2), w = U - the cell's middle; with
 * k = round(xa), the draw is accepted as k when lo <= xa - k < hi (lo > hi:
 * never; see ycsb_truezipf.c) */
struct ycsb_zipf_cell {
    double c0, c1, c2;
    float lo, hi;
};

/* ---- a keyed pseudo-random permutation of 0..n-1 (ycsb_perm.c) ----
 * A 4-round Feistel network on pairs (L, R), L in 0..a-1, R in 0..2^rb-1,
 * x = L 2^rb + R, with 2^rb >= sqrt(n) and a = ceil(n / 2^rb), then
 * cycle-walking into 0..n-1, which is rarely needed because a 2^rb - n <
 * 2^rb.  A bijection of 0..n-1 for 1 <= n <= 2^62.  Inline: it is on
 * truezipf's hot path. */
#define YCSB_PERM_ROUNDS 4
struct ycsb_perm {
    uint64_t n, a, rmask;
    unsigned rbits;
    uint64_t key[YCSB_PERM_ROUNDS];
};
void ycsb_perm_init(struct ycsb_perm *p, uint64_t n, uint64_t key);

/* the round function: (v XOR key) * 0x9E3779B97F4A7C15 mod 2^64, whose top
 * bits depend on every bit of v (Fibonacci hashing, D. Knuth, TAOCP vol. 3,
 * 6.4); its top 32 bits scaled into 0..a-1 by D. Lemire's multiply-shift
 * ("Fast random integer generation in an interval", ACM TOMACS 29(1), 2019)
 * for the L half, its top rbits bits for the R half */
static inline uint64_t ycsb_perm_f(uint64_t v, uint64_t key)
{
    return (v ^ key) * 0x9E3779B97F4A7C15ULL;
}

static inline uint64_t ycsb_perm_step(const struct ycsb_perm *p, uint64_t x)
{
    uint64_t l = x >> p->rbits, r = x & p->rmask;
    for (int i = 0; i < YCSB_PERM_ROUNDS; i += 2) {
        l += ((ycsb_perm_f(r, p->key[i]) >> 32) * p->a) >> 32;   /* (L + g(R)) mod a */
        l = l >= p->a ? l - p->a : l;
        r ^= ycsb_perm_f(l, p->key[i + 1]) >> (64 - p->rbits);   /* R ^ h(L) */
    }
    return (l << p->rbits) | r;
}

/* x < n -> its image (< n) */
static inline uint64_t ycsb_perm_apply(const struct ycsb_perm *p, uint64_t x)
{
    do
        x = ycsb_perm_step(p, x);
    while (x >= p->n);
    return x;
}
/* the inverse (for tests): ycsb_perm_invert(p, ycsb_perm_apply(p, x)) == x */
uint64_t ycsb_perm_invert(const struct ycsb_perm *p, uint64_t y);

/* the permutation's key: a fixed constant, so the hot keys are the same for
 * every seed (as YCSB's ScrambledZipfian's fixed FNV hash) */
#define YCSB_TRUEZIPF_PERM_KEY 0x7472756577697066ULL

struct ycsb_truezipf {
    int64_t base, n;         /* keys base .. base + n - 1 */
    double theta;
    double omt;              /* 1 - theta */
    double h_n;              /* H(n + 1/2) */
    double h_x1;             /* H(3/2) - 1 */
    double span;             /* h_x1 - h_n (< 0): y = h_n + U span */
    double s;                /* squeeze: 2 - H^-1(H(5/2) - 2^-theta) */
    struct ycsb_zipf_cell *cells;   /* 2^YCSB_TRUEZIPF_CELL_BITS, shared read-only */
    struct ycsb_perm perm;
};
/* keys min..max (max - min + 1 = n >= 1), 0 < theta <= 10.  0, or -1 (out
 * of memory for the table). */
int ycsb_truezipf_init(struct ycsb_truezipf *z, int64_t min, int64_t max, double theta);
void ycsb_truezipf_destroy(struct ycsb_truezipf *z);
/* a key in min..max */
int64_t ycsb_truezipf_next(const struct ycsb_truezipf *z, struct ycsb_rng *r);
/* a rank in 1..n (before the permutation) */
int64_t ycsb_truezipf_rank(const struct ycsb_truezipf *z, struct ycsb_rng *r);
/* count keys at once, exactly those count calls of ycsb_truezipf_next would
 * return (and the RNG ends in the same state), faster in bulk
 * (ycsb_truezipf_fill.c) */
void ycsb_truezipf_fill(const struct ycsb_truezipf *z, struct ycsb_rng *r, int64_t *out,
                        size_t count);
/* one attempt for the 53-bit uniform integer a (U = a 2^-53): the rank, or
 * 0 if rejected.  _exact computes x = H^-1(y) with libm every time; the
 * other uses the table when its error bound decides, else _exact (for the
 * tests: both must give the same answer for every a). */
int64_t ycsb_truezipf_attempt(const struct ycsb_truezipf *z, uint64_t a);
int64_t ycsb_truezipf_attempt_exact(const struct ycsb_truezipf *z, uint64_t a);
/* H(x) = (x^(1-theta) - 1)/(1-theta) (log x at theta = 1) and its inverse,
 * written with log1p/expm1 so that theta near and at 1 loses nothing */
double ycsb_truezipf_H(double theta, double x);
double ycsb_truezipf_Hinv(double theta, double y);

/* ---- UniformLongGenerator.java: lb + |nextLong| % (ub - lb + 1) ---- */
struct ycsb_uniform {
    int64_t lb, interval;
};
void ycsb_uniform_init(struct ycsb_uniform *g, int64_t lb, int64_t ub);
int64_t ycsb_uniform_next(const struct ycsb_uniform *g, struct ycsb_rng *r);

/* ---- HotspotIntegerGenerator.java ----
 * hot set = the first (long)(interval * hotsetfraction) values; with
 * probability hotopnfraction the draw is uniform in the hot set, otherwise
 * uniform in the rest.  Where YCSB would divide by an empty set (fraction 0 or
 * 1) the other set is used. */
struct ycsb_hotspot {
    int64_t lb, hot_interval, cold_interval;
    double hotopn_fraction;
};
void ycsb_hotspot_init(struct ycsb_hotspot *g, int64_t lb, int64_t ub, double hotset_fraction,
                       double hotopn_fraction);
int64_t ycsb_hotspot_next(const struct ycsb_hotspot *g, struct ycsb_rng *r);

/* ---- CounterGenerator + AcknowledgedCounterGenerator.java ----
 * next() hands out start, start+1, ...; last() is the highest value v such
 * that every value <= v has been acknowledged (start - 1 before any).  The
 * window of unacknowledged values is 2^20 as in YCSB; acknowledging a value
 * whose slot is still taken fails (YCSB: "Too many unacknowledged insertion
 * keys").  Thread-safe: atomics + a try-lock for advancing last(). */
#define YCSB_ACK_WINDOW (1u << 20)
struct ycsb_ackcounter {
    int64_t counter;     /* next value handed out (atomic) */
    int64_t limit;       /* last(), atomic */
    uint8_t *window;     /* YCSB_ACK_WINDOW flags, atomic bytes */
    pthread_mutex_t lock;
};
int ycsb_ackcounter_init(struct ycsb_ackcounter *c, int64_t start);
void ycsb_ackcounter_destroy(struct ycsb_ackcounter *c);
int64_t ycsb_ackcounter_next(struct ycsb_ackcounter *c);
int64_t ycsb_ackcounter_last(const struct ycsb_ackcounter *c);
/* 0, or -1 when too many values are outstanding */
int ycsb_ackcounter_ack(struct ycsb_ackcounter *c, int64_t value);

/* ---- SkewedLatestGenerator.java ----
 * built on ZipfianGenerator(items = basis.last()); next(max) = max -
 * zipfian.nextLong(max) with max = the counter's last(): the most recently
 * acknowledged insert is the most popular. */
struct ycsb_latest {
    struct ycsb_zipfian zipf;
};
void ycsb_latest_init(struct ycsb_latest *g, int64_t basis_last, double theta);
int64_t ycsb_latest_next(struct ycsb_latest *g, struct ycsb_rng *r, int64_t basis_last);

/* ---- DiscreteGenerator.java (the operation chooser) ----
 * values are tried in insertion order; val = u, and for each value with
 * weight w: if val < w/sum pick it, else val -= w/sum. */
#define YCSB_DISCRETE_MAX 8
struct ycsb_discrete {
    int n;
    double weight[YCSB_DISCRETE_MAX];
    int value[YCSB_DISCRETE_MAX];
};
void ycsb_discrete_init(struct ycsb_discrete *d);
/* 0, or -1 if full */
int ycsb_discrete_add(struct ycsb_discrete *d, double weight, int value);
/* -1 if empty */
int ycsb_discrete_next(const struct ycsb_discrete *d, struct ycsb_rng *r);

#endif
