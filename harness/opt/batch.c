/* Many small traces in one call: next-use by a small hash table, then one
 * Belady replay per capacity (the exhaustive tests call this in batches). */
#include <stdlib.h>
#include "keytable.h"
#include "maxheap.h"
#include "opt_internal.h"

int ac_opt_batch(const uint64_t *keys, const uint64_t *offsets, size_t ntraces,
                 const uint64_t *caps, size_t ncaps, int bypass, uint64_t *hits,
                 char *err, size_t errlen) {
    if (ac_check_caps(caps, ncaps, "object", err, errlen))
        return -1;
    uint64_t maxlen = 0, maxcap = 0;
    for (size_t j = 0; j < ntraces; j++) {
        if (offsets[j + 1] < offsets[j])
            return ac_fail(err, errlen, "offsets must not decrease (trace %zu)", j);
        if (offsets[j + 1] - offsets[j] > maxlen)
            maxlen = offsets[j + 1] - offsets[j];
    }
    if (maxlen > AC_MAX_REQUESTS)
        return ac_fail(err, errlen, "a trace of %llu requests is too long", (unsigned long long)maxlen);
    for (size_t k = 0; k < ncaps; k++)
        if (caps[k] > maxcap)
            maxcap = caps[k];
    if (maxcap > maxlen)
        maxcap = maxlen;
    uint32_t *next = malloc((maxlen + 1) * sizeof *next);
    uint64_t *bits = malloc(ac_bitmap_bytes(maxlen));
    struct ac_heap h = {0};
    struct ac_keytable kt = {0};
    int rc = 0;
    if (!next || !bits || ac_heap_init(&h, 2 * maxcap) != 0 ||
        ac_kt_init(&kt, ac_kt_slots_for(maxlen)) != 0) {
        rc = ac_fail(err, errlen, "out of memory in ac_opt_batch");
        goto out;
    }
    for (size_t j = 0; j < ntraces; j++) {
        const uint64_t *k = keys + offsets[j];
        uint64_t n = offsets[j + 1] - offsets[j];
        memset(kt.slots, 0xff, (kt.mask + 1) * sizeof *kt.slots);
        kt.count = 0;
        for (uint64_t i = n; i-- > 0;)
            next[i] = ac_kt_swap(&kt, k[i], (uint32_t)i);
        for (size_t c = 0; c < ncaps; c++) {
            if (caps[c] >= kt.count) {
                hits[j * ncaps + c] = n - kt.count;
                continue;
            }
            h.cap = 2 * caps[c];
            hits[j * ncaps + c] = ac_belady_replay(next, n, caps[c], bypass, bits, &h);
        }
    }
out:
    ac_kt_free(&kt);
    ac_heap_free(&h);
    free(bits);
    free(next);
    return rc;
}
