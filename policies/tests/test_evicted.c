/* Unit tests of the evicted table: insert, find, remove, fingerprint
 * collisions (several locations under one fingerprint), a full table, reuse of
 * freed entries, and the FNV-1a 64 fingerprint's published test vectors. */
#include "check.h"
#include "../ac_evicted.h"

static void test_fingerprint(void) {
    /* FNV-1a 64 test vectors (Fowler/Noll/Vo reference test suite) */
    CHECK(ac_key_fp("", 0) == 0xcbf29ce484222325ULL);
    CHECK(ac_key_fp("a", 1) == 0xaf63dc4c8601ec8cULL);
    CHECK(ac_key_fp("foobar", 6) == 0x85944171f73967e8ULL);
}

static void test_table(void) {
    struct ac_evicted t;
    CHECK_EQ(ac_evicted_init(&t, 5), 0);
    CHECK_EQ(ac_evicted_bytes_for(5), 5 * 24 + 1024 * 4);
    struct ac_loc l[6] = { {1, 0, 50}, {1, 50, 60}, {2, 0, 70}, {3, 0, 80}, {3, 80, 90}, {4, 0, 10} };
    uint64_t same = 77, other = 77 + 1024;    /* same bucket, different fingerprint */
    CHECK_EQ(ac_evicted_insert(&t, same, &l[0]), 0);
    CHECK_EQ(ac_evicted_insert(&t, same, &l[1]), 0);     /* a collision: both kept */
    CHECK_EQ(ac_evicted_insert(&t, other, &l[2]), 0);
    CHECK_EQ(ac_evicted_insert(&t, 5, &l[3]), 0);
    CHECK_EQ(ac_evicted_insert(&t, 6, &l[4]), 0);
    CHECK_EQ(ac_evicted_insert(&t, 7, &l[5]), -1);       /* full */
    CHECK_EQ(ac_evicted_count(&t), 5);

    struct ac_loc out[4];
    int n = ac_evicted_find(&t, same, out, 4);
    CHECK_EQ(n, 2);
    int seen = 0;
    for (int i = 0; i < n; i++)
        seen |= (out[i].offset == 0 ? 1 : 0) | (out[i].offset == 50 ? 2 : 0);
    CHECK_EQ(seen, 3);
    CHECK_EQ(ac_evicted_find(&t, other, out, 4), 1);
    CHECK(out[0].block == 2 && out[0].len == 70);
    CHECK_EQ(ac_evicted_find(&t, 12345, out, 4), 0);
    CHECK_EQ(ac_evicted_find(&t, same, out, 1), 2);      /* count beyond max */

    CHECK(!ac_evicted_remove(&t, same, &l[2]));          /* wrong location */
    CHECK(ac_evicted_remove(&t, same, &l[0]));
    CHECK(!ac_evicted_remove(&t, same, &l[0]));          /* only once */
    CHECK_EQ(ac_evicted_find(&t, same, out, 4), 1);
    CHECK_EQ(out[0].offset, 50);
    CHECK_EQ(ac_evicted_count(&t), 4);
    CHECK_EQ(ac_evicted_insert(&t, 7, &l[5]), 0);        /* the freed entry is reused */
    CHECK_EQ(ac_evicted_find(&t, 7, out, 4), 1);
    CHECK_EQ(out[0].block, 4);
    ac_evicted_destroy(&t);
    CHECK_EQ(ac_evicted_init(&t, 0), -1);
}

int main(void) {
    test_fingerprint();
    test_table();
    return check_report("test_evicted");
}
