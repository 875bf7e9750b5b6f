/* Latency histogram, HDR-style log-linear buckets (Tene's HdrHistogram idea):
 * values below 128 ns have a bucket each; above, every power-of-two range is
 * split into 64 equal sub-buckets, so a bucket's width is at most 1/64 of its
 * lower bound (relative error < 1.6 %).  Values up to 2^44 ns (~4.9 h) are
 * kept; larger ones go to the last bucket.  Count, sum, min and max are exact.
 * Not thread-safe: one histogram per thread and op type, merged at the end. */
#ifndef YCSB_HIST_H
#define YCSB_HIST_H

#include <stdint.h>

#define YCSB_HIST_SUB_BITS 7
#define YCSB_HIST_MAX_BIT 44
#define YCSB_HIST_BUCKETS ((YCSB_HIST_MAX_BIT - YCSB_HIST_SUB_BITS + 2) << (YCSB_HIST_SUB_BITS - 1))

struct ycsb_hist {
    uint64_t count, sum, min, max;
    uint64_t bucket[YCSB_HIST_BUCKETS];
};

void ycsb_hist_init(struct ycsb_hist *h);
void ycsb_hist_record(struct ycsb_hist *h, uint64_t value);
void ycsb_hist_merge(struct ycsb_hist *into, const struct ycsb_hist *from);
/* smallest bucket upper bound with at least ceil(q * count) values at or
 * below it, capped at max; 0 if empty.  q in [0, 1]. */
uint64_t ycsb_hist_quantile(const struct ycsb_hist *h, double q);
/* bucket index of a value, and the largest value of a bucket */
unsigned ycsb_hist_index(uint64_t value);
uint64_t ycsb_hist_bucket_high(unsigned index);

#endif
