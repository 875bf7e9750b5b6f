/* C unit tests of the hash table, the lazy max-heap and the trace views
 * (built with ASan/UBSan by `make -C harness ctest`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ac_opt.h"
#include "keytable.h"
#include "maxheap.h"
#include "check.h"

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
    struct ac_nextuse *nu = ac_nextuse_build(t, UINT64_MAX, err, sizeof err);
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

int main(void) {
    test_keytable();
    test_heap();
    test_memory_view();
    return check_report("test_core");
}
