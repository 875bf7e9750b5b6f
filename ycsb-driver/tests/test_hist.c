/* Log-linear histogram: bucket layout, quantiles, merge. */
#include "check.h"
#include "ycsb_hist.h"

int main(void)
{
    /* buckets are contiguous and each value lies in its bucket */
    uint64_t prev_high = 0;
    int contiguous = 1, inside = 1;
    for (unsigned i = 1; i < YCSB_HIST_BUCKETS; i++) {
        uint64_t high = ycsb_hist_bucket_high(i);
        contiguous &= ycsb_hist_index(prev_high + 1) == i && high > prev_high;
        inside &= ycsb_hist_index(high) == i;
        prev_high = high;
    }
    CHECK(contiguous);
    CHECK(inside);
    CHECK_EQ_I(ycsb_hist_index(127), 127);
    CHECK_EQ_I(ycsb_hist_index(128), 128);
    CHECK_EQ_I(ycsb_hist_bucket_high(128), 129);     /* width 2 from 128 on */
    CHECK_EQ_I(ycsb_hist_index(1ULL << 50), YCSB_HIST_BUCKETS - 1);
    /* relative width <= 1/64 */
    for (unsigned i = 128; i < YCSB_HIST_BUCKETS; i++) {
        uint64_t lo = ycsb_hist_bucket_high(i - 1) + 1, hi = ycsb_hist_bucket_high(i);
        if ((double)(hi - lo + 1) / (double)lo > 1.0 / 64 + 1e-12)
            CHECK(!"bucket wider than 1/64");
    }

    struct ycsb_hist h, g;
    ycsb_hist_init(&h);
    CHECK_EQ_I(ycsb_hist_quantile(&h, 0.5), 0);
    for (uint64_t v = 1; v <= 10000; v++)
        ycsb_hist_record(&h, v);
    CHECK_EQ_I(h.count, 10000);
    CHECK_EQ_I(h.sum, 50005000);
    CHECK_EQ_I(h.min, 1);
    CHECK_EQ_I(h.max, 10000);
    /* p50: the 5000th value lies in bucket [4992, 5055] (5000 >> 6 = 78) */
    CHECK_EQ_I(ycsb_hist_quantile(&h, 0.50), 5055);
    /* p99: the 9900th value, bucket [9856, 9983] */
    CHECK_EQ_I(ycsb_hist_quantile(&h, 0.99), 9983);
    /* p99.9: 9990th, bucket [9984, 10111] capped at max */
    CHECK_EQ_I(ycsb_hist_quantile(&h, 0.999), 10000);
    CHECK_EQ_I(ycsb_hist_quantile(&h, 0.0), 1);
    CHECK_EQ_I(ycsb_hist_quantile(&h, 0.01), 100);   /* small values are exact */

    ycsb_hist_init(&g);
    ycsb_hist_record(&g, 1000000);
    ycsb_hist_merge(&h, &g);
    CHECK_EQ_I(h.count, 10001);
    CHECK_EQ_I(h.max, 1000000);
    CHECK_EQ_I(ycsb_hist_quantile(&h, 1.0), 1000000);
    return test_summary("test_hist");
}
