/* Unit tests of the YCSB generators, RNG, keys and values (the Zipfian pmf:
 * test_zipf_pmf.c; FNV: test_fnv.c). */
#include <math.h>
#include <stdlib.h>
#include "check.h"
#include "ycsb_config.h"
#include "ycsb_gen.h"
#include "ycsb_record.h"

/* zeta summed in the opposite (descending) order: an independent computation */
static double zeta_desc(int64_t n, double theta)
{
    double s = 0;
    for (int64_t i = n; i >= 1; i--)
        s += pow((double)i, -theta);
    return s;
}

static void test_zeta(void)
{
    CHECK(ycsb_zeta(0, 2, 0.99, 0) == 1.0 + pow(2.0, -0.99));
    CHECK_NEAR(ycsb_zeta(0, 1000, 0.99, 0), zeta_desc(1000, 0.99), 1e-12);
    CHECK_NEAR(ycsb_zeta(0, 100000, 0.5, 0), zeta_desc(100000, 0.5), 1e-9);
    /* incremental == from scratch, bit for bit (same additions in the same order) */
    double a = ycsb_zeta(0, 1000, 0.99, 0);
    double b = ycsb_zeta(1000, 1700, 0.99, a);
    double c = ycsb_zeta(1700, 5000, 0.99, b);
    CHECK(c == ycsb_zeta(0, 5000, 0.99, 0));
    /* Euler-Maclaurin against direct sums */
    CHECK_NEAR(ycsb_zeta_approx(1000000, 0.5) / zeta_desc(1000000, 0.5), 1.0, 1e-12);
    CHECK_NEAR(ycsb_zeta_approx(1000000, 0.8) / zeta_desc(1000000, 0.8), 1.0, 1e-12);
    CHECK_NEAR(ycsb_zeta_approx(3000000, 0.99) / zeta_desc(3000000, 0.99), 1.0, 1e-12);
    /* ... and against YCSB's constant zeta(1e10, 0.99) */
    CHECK_NEAR(ycsb_zeta_approx(10000000000LL, 0.99) / YCSB_SCRAMBLED_ZETAN, 1.0, 1e-10);
    /* theta > 1 against direct sums */
    CHECK_NEAR(ycsb_zeta_approx(1000000, 1.2) / zeta_desc(1000000, 1.2), 1.0, 1e-12);
    CHECK_NEAR(ycsb_zeta_approx(2000000, 2.5) / zeta_desc(2000000, 2.5), 1.0, 1e-12);
}

/* zeta(1e10 + 1, theta), ScrambledZipfian's item count, against independent
 * computations: mpmath (Hurwitz zeta, 40 digits),
 *   import mpmath as m; m.mp.dps = 40; n = 10**10 + 1
 *   m.zeta(s) - m.zeta(s, n + 1)        # = sum_{k=1}^{n} k^-s, any s != 1
 * and closed forms: sum_{k<=n} k^-2 = pi^2/6 - psi1(n+1), psi1(n+1) = 1/n -
 * 1/(2n^2) + O(n^-3); sum_{k<=n} k^-4 = pi^4/90 - 1/(3n^3) + O(n^-4). */
static void test_zeta_large_theta(void)
{
    const int64_t n = YCSB_SCRAMBLED_ITEM_COUNT + 1;
    const struct { double theta, want; } mp[] = {
        {0.25, 42163701.327043402322}, {0.5, 199998.53966049119041},
        {0.75, 1261.4697787278406748}, {0.99, 26.469028201877371606},
        {1.2, 5.5415824411792507765},  {1.5, 2.6123553486854898433},
        {2.0, 1.6449340667482264365},  {3.0, 1.2020569031595942854},
        {10.0, 1.0009945751278180853},
    };
    for (size_t i = 0; i < sizeof(mp) / sizeof(mp[0]); i++)
        CHECK_NEAR(ycsb_zeta_approx(n, mp[i].theta) / mp[i].want, 1.0, 1e-14);
    const double pi = 3.14159265358979323846, dn = (double)n;
    CHECK_NEAR(ycsb_zeta_approx(n, 2.0), pi * pi / 6.0 - (1.0 / dn - 0.5 / (dn * dn)), 1e-14);
    CHECK_NEAR(ycsb_zeta_approx(n, 4.0), pow(pi, 4) / 90.0, 1e-14);
    /* converges to the Riemann zeta value: zeta(1.2) = 5.5915824411777507765
     * (mpmath), tail sum_{k>n} k^-1.2 = n^-0.2/0.2 - n^-1.2/2 + O(n^-2.2) */
    double tail = pow(dn, -0.2) / 0.2 - 0.5 * pow(dn, -1.2);
    CHECK_NEAR(ycsb_zeta_approx(n, 1.2) + tail, 5.5915824411777507765, 1e-14);
    /* the scrambled generator computes and keeps it */
    struct ycsb_scrambled g;
    ycsb_scrambled_init(&g, 0, 999, 1.2);
    CHECK_NEAR(g.gen.zetan / 5.5415824411792507765, 1.0, 1e-14);
    CHECK(g.gen.eta < 0 && g.gen.alpha == 1.0 / (1.0 - 1.2));
    struct ycsb_rng r;
    ycsb_rng_seed(&r, 4, 4);
    long top = 0, bad = 0;
    for (int i = 0; i < 100000; i++) {
        int64_t v = ycsb_scrambled_next(&g, &r);
        bad += v < 0 || v > 999;
        top += v == ycsb_fnvhash64(0) % 1000;
    }
    CHECK_EQ_I(bad, 0);
    /* rank 1 has 1/zeta = 18.0 % (+ its share of the hashed tail, < 0.1 %) */
    CHECK_NEAR((double)top / 100000.0, 1.0 / 5.5415824411792507765, 0.006);
}

static void test_zipfian_formula(void)
{
    struct ycsb_zipfian z;
    ycsb_zipfian_init(&z, 10, 1009, 0.99);
    double zetan = zeta_desc(1000, 0.99);
    CHECK_EQ_I(z.items, 1000);
    CHECK_NEAR(z.zetan, zetan, 1e-12);
    double zeta2 = 1.0 + pow(2.0, -0.99);
    double eta = (1.0 - pow(2.0 / 1000.0, 0.01)) / (1.0 - zeta2 / zetan);
    CHECK_NEAR(z.eta, eta, 1e-12);
    CHECK_NEAR(z.alpha, 100.0, 1e-9);
    /* the two special cases */
    CHECK_EQ_I(ycsb_zipfian_from_u(&z, 0.0, 1000), 10);
    CHECK_EQ_I(ycsb_zipfian_from_u(&z, 0.999 / zetan, 1000), 10);
    CHECK_EQ_I(ycsb_zipfian_from_u(&z, 1.0001 / zetan, 1000), 11);
    CHECK_EQ_I(ycsb_zipfian_from_u(&z, (1.0 + pow(0.5, 0.99)) * 0.9999 / zetan, 1000), 11);
    /* the general case */
    double us[] = {0.3, 0.5, 0.77, 0.95, 0.999999};
    for (int i = 0; i < 5; i++) {
        int64_t want = 10 + (int64_t)(1000.0 * pow(eta * us[i] - eta + 1.0, 100.0));
        CHECK_EQ_I(ycsb_zipfian_from_u(&z, us[i], 1000), want);
        CHECK(want >= 12 && want <= 1009);
    }
    /* growing item count: incremental zeta equals a fresh generator's */
    struct ycsb_rng r;
    ycsb_rng_seed(&r, 7, 0);
    ycsb_zipfian_init(&z, 0, 999, 0.99);
    for (int i = 0; i < 10; i++)
        ycsb_zipfian_next_n(&z, &r, 1000);
    ycsb_zipfian_next_n(&z, &r, 1500);
    ycsb_zipfian_next_n(&z, &r, 2500);
    struct ycsb_zipfian fresh;
    ycsb_zipfian_init(&fresh, 0, 2499, 0.99);
    CHECK_EQ_I(z.countforzeta, 2500);
    CHECK(z.zetan == fresh.zetan);
    /* YCSB keeps the construction-time item count (1000) in eta */
    double eta_ycsb = (1.0 - pow(2.0 / 1000.0, 1.0 - 0.99)) / (1.0 - zeta2 / fresh.zetan);
    CHECK(z.eta == eta_ycsb);
    /* a smaller count does not recompute */
    ycsb_zipfian_next_n(&z, &r, 2000);
    CHECK_EQ_I(z.countforzeta, 2500);
}

static void test_scrambled(void)
{
    struct ycsb_scrambled g;
    ycsb_scrambled_init(&g, 100, 1099, 0.99);
    CHECK(g.gen.zetan == YCSB_SCRAMBLED_ZETAN);
    CHECK_EQ_I(g.gen.items, YCSB_SCRAMBLED_ITEM_COUNT + 1);
    CHECK_EQ_I(g.itemcount, 1000);
    struct ycsb_rng r;
    ycsb_rng_seed(&r, 3, 3);
    long *count = calloc(1000, sizeof(long));
    int out_of_range = 0;
    for (int i = 0; i < 200000; i++) {
        int64_t v = ycsb_scrambled_next(&g, &r);
        if (v < 100 || v > 1099)
            out_of_range++;
        else
            count[v - 100]++;
    }
    CHECK_EQ_I(out_of_range, 0);
    /* the most popular key is min + fnvhash64(0) % itemcount */
    int best = 0;
    for (int i = 1; i < 1000; i++)
        if (count[i] > count[best])
            best = i;
    CHECK_EQ_I(100 + best, 100 + ycsb_fnvhash64(0) % 1000);
    free(count);
    /* other theta: zeta(1e10 + 1) by Euler-Maclaurin, cached in the struct */
    ycsb_scrambled_init(&g, 0, 99, 0.5);
    CHECK_NEAR(g.gen.zetan, ycsb_zeta_approx(YCSB_SCRAMBLED_ITEM_COUNT + 1, 0.5), 0);
    CHECK(g.gen.zetan > 199990.0 && g.gen.zetan < 200000.0);  /* ~ 2 sqrt(n) */
}

static void test_hotspot_uniform(void)
{
    struct ycsb_hotspot h;
    ycsb_hotspot_init(&h, 1000, 1999, 0.2, 0.8);
    CHECK_EQ_I(h.hot_interval, 200);
    CHECK_EQ_I(h.cold_interval, 800);
    struct ycsb_rng r;
    ycsb_rng_seed(&r, 5, 5);
    long hot = 0, bad = 0, n = 1000000;
    for (long i = 0; i < n; i++) {
        int64_t v = ycsb_hotspot_next(&h, &r);
        if (v < 1000 || v > 1999)
            bad++;
        else if (v < 1200)
            hot++;
    }
    CHECK_EQ_I(bad, 0);
    /* 0.8 +- 0.002 (5 standard deviations) */
    CHECK_NEAR((double)hot / (double)n, 0.8, 0.002);
    struct ycsb_uniform u;
    ycsb_uniform_init(&u, 5, 14);
    long c[10] = {0};
    for (long i = 0; i < n; i++) {
        int64_t v = ycsb_uniform_next(&u, &r);
        CHECK(v >= 5 && v <= 14);
        if (v >= 5 && v <= 14)
            c[v - 5]++;
    }
    for (int i = 0; i < 10; i++)
        CHECK_NEAR((double)c[i] / (double)n, 0.1, 0.0015);
}

static void test_discrete(void)
{
    struct ycsb_discrete d;
    ycsb_discrete_init(&d);
    CHECK_EQ_I(ycsb_discrete_next(&d, NULL), -1);
    ycsb_discrete_add(&d, 0.5, 7);
    ycsb_discrete_add(&d, 0.3, 8);
    ycsb_discrete_add(&d, 0.2, 9);
    struct ycsb_rng r;
    ycsb_rng_seed(&r, 9, 9);
    long c[3] = {0}, n = 1000000;
    for (long i = 0; i < n; i++) {
        int v = ycsb_discrete_next(&d, &r);
        CHECK(v >= 7 && v <= 9);
        if (v >= 7 && v <= 9)
            c[v - 7]++;
    }
    CHECK_NEAR((double)c[0] / (double)n, 0.5, 0.0025);
    CHECK_NEAR((double)c[1] / (double)n, 0.3, 0.0025);
    CHECK_NEAR((double)c[2] / (double)n, 0.2, 0.0025);
}

static void test_ackcounter_latest(void)
{
    struct ycsb_ackcounter c;
    CHECK_EQ_I(ycsb_ackcounter_init(&c, 1000), 0);
    CHECK_EQ_I(ycsb_ackcounter_last(&c), 999);
    int64_t v[5];
    for (int i = 0; i < 5; i++)
        v[i] = ycsb_ackcounter_next(&c);
    CHECK_EQ_I(v[0], 1000);
    CHECK_EQ_I(v[4], 1004);
    ycsb_ackcounter_ack(&c, 1001);
    ycsb_ackcounter_ack(&c, 1002);
    CHECK_EQ_I(ycsb_ackcounter_last(&c), 999);    /* 1000 still outstanding */
    ycsb_ackcounter_ack(&c, 1000);
    CHECK_EQ_I(ycsb_ackcounter_last(&c), 1002);
    ycsb_ackcounter_ack(&c, 1004);
    CHECK_EQ_I(ycsb_ackcounter_last(&c), 1002);
    ycsb_ackcounter_ack(&c, 1003);
    CHECK_EQ_I(ycsb_ackcounter_last(&c), 1004);
    /* a slot taken twice: more than 2^20 outstanding */
    CHECK_EQ_I(ycsb_ackcounter_ack(&c, 1006), 0);
    CHECK_EQ_I(ycsb_ackcounter_ack(&c, 1006 + YCSB_ACK_WINDOW), -1);
    ycsb_ackcounter_destroy(&c);

    /* latest follows the counter */
    ycsb_ackcounter_init(&c, 1000);
    struct ycsb_latest l;
    ycsb_latest_init(&l, ycsb_ackcounter_last(&c), 0.99);
    CHECK_EQ_I(l.zipf.items, 999);
    struct ycsb_rng r;
    ycsb_rng_seed(&r, 11, 11);
    for (int round = 0; round < 2; round++) {
        int64_t last = ycsb_ackcounter_last(&c);
        long at_last = 0, n = 200000, bad = 0;
        for (long i = 0; i < n; i++) {
            int64_t k = ycsb_latest_next(&l, &r, ycsb_ackcounter_last(&c));
            if (k > last || k < 0)
                bad++;
            if (k == last)
                at_last++;
        }
        CHECK_EQ_I(bad, 0);
        CHECK_EQ_I(l.zipf.countforzeta, round == 0 ? 999 : 1499);
        /* P(k == last) = 1/zeta(last) */
        CHECK_NEAR((double)at_last / (double)n, 1.0 / zeta_desc(last, 0.99), 0.004);
        for (int i = 0; i < 500; i++)
            ycsb_ackcounter_ack(&c, ycsb_ackcounter_next(&c));
        CHECK_EQ_I(ycsb_ackcounter_last(&c), round == 0 ? 1499 : 1999);
    }
    ycsb_ackcounter_destroy(&c);
}

static void test_rng_keys_values(void)
{
    struct ycsb_rng a, b, d;
    ycsb_rng_seed(&a, 1, 0);
    ycsb_rng_seed(&b, 1, 0);
    ycsb_rng_seed(&d, 2, 0);
    int same = 1, differ = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t x = ycsb_rng_u64(&a), y = ycsb_rng_u64(&b), z = ycsb_rng_u64(&d);
        same &= x == y;
        differ |= x != z;
    }
    CHECK(same);
    CHECK(differ);
    for (int i = 0; i < 100000; i++) {
        double u = ycsb_rng_double(&a);
        if (!(u >= 0.0 && u < 1.0))
            CHECK(!"double out of [0,1)");
    }

    char key[YCSB_KEY_MAX];
    CHECK_EQ_I(ycsb_key(key, 0, 0, 1), 5);
    CHECK_EQ_S(key, "user0");
    ycsb_key(key, 42, 0, 5);
    CHECK_EQ_S(key, "user00042");
    ycsb_key(key, 42, 1, 1);
    CHECK_EQ_S(key, "user55488592825689361");
    ycsb_key(key, 42, 1, 20);
    CHECK_EQ_S(key, "user00055488592825689361");

    char v1[1000], v2[1000], v3[1000];
    ycsb_value_fill(v1, sizeof(v1), YCSB_VALUE_YCSB, 1, 5, 0);
    ycsb_value_fill(v2, sizeof(v2), YCSB_VALUE_YCSB, 1, 5, 0);
    ycsb_value_fill(v3, sizeof(v3), YCSB_VALUE_YCSB, 1, 5, 1);
    CHECK(memcmp(v1, v2, sizeof(v1)) == 0);
    CHECK(memcmp(v1, v3, sizeof(v1)) != 0);
    int lo = 255, hi = 0;
    for (size_t i = 0; i < sizeof(v1); i++) {
        int ch = (unsigned char)v1[i];
        lo = ch < lo ? ch : lo;
        hi = ch > hi ? ch : hi;
    }
    CHECK_EQ_I(lo, 32);       /* ' ' + 0 */
    CHECK(hi <= 127);         /* ' ' + 95 */
    CHECK(hi >= 120);
    ycsb_value_fill(v1, sizeof(v1), YCSB_VALUE_TEXT, 1, 5, 0);
    int ok = 1;
    for (size_t i = 0; i < sizeof(v1); i++)
        ok &= (v1[i] >= 'a' && v1[i] <= 'z') || v1[i] == ' ';
    CHECK(ok);
    ycsb_value_fill(v1, sizeof(v1), YCSB_VALUE_ZEROS, 1, 5, 0);
    ok = 1;
    for (size_t i = 0; i < sizeof(v1); i++)
        ok &= v1[i] == 0;
    CHECK(ok);
}

int main(void)
{
    test_zeta();
    test_zeta_large_theta();
    test_zipfian_formula();
    test_scrambled();
    test_hotspot_uniform();
    test_discrete();
    test_ackcounter_latest();
    test_rng_keys_values();
    return test_summary("test_generators");
}
