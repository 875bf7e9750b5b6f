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
