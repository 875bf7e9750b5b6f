/* Log-linear latency histogram; see ycsb_hist.h. */
#include <math.h>
#include <string.h>
#include "ycsb_hist.h"

#define SUB (1u << YCSB_HIST_SUB_BITS)     /* 128 */
#define HALF (SUB >> 1)                   /* 64 */

void ycsb_hist_init(struct ycsb_hist *h)
{
    memset(h, 0, sizeof(*h));
}

unsigned ycsb_hist_index(uint64_t v)
{
    if (v < SUB)
        return (unsigned)v;
    if (v >> YCSB_HIST_MAX_BIT)
        return YCSB_HIST_BUCKETS - 1;
    unsigned msb = 63u - (unsigned)__builtin_clzll(v);
    unsigned e = msb - (YCSB_HIST_SUB_BITS - 1);      /* v >> e in [64, 128) */
    return e * HALF + (unsigned)(v >> e);
}

uint64_t ycsb_hist_bucket_high(unsigned idx)
{
    if (idx < SUB)
        return idx;
    unsigned e = idx / HALF - 1;
    uint64_t m = idx % HALF + HALF;
    return ((m + 1) << e) - 1;
}

void ycsb_hist_record(struct ycsb_hist *h, uint64_t v)
{
    if (h->count == 0 || v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
    h->count++;
    h->sum += v;
    h->bucket[ycsb_hist_index(v)]++;
}

void ycsb_hist_merge(struct ycsb_hist *into, const struct ycsb_hist *from)
{
    if (from->count == 0)
        return;
    if (into->count == 0 || from->min < into->min)
        into->min = from->min;
    if (from->max > into->max)
        into->max = from->max;
    into->count += from->count;
    into->sum += from->sum;
    for (unsigned i = 0; i < YCSB_HIST_BUCKETS; i++)
        into->bucket[i] += from->bucket[i];
}

uint64_t ycsb_hist_quantile(const struct ycsb_hist *h, double q)
{
    if (h->count == 0)
        return 0;
    uint64_t need = (uint64_t)ceil(q * (double)h->count);
    if (need < 1)
        need = 1;
    if (need > h->count)
        need = h->count;
    uint64_t seen = 0;
    for (unsigned i = 0; i < YCSB_HIST_BUCKETS; i++) {
        seen += h->bucket[i];
        if (seen >= need) {
            uint64_t hi = ycsb_hist_bucket_high(i);
            return hi < h->max ? hi : h->max;
        }
    }
    return h->max;
}
