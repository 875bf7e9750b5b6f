/* Next-use array by one backward pass over the trace: a hash table maps each
 * key to the position of its most recent (in the backward direction: next)
 * request. Keys never need dense ids: later phases identify an object by the
 * position of its next request. Memory: 4 bytes per request for the array,
 * 12 bytes per table slot while the pass runs (slots <= 8/3 x distinct keys). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "keytable.h"
#include "opt_internal.h"

#define PREFETCH_AHEAD 16
#define DROP_CHUNK ((uint64_t)64 << 20)   /* give back mapped trace pages every 64 MiB */

uint64_t ac_nextuse_bytes(uint64_t n) { return n * sizeof(uint32_t); }

/* Initial table size: ACTRACE's recordcount is a good guess of the key count. */
static uint64_t initial_slots(const struct ac_trace *t) {
    uint64_t guess = t->recordcount < t->n ? t->recordcount : t->n;
    if (guess > ((uint64_t)1 << 26))
        guess = (uint64_t)1 << 26;
    return ac_kt_slots_for(guess < 1024 ? 1024 : guess);
}

/* Drops mapped pages of records [from, to) from our resident set: the page
 * cache keeps them, the process does not account for them any more. */
static void drop_pages(const struct ac_trace *t, uint64_t from, uint64_t to) {
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)(t->recs + from * t->stride);
    uintptr_t b = (uintptr_t)(t->recs + to * t->stride);
    a = (a + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1);
    b &= ~((uintptr_t)pg - 1);
    if (b > a)
        madvise((void *)a, b - a, MADV_DONTNEED);
}

struct ac_nextuse *ac_nextuse_build(const struct ac_trace *t, uint64_t limit,
                                    char *err, size_t errlen) {
    uint64_t n = t->n;
    struct ac_keytable kt;
    uint64_t slots = initial_slots(t);
    char what[160];
    snprintf(what, sizeof what, "the next-use pass over %llu requests", (unsigned long long)n);
    if (ac_mem_check(ac_nextuse_bytes(n) + slots * sizeof(struct ac_kt_slot), limit, what, err, errlen))
        return NULL;
    struct ac_nextuse *nu = calloc(1, sizeof *nu);
    if (!nu || !(nu->next = malloc(ac_nextuse_bytes(n) ? ac_nextuse_bytes(n) : 1)) ||
        ac_kt_init(&kt, slots) != 0) {
        if (nu)
            free(nu->next);
        free(nu);
        ac_fail(err, errlen, "out of memory allocating the next-use array");
        return NULL;
    }
    nu->n = n;
    const unsigned char *kp = t->recs + t->key_off;
    const size_t stride = t->stride;
    uint64_t dropped_to = n;
    for (uint64_t i = n; i-- > 0;) {
        if (i >= PREFETCH_AHEAD) {
            uint64_t k = ac_load64(kp + (i - PREFETCH_AHEAD) * stride);
            __builtin_prefetch(&kt.slots[ac_kt_hash(k) & kt.mask], 1);
        }
        if (ac_kt_full(&kt)) {
            uint64_t cur = kt.mask + 1;
            snprintf(what, sizeof what, "the next-use pass (growing the key table to %llu slots)",
                     (unsigned long long)(cur * 2));
            if (ac_mem_check(ac_nextuse_bytes(n) + 3 * cur * sizeof(struct ac_kt_slot), limit,
                             what, err, errlen) ||
                (ac_kt_grow(&kt) != 0 && ac_fail(err, errlen, "out of memory growing the key table"))) {
                ac_kt_free(&kt);
                free(nu->next);
                free(nu);
                return NULL;
            }
        }
        nu->next[i] = ac_kt_swap(&kt, ac_load64(kp + i * stride), (uint32_t)i);
        if (t->map && dropped_to - i >= DROP_CHUNK / stride) {
            drop_pages(t, i, dropped_to);
            dropped_to = i;
        }
    }
    nu->distinct = kt.count;
    ac_kt_free(&kt);
    return nu;
}

void ac_nextuse_free(struct ac_nextuse *nu) {
    if (!nu)
        return;
    free(nu->next);
    free(nu);
}

uint64_t ac_nextuse_distinct(const struct ac_nextuse *nu) { return nu->distinct; }
uint64_t ac_nextuse_requests(const struct ac_nextuse *nu) { return nu->n; }
const uint32_t *ac_nextuse_array(const struct ac_nextuse *nu) { return nu->next; }
