/* The access-log rings of accesslog.h: sampled accesses recorded per thread
 * without a lock, drained by the classifier thread. */
#include "accesslog.h"
#include "../store/clock.h"
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* this thread's ring; tail: the consumer's tail as last read (the ring is
 * full only if it is full by that: the shared line is read again only then) */
struct tl_ring { const struct ac_access_log *owner; uint64_t gen; struct ac_log_ring *ring; uint64_t rng, tail; };
static uint64_t generations;
static __thread struct tl_ring tl;

int ac_log_init(struct ac_access_log *l, size_t capacity, double sample) {
    memset(l, 0, sizeof(*l));
    if (capacity == 0 || capacity > (1u << 26) || !(sample > 0.0 && sample <= 1.0))
        return -1;
    uint64_t n = 16;
    while (n < capacity)
        n *= 2;
    l->capacity = n;
    l->gen = __atomic_add_fetch(&generations, 1, __ATOMIC_RELAXED);
    l->threshold = sample >= 1.0 ? UINT64_MAX : (uint64_t)(sample * 18446744073709551616.0);
    return 0;
}

void ac_log_destroy(struct ac_access_log *l) {
    for (unsigned i = 0; i < AC_LOG_MAX_RINGS; i++)
        free(l->rings[i]);
    memset(l, 0, sizeof(*l));
}

size_t ac_log_ring_bytes(size_t capacity) {
    return sizeof(struct ac_log_ring) + capacity * sizeof(struct ac_log_entry);
}

size_t ac_log_bytes(const struct ac_access_log *l) {
    unsigned n = __atomic_load_n(&l->nrings, __ATOMIC_ACQUIRE);
    return (size_t)n * ac_log_ring_bytes(l->capacity);
}

static struct ac_log_ring *my_ring(struct ac_access_log *l) {
    if (tl.owner == l && tl.gen == l->gen)
        return tl.ring;
    tl.owner = l;
    tl.gen = l->gen;
    tl.ring = NULL;
    tl.tail = 0;
    unsigned id = __atomic_fetch_add(&l->nrings, 0, __ATOMIC_RELAXED);
    struct ac_log_ring *r = calloc(1, ac_log_ring_bytes(l->capacity));
    if (r == NULL)
        return NULL;
    for (;;) {
        if (id >= AC_LOG_MAX_RINGS) {
            free(r);
            return NULL;
        }
        /* publish the ring before counting it, so the consumer never sees a NULL slot */
        struct ac_log_ring *expected = NULL;
        if (__atomic_compare_exchange_n(&l->rings[id], &expected, r, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
            break;
        id++;
    }
    unsigned want = id;
    /* nrings = max(nrings, id + 1) */
    unsigned cur = __atomic_load_n(&l->nrings, __ATOMIC_RELAXED);
    while (cur < want + 1 && !__atomic_compare_exchange_n(&l->nrings, &cur, want + 1, false,
                                                           __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        ;
    tl.ring = r;
    return r;
}

bool ac_log_draw(const struct ac_access_log *l) {
    if (tl.rng == 0)                       /* this thread's first draw */
        tl.rng = 0x9E3779B97F4A7C15ULL ^ (uint64_t)(uintptr_t)&tl;
    tl.rng ^= tl.rng >> 12;                /* xorshift64* (Vigna 2016) */
    tl.rng ^= tl.rng << 25;
    tl.rng ^= tl.rng >> 27;
    return tl.rng * 0x2545F4914F6CDD1DULL < l->threshold;
}

void ac_log_record(struct ac_access_log *l, uint64_t fp, uint32_t size) {
    ac_log_record_ref(l, fp, size, 0);
}

/* A lossless log's full ring: waits until the consumer's tail leaves room for
 * the entry at head (true), or the log stops being lossless (false: dropped).
 * A few spins for a consumer that is draining now, then yields, then sleeps
 * of 20 us for one that sleeps between drains. */
static bool wait_for_room(struct ac_access_log *l, struct ac_log_ring *r, uint64_t head) {
    if (!__atomic_load_n(&l->lossless, __ATOMIC_RELAXED))
        return false;                      /* a lossy log's full ring: a drop, no clock read */
    uint64_t t0 = ac_now_ns();
    for (unsigned i = 0; head - tl.tail >= l->capacity; i++) {
        if (!__atomic_load_n(&l->lossless, __ATOMIC_RELAXED))
            return false;
        if (i >= 256) {
            struct timespec us = { 0, 20000 };
            nanosleep(&us, NULL);
        } else if (i >= 64) {
            sched_yield();
        }
        tl.tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
    }
    __atomic_store_n(&r->waits, r->waits + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&r->wait_ns, r->wait_ns + (ac_now_ns() - t0), __ATOMIC_RELAXED);
    return true;
}

void ac_log_record_ref(struct ac_access_log *l, uint64_t fp, uint32_t size, uint32_t ref) {
    struct ac_log_ring *r = my_ring(l);
    if (r == NULL) {
        __atomic_add_fetch(&l->unringed, 1, __ATOMIC_RELAXED);
        return;
    }
    uint64_t head = r->head;               /* only this thread writes it */
    if (head - tl.tail >= l->capacity) {
        tl.tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
        if (head - tl.tail >= l->capacity && !wait_for_room(l, r, head)) {
            __atomic_store_n(&r->drops, r->drops + 1, __ATOMIC_RELAXED);
            return;
        }
    }
    struct ac_log_entry *e = &r->e[head & (l->capacity - 1)];
    e->fp = fp;
    e->size = size;
    e->ref = ref;
    __atomic_store_n(&r->head, head + 1, __ATOMIC_RELEASE);
}

size_t ac_log_drain(struct ac_access_log *l, void (*fn)(const struct ac_log_entry *e, void *arg),
                    void *arg, size_t max) {
    size_t done = 0;
    unsigned n = __atomic_load_n(&l->nrings, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n && done < max; i++) {
        struct ac_log_ring *r = __atomic_load_n(&l->rings[i], __ATOMIC_ACQUIRE);
        if (r == NULL)
            continue;
        uint64_t tail = r->tail;
        uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
        while (tail != head && done < max) {
            fn(&r->e[tail & (l->capacity - 1)], arg);
            tail++;
            done++;
        }
        __atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
    }
    return done;
}

uint64_t ac_log_drops(const struct ac_access_log *l) {
    uint64_t d = __atomic_load_n(&l->unringed, __ATOMIC_RELAXED);
    unsigned n = __atomic_load_n(&l->nrings, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n; i++) {
        struct ac_log_ring *r = __atomic_load_n(&l->rings[i], __ATOMIC_ACQUIRE);
        if (r != NULL)
            d += __atomic_load_n(&r->drops, __ATOMIC_RELAXED);
    }
    return d;
}

void ac_log_set_lossless(struct ac_access_log *l, bool on) {
    __atomic_store_n(&l->lossless, on, __ATOMIC_RELAXED);
}

uint64_t ac_log_waits(const struct ac_access_log *l, uint64_t *wait_ns) {
    uint64_t w = 0, ns = 0;
    unsigned n = __atomic_load_n(&l->nrings, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n; i++) {
        struct ac_log_ring *r = __atomic_load_n(&l->rings[i], __ATOMIC_ACQUIRE);
        if (r != NULL) {
            w += __atomic_load_n(&r->waits, __ATOMIC_RELAXED);
            ns += __atomic_load_n(&r->wait_ns, __ATOMIC_RELAXED);
        }
    }
    *wait_ns = ns;
    return w;
}
