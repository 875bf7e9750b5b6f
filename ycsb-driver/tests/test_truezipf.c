/* truezipf (ycsb_truezipf.c, ycsb_truezipf_fill.c, ycsb_perm.c): the ranks
 * against the exact Zipf pmf r^-theta / H(n, theta), the table's fast path
 * against the exact path, the bulk fill against one-at-a-time draws, the
 * rank -> key permutation's bijectivity, and H / H^-1 at and near theta = 1.
 *
 * The chi-square test: 10^6 draws per case with a fixed seed, consecutive
 * ranks binned so that every bin expects >= 5 draws, H(n, theta) summed
 * exactly (long double, Kahan), Pearson's p-value > 1e-4 required.  The same
 * test applied to Gray's method (YCSB's zipfian, theta 0.99, 1000 keys) must
 * reject, which shows it can.  Seeds are fixed: the outcome is deterministic. */
#include <math.h>
#include <stdlib.h>
#include "check.h"
#include "chisq.h"
#include "ycsb_gen.h"

#define DRAWS 1000000L
#define P_MIN 1e-4

struct fit {
    double chi, p;
    long bins;
    double rank3, rank3_expected;   /* rank 3: expected count, observed / expected */
};

/* k^-theta summed over 1..n in long double with Kahan compensation */
static long double zipf_h(int64_t n, double theta)
{
    long double sum = 0, c = 0;
    for (int64_t k = 1; k <= n; k++) {
        long double y = (long double)pow((double)k, -theta) - c;
        long double t = sum + y;
        c = (t - sum) - y;
        sum = t;
    }
    return sum;
}

/* Pearson's chi-square of count[1..n] against the exact Zipf pmf */
static struct fit exact_fit(const uint32_t *count, int64_t n, double theta, long draws)
{
    struct fit f = {0, 0, 0, 0, 0};
    long double h = zipf_h(n, theta), cum = 0, c = 0, bin = 0;
    long obs = 0;
    for (int64_t k = 1; k <= n; k++) {
        long double p = (long double)pow((double)k, -theta) / h;
        if (k == 3) {
            f.rank3_expected = (double)(p * draws);
            f.rank3 = (double)count[3] / f.rank3_expected;
        }
        long double y = p - c, t = cum + y;   /* cum += p, compensated */
        c = (t - cum) - y;
        cum = t;
        bin += p;
        obs += count[k];
        double e = (double)(bin * draws), rest = (double)((1.0L - cum) * draws);
        if (k == n || (e >= 5.0 && rest >= 5.0)) {
            f.chi += ((double)obs - e) * ((double)obs - e) / e;
            f.bins++;
            bin = 0;
            obs = 0;
        }
    }
    f.p = chisq_pvalue(f.chi, (double)(f.bins - 1));
    return f;
}

static void chi_case(double theta, int64_t n, unsigned caseno)
{
    struct ycsb_truezipf z;
    CHECK_EQ_I(ycsb_truezipf_init(&z, 0, n - 1, theta), 0);
    struct ycsb_rng r;
    ycsb_rng_seed(&r, 20240701, caseno);
    uint32_t *count = calloc((size_t)n + 1, sizeof(uint32_t));
    long bad = 0;
    for (long i = 0; i < DRAWS; i++) {
        int64_t k = ycsb_truezipf_rank(&z, &r);
        if (k < 1 || k > n)
            bad++;
        else
            count[k]++;
    }
    CHECK_EQ_I(bad, 0);
    struct fit f = exact_fit(count, n, theta, DRAWS);
    printf("truezipf theta %-4g n %-8lld chi2 %9.1f df %6ld p %.3f | rank 3: %7.0f expected, "
           "observed/expected %.4f\n", theta, (long long)n, f.chi, f.bins - 1, f.p,
           f.rank3_expected, f.rank3);
    CHECK(f.p > P_MIN);
    CHECK(f.bins > 20);
    free(count);
    ycsb_truezipf_destroy(&z);
}

/* the same test has power: Gray's method (rank 3 ~17 % too popular) fails */
static void gray_is_rejected(void)
{
    enum { N = 1000 };
    struct ycsb_zipfian g;
    ycsb_zipfian_init(&g, 0, N - 1, 0.99);
    struct ycsb_rng r;
    ycsb_rng_seed(&r, 20240701, 999);
    uint32_t count[N + 1] = {0};
    for (long i = 0; i < DRAWS; i++)
        count[ycsb_zipfian_next(&g, &r) + 1]++;
    struct fit f = exact_fit(count, N, 0.99, DRAWS);
    printf("Gray (zipfian) theta 0.99 n 1000 against exact Zipf: chi2 %.1f df %ld p %.1e | "
           "rank 3: %.0f expected, observed/expected %.4f\n", f.chi, f.bins - 1, f.p,
           f.rank3_expected, f.rank3);
    CHECK(f.p < 1e-12);
    CHECK(f.rank3 > 1.1);
}

/* H, H^-1: theta = 1 is log / exp exactly; nearby theta agree with it to the
 * first order in (1 - theta); round trips */
static void test_h(void)
{
    const double xs[] = {0.6, 1.0, 1.5, 2.5, 1000.5, 1e7 + 0.5};
    for (int i = 0; i < 6; i++) {
        double x = xs[i], lx = log(x);
        CHECK(ycsb_truezipf_H(1.0, x) == lx);
        CHECK(ycsb_truezipf_Hinv(1.0, lx) == exp(lx));
        for (int s = -1; s <= 1; s += 2) {
            double d = s * 1e-12, t = 1.0 - d;
            /* H = log x (1 + d log x / 2 + ...): relative deviation ~ d log x / 2 */
            double want = lx * (1.0 + d * lx / 2.0);
            CHECK_NEAR(ycsb_truezipf_H(t, x), want, 1e-15 * (fabs(lx) + 1e-300) + 1e-300);
        }
        /* for theta > 1, H(x) approaches 1/(theta - 1) and a rounding of
         * H's value moves x by a relative x^(theta-1) ulps */
        const double ts[] = {0.01, 0.5, 0.99, 1.0 - 1e-9, 1.0, 1.0 + 1e-9, 1.2, 2.0, 10.0};
        for (int j = 0; j < 9; j++) {
            double amp = ts[j] > 1.0 ? pow(x, ts[j] - 1.0) : 1.0;
            if (amp > 1e10)
                continue;
            double y = ycsb_truezipf_H(ts[j], x);
            CHECK_NEAR(ycsb_truezipf_Hinv(ts[j], y) / x, 1.0, 1e-13 * amp);
        }
    }
    /* the famous values: theta = 2: H(x) = 1 - 1/x; theta = 0.5: 2 (sqrt(x) - 1) */
    CHECK_NEAR(ycsb_truezipf_H(2.0, 4.0), 0.75, 1e-15);
    CHECK_NEAR(ycsb_truezipf_H(0.5, 9.0), 4.0, 1e-14);
}

/* every a the table decides must get the exact path's answer: random a,
 * and a at and next to every cell edge and middle */
static void test_fast_matches_exact(void)
{
    const double thetas[] = {0.01, 0.25, 0.5, 0.75, 0.99, 1.0, 1.0 + 1e-9, 1.2, 2.0, 5.0, 10.0};
    const int64_t ns[] = {1, 2, 7, 1000, 100000, 10000000, 2147483647};
    const unsigned local = 53 - YCSB_TRUEZIPF_CELL_BITS;
    long mismatches = 0, total = 0, fast_cells = 0, cells = 0;
    for (int i = 0; i < 11; i++)
        for (int j = 0; j < 7; j++) {
            struct ycsb_truezipf z;
            CHECK_EQ_I(ycsb_truezipf_init(&z, 0, ns[j] - 1, thetas[i]), 0);
            struct ycsb_rng r;
            ycsb_rng_seed(&r, 5, (uint64_t)(i * 7 + j));
            for (long t = 0; t < 40000; t++) {
                uint64_t a = ycsb_rng_u64(&r) >> 11;
                mismatches += ycsb_truezipf_attempt(&z, a) != ycsb_truezipf_attempt_exact(&z, a);
                total++;
            }
            for (uint64_t c = 0; c < (1u << YCSB_TRUEZIPF_CELL_BITS); c++) {
                fast_cells += z.cells[c].lo < z.cells[c].hi;
                cells++;
                const uint64_t edge = c << local, mid = edge | (UINT64_C(1) << (local - 1));
                const uint64_t as[] = {edge, edge + 1, edge - 1, mid, mid - 1, mid + 1};
                for (int t = 0; t < 6; t++) {
                    uint64_t a = as[t] & ((UINT64_C(1) << 53) - 1);
                    mismatches +=
                        ycsb_truezipf_attempt(&z, a) != ycsb_truezipf_attempt_exact(&z, a);
                    total++;
                }
            }
            ycsb_truezipf_destroy(&z);
        }
    printf("fast path vs exact path: %ld attempts, %ld differ; %.1f %% of cells usable\n", total,
           mismatches, 100.0 * (double)fast_cells / (double)cells);
    CHECK_EQ_I(mismatches, 0);
    CHECK((double)fast_cells / (double)cells > 0.95);
}

/* ycsb_truezipf_fill == that many ycsb_truezipf_next calls, RNG state too */
static void test_fill(void)
{
    const double thetas[] = {0.5, 1.0, 2.0};
    const int64_t ns[] = {1, 1000, 3000017};
    int64_t *buf = malloc(5000 * sizeof(int64_t));
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            struct ycsb_truezipf z;
            CHECK_EQ_I(ycsb_truezipf_init(&z, 100, 100 + ns[j] - 1, thetas[i]), 0);
            struct ycsb_rng r1, r2;
            ycsb_rng_seed(&r1, 9, (uint64_t)j);
            r2 = r1;
            long differ = 0;
            const size_t counts[] = {1, 2, 255, 256, 257, 1000, 4999, 0, 3};
            for (int c = 0; c < 9; c++) {
                ycsb_truezipf_fill(&z, &r1, buf, counts[c]);
                for (size_t k = 0; k < counts[c]; k++)
                    differ += buf[k] != ycsb_truezipf_next(&z, &r2);
            }
            CHECK_EQ_I(differ, 0);
            CHECK(memcmp(&r1, &r2, sizeof(r1)) == 0);
            for (size_t k = 0; k < 3; k++)
                CHECK(buf[k] >= 100 && buf[k] < 100 + ns[j]);
            ycsb_truezipf_destroy(&z);
        }
    free(buf);
}

/* the rank -> key map is a bijection of 0..n-1, and invert undoes it */
static void test_perm(void)
{
    const uint64_t ns[] = {1, 2, 3, 4, 5, 7, 8, 9, 1000, 1023, 1024, 1025, 50000, 65537, 1000003};
    for (int i = 0; i < 15; i++) {
        uint64_t n = ns[i];
        struct ycsb_perm p;
        ycsb_perm_init(&p, n, YCSB_TRUEZIPF_PERM_KEY);
        unsigned char *seen = calloc(n, 1);
        long bad = 0, fixed = 0;
        for (uint64_t x = 0; x < n; x++) {
            uint64_t y = ycsb_perm_apply(&p, x);
            if (y >= n || seen[y]++)
                bad++;
            else if (ycsb_perm_invert(&p, y) != x)
                bad++;
            fixed += y == x;
        }
        CHECK_EQ_I(bad, 0);
        if (n >= 1000)
            CHECK(fixed < 10);   /* a shuffle, not the identity */
        free(seen);
    }
    /* the hottest ranks are spread over the key range: ranks 0..999 of
     * 10^6 keys, 100 expected per tenth */
    struct ycsb_perm p;
    ycsb_perm_init(&p, 1000000, YCSB_TRUEZIPF_PERM_KEY);
    int tenth[10] = {0};
    for (uint64_t x = 0; x < 1000; x++)
        tenth[ycsb_perm_apply(&p, x) / 100000]++;
    for (int t = 0; t < 10; t++)
        CHECK(tenth[t] > 60 && tenth[t] < 140);
}

int main(void)
{
    test_h();
    test_perm();
    test_fill();
    test_fast_matches_exact();
    const double thetas[] = {0.25, 0.5, 0.75, 0.99, 1.0, 1.2, 2.0};
    const int64_t ns[] = {1000, 100000, 10000000};
    unsigned caseno = 0;
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 3; j++)
            chi_case(thetas[i], ns[j], caseno++);
    gray_is_rejected();
    return test_summary("test_truezipf");
}
