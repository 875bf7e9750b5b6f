/* PFOO-L (Berger, Beckmann, Harchol-Balter, "Practical Bounds on Optimal
 * Caching with Variable Object Sizes", SIGMETRICS 2018): a lower bound on the
 * misses of every policy, for variable object sizes, where exact OPT is
 * NP-hard. Each reuse interval (p, q = next[p]) keeps an object of size s_p in
 * the cache for q - p requests: its cost is (q - p) x s_p byte-requests. Any
 * policy's hits are a set of intervals whose costs sum to at most
 * capacity x requests, and the most intervals under that budget are the
 * cheapest ones: so hits <= the length of the longest cost-sorted prefix that
 * fits, and misses >= scored reads - that length. Memory: 16 bytes per interval
 * (costs + the radix sort's buffer).
 * Writes and score_from: only intervals ending at a scored read can be hits,
 * so only those enter (the next-useful array); writes and unscored requests
 * still count in the budget's length n. Ignoring the room a write-allocating
 * policy must give its writes only loosens the bound, so it holds for every
 * policy, write-allocating or not. */
#include <stdio.h>
#include <stdlib.h>
#include "opt_internal.h"

__extension__ typedef unsigned __int128 ac_u128;   /* sums of up to 2^32 costs < 2^64 */

int ac_pfoo_l(const struct ac_trace *t, const struct ac_nextuse *nu, const uint64_t *caps,
              size_t ncaps, uint64_t limit, uint64_t *hits, char *err, size_t errlen) {
    if (ac_check_caps(caps, ncaps, "byte", err, errlen))
        return -1;
    const uint64_t n = nu->n, m = nu->reuses;    /* m reuse intervals ending at scored reads */
    if (ac_mem_check(ac_nextuse_held(nu) + 2 * m * sizeof(uint64_t), limit,
                     "PFOO-L (interval costs and their sort)", err, errlen))
        return -1;
    uint64_t *cost = malloc((m ? m : 1) * sizeof *cost), *tmp = malloc((m ? m : 1) * sizeof *tmp);
    if (!cost || !tmp) {
        free(cost);
        free(tmp);
        return ac_fail(err, errlen, "out of memory in PFOO-L");
    }
    uint64_t k = 0;
    for (uint64_t p = 0; p < n; p++) {
        uint32_t q = nu->useful[p];
        if (q != AC_NONE)
            cost[k++] = (uint64_t)(q - p) * ac_trace_size(t, p);   /* < 2^64: both < 2^32 */
    }
    ac_radix_sort_u64(cost, tmp, k);
    free(tmp);
    for (size_t c = 0; c < ncaps; c++) {
        ac_u128 budget = (ac_u128)caps[c] * n, used = 0;
        uint64_t admitted = 0;
        while (admitted < k && (used += cost[admitted]) <= budget)
            admitted++;
        hits[c] = admitted;
    }
    free(cost);
    return 0;
}
