/* Unit tests of the classifier (classify.c), the access log (accesslog.c) and
 * the Bloom filter (store/bloom.c); no memcached. The classifier's hot set
 * must equal an exact offline computation on a recorded log: the estimate of
 * a key is sum over the slices t it was accessed in of alpha (1-alpha)^(T-t)
 * (the closed form of the smoothing recursion), ranked descending, ties by
 * fingerprint, longest prefix within the budget. */
#include "check.h"
#include "../policy/accesslog.h"
#include "../policy/classify.h"
#include "../store/bloom.h"
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One access as the logging policy records it: the sampling draw, then the record. */
static void log_access(struct ac_access_log *l, uint64_t fp, uint32_t size) {
    if (ac_log_sampled(l))
        ac_log_record(l, fp, size);
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t next(void) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return rng;
}

#define KEYS 2000
#define LOG_LEN 200000

struct offline { uint64_t fp; long double est; uint32_t size; };

static int by_est(const void *a, const void *b) {
    const struct offline *x = a, *y = b;
    if (x->est != y->est)
        return x->est > y->est ? -1 : 1;
    return x->fp < y->fp ? -1 : x->fp > y->fp;
}

/* a skewed log over nkeys keys: key i drawn with weight ~ 1/(i+1) */
static void make_log(uint64_t *fps, uint32_t *sizes, uint32_t *log, int nkeys) {
    for (int i = 0; i < nkeys; i++) {
        fps[i] = (next() | 2) & ~1ULL;       /* never 0 or 1 */
        sizes[i] = 100 + (uint32_t)(next() % 900);
    }
    double h = 0, *cdf = malloc((size_t)nkeys * sizeof(double));
    for (int i = 0; i < nkeys; i++)
        h += 1.0 / (i + 1), cdf[i] = h;
    for (int n = 0; n < LOG_LEN; n++) {
        double u = (double)(next() >> 11) / 9007199254740992.0 * h;
        int lo = 0, hi = nkeys - 1;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (cdf[mid] < u) lo = mid + 1; else hi = mid;
        }
        log[n] = (uint32_t)lo;
    }
    free(cdf);
}

/* The closed form over log (LOG_LEN accesses of nkeys keys) against classifier
 * c, which was fed the same accesses and classified last for budget, giving
 * hot keys: its hot set is the closed form's prefix, its estimates the closed
 * form's. */
static void check_closed_form(const struct ac_classifier *c, const uint64_t *fps, const uint32_t *sizes,
                              const uint32_t *log, int nkeys, double alpha, uint64_t slice, uint64_t budget,
                              uint64_t hot) {
    struct offline *off = calloc((size_t)nkeys, sizeof(*off));
    uint64_t *last = calloc((size_t)nkeys, sizeof(uint64_t));
    uint64_t T = LOG_LEN / slice;    /* slice of the classification: accesses / slice_len */
    for (int i = 0; i < nkeys; i++)
        off[i].fp = fps[i], off[i].size = sizes[i], last[i] = UINT64_MAX;
    for (int n = 0; n < LOG_LEN; n++) {
        uint64_t t = (uint64_t)n / slice;
        int k = (int)log[n];
        if (last[k] == t)
            continue;                /* x_t = 1 once per slice */
        last[k] = t;
        off[k].est += (long double)alpha * powl(1.0L - alpha, (long double)(T - t));
    }
    int known = 0;
    for (int i = 0; i < nkeys; i++)
        if (off[i].est >= AC_CLS_FORGET)
            off[known++] = off[i];
    qsort(off, (size_t)known, sizeof(*off), by_est);
    uint64_t bytes = 0, keys = 0;
    int mismatches = 0;
    for (int i = 0; i < known && bytes + off[i].size <= budget; i++) {
        bytes += off[i].size;
        keys++;
        mismatches += !ac_cls_is_hot(c, off[i].fp);
        double got = ac_cls_estimate(c, off[i].fp);
        if (fabs(got - (double)off[i].est) > 1e-9 * (double)off[i].est + 1e-15)
            mismatches++;
    }
    CHECK(keys > 0 && keys <= (uint64_t)known && (budget < UINT64_MAX || keys == (uint64_t)known));
    CHECK_EQ(hot, keys);
    CHECK_EQ(c->hot_bytes, bytes);
    CHECK_EQ(mismatches, 0);
    /* nothing outside the offline prefix is hot */
    int extra = 0;
    for (int i = (int)keys; i < known; i++)
        extra += ac_cls_is_hot(c, off[i].fp);
    CHECK_EQ(extra, 0);
    CHECK_EQ(c->dropped, 0);
    CHECK_EQ(c->count, (uint64_t)known);
    free(off);
    free(last);
}

/* The classifier (capacity keys) against the closed form over the same log of
 * nkeys keys; budget UINT64_MAX: every key known is hot (no sort). */
static void topk_matches_offline(int nkeys, size_t capacity, double alpha, uint64_t slice, uint64_t budget) {
    uint64_t *fps = malloc((size_t)nkeys * sizeof(uint64_t));
    uint32_t *sizes = malloc((size_t)nkeys * sizeof(uint32_t)), *log = malloc(LOG_LEN * sizeof(uint32_t));
    make_log(fps, sizes, log, nkeys);
    struct ac_classifier c;
    CHECK_EQ(ac_cls_init(&c, capacity, alpha, slice), 0);
    /* classify twice: halfway (forgetting and in-place deletion run) and at the end */
    for (int n = 0; n < LOG_LEN; n++) {
        ac_cls_record(&c, fps[log[n]], sizes[log[n]]);
        if (n == LOG_LEN / 2)
            ac_cls_classify(&c, budget);
    }
    uint64_t hot = ac_cls_classify(&c, budget);
    check_closed_form(&c, fps, sizes, log, nkeys, alpha, slice, budget, hot);
    /* the table in use follows the keys, not the capacity, and never holds more than it */
    CHECK(c.nuse <= c.nslots && ac_cls_bytes(&c) <= ac_cls_bytes_for_slots(c.nslots));
    CHECK(c.nuse == c.nslots || 2 * c.count <= c.nuse);
    printf("top-K (%d keys, capacity %zu: %llu of %llu slots in use; alpha %.2f, slice %llu, budget %llu): "
           "%llu hot keys, %llu bytes, %llu forgotten\n", nkeys, capacity, (unsigned long long)c.nuse,
           (unsigned long long)c.nslots, alpha, (unsigned long long)slice, (unsigned long long)budget,
           (unsigned long long)hot, (unsigned long long)c.hot_bytes, (unsigned long long)c.forgotten);
    ac_cls_destroy(&c);
    free(fps); free(sizes); free(log);
}

static void test_topk_matches_offline(double alpha, uint64_t slice, uint64_t budget) {
    topk_matches_offline(KEYS, KEYS, alpha, slice, budget);
}

/* A table that grows: from its first size (4096 slots) through doublings to
 * an eighth of the capacity, then to all of it; every key is found after each
 * move, estimates as the closed form says; past 90 % of the capacity new keys
 * are dropped. */
static void test_growth(void) {
    /* ~31000 of 60000 keys seen: 4096 -> 8192 -> ... -> 65536 of 2^21 slots */
    topk_matches_offline(60000, 1000000, 0.05, 1000, 3000000);
    topk_matches_offline(60000, 1000000, 0.05, 1000, UINT64_MAX);
    struct ac_classifier c;
    CHECK_EQ(ac_cls_init(&c, 100000, 0.05, 1000000), 0);   /* 131072 slots, 117964 keys */
    CHECK_EQ(c.nslots, 131072);
    CHECK_EQ(c.nuse, 4096);
    CHECK_EQ(ac_cls_bytes(&c), ac_cls_bytes_for_slots(4096));
    uint64_t sizes[] = { 4096, 8192, 16384, 131072 };
    int step = 0;
    for (uint64_t k = 1; k <= 130000; k++) {
        ac_cls_record(&c, k * 0x9E3779B97F4A7C15ULL, (uint32_t)(k % 1000));
        if (k == 2048 || k == 4096 || k == 8192) {
            CHECK_EQ(c.nuse, sizes[step]);       /* at half load, not yet grown */
            step++;
        }
        if (k == 2049 || k == 4097 || k == 8193)
            CHECK_EQ(c.nuse, sizes[step]);       /* the next key grew it */
    }
    CHECK_EQ(c.nuse, 131072);
    CHECK_EQ(c.count, 117964);
    CHECK_EQ(c.dropped, 130000 - 117964);
    int lost = 0;
    for (uint64_t k = 1; k <= 117964; k++)
        lost += ac_cls_estimate(&c, k * 0x9E3779B97F4A7C15ULL) != 0.05;
    CHECK_EQ(lost, 0);
    CHECK_EQ(ac_cls_classify(&c, UINT64_MAX), 117964);
    ac_cls_destroy(&c);
}

static void test_smoothing_values(void) {
    struct ac_classifier c;
    CHECK_EQ(ac_cls_init(&c, 10, 0.5, 1), 0);   /* every access its own slice */
    ac_cls_record(&c, 7, 10);        /* slice 0: est 0.5 */
    ac_cls_record(&c, 9, 10);        /* slice 1 */
    ac_cls_record(&c, 7, 10);        /* slice 2: 0.5 + 0.25^1 * ... = 0.5 + 0.5*0.25 */
    /* now at slice 3: key 7 = (0.5 + 0.5 * 0.5^2) * 0.5 = 0.3125 */
    CHECK(fabs(ac_cls_estimate(&c, 7) - 0.3125) < 1e-12);
    CHECK(fabs(ac_cls_estimate(&c, 9) - 0.5 * 0.25) < 1e-12);
    CHECK_EQ(ac_cls_estimate(&c, 12345) == 0.0, 1);
    /* budget 10 bytes: only key 7 */
    CHECK_EQ(ac_cls_classify(&c, 10), 1);
    CHECK(ac_cls_is_hot(&c, 7) && !ac_cls_is_hot(&c, 9));
    CHECK_EQ(ac_cls_classify(&c, 19), 1);
    CHECK_EQ(ac_cls_classify(&c, 20), 2);
    CHECK_EQ(ac_cls_classify(&c, 0), 0);
    ac_cls_destroy(&c);
    /* bad arguments */
    CHECK_EQ(ac_cls_init(&c, 0, 0.5, 1), -1);
    CHECK_EQ(ac_cls_init(&c, 10, 0.0, 1), -1);
    CHECK_EQ(ac_cls_init(&c, 10, 1.5, 1), -1);
    CHECK_EQ(ac_cls_init(&c, 10, 0.5, 0), -1);
    /* a full table drops accesses to new keys and counts them */
    CHECK_EQ(ac_cls_init(&c, 10, 0.5, 1), 0);     /* 16 slots, 14 keys at 90 % */
    for (uint64_t k = 2; k < 2 + 20; k++)
        ac_cls_record(&c, k * 1000003, 1);
    CHECK_EQ(c.count, 14);
    CHECK_EQ(c.dropped, 6);
    ac_cls_destroy(&c);
}

static void count_entry(const struct ac_log_entry *e, void *arg) {
    uint64_t *sum = arg;
    sum[0]++;
    sum[1] += e->fp;
    sum[2] += e->size;
}

struct producer { struct ac_access_log *l; uint64_t base; int n; };

static void *produce(void *arg) {
    struct producer *p = arg;
    for (int i = 0; i < p->n; i++)
        log_access(p->l, p->base + (uint64_t)i, 3);
    return NULL;
}

static void test_access_log(void) {
    struct ac_access_log l;
    CHECK_EQ(ac_log_init(&l, 100, 1.0), 0);
    CHECK_EQ(l.capacity, 128);
    /* 200 appends into a 128-entry ring: 72 dropped, never blocked */
    for (uint64_t i = 1; i <= 200; i++)
        log_access(&l, i, 1);
    CHECK_EQ(ac_log_drops(&l), 72);
    uint64_t sum[3] = { 0, 0, 0 };
    CHECK_EQ(ac_log_drain(&l, count_entry, sum, 1000), 128);
    CHECK_EQ(sum[0], 128);
    CHECK_EQ(sum[1], 128 * 129 / 2);     /* the first 128 were kept, in order */
    CHECK_EQ(ac_log_bytes(&l), ac_log_ring_bytes(128));
    /* four producer threads, one ring each, drained after they finish */
    pthread_t t[4];
    struct producer p[4];
    for (int i = 0; i < 4; i++) {
        p[i] = (struct producer){ &l, (uint64_t)i * 1000000, 100 };
        pthread_create(&t[i], NULL, produce, &p[i]);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    memset(sum, 0, sizeof(sum));
    CHECK_EQ(ac_log_drain(&l, count_entry, sum, 1000), 400);
    CHECK_EQ(sum[1], 4 * 4950 + 1000000ULL * 100 * (0 + 1 + 2 + 3));
    CHECK_EQ(sum[2], 1200);
    CHECK_EQ(l.nrings, 5);
    ac_log_destroy(&l);
    /* sampling at 0.25 keeps about a quarter */
    CHECK_EQ(ac_log_init(&l, 1 << 20, 0.25), 0);
    for (uint64_t i = 0; i < 100000; i++)
        log_access(&l, i, 1);
    memset(sum, 0, sizeof(sum));
    size_t got = ac_log_drain(&l, count_entry, sum, 1 << 20);
    CHECK(got > 24000 && got < 26000);
    ac_log_destroy(&l);
    CHECK_EQ(ac_log_init(&l, 100, 0.0), -1);
    CHECK_EQ(ac_log_init(&l, 100, 1.01), -1);
}

/* A lossless log (ac_log_offline's warm-up): a producer appends into a ring
 * of capacity N that a slow consumer drains a few entries at a time; every
 * append waits for room instead of dropping, and the consumer gets each entry
 * exactly once, in order. */
struct slow_drain {
    struct ac_access_log *l;
    uint64_t want, got;
    unsigned char *seen;      /* per fingerprint 1..want: times drained */
    uint64_t next, out_of_order;
};

static void see_entry(const struct ac_log_entry *e, void *arg) {
    struct slow_drain *d = arg;
    if (e->fp >= 1 && e->fp <= d->want && d->seen[e->fp] < 255)
        d->seen[e->fp]++;
    d->out_of_order += e->fp != d->next;
    d->next = e->fp + 1;
    d->got++;
}

static void *drain_slowly(void *arg) {
    struct slow_drain *d = arg;
    while (d->got < d->want) {
        ac_log_drain(d->l, see_entry, d, 5);
        struct timespec us = { 0, 50000 };
        nanosleep(&us, NULL);
    }
    return NULL;
}

static void test_lossless_log(void) {
    enum { N = 64 };
    struct ac_access_log l;
    CHECK_EQ(ac_log_init(&l, N, 1.0), 0);
    CHECK_EQ(l.capacity, N);
    ac_log_set_lossless(&l, true);
    struct slow_drain d = { &l, 10 * N, 0, calloc(10 * N + 1, 1), 1, 0 };
    pthread_t t;
    pthread_create(&t, NULL, drain_slowly, &d);
    struct producer p = { &l, 1, 10 * N };
    produce(&p);                         /* fingerprints 1..10N */
    pthread_join(t, NULL);
    CHECK_EQ(ac_log_drops(&l), 0);
    CHECK_EQ(d.got, 10 * N);
    int not_once = 0;
    for (int i = 1; i <= 10 * N; i++)
        not_once += d.seen[i] != 1;
    CHECK_EQ(not_once, 0);
    CHECK_EQ(d.out_of_order, 0);
    uint64_t ns, waits = ac_log_waits(&l, &ns);
    /* the consumer frees at most 5 entries per 50 us: the appends beyond the
     * first N could not be done in less than 9N/5 - 1 of its sleeps, most of
     * which the producer spent waiting (at most once per append) */
    CHECK(waits >= 1 && waits <= 9 * N);
    CHECK(ns >= (9 * N / 5 - 1) * 50000ULL / 2);
    printf("lossless log: %d appends into a ring of %d, %llu waited (%.1f us each), none dropped\n",
           10 * N, N, (unsigned long long)waits, (double)ns / 1e3 / (double)waits);
    /* not lossless any more: a full ring drops again */
    CHECK_EQ(ac_log_drain(&l, count_entry, (uint64_t[3]){ 0, 0, 0 }, SIZE_MAX), 0);
    ac_log_set_lossless(&l, false);
    for (uint64_t i = 1; i <= 2 * N; i++)
        log_access(&l, i, 1);
    CHECK_EQ(ac_log_drops(&l), N);
    CHECK_EQ(ac_log_waits(&l, &ns), waits);
    ac_log_destroy(&l);
    free(d.seen);
}

/* The offline round of ac_log_offline (hotcold.c): the warm-up's accesses go
 * through a lossless log whose consumer only records them into the
 * estimates; once the producer stopped (the phase gate), the consumer drains
 * what is left and classifies once. Siberia's backward algorithm (ICDE 2013
 * §IV-B) returns the forward algorithm's top-K over the same log: the hot set
 * equals the forward algorithm's on the same accesses recorded directly, and
 * the closed form's. */
struct history {
    struct ac_access_log *l;
    struct ac_classifier *c;
    volatile int producing;
    uint64_t drained;
};

static void record_entry(const struct ac_log_entry *e, void *arg) {
    struct history *h = arg;
    ac_cls_record(h->c, e->fp, e->size);
    h->drained++;
}

static void *drain_history(void *arg) {
    struct history *h = arg;
    while (h->producing) {
        if (ac_log_drain(h->l, record_entry, h, 100) == 0) {
            struct timespec us = { 0, 20000 };
            nanosleep(&us, NULL);
        }
    }
    return NULL;
}

static void test_offline_round(void) {
    const double alpha = 0.05;
    const uint64_t slice = 1000, budget = 150000;
    uint64_t *fps = malloc(KEYS * sizeof(uint64_t));
    uint32_t *sizes = malloc(KEYS * sizeof(uint32_t)), *log = malloc(LOG_LEN * sizeof(uint32_t));
    make_log(fps, sizes, log, KEYS);
    struct ac_access_log l;
    struct ac_classifier offline, forward;
    CHECK_EQ(ac_log_init(&l, 256, 1.0), 0);
    CHECK_EQ(ac_cls_init(&offline, KEYS, alpha, slice), 0);
    CHECK_EQ(ac_cls_init(&forward, KEYS, alpha, slice), 0);
    ac_log_set_lossless(&l, true);
    struct history h = { &l, &offline, 1, 0 };
    pthread_t t;
    pthread_create(&t, NULL, drain_history, &h);
    for (int n = 0; n < LOG_LEN; n++) {
        log_access(&l, fps[log[n]], sizes[log[n]]);
        ac_cls_record(&forward, fps[log[n]], sizes[log[n]]);
    }
    h.producing = 0;                     /* the gate: nothing is appended any more */
    pthread_join(t, NULL);
    while (ac_log_drain(&l, record_entry, &h, 100) > 0)
        ;
    CHECK_EQ(ac_log_drops(&l), 0);
    CHECK_EQ(h.drained, LOG_LEN);
    CHECK_EQ(offline.rounds, 0);         /* no round while the history was logged */
    uint64_t hot = ac_cls_classify(&offline, budget);
    CHECK_EQ(hot, ac_cls_classify(&forward, budget));
    CHECK_EQ(offline.hot_bytes, forward.hot_bytes);
    int differ = 0;
    for (int i = 0; i < KEYS; i++)
        differ += ac_cls_is_hot(&offline, fps[i]) != ac_cls_is_hot(&forward, fps[i])
            || ac_cls_estimate(&offline, fps[i]) != ac_cls_estimate(&forward, fps[i]);
    CHECK_EQ(differ, 0);
    check_closed_form(&offline, fps, sizes, log, KEYS, alpha, slice, budget, hot);
    uint64_t ns;
    printf("offline round: %d accesses through a lossless ring of 256 (%llu waits), %llu hot keys\n",
           LOG_LEN, (unsigned long long)ac_log_waits(&l, &ns), (unsigned long long)hot);
    ac_cls_destroy(&offline);
    ac_cls_destroy(&forward);
    ac_log_destroy(&l);
    free(fps); free(sizes); free(log);
}

static void test_bloom(void) {
    struct ac_bloom b;
    CHECK_EQ(ac_bloom_init(&b, 100000, 0.01), 0);
    CHECK_EQ(b.k, 7);
    CHECK(b.nbits >= 958505 && b.nbits < 958505 + 64);   /* -n ln p / ln^2 2 */
    CHECK_EQ(ac_bloom_bytes_for(100000, 0.01), b.nbits / 8);
    CHECK_EQ(ac_bloom_bytes_for(0, 0.01), 0);
    for (uint64_t i = 0; i < 100000; i++)
        ac_bloom_add(&b, i * 0x9E3779B97F4A7C15ULL + 12345);
    int missing = 0;
    for (uint64_t i = 0; i < 100000; i++)
        missing += !ac_bloom_may_contain(&b, i * 0x9E3779B97F4A7C15ULL + 12345);
    CHECK_EQ(missing, 0);                /* no false negatives */
    int fp = 0;
    for (uint64_t i = 0; i < 100000; i++)
        fp += ac_bloom_may_contain(&b, (i + 1000000) * 0xC2B2AE3D27D4EB4FULL);
    /* stated bound: at most 1.5 % (the design rate is 1 %) */
    printf("bloom: %d false positives in 100000 absent keys (expected %.3f %%), %zu bytes\n",
           fp, 100 * ac_bloom_expected_fp(&b, 100000), ac_bloom_bytes(&b));
    CHECK(fp <= 1500);
    CHECK(fp >= 500);                    /* and not suspiciously perfect */
    CHECK(fabs(ac_bloom_expected_fp(&b, 100000) - 0.01) < 0.001);
    ac_bloom_clear(&b);
    CHECK(!ac_bloom_may_contain(&b, 12345));
    ac_bloom_destroy(&b);
    CHECK_EQ(ac_bloom_init(&b, 0, 0.01), -1);
    CHECK_EQ(ac_bloom_init(&b, 10, 1.0), -1);
}

int main(void) {
    test_smoothing_values();
    test_topk_matches_offline(0.05, 1000, 150000);
    test_topk_matches_offline(0.05, 1, 300000);
    test_topk_matches_offline(0.3, 50, 60000);
    test_topk_matches_offline(0.05, 1000, UINT64_MAX);
    test_growth();
    test_access_log();
    test_lossless_log();
    test_offline_round();
    test_bloom();
    return check_report("test_classify");
}
