/* Many small traces in one call: next-use by a small hash table, the scored
 * and write bitmaps from the op codes, then one Belady replay per capacity
 * (the exhaustive tests call this in batches). */
#include <stdlib.h>
#include "keytable.h"
#include "maxheap.h"
#include "opt_internal.h"

int ac_opt_batch(const uint64_t *keys, const uint8_t *ops, const uint64_t *offsets,
                 const uint64_t *score_from, size_t ntraces, const uint64_t *caps, size_t ncaps,
                 int bypass, uint64_t *hits, char *err, size_t errlen) {
    if (ac_check_caps(caps, ncaps, "object", err, errlen))
        return -1;
    uint64_t maxlen = 0, maxcap = 0;
    for (size_t j = 0; j < ntraces; j++) {
        if (offsets[j + 1] < offsets[j])
            return ac_fail(err, errlen, "offsets must not decrease (trace %zu)", j);
        uint64_t len = offsets[j + 1] - offsets[j];
        if (score_from && score_from[j] > len)
            return ac_fail(err, errlen, "score_from %llu is beyond trace %zu: it has %llu requests "
                           "(accepted: 0 .. %llu)", (unsigned long long)score_from[j], j,
                           (unsigned long long)len, (unsigned long long)len);
        if (len > maxlen)
            maxlen = len;
    }
    if (maxlen > AC_MAX_REQUESTS)
        return ac_fail(err, errlen, "a trace of %llu requests is too long", (unsigned long long)maxlen);
    if (ops)
        for (uint64_t i = offsets[0]; i < offsets[ntraces]; i++)
            if (ops[i] > AC_OP_RMW)
                return ac_fail(err, errlen, "request %llu has op %u: " AC_OP_ERROR,
                               (unsigned long long)i, (unsigned)ops[i]);
    for (size_t k = 0; k < ncaps; k++)
        if (caps[k] > maxcap)
            maxcap = caps[k];
    if (maxcap > maxlen)
        maxcap = maxlen;
    uint32_t *next = malloc((maxlen + 1) * sizeof *next), *useful = malloc((maxlen + 1) * sizeof *useful);
    uint64_t *bits = malloc(ac_bitmap_bytes(maxlen)), *scored = malloc(ac_bitmap_bytes(maxlen));
    uint64_t *writes = malloc(ac_bitmap_bytes(maxlen));
    struct ac_heap h = {0};
    struct ac_keytable kt = {0};
    int rc = 0;
    if (!next || !useful || !bits || !scored || !writes || ac_heap_init(&h, 2 * maxcap) != 0 ||
        ac_kt_init(&kt, ac_kt_slots_for(maxlen)) != 0) {
        rc = ac_fail(err, errlen, "out of memory in ac_opt_batch");
        goto out;
    }
    for (size_t j = 0; j < ntraces; j++) {
        const uint64_t *k = keys + offsets[j];
        const uint8_t *op = ops ? ops + offsets[j] : NULL;
        uint64_t n = offsets[j + 1] - offsets[j], sf = score_from ? score_from[j] : 0;
        memset(kt.slots, 0xff, (kt.mask + 1) * sizeof *kt.slots);
        kt.count = 0;
        memset(scored, 0, ac_bitmap_bytes(n));
        memset(writes, 0, ac_bitmap_bytes(n));
        for (uint64_t i = n; i-- > 0;) {
            unsigned o = op ? op[i] : AC_OP_READ;
            if (i >= sf && ac_op_reads(o))
                ac_bit_set(scored, i);
            if (ac_op_writes(o))
                ac_bit_set(writes, i);
            next[i] = ac_kt_swap(&kt, k[i], (uint32_t)i);
        }
        uint64_t reuses = ac_useful_from_next(next, n, scored, useful);
        for (size_t c = 0; c < ncaps; c++) {
            if (caps[c] >= kt.count) {
                hits[j * ncaps + c] = reuses;
                continue;
            }
            h.cap = 2 * caps[c];
            hits[j * ncaps + c] = ac_belady_replay(useful, writes, n, caps[c], bypass, bits, &h);
        }
    }
out:
    ac_kt_free(&kt);
    ac_heap_free(&h);
    free(writes);
    free(scored);
    free(bits);
    free(useful);
    free(next);
    return rc;
}
