/* LSD radix sort of 64-bit keys (used to order PFOO-L's interval costs). */
#include "opt_internal.h"

void ac_radix_sort_u64(uint64_t *a, uint64_t *tmp, uint64_t n) {
    uint64_t *src = a, *dst = tmp;
    for (unsigned shift = 0; shift < 64; shift += 8) {
        uint64_t count[256] = {0};
        for (uint64_t i = 0; i < n; i++)
            count[(src[i] >> shift) & 0xff]++;
        if (n == 0 || count[(src[0] >> shift) & 0xff] == n)
            continue;                            /* every key has this byte: nothing to do */
        uint64_t sum = 0;
        for (unsigned b = 0; b < 256; b++) {
            uint64_t c = count[b];
            count[b] = sum;
            sum += c;
        }
        for (uint64_t i = 0; i < n; i++)
            dst[count[(src[i] >> shift) & 0xff]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
}
