/* Write-allocating OPT (belady.c) against a brute force over all schedules,
 * on every short trace (included by test_core.c, built with ASan/UBSan).
 *
 * Traces are canonical by first occurrence of keys (restricted growth
 * strings: the first key is 0, each new key the next number; hit counts do
 * not depend on key names) over at most 4 keys. Sets checked:
 *   A: every trace of 1..8 requests, each a READ or an UPDATE (820,930);
 *   B: every trace of 1..6 requests, each a READ, INSERT or RMW (150,087);
 *   C: 100,000 random traces of 9 and 10 requests, all four ops (fixed seed).
 * Each at capacities 1..3 and score_from 0 and 3 (traces shorter than 3 with
 * score_from 3 score nothing). Brute force: a dynamic programme over cache
 * contents (a 4-bit mask) after each request.
 *   bypass: every feasible write-allocating schedule: the cache after request
 *           i is any subset of (cache before + k_i) of at most C keys that
 *           holds k_i if request i writes (UPDATE, INSERT, RMW);
 *   demand: a present key changes nothing; an absent key comes in, evicting
 *           any one key when the cache is full.
 * A scored read (READ or RMW at index >= score_from) hits when its key is in
 * the cache before it. Checks: library bypass = brute-force bypass optimum,
 * library demand = brute-force demand optimum, demand <= bypass, and LRU,
 * FIFO and random eviction (3 seeds), all write-allocating demand policies,
 * never beat the demand optimum (so never the bypass one either).
 * Along the prefix tree of the enumeration each trace's DP extends its
 * parent's by one request, so the brute force costs one step per trace. */
#ifndef AC_OPT_EXHAUSTIVE_H
#define AC_OPT_EXHAUSTIVE_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ac_opt.h"
#include "check.h"

#define BF_KEYS 4
#define BF_STATES (1 << BF_KEYS)
#define BF_MAXLEN 10
#define BF_NCAP 3                  /* capacities 1, 2, 3 */
#define BF_NSF 2
#define BF_BATCH 8192
static const unsigned bf_sf[BF_NSF] = {0, 3};

/* best[s][c][v][m]: most scored hits of a schedule ending in cache m
 * (score_from bf_sf[s], capacity c + 1, v 0 demand / 1 bypass), -1 if none. */
struct bf_dp {
    int8_t best[BF_NSF][BF_NCAP][2][BF_STATES];
};

static int bf_popcount(unsigned m) { return __builtin_popcount(m); }
static int bf_reads(unsigned op) { return op == AC_OP_READ || op == AC_OP_RMW; }

static void bf_start(struct bf_dp *d) {
    memset(d->best, -1, sizeof d->best);
    for (int s = 0; s < BF_NSF; s++)
        for (int c = 0; c < BF_NCAP; c++)
            d->best[s][c][0][0] = d->best[s][c][1][0] = 0;
}

static inline void bf_relax(int8_t *cell, int v) {
    if (v > *cell)
        *cell = (int8_t)v;
}

/* The DP after one more request (key r, op, at index j). */
static void bf_step(const struct bf_dp *in, struct bf_dp *out, unsigned r, unsigned op, unsigned j) {
    memset(out->best, -1, sizeof out->best);
    const unsigned b = 1u << r;
    const int writes = op != AC_OP_READ;
    for (int s = 0; s < BF_NSF; s++) {
        const int scored = j >= bf_sf[s] && bf_reads(op);
        for (int c = 0; c < BF_NCAP; c++) {
            const int cap = c + 1;
            for (unsigned m = 0; m < BF_STATES; m++) {
                const int size = bf_popcount(m), present = (m & b) != 0;
                const int gain = scored && present;
                int v = in->best[s][c][0][m];          /* demand */
                if (v >= 0) {
                    if (present)
                        bf_relax(&out->best[s][c][0][m], v + gain);
                    else if (size < cap)
                        bf_relax(&out->best[s][c][0][m | b], v);
                    else
                        for (unsigned e = 0; e < BF_KEYS; e++)
                            if (m >> e & 1)
                                bf_relax(&out->best[s][c][0][(m & ~(1u << e)) | b], v);
                }
                v = in->best[s][c][1][m];              /* bypass: every subset of m + r */
                if (v >= 0) {
                    const unsigned u = m | b;
                    for (unsigned t = u;; t = (t - 1) & u) {
                        if (bf_popcount(t) <= cap && (!writes || (t & b)))
                            bf_relax(&out->best[s][c][1][t], v + gain);
                        if (t == 0)
                            break;
                    }
                }
            }
        }
    }
}

static int bf_opt(const struct bf_dp *d, int s, int c, int v) {
    int best = -1;
    for (unsigned m = 0; m < BF_STATES; m++)
        if (d->best[s][c][v][m] > best)
            best = d->best[s][c][v][m];
    return best;
}

/* Write-allocating demand policies. kind 0 LRU, 1 FIFO, 2.. random eviction
 * (seeded by kind and the trace number). Every request is an access: an
 * absent key comes in (evicting when full); a present key moves to the front
 * of the recency list under LRU only. */
static int bf_policy(const unsigned *keys, const unsigned *ops, unsigned n, unsigned sf, int cap,
                     int kind, uint64_t trace_no) {
    unsigned cache[BF_KEYS];       /* cache[0] = the next victim (LRU / FIFO) */
    int size = 0, hits = 0;
    uint64_t rng = trace_no * 0x9e3779b97f4a7c15ULL + (uint64_t)kind * 0xbf58476d1ce4e5b9ULL + 1;
    for (unsigned j = 0; j < n; j++) {
        int at = -1;
        for (int x = 0; x < size; x++)
            if (cache[x] == keys[j])
                at = x;
        if (at >= 0) {
            hits += j >= sf && bf_reads(ops[j]);
            if (kind == 0) {       /* LRU: to the back (most recent) */
                memmove(&cache[at], &cache[at + 1], (size_t)(size - at - 1) * sizeof *cache);
                cache[size - 1] = keys[j];
            }
            continue;
        }
        if (size == cap) {
            int victim = 0;
            if (kind >= 2) {
                rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;   /* xorshift64 */
                victim = (int)(rng % (uint64_t)cap);
            }
            memmove(&cache[victim], &cache[victim + 1], (size_t)(size - victim - 1) * sizeof *cache);
            size--;
        }
        cache[size++] = keys[j];
    }
    return hits;
}

/* Traces waiting for one library call per (score_from, variant). */
struct bf_batch {
    uint64_t keys[BF_BATCH * BF_MAXLEN], offsets[BF_BATCH + 1];
    uint8_t ops[BF_BATCH * BF_MAXLEN];
    int8_t want[BF_BATCH][BF_NSF][BF_NCAP][2];
    size_t count;
    uint64_t checked, mismatches, policy_wins, demand_over_bypass, demand_below;
};

static void bf_flush(struct bf_batch *bt) {
    static uint64_t hits[BF_BATCH * BF_NCAP], sf[BF_BATCH];
    static const uint64_t caps[BF_NCAP] = {1, 2, 3};
    char err[256];
    for (int s = 0; s < BF_NSF; s++) {
        for (size_t j = 0; j < bt->count; j++) {
            uint64_t len = bt->offsets[j + 1] - bt->offsets[j];
            sf[j] = bf_sf[s] < len ? bf_sf[s] : len;
        }
        for (int v = 0; v < 2; v++) {
            int rc = ac_opt_batch(bt->keys, bt->ops, bt->offsets, sf, bt->count, caps, BF_NCAP, v,
                                  hits, err, sizeof err);
            CHECK_EQ(rc, 0);
            if (rc != 0)
                fprintf(stderr, "ac_opt_batch: %s\n", err);
            for (size_t j = 0; j < bt->count; j++)
                for (int c = 0; c < BF_NCAP; c++)
                    if (hits[j * BF_NCAP + c] != (uint64_t)bt->want[j][s][c][v]) {
                        if (bt->mismatches++ < 5) {
                            fprintf(stderr, "mismatch: sf %u cap %d %s: library %llu, brute force %d; trace",
                                    bf_sf[s], c + 1, v ? "bypass" : "demand",
                                    (unsigned long long)hits[j * BF_NCAP + c], bt->want[j][s][c][v]);
                            for (uint64_t i = bt->offsets[j]; i < bt->offsets[j + 1]; i++)
                                fprintf(stderr, " %llu:%u", (unsigned long long)bt->keys[i], bt->ops[i]);
                            fprintf(stderr, "\n");
                        }
                    }
        }
    }
    bt->count = 0;
    bt->offsets[0] = 0;
}

/* Queues one trace with its brute-force optimum and runs the policy checks. */
static void bf_add(struct bf_batch *bt, const struct bf_dp *d, const unsigned *keys, const unsigned *ops,
                   unsigned n) {
    size_t j = bt->count;
    uint64_t base = bt->offsets[j];
    for (unsigned i = 0; i < n; i++) {
        bt->keys[base + i] = keys[i];
        bt->ops[base + i] = (uint8_t)ops[i];
    }
    bt->offsets[j + 1] = base + n;
    for (int s = 0; s < BF_NSF; s++)
        for (int c = 0; c < BF_NCAP; c++) {
            int demand = bf_opt(d, s, c, 0), bypass = bf_opt(d, s, c, 1);
            bt->want[j][s][c][0] = (int8_t)demand;
            bt->want[j][s][c][1] = (int8_t)bypass;
            bt->demand_over_bypass += demand > bypass;
            bt->demand_below += demand < bypass;
            for (int kind = 0; kind < 5; kind++)
                bt->policy_wins += bf_policy(keys, ops, n, bf_sf[s], c + 1, kind, bt->checked) > demand;
        }
    bt->checked++;
    if (++bt->count == BF_BATCH)
        bf_flush(bt);
}

/* Depth-first over canonical traces: keys[0..depth) and ops are the prefix,
 * d its DP, used the number of distinct keys in it. */
static void bf_walk(struct bf_batch *bt, const struct bf_dp *d, unsigned *keys, unsigned *ops,
                    unsigned depth, unsigned used, unsigned maxlen, const unsigned *opset, unsigned nops) {
    struct bf_dp next;
    unsigned top = used < BF_KEYS ? used + 1 : BF_KEYS;
    for (unsigned r = 0; r < top; r++)
        for (unsigned o = 0; o < nops; o++) {
            keys[depth] = r;
            ops[depth] = opset[o];
            bf_step(d, &next, r, opset[o], depth);
            bf_add(bt, &next, keys, ops, depth + 1);
            if (depth + 1 < maxlen)
                bf_walk(bt, &next, keys, ops, depth + 1, r == used ? used + 1 : used, maxlen, opset, nops);
        }
}

static void test_exhaustive_writes(void) {
    static struct bf_batch bt;
    struct bf_dp root;
    unsigned keys[BF_MAXLEN], ops[BF_MAXLEN];
    memset(&bt, 0, sizeof bt);
    bf_start(&root);

    static const unsigned set_a[] = {AC_OP_READ, AC_OP_UPDATE};
    bf_walk(&bt, &root, keys, ops, 0, 0, 8, set_a, 2);
    bf_flush(&bt);
    CHECK_EQ(bt.checked, 820930);

    static const unsigned set_b[] = {AC_OP_READ, AC_OP_INSERT, AC_OP_RMW};
    bf_walk(&bt, &root, keys, ops, 0, 0, 6, set_b, 3);
    bf_flush(&bt);
    CHECK_EQ(bt.checked, 820930 + 150087);

    uint64_t rng = 42;
    for (unsigned t = 0; t < 100000; t++) {
        unsigned n = 9 + (t & 1);
        struct bf_dp a, b;
        bf_start(&a);
        for (unsigned j = 0; j < n; j++) {
            rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
            keys[j] = (unsigned)(rng % BF_KEYS);
            ops[j] = (unsigned)((rng >> 8) % 4);
            bf_step(&a, &b, keys[j], ops[j], j);
            a = b;
        }
        bf_add(&bt, &a, keys, ops, n);
    }
    bf_flush(&bt);
    CHECK_EQ(bt.checked, 820930 + 150087 + 100000);

    CHECK_EQ(bt.mismatches, 0);
    CHECK_EQ(bt.demand_over_bypass, 0);
    CHECK(bt.demand_below > 0);          /* the variants really differ */
    CHECK_EQ(bt.policy_wins, 0);
    printf("exhaustive: %llu traces x 3 capacities x 2 score_from, %llu (trace, capacity, score_from) "
           "with demand < bypass\n", (unsigned long long)bt.checked, (unsigned long long)bt.demand_below);
}

#endif
