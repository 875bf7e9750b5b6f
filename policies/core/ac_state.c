/* The anti-caching core's state: the chosen policy and tier (ac), the
 * counters of `stats anticache` (ac_cnt), the error texts, the thread
 * record at the memcached boundary, and the book-keeping charged now.
 * Uses: nothing of the core (the first file of the chain, ac_internal.h). */
#include "memcached.h"
#include "ac_internal.h"
#include <stdlib.h>
#include <time.h>

bool ac_enabled = false;
void *ac_slab_base = NULL;
struct ac_state ac;
struct ac_counters ac_cnt;

/* The one per-thread variable of the core. Read and written by the boundary
 * only (ac_thread() and ac_hooks.c's hot path); core_deps.py checks that no
 * other object refers to it and that the core defines no other. */
__thread struct ac_thread ac_self;

struct ac_thread *ac_thread(void) {
    return &ac_self;
}

const char *ac_error_text(enum ac_error e) {
    switch (e) {
    case AC_ERR_READ: return "SERVER_ERROR anti-caching: reading a spilled item failed";
    case AC_ERR_CHECKSUM: return "SERVER_ERROR anti-caching: a spilled item failed its checksum";
    case AC_ERR_NOMEM_FETCH: return "SERVER_ERROR out of memory fetching a spilled item";
    case AC_ERR_NOMEM_STORE: return "SERVER_ERROR out of memory storing object";
    default: return NULL;
    }
}

char *ac_buf_get(struct ac_buf *b, size_t n) {
    if (n > b->cap) {
        char *p = realloc(b->p, n);
        if (p == NULL)
            return NULL;
        b->p = p;
        b->cap = n;
    }
    return b->p;
}

size_t ac_charged_bytes(void) {
    return ac.fixed_charge + ac.tier->charged_bytes();
}

/* Every taker of the spill lock goes through here, so the time threads spend
 * waiting for another's spill round is measured (spill_lock_waits,
 * spill_lock_wait_ns: what stays serial across cores, policies/README.md). */
void ac_spill_lock(void) {
    if (pthread_mutex_trylock(&ac.spill_lock) == 0)
        return;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_mutex_lock(&ac.spill_lock);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    AC_COUNT(spill_lock_waits, 1);
    AC_COUNT(spill_lock_wait_ns, (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)t1.tv_nsec
             - (uint64_t)t0.tv_nsec);
}

void ac_spill_unlock(void) {
    pthread_mutex_unlock(&ac.spill_lock);
}
