/* Uniform, hotspot and discrete generators (YCSB 0.17 UniformLongGenerator,
 * HotspotIntegerGenerator, DiscreteGenerator). See ycsb_gen.h. */
#include "ycsb_gen.h"

void ycsb_uniform_init(struct ycsb_uniform *g, int64_t lb, int64_t ub)
{
    g->lb = lb;
    g->interval = ub - lb + 1;
}

int64_t ycsb_uniform_next(const struct ycsb_uniform *g, struct ycsb_rng *r)
{
    return g->lb + ycsb_rng_nonneg(r) % g->interval;
}

void ycsb_hotspot_init(struct ycsb_hotspot *g, int64_t lb, int64_t ub, double hotset_fraction,
                       double hotopn_fraction)
{
    if (lb > ub) {
        int64_t t = lb;
        lb = ub;
        ub = t;
    }
    int64_t interval = ub - lb + 1;
    g->lb = lb;
    g->hot_interval = (int64_t)((double)interval * hotset_fraction);
    g->cold_interval = interval - g->hot_interval;
    g->hotopn_fraction = hotopn_fraction;
}

int64_t ycsb_hotspot_next(const struct ycsb_hotspot *g, struct ycsb_rng *r)
{
    int hot = ycsb_rng_double(r) < g->hotopn_fraction;
    if (g->hot_interval == 0)
        hot = 0;
    else if (g->cold_interval == 0)
        hot = 1;
    if (hot)
        return g->lb + ycsb_rng_nonneg(r) % g->hot_interval;
    return g->lb + g->hot_interval + ycsb_rng_nonneg(r) % g->cold_interval;
}

void ycsb_discrete_init(struct ycsb_discrete *d)
{
    d->n = 0;
}

int ycsb_discrete_add(struct ycsb_discrete *d, double weight, int value)
{
    if (d->n >= YCSB_DISCRETE_MAX)
        return -1;
    d->weight[d->n] = weight;
    d->value[d->n] = value;
    d->n++;
    return 0;
}

int ycsb_discrete_next(const struct ycsb_discrete *d, struct ycsb_rng *r)
{
    if (d->n == 0)
        return -1;
    double sum = 0;
    for (int i = 0; i < d->n; i++)
        sum += d->weight[i];
    double val = ycsb_rng_double(r);
    for (int i = 0; i < d->n; i++) {
        double pw = d->weight[i] / sum;
        if (val < pw)
            return d->value[i];
        val -= pw;
    }
    /* only reachable through rounding (Java throws here): the last value */
    return d->value[d->n - 1];
}
