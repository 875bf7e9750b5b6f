/* C unit tests of the hash table, the lazy max-heap, the trace views, the
 * write-allocating next-use pass, and the exhaustive brute-force check of OPT
 * with writes (exhaustive.h) (built with ASan/UBSan by `make -C harness ctest`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ac_opt.h"
#include "keytable.h"
#include "maxheap.h"
#include "check.h"
#include "exhaustive.h"

static void test_keytable(void) {
    struct ac_keytable kt;
    CHECK_EQ(ac_kt_slots_for(12), 16);
    CHECK_EQ(ac_kt_slots_for(13), 32);
    CHECK_EQ(ac_kt_init(&kt, 16), 0);
    /* 0 and UINT64_MAX are ordinary keys */
    CHECK_EQ(ac_kt_swap(&kt, 0, 5), AC_KT_EMPTY);
    CHECK_EQ(ac_kt_swap(&kt, UINT64_MAX, 6), AC_KT_EMPTY);
    CHECK_EQ(ac_kt_swap(&kt, 0, 7), 5);
    CHECK_EQ(ac_kt_get(&kt, 0), 7);
    CHECK_EQ(ac_kt_get(&kt, UINT64_MAX), 6);
    CHECK_EQ(ac_kt_get(&kt, 1), AC_KT_EMPTY);
    CHECK_EQ(kt.count, 2);
    /* 10000 keys with growth; values survive rehashing */
    for (uint64_t k = 1; k <= 10000; k++) {
        while (ac_kt_full(&kt))
            CHECK_EQ(ac_kt_grow(&kt), 0);
        ac_kt_swap(&kt, k * 0x9e3779b97f4a7c15ULL, (uint32_t)k);
    }
    CHECK_EQ(kt.count, 10002);
    CHECK_EQ(kt.mask + 1, 16384);
    int bad = 0;
    for (uint64_t k = 1; k <= 10000; k++)
        bad += ac_kt_get(&kt, k * 0x9e3779b97f4a7c15ULL) != (uint32_t)k;
    CHECK_EQ(bad, 0);
    CHECK_EQ(ac_kt_get(&kt, 0), 7);
    ac_kt_free(&kt);
}

static int odd_live(const void *ctx, uint32_t key) { (void)ctx; return key & 1; }

static void test_heap(void) {
    struct ac_heap h;
    CHECK_EQ(ac_heap_init(&h, 64), 0);
    uint32_t vals[] = {5, 17, 3, 99, 42, 8, 8, 1, 64, 23};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++)
        ac_heap_push(&h, vals[i]);
    CHECK(ac_heap_valid(&h));
    CHECK_EQ(ac_heap_top(&h), 99);
    CHECK_EQ(ac_heap_pop(&h), 99);
    CHECK_EQ(ac_heap_pop(&h), 64);
    ac_heap_replace_top(&h, 2);      /* 42 leaves, 2 enters */
    CHECK(ac_heap_valid(&h));
    CHECK_EQ(ac_heap_pop(&h), 23);
    CHECK_EQ(h.size, 7);
    ac_heap_compact(&h, odd_live, NULL);   /* keeps 17, 5, 3, 1 */
    CHECK_EQ(h.size, 4);
    CHECK(ac_heap_valid(&h));
    uint32_t expect[] = {17, 5, 3, 1};
    for (size_t i = 0; i < 4; i++)
        CHECK_EQ(ac_heap_pop(&h), expect[i]);
    CHECK_EQ(h.size, 0);
    /* random pushes/pops against a sorted reference */
    srand(7);
    uint32_t ref[64];
    size_t nref = 0;
    int bad = 0;
    for (int step = 0; step < 5000; step++) {
        if (nref < 64 && (nref == 0 || rand() % 3)) {
            uint32_t v = (uint32_t)rand() % 1000;
            ac_heap_push(&h, v);
            ref[nref++] = v;
        } else {
            size_t m = 0;
            for (size_t i = 1; i < nref; i++)
                if (ref[i] > ref[m])
                    m = i;
            bad += ac_heap_pop(&h) != ref[m];
            ref[m] = ref[--nref];
        }
        bad += !ac_heap_valid(&h);
    }
    CHECK_EQ(bad, 0);
    ac_heap_free(&h);
}

static void test_memory_view(void) {
    /* ACTRACE records: keys 7,0,7 -> next = 2, NONE, NONE; distinct 2 */
    unsigned char recs[3 * 16] = {0};
    recs[0] = 7; recs[32] = 7; recs[8] = 100;
    char err[256];
    struct ac_trace *t = ac_trace_from_memory(recs, 3, AC_FMT_ACTRACE, err, sizeof err);
    CHECK(t != NULL);
    CHECK_EQ(ac_trace_key(t, 2), 7);
    CHECK_EQ(ac_trace_size(t, 0), 100);
    struct ac_nextuse *nu = ac_nextuse_build(t, 0, UINT64_MAX, err, sizeof err);
    CHECK(nu != NULL);
    CHECK_EQ(ac_nextuse_array(nu)[0], 2);
    CHECK_EQ(ac_nextuse_array(nu)[1], AC_NONE);
    CHECK_EQ(ac_nextuse_distinct(nu), 2);
    uint64_t cap = 1, hits = 9;
    CHECK_EQ(ac_opt_unit(nu, &cap, 1, 0, UINT64_MAX, &hits, err, sizeof err), 0);
    CHECK_EQ(hits, 0);                /* demand: key 0 must come in and push 7 out */
    CHECK_EQ(ac_opt_unit(nu, &cap, 1, 1, UINT64_MAX, &hits, err, sizeof err), 0);
    CHECK_EQ(hits, 1);                /* bypass: key 0 is never admitted */
    cap = 0;
    CHECK_EQ(ac_opt_unit(nu, &cap, 1, 0, UINT64_MAX, &hits, err, sizeof err), -1);
    CHECK(strcmp(err, "capacity must be at least 1 object, got 0") == 0);
    cap = 1;
    CHECK_EQ(ac_opt_unit(nu, &cap, 1, 0, 10, &hits, err, sizeof err), -1);
    const char *want = "OPT (demand) for capacity 1 needs 28 bytes";
    CHECK(strncmp(err, want, strlen(want)) == 0);
    ac_nextuse_free(nu);
    ac_trace_close(t);
}

static void put_rec(unsigned char *recs, size_t i, uint64_t key, unsigned op) {
    memset(recs + 16 * i, 0, 16);
    memcpy(recs + 16 * i, &key, 8);
    recs[16 * i + 8] = 1;             /* size 1 */
    recs[16 * i + 12] = (unsigned char)op;
}

static void test_writes_view(void) {
    /* keys a b a c a b, ops: read update read insert rmw read; score_from 3 */
    static const uint64_t keys[] = {10, 11, 10, 12, 10, 11};
    static const unsigned ops[] = {AC_OP_READ, AC_OP_UPDATE, AC_OP_READ, AC_OP_INSERT, AC_OP_RMW, AC_OP_READ};
    unsigned char recs[6 * 16];
    for (size_t i = 0; i < 6; i++)
        put_rec(recs, i, keys[i], ops[i]);
    char err[256];
    struct ac_trace *t = ac_trace_from_memory(recs, 6, AC_FMT_ACTRACE, err, sizeof err);
    CHECK(t != NULL);
    CHECK_EQ(ac_trace_op(t, 4), AC_OP_RMW);
    struct ac_nextuse *nu = ac_nextuse_build(t, 3, UINT64_MAX, err, sizeof err);
    CHECK(nu != NULL);
    const uint32_t *next = ac_nextuse_array(nu), *useful = ac_nextuse_useful_array(nu);
    static const uint32_t want_next[] = {2, 5, 4, AC_NONE, AC_NONE, AC_NONE};
    /* useful: 0 -> 2 is a read but before score_from (none); 2 -> 4 an RMW at 4 (scored) */
    static const uint32_t want_useful[] = {AC_NONE, 5, 4, AC_NONE, AC_NONE, AC_NONE};
    for (size_t i = 0; i < 6; i++) {
        CHECK_EQ(next[i], want_next[i]);
        CHECK_EQ(useful[i], want_useful[i]);
    }
    CHECK_EQ(ac_nextuse_distinct(nu), 3);
    CHECK_EQ(ac_nextuse_score_from(nu), 3);
    CHECK_EQ(ac_nextuse_scored_reads(nu), 2);      /* 4 (rmw), 5 */
    CHECK_EQ(ac_nextuse_scored_writes(nu), 1);     /* 3 (insert) */
    CHECK_EQ(ac_nextuse_reuses(nu), 2);            /* 4 and 5 */
    /* capacity 1: the insert of c at 3 evicts everything else, so the RMW at
     * 4 misses; it places a: 5 misses too */
    uint64_t cap = 1, hits = 9;
    CHECK_EQ(ac_opt_unit(nu, &cap, 1, 1, UINT64_MAX, &hits, err, sizeof err), 0);
    CHECK_EQ(hits, 0);
    cap = 2;                                  /* hold a and b; c forces one of them out */
    CHECK_EQ(ac_opt_unit(nu, &cap, 1, 1, UINT64_MAX, &hits, err, sizeof err), 0);
    CHECK_EQ(hits, 1);
    cap = 3;
    CHECK_EQ(ac_opt_unit(nu, &cap, 1, 0, UINT64_MAX, &hits, err, sizeof err), 0);
    CHECK_EQ(hits, 2);
    uint64_t hist[3];
    CHECK_EQ(ac_lru_hist(nu, UINT64_MAX, hist, err, sizeof err), 0);
    /* RMW at 4: a last accessed at 2, then c: distance 1; read at 5: b last
     * accessed at 1, then a, c: distance 2; the read at 2 is not scored */
    CHECK_EQ(hist[0], 0);
    CHECK_EQ(hist[1], 1);
    CHECK_EQ(hist[2], 1);
    ac_nextuse_free(nu);
    CHECK(ac_nextuse_build(t, 7, UINT64_MAX, err, sizeof err) == NULL);
    CHECK(strcmp(err, "score_from 7 is beyond the trace: it has 6 requests (accepted: 0 .. 6)") == 0);
    recs[16 * 3 + 12] = 9;
    CHECK(ac_nextuse_build(t, 0, UINT64_MAX, err, sizeof err) == NULL);
    CHECK(strcmp(err, "request 3 has op 9: ACTRACE ops are 0 read, 1 update, 2 insert, "
                      "3 read-modify-write") == 0);
    ac_trace_close(t);
}

int main(void) {
    test_keytable();
    test_heap();
    test_memory_view();
    test_writes_view();
    test_exhaustive_writes();
    return check_report("test_core");
}
