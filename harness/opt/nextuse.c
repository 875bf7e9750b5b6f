/* Next-use array by one backward pass over the trace: a hash table maps each
 * key to the position of its most recent (in the backward direction: next)
 * request. Keys never need dense ids: later phases identify an object by the
 * position of its next request. The same pass reads each record's op and
 * marks the scored reads and the writes in two bitmaps; from them the
 * next-useful array (next request if it is a scored read, else none: what
 * OPT needs, belady.c) is derived. Memory: 4 bytes per request for the
 * array, 0.25 for the bitmaps (ACTRACE or score_from > 0), 12 bytes per table
 * slot while the pass runs (slots <= 8/3 x distinct keys); then 4 more per
 * request for the next-useful array unless the trace is plain (no writes,
 * score_from 0). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "keytable.h"
#include "opt_internal.h"

#define PREFETCH_AHEAD 16
#define DROP_CHUNK ((uint64_t)64 << 20)   /* give back mapped trace pages every 64 MiB */

uint64_t ac_nextuse_bytes(uint64_t n) { return n * sizeof(uint32_t); }

uint64_t ac_nextuse_held(const struct ac_nextuse *nu) {
    return ac_nextuse_bytes(nu->n) * (nu->useful != nu->next ? 2 : 1) +
           ac_bitmap_bytes(nu->n) * ((nu->scored != NULL) + (nu->writes != NULL));
}

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

static void free_nu(struct ac_nextuse *nu) {
    if (!nu)
        return;
    if (nu->useful != nu->next)
        free(nu->useful);
    free(nu->next);
    free(nu->scored);
    free(nu->writes);
    free(nu);
}

uint64_t ac_useful_from_next(const uint32_t *next, uint64_t n, const uint64_t *scored,
                             uint32_t *useful) {
    uint64_t reuses = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t j = next[i];
        if (j != AC_NONE && !ac_bit_get(scored, j))
            j = AC_NONE;
        useful[i] = j;
        reuses += j != AC_NONE;
    }
    return reuses;
}

/* After the pass: a trace without writes scored from 0 is "plain" (useful =
 * next, no bitmaps: the old reads-only path at its old speed); otherwise the
 * next-useful array is derived from next[] and the scored bitmap. */
static int finish(struct ac_nextuse *nu, uint64_t nwrites, uint64_t limit, char *err, size_t errlen) {
    if (nwrites == 0) {
        free(nu->writes);
        nu->writes = NULL;
    }
    if (nwrites == 0 && nu->score_from == 0) {
        free(nu->scored);
        nu->scored = NULL;
        nu->useful = nu->next;
        nu->reuses = nu->n - nu->distinct;
        return 0;
    }
    uint64_t n = nu->n, held = 2 * ac_nextuse_bytes(n) + ac_bitmap_bytes(n) * (nu->writes ? 2 : 1);
    char what[160];
    snprintf(what, sizeof what, "the next-useful-read array of %llu requests", (unsigned long long)n);
    if (ac_mem_check(held, limit, what, err, errlen))
        return -1;
    if (!(nu->useful = malloc(ac_nextuse_bytes(n) ? ac_nextuse_bytes(n) : 1)))
        return ac_fail(err, errlen, "out of memory allocating the next-useful-read array");
    nu->reuses = ac_useful_from_next(nu->next, n, nu->scored, nu->useful);
    return 0;
}

struct ac_nextuse *ac_nextuse_build(const struct ac_trace *t, uint64_t score_from, uint64_t limit,
                                    char *err, size_t errlen) {
    uint64_t n = t->n;
    if (score_from > n) {
        ac_fail(err, errlen, "score_from %llu is beyond the trace: it has %llu requests (accepted: 0 .. %llu)",
                (unsigned long long)score_from, (unsigned long long)n, (unsigned long long)n);
        return NULL;
    }
    /* op bitmaps while the pass runs: needed unless every request is a scored read */
    const int marks = t->has_ops || score_from > 0;
    const uint64_t mark_bytes = marks ? 2 * ac_bitmap_bytes(n) : 0;
    struct ac_keytable kt;
    uint64_t slots = initial_slots(t);
    char what[160];
    snprintf(what, sizeof what, "the next-use pass over %llu requests", (unsigned long long)n);
    if (ac_mem_check(ac_nextuse_bytes(n) + mark_bytes + slots * sizeof(struct ac_kt_slot), limit,
                     what, err, errlen))
        return NULL;
    struct ac_nextuse *nu = calloc(1, sizeof *nu);
    if (!nu || !(nu->next = malloc(ac_nextuse_bytes(n) ? ac_nextuse_bytes(n) : 1)) ||
        (marks && (!(nu->scored = calloc(ac_bitmap_bytes(n) / 8, 8)) ||
                   !(nu->writes = calloc(ac_bitmap_bytes(n) / 8, 8)))) ||
        ac_kt_init(&kt, slots) != 0) {
        free_nu(nu);
        ac_fail(err, errlen, "out of memory allocating the next-use array");
        return NULL;
    }
    nu->n = n;
    nu->score_from = score_from;
    const unsigned char *kp = t->recs + t->key_off, *op_p = t->recs + t->op_off;
    const size_t stride = t->stride;
    uint64_t dropped_to = n, nwrites = 0, reads_scored = 0;
    for (uint64_t i = n; i-- > 0;) {
        if (i >= PREFETCH_AHEAD) {
            uint64_t k = ac_load64(kp + (i - PREFETCH_AHEAD) * stride);
            __builtin_prefetch(&kt.slots[ac_kt_hash(k) & kt.mask], 1);
        }
        if (ac_kt_full(&kt)) {
            uint64_t cur = kt.mask + 1;
            snprintf(what, sizeof what, "the next-use pass (growing the key table to %llu slots)",
                     (unsigned long long)(cur * 2));
            if (ac_mem_check(ac_nextuse_bytes(n) + mark_bytes + 3 * cur * sizeof(struct ac_kt_slot), limit,
                             what, err, errlen) ||
                (ac_kt_grow(&kt) != 0 && ac_fail(err, errlen, "out of memory growing the key table"))) {
                ac_kt_free(&kt);
                free_nu(nu);
                return NULL;
            }
        }
        if (marks) {
            unsigned op = t->has_ops ? op_p[i * stride] : AC_OP_READ;
            if (op > AC_OP_RMW) {
                ac_fail(err, errlen, "request %llu has op %u: " AC_OP_ERROR, (unsigned long long)i, op);
                ac_kt_free(&kt);
                free_nu(nu);
                return NULL;
            }
            if (ac_op_writes(op)) {
                ac_bit_set(nu->writes, i);
                nwrites++;
            }
            if (i >= score_from && ac_op_reads(op)) {
                ac_bit_set(nu->scored, i);
                reads_scored++;
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
    nu->scored_reads = marks ? reads_scored : n;
    nu->scored_writes = n - score_from - nu->scored_reads;
    if (finish(nu, nwrites, limit, err, errlen) != 0) {
        free_nu(nu);
        return NULL;
    }
    return nu;
}

void ac_nextuse_free(struct ac_nextuse *nu) { free_nu(nu); }

uint64_t ac_nextuse_distinct(const struct ac_nextuse *nu) { return nu->distinct; }
uint64_t ac_nextuse_requests(const struct ac_nextuse *nu) { return nu->n; }
uint64_t ac_nextuse_score_from(const struct ac_nextuse *nu) { return nu->score_from; }
uint64_t ac_nextuse_scored_reads(const struct ac_nextuse *nu) { return nu->scored_reads; }
uint64_t ac_nextuse_scored_writes(const struct ac_nextuse *nu) { return nu->scored_writes; }
uint64_t ac_nextuse_reuses(const struct ac_nextuse *nu) { return nu->reuses; }
const uint32_t *ac_nextuse_array(const struct ac_nextuse *nu) { return nu->next; }
const uint32_t *ac_nextuse_useful_array(const struct ac_nextuse *nu) { return nu->useful; }
