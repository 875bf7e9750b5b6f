/* Unit tests of the evicted table: the FNV-1a 64 fingerprint's published test
 * vectors; insert, find, remove, several locations under one fingerprint; the
 * location packing's limits; the entry cap; a randomized run against a naive
 * reference; bytes per entry while it grows to 10^6 entries and shrinks; four
 * threads sharing the stripes. */
#include "check.h"
#include "../store/evicted.h"
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state;

/* splitmix64 (Steele, Lea, Flood 2014): deterministic test input */
static uint64_t rnd(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static bool same_loc(const struct ac_loc *a, const struct ac_loc *b) {
    return a->block == b->block && a->offset == b->offset && a->len == b->len;
}

static void test_fingerprint(void) {
    /* FNV-1a 64 test vectors (Fowler/Noll/Vo reference test suite) */
    CHECK(ac_key_fp("", 0) == 0xcbf29ce484222325ULL);
    CHECK(ac_key_fp("a", 1) == 0xaf63dc4c8601ec8cULL);
    CHECK(ac_key_fp("foobar", 6) == 0x85944171f73967e8ULL);
}

static void test_table(void) {
    struct ac_evicted t;
    CHECK_EQ(ac_evicted_init(&t, 0, 20, 20), 0);
    size_t fixed = ac_evicted_bytes(&t);
    CHECK(fixed > 0 && fixed <= AC_EVICTED_STRIPES * 128);
    CHECK_EQ(ac_evicted_count(&t), 0);
    struct ac_loc l[6] = { {1, 0, 50}, {1, 50, 60}, {2, 0, 70}, {3, 0, 80}, {3, 80, 90}, {4, 0, 10} };
    uint64_t same = 77, other = 77 + ((uint64_t)5 << 8);   /* same stripe, same home */
    struct ac_loc out[4];
    CHECK_EQ(ac_evicted_find(&t, same, out, 4), 0);        /* an empty table */
    CHECK(!ac_evicted_remove(&t, same, &l[0]));
    CHECK_EQ(ac_evicted_insert(&t, same, &l[0]), 0);
    CHECK(ac_evicted_bytes(&t) > fixed);                   /* the stripe got its slots */
    CHECK_EQ(ac_evicted_insert(&t, other, &l[2]), 0);
    CHECK_EQ(ac_evicted_insert(&t, same, &l[1]), 0);       /* a collision: both kept */
    CHECK_EQ(ac_evicted_insert(&t, 5, &l[3]), 0);
    CHECK_EQ(ac_evicted_insert(&t, 6, &l[4]), 0);
    CHECK_EQ(ac_evicted_count(&t), 5);

    int n = ac_evicted_find(&t, same, out, 4);
    CHECK_EQ(n, 2);
    CHECK(same_loc(&out[0], &l[0]) && same_loc(&out[1], &l[1]));   /* oldest first */
    CHECK_EQ(ac_evicted_find(&t, other, out, 4), 1);
    CHECK(same_loc(&out[0], &l[2]));
    CHECK_EQ(ac_evicted_find(&t, 12345, out, 4), 0);
    memset(out, 0, sizeof(out));
    CHECK_EQ(ac_evicted_find(&t, same, out, 1), 2);        /* count beyond max */
    CHECK(same_loc(&out[0], &l[0]) && out[1].len == 0);    /* one copied */
    CHECK_EQ(ac_evicted_find(&t, same, NULL, 0), 2);

    CHECK(!ac_evicted_remove(&t, same, &l[2]));            /* wrong location */
    CHECK(!ac_evicted_remove(&t, other, &l[0]));           /* wrong fingerprint */
    CHECK_EQ(ac_evicted_count(&t), 5);
    CHECK(ac_evicted_remove(&t, same, &l[0]));
    CHECK(!ac_evicted_remove(&t, same, &l[0]));            /* only once */
    CHECK_EQ(ac_evicted_find(&t, same, out, 4), 1);
    CHECK(same_loc(&out[0], &l[1]));
    CHECK_EQ(ac_evicted_find(&t, other, out, 4), 1);       /* its neighbour moved back */
    CHECK(same_loc(&out[0], &l[2]));
    CHECK_EQ(ac_evicted_count(&t), 4);
    struct ac_loc other_len = { 1, 50, 999 };              /* matched on block and offset */
    CHECK(ac_evicted_remove(&t, same, &other_len));
    CHECK_EQ(ac_evicted_find(&t, same, out, 4), 0);
    CHECK_EQ(ac_evicted_insert(&t, 7, &l[5]), 0);
    CHECK_EQ(ac_evicted_find(&t, 7, out, 4), 1);
    CHECK(same_loc(&out[0], &l[5]));
    CHECK_EQ(ac_evicted_count(&t), 4);

    /* the same (fp, loc) twice: two entries, removed one at a time */
    CHECK_EQ(ac_evicted_insert(&t, 9, &l[3]), 0);
    CHECK_EQ(ac_evicted_insert(&t, 9, &l[3]), 0);
    CHECK_EQ(ac_evicted_find(&t, 9, out, 4), 2);
    CHECK(ac_evicted_remove(&t, 9, &l[3]));
    CHECK_EQ(ac_evicted_find(&t, 9, out, 4), 1);
    CHECK(ac_evicted_remove(&t, 9, &l[3]));
    CHECK(!ac_evicted_remove(&t, 9, &l[3]));
    CHECK_EQ(ac_evicted_count(&t), 4);
    ac_evicted_destroy(&t);
    CHECK_EQ(ac_evicted_count(&t), 0);
    ac_evicted_destroy(&t);                                /* twice is harmless */
}

static void test_packing(void) {
    struct ac_evicted t;
    CHECK_EQ(ac_evicted_init(&t, 0, 20, 20), 0);           /* 24 bits of block id */
    uint32_t mb = ac_evicted_max_block(&t);
    CHECK_EQ(mb, (1u << 24) - 1);
    struct ac_loc edge = { mb, (1u << 20) - 1, (1u << 20) - 1 }, out[2];
    uint64_t fp = 0xfedcba9876543210ULL;
    CHECK_EQ(ac_evicted_insert(&t, fp, &edge), 0);
    CHECK_EQ(ac_evicted_find(&t, fp, out, 2), 1);
    CHECK(same_loc(&out[0], &edge));
    struct ac_loc low = { 0, 0, 1 };
    CHECK_EQ(ac_evicted_insert(&t, fp, &low), 0);
    CHECK_EQ(ac_evicted_find(&t, fp, out, 2), 2);
    CHECK(same_loc(&out[0], &edge) && same_loc(&out[1], &low));

    struct ac_loc bad_block = { mb + 1, 0, 10 }, bad_off = { 1, 1u << 20, 10 },
                  bad_len = { 1, 0, 1u << 20 }, zero_len = { 1, 0, 0 }, huge = { UINT32_MAX, UINT32_MAX, UINT32_MAX };
    CHECK_EQ(ac_evicted_insert(&t, 1, &bad_block), -2);
    CHECK_EQ(ac_evicted_insert(&t, 1, &bad_off), -2);
    CHECK_EQ(ac_evicted_insert(&t, 1, &bad_len), -2);
    CHECK_EQ(ac_evicted_insert(&t, 1, &zero_len), -2);
    CHECK_EQ(ac_evicted_insert(&t, 1, &huge), -2);
    CHECK_EQ(ac_evicted_find(&t, 1, out, 2), 0);
    CHECK_EQ(ac_evicted_count(&t), 2);
    CHECK(!ac_evicted_remove(&t, fp, &bad_block));         /* cannot be there */
    CHECK(!ac_evicted_remove(&t, fp, &bad_off));
    CHECK(ac_evicted_remove(&t, fp, &edge));
    CHECK(ac_evicted_remove(&t, fp, &low));
    CHECK_EQ(ac_evicted_count(&t), 0);
    ac_evicted_destroy(&t);

    CHECK_EQ(ac_evicted_init(&t, 0, 24, 24), 0);           /* 16 bits of block id: the least */
    CHECK_EQ(ac_evicted_max_block(&t), 65535);
    struct ac_loc b16 = { 65535, (1u << 24) - 1, (1u << 24) - 1 }, b16x = { 65536, 0, 1 };
    CHECK_EQ(ac_evicted_insert(&t, 3, &b16), 0);
    CHECK_EQ(ac_evicted_insert(&t, 3, &b16x), -2);
    CHECK_EQ(ac_evicted_find(&t, 3, out, 2), 1);
    CHECK(same_loc(&out[0], &b16));
    ac_evicted_destroy(&t);

    CHECK_EQ(ac_evicted_init(&t, 0, 0, 32), 0);            /* 32 bits each: any block, any len */
    CHECK_EQ(ac_evicted_max_block(&t), UINT32_MAX);
    struct ac_loc any = { UINT32_MAX, 0, UINT32_MAX }, off1 = { 0, 1, 1 };
    CHECK_EQ(ac_evicted_insert(&t, 4, &any), 0);
    CHECK_EQ(ac_evicted_insert(&t, 4, &off1), -2);         /* no bits for the offset */
    CHECK_EQ(ac_evicted_find(&t, 4, out, 2), 1);
    CHECK(same_loc(&out[0], &any));
    ac_evicted_destroy(&t);

    CHECK_EQ(ac_evicted_init(&t, 0, 30, 19), -1);          /* 15 bits of block id */
    CHECK_EQ(ac_evicted_init(&t, 0, 24, 25), -1);
    CHECK_EQ(ac_evicted_init(&t, 0, 49, 1), -1);
    CHECK_EQ(ac_evicted_init(&t, 0, 20, 0), -1);           /* len needs a bit */
    CHECK_EQ(ac_evicted_init(&t, 0, UINT32_MAX, 2), -1);   /* no wrap-around */
    ac_evicted_destroy(&t);
}

static void test_cap(void) {
    struct ac_evicted t;
    CHECK_EQ(ac_evicted_init(&t, 5, 20, 20), 0);
    CHECK_EQ(t.max_entries, 5);
    struct ac_loc l = { 1, 0, 10 };
    for (uint64_t i = 0; i < 5; i++)
        CHECK_EQ(ac_evicted_insert(&t, i * 1000003, &l), 0);
    CHECK_EQ(ac_evicted_insert(&t, 99, &l), -1);
    CHECK_EQ(ac_evicted_count(&t), 5);
    CHECK_EQ(ac_evicted_find(&t, 99, NULL, 0), 0);
    struct ac_loc bad = { 1, 0, 0 };
    CHECK_EQ(ac_evicted_insert(&t, 99, &bad), -2);         /* a bad loc is -2 even when full */
    /* a move takes no slot: it works with the table full, the count stays */
    struct ac_loc to = { 7, 4096, 20 }, got[2];
    CHECK_EQ(ac_evicted_move(&t, 3 * 1000003, &l, &to), 0);
    CHECK_EQ(ac_evicted_count(&t), 5);
    CHECK_EQ(ac_evicted_find(&t, 3 * 1000003, got, 2), 1);
    CHECK(same_loc(&got[0], &to));
    CHECK_EQ(ac_evicted_move(&t, 3 * 1000003, &l, &to), -1);   /* no longer there */
    CHECK_EQ(ac_evicted_move(&t, 99, &l, &to), -1);            /* never there */
    CHECK_EQ(ac_evicted_move(&t, 4 * 1000003, &l, &bad), -2);  /* to does not fit */
    CHECK_EQ(ac_evicted_find(&t, 4 * 1000003, got, 2), 1);
    CHECK(same_loc(&got[0], &l));                              /* and nothing changed */
    CHECK(ac_evicted_remove(&t, 3 * 1000003, &to));
    CHECK_EQ(ac_evicted_insert(&t, 3 * 1000003, &l), 0);
    CHECK(ac_evicted_remove(&t, 0, &l));
    CHECK_EQ(ac_evicted_insert(&t, 99, &l), 0);            /* room again */
    CHECK_EQ(ac_evicted_insert(&t, 100, &l), -1);
    CHECK_EQ(ac_evicted_count(&t), 5);
    ac_evicted_destroy(&t);
}

/* ---- randomized run against a naive reference ---- */

/* The reference: every live entry in one array, in insertion order (removal
 * keeps the order), found by a linear scan. */
struct ref_entry { uint64_t fp; struct ac_loc loc; };
static struct ref_entry *ref;
static size_t ref_n;

static int ref_find(uint64_t fp, struct ac_loc *out, int max) {
    int n = 0;
    for (size_t i = 0; i < ref_n; i++)
        if (ref[i].fp == fp) {
            if (n < max)
                out[n] = ref[i].loc;
            n++;
        }
    return n;
}

static bool ref_remove(uint64_t fp, const struct ac_loc *loc) {
    for (size_t i = 0; i < ref_n; i++)
        if (ref[i].fp == fp && ref[i].loc.block == loc->block && ref[i].loc.offset == loc->offset) {
            memmove(&ref[i], &ref[i + 1], (ref_n - i - 1) * sizeof(*ref));
            ref_n--;
            return true;
        }
    return false;
}

/* Points the first entry (fp, loc) at to, in place, as ac_evicted_move. */
static bool ref_move(uint64_t fp, const struct ac_loc *loc, const struct ac_loc *to) {
    for (size_t i = 0; i < ref_n; i++)
        if (ref[i].fp == fp && ref[i].loc.block == loc->block && ref[i].loc.offset == loc->offset) {
            ref[i].loc = *to;
            return true;
        }
    return false;
}

#define HOT 48

static void test_model(void) {
    enum { OPS = 400000, MAXN = 6000 };
    struct ac_evicted t;
    CHECK_EQ(ac_evicted_init(&t, 0, 16, 16), 0);
    ref = malloc(MAXN * sizeof(*ref));
    ref_n = 0;
    rng_state = 42;
    uint64_t hot[HOT];
    for (int i = 0; i < HOT; i++) {
        hot[i] = rnd();
        if (i >= HOT / 2)   /* half share one stripe and one home, differing in bits 8-31 */
            hot[i] = (hot[0] & 0xffffffff000000ffULL) | ((uint64_t)(i + 1) << 8);
    }
    uint32_t next_loc = 0;
    long finds = 0, inserts = 0, removes = 0, moves = 0, misses = 0, bad_find = 0, bad_rm = 0, bad_ins = 0;
    long max_dups = 0;
    size_t target = 0, peak_bytes = 0;
    for (long op = 0; op < OPS; op++) {
        if (op % 20000 == 0)   /* the size wanders: grows, shrinks, grows again */
            target = (size_t)(rnd() % (MAXN - 100));
        uint64_t r = rnd();
        unsigned kind = r % 100;
        bool grow = ref_n < target;
        if (kind < (grow ? 45u : 25u) && ref_n < MAXN) {
            uint64_t fp;
            unsigned how = (r >> 8) % 10;
            if (how < 2)
                fp = hot[(r >> 16) % HOT];                     /* forced duplicates */
            else if (how < 3 && ref_n > 0)
                fp = ref[(r >> 16) % ref_n].fp;                /* a key spilled again */
            else
                fp = rnd();
            struct ac_loc loc;
            if ((r >> 40) % 50 == 0 && ref_n > 0) {
                loc = ref[(r >> 16) % ref_n].loc;              /* even the same location */
                fp = ref[(r >> 16) % ref_n].fp;
            } else {
                loc.block = next_loc / 16;
                loc.offset = (next_loc % 16) * 4096 + (uint32_t)(r >> 48) % 4096;
                loc.len = 1 + (uint32_t)(r >> 24) % 65535;
                next_loc++;
            }
            if (ac_evicted_insert(&t, fp, &loc) != 0)
                bad_ins++;
            ref[ref_n].fp = fp;
            ref[ref_n].loc = loc;
            ref_n++;
            inserts++;
        } else if (kind < 65 && ref_n > 0) {
            struct ref_entry e = ref[(r >> 8) % ref_n];
            if ((r >> 40) % 8 == 0) {                          /* not there: another location */
                e.loc.offset ^= 1u << 15;
                e.loc.len = 7;
                bool want = ref_remove(e.fp, &e.loc);
                if (ac_evicted_remove(&t, e.fp, &e.loc) != want)
                    bad_rm++;
                misses += !want;
            } else if ((r >> 40) % 8 == 1) {                   /* moved (lazy compaction by copy) */
                struct ac_loc to = { next_loc / 16, (next_loc % 16) * 4096, 1 + (uint32_t)(r >> 24) % 65535 };
                next_loc++;
                if (!ref_move(e.fp, &e.loc, &to) || ac_evicted_move(&t, e.fp, &e.loc, &to) != 0)
                    bad_rm++;
                moves++;
                continue;
            } else {
                if (!ref_remove(e.fp, &e.loc) || !ac_evicted_remove(&t, e.fp, &e.loc))
                    bad_rm++;
            }
            removes++;
        } else {
            uint64_t fp;
            unsigned how = (r >> 8) % 4;
            if (how == 0 || ref_n == 0)
                fp = rnd();
            else if (how == 1)
                fp = hot[(r >> 16) % HOT];
            else
                fp = ref[(r >> 16) % ref_n].fp;
            int max = (int)((r >> 32) % 9);
            struct ac_loc got[64], want[64];
            memset(got, 0, sizeof(got));
            int ng = ac_evicted_find(&t, fp, got, max);
            int nw = ref_find(fp, want, 64);
            bool ok = ng == nw;
            for (int i = 0; ok && i < nw && i < max; i++)
                ok = same_loc(&got[i], &want[i]);
            for (int i = nw < max ? nw : max; ok && i < 64; i++)
                ok = got[i].len == 0;                          /* nothing beyond max */
            if (!ok)
                bad_find++;
            if (nw > max_dups)
                max_dups = nw;
            finds++;
        }
        if (ac_evicted_count(&t) != ref_n) {
            CHECK_EQ(ac_evicted_count(&t), ref_n);
            break;
        }
        if (ac_evicted_bytes(&t) > peak_bytes)
            peak_bytes = ac_evicted_bytes(&t);
    }
    CHECK_EQ(bad_ins, 0);
    CHECK_EQ(bad_rm, 0);
    CHECK_EQ(bad_find, 0);
    CHECK(inserts + removes + finds >= 300000);
    CHECK(moves > 10000);
    CHECK(max_dups >= 4);        /* duplicates really happened */
    /* at the end every entry is found exactly, then all go and the table shrinks */
    long bad_end = 0;
    for (size_t i = 0; i < ref_n; i++) {
        struct ac_loc got[64], want[64];
        int ng = ac_evicted_find(&t, ref[i].fp, got, 64), nw = ref_find(ref[i].fp, want, 64);
        bool ok = ng == nw;
        for (int j = 0; ok && j < nw && j < 64; j++)
            ok = same_loc(&got[j], &want[j]);
        bad_end += !ok;
    }
    CHECK_EQ(bad_end, 0);
    while (ref_n > 0) {
        struct ref_entry e = ref[ref_n - 1];
        CHECK(ac_evicted_remove(&t, e.fp, &e.loc));
        ref_remove(e.fp, &e.loc);
    }
    CHECK_EQ(ac_evicted_count(&t), 0);
    size_t fixed_plus_min = ac_evicted_bytes(&t);
    CHECK(fixed_plus_min <= AC_EVICTED_STRIPES * (128 + 8 * 16));
    printf("model: %ld inserts, %ld removes (%ld of absent entries), %ld moves, %ld finds; up to %ld locations"
           " under one fingerprint; peak %zu bytes, %zu when empty\n",
           inserts, removes, misses, moves, finds, max_dups, peak_bytes, fixed_plus_min);
    free(ref);
    ac_evicted_destroy(&t);
}

/* ---- bytes per entry ---- */

static void test_bytes(void) {
    enum { N = 1000000 };
    struct ac_evicted t;
    CHECK_EQ(ac_evicted_init(&t, 0, 20, 20), 0);
    size_t fixed = ac_evicted_bytes(&t);
    uint64_t *fps = malloc(N * sizeof(*fps));
    uint32_t *order = malloc(N * sizeof(*order));
    rng_state = 7;
    double gmin = 1e9, gmax = 0, rmin = 1e9, rmax = 0;
    long over = 0;
    printf("bytes per entry while growing:");
    for (uint32_t i = 0; i < N; i++) {
        fps[i] = rnd();
        struct ac_loc l = { i >> 10, (i & 1023) * 1024, 1 + (i & 1023) };
        if (ac_evicted_insert(&t, fps[i], &l) != 0)
            over++;
        uint32_t n = i + 1;
        if (n % 10000 == 0 && n > 50000) {
            double b = (double)ac_evicted_bytes(&t) / (double)ac_evicted_count(&t);
            CHECK(b <= 24.0);
            gmin = b < gmin ? b : gmin;
            gmax = b > gmax ? b : gmax;
        }
        if (n == 1000 || n == 10000 || n == 50000 || n == 100000 || n == 250000 || n == 500000 || n == N)
            printf(" %u: %.2f", n, (double)ac_evicted_bytes(&t) / (double)ac_evicted_count(&t));
    }
    printf("\n");
    CHECK_EQ(over, 0);
    CHECK_EQ(ac_evicted_count(&t), N);
    size_t peak = ac_evicted_bytes(&t);

    for (uint32_t i = 0; i < N; i++)
        order[i] = i;
    for (uint32_t i = N - 1; i > 0; i--) {                 /* Fisher-Yates */
        uint32_t j = (uint32_t)(rnd() % (i + 1)), x = order[i];
        order[i] = order[j];
        order[j] = x;
    }
    long missing = 0;
    for (uint32_t k = 0; k < N / 10 * 9; k++) {
        uint32_t i = order[k];
        struct ac_loc l = { i >> 10, (i & 1023) * 1024, 1 + (i & 1023) };
        if (!ac_evicted_remove(&t, fps[i], &l))
            missing++;
        if ((k + 1) % 10000 == 0) {
            size_t c = ac_evicted_count(&t), b = ac_evicted_bytes(&t);
            if (c >= 50000)
                CHECK((double)b / (double)c <= 24.0);
            else
                CHECK((double)b <= 24.0 * (double)c + (double)fixed);
            double r = (double)b / (double)c;
            rmin = r < rmin ? r : rmin;
            rmax = r > rmax ? r : rmax;
        }
    }
    CHECK_EQ(missing, 0);
    CHECK_EQ(ac_evicted_count(&t), N / 10);
    size_t after = ac_evicted_bytes(&t);
    CHECK(after <= 24 * (size_t)(N / 10));
    CHECK(after * 5 < peak);                               /* it gave memory back */
    /* the survivors are all still there, exactly */
    long wrong = 0;
    for (uint32_t k = N / 10 * 9; k < N; k++) {
        uint32_t i = order[k];
        struct ac_loc l = { i >> 10, (i & 1023) * 1024, 1 + (i & 1023) }, out[2];
        wrong += ac_evicted_find(&t, fps[i], out, 2) != 1 || !same_loc(&out[0], &l);
    }
    CHECK_EQ(wrong, 0);
    printf("bytes per entry: %.2f-%.2f growing to %d entries (%zu bytes), %.2f-%.2f removing 90%% "
           "(%zu bytes for %d); fixed %zu bytes\n", gmin, gmax, N, peak, rmin, rmax, after, N / 10, fixed);
    free(fps);
    free(order);
    ac_evicted_destroy(&t);
}

/* ---- threads ---- */

enum { THREADS = 4, PER_THREAD = 100000 };

struct worker {
    struct ac_evicted *t;
    unsigned id;
    uint64_t fps[PER_THREAD + PER_THREAD / 4];
    long errors;
};

/* Disjoint fingerprint sets (the thread id in bits 8-9), all stripes shared. */
static uint64_t worker_fp(unsigned id, uint32_t i) {
    uint64_t z = ((uint64_t)id << 32 | i) * 0x9e3779b97f4a7c15ULL;
    z ^= z >> 29;
    z *= 0xbf58476d1ce4e5b9ULL;
    z ^= z >> 32;
    return (z & ~(UINT64_C(3) << 8)) | (uint64_t)id << 8;
}

static struct ac_loc worker_loc(unsigned id, uint32_t i) {
    struct ac_loc l = { id * 1000000 + i / 64, (i % 64) * 4096, 100 + i % 1000 };
    return l;
}

static void *worker_run(void *arg) {
    struct worker *w = arg;
    struct ac_loc out[4];
    for (uint32_t i = 0; i < PER_THREAD; i++) {            /* insert, each found at once */
        w->fps[i] = worker_fp(w->id, i);
        struct ac_loc l = worker_loc(w->id, i);
        if (ac_evicted_insert(w->t, w->fps[i], &l) != 0)
            w->errors++;
        if (ac_evicted_find(w->t, w->fps[i], out, 4) != 1 || !same_loc(&out[0], &l))
            w->errors++;
        if (i >= 1000) {                                   /* an older one still there */
            uint32_t j = i - 1000;
            struct ac_loc lj = worker_loc(w->id, j);
            if (ac_evicted_find(w->t, w->fps[j], out, 4) != 1 || !same_loc(&out[0], &lj))
                w->errors++;
        }
    }
    for (uint32_t i = 1; i < PER_THREAD; i += 2) {         /* odd ones go */
        struct ac_loc l = worker_loc(w->id, i);
        if (!ac_evicted_remove(w->t, w->fps[i], &l) || ac_evicted_remove(w->t, w->fps[i], &l))
            w->errors++;
        if (ac_evicted_find(w->t, w->fps[i], out, 4) != 0)
            w->errors++;
    }
    for (uint32_t i = PER_THREAD; i < PER_THREAD + PER_THREAD / 4; i++) {   /* and new ones come */
        w->fps[i] = worker_fp(w->id, i);
        struct ac_loc l = worker_loc(w->id, i);
        if (ac_evicted_insert(w->t, w->fps[i], &l) != 0)
            w->errors++;
    }
    return NULL;
}

static void test_threads(void) {
    struct ac_evicted t;
    CHECK_EQ(ac_evicted_init(&t, 0, 20, 20), 0);
    struct worker *w = calloc(THREADS, sizeof(*w));
    pthread_t th[THREADS];
    for (unsigned i = 0; i < THREADS; i++) {
        w[i].t = &t;
        w[i].id = i;
        CHECK_EQ(pthread_create(&th[i], NULL, worker_run, &w[i]), 0);
    }
    for (unsigned i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    long errors = 0, wrong = 0;
    for (unsigned k = 0; k < THREADS; k++) {
        errors += w[k].errors;
        for (uint32_t i = 0; i < PER_THREAD + PER_THREAD / 4; i++) {
            struct ac_loc out[4], l = worker_loc(k, i);
            int n = ac_evicted_find(&t, w[k].fps[i], out, 4);
            bool kept = i >= PER_THREAD || i % 2 == 0;
            wrong += kept ? n != 1 || !same_loc(&out[0], &l) : n != 0;
        }
    }
    CHECK_EQ(errors, 0);
    CHECK_EQ(wrong, 0);
    CHECK_EQ(ac_evicted_count(&t), THREADS * (PER_THREAD / 2 + PER_THREAD / 4));
    CHECK((double)ac_evicted_bytes(&t) / (double)ac_evicted_count(&t) <= 24.0);
    free(w);
    ac_evicted_destroy(&t);
}

int main(void) {
    test_fingerprint();
    test_table();
    test_packing();
    test_cap();
    test_model();
    test_bytes();
    test_threads();
    return check_report("test_evicted");
}
