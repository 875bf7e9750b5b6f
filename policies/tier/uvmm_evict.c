/* Tier "uvmm": the evictor, a thread off the request path that keeps the
 * region's resident pages under the cap (Zhang et al. ICDE 2015 §VI-B2:
 * eviction by page, strategies clock, FIFO and random, and a clock that weighs
 * the application's access log).
 *
 * Watermarks: the fault thread wakes the evictor when the resident pages
 * reach cap - batch/2 and waits itself only at the cap; the evictor then
 * writes pages out until cap - batch remain. The cap is ac_uvmm_memory, or
 * (by default) what the cgroup allows: its limit less what the group holds
 * beside the region's resident pages and a margin of 1 MiB, read again every
 * 5 ms, so the pager makes room for what else grows (the page tables of the
 * region, the hash table, connections). No swap: were the group to reach its
 * limit, the kernel could reclaim only file pages, then kill.
 *
 * A round's victims are taken out of service first (state EVICTING under the
 * lock): each dirty one is write-protected and compressed from where it is
 * (or written from there when that would not shrink it), and the
 * round's writes are all sent at once through the I/O engine's ring (with
 * io_uring: up to ac_uvmm_batch in flight, where one at a time each write paid
 * its own wait); a clean one (write-protected since it was fetched, its slot
 * valid) is written no more. Then MADV_DONTNEED drops each victim whose copy is
 * on disk and the threads that touched it meanwhile are woken: their access
 * faults again, as a miss, and the page is fetched back with every write that
 * waited. A write that fails leaves the page resident and dirty (nothing is
 * lost; counted, and the evictor tries other pages).
 *
 * Strategies (ac_uvmm_evict), over the access marks the request path sets
 * per page (uvmm.c, uvmm_touched: the tuple-level access log aggregated per
 * page, a byte store per access):
 *   clock   second chance: a marked page is unmarked and passed over;
 *   hints   the mark is a count of accesses up to 3, the hand takes one off
 *           per pass (a page read often survives more passes);
 *   fifo    the page resident longest, marks ignored;
 *   random  a resident page drawn at random;
 *   lru     EMT's LRU (Meyer et al.), sampled: every access stamps its page
 *           with a counter, and the victim is the oldest stamp among the
 *           next LRU_SAMPLE resident pages after the hand (Redis's way;
 *           an exact list would take a lock on every access).
 * The watermarks (tier emt names them): the evictor starts when fewer than
 * the low water level of pages are free (ac_emt_low_water; uvmm: batch / 2)
 * and writes out ac_uvmm_batch (ac_emt_evict_size) pages beyond it, i.e. until
 * low water + batch are free (uvmm: until batch are free, as before). */
#include "memcached.h"
#include "ac_tier.h"
#include "ac_services.h"
#include "uvmm.h"
#include "store/io_engine.h"
#include "store/clock.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/* Left free under the limit: what the process may allocate between two reads
 * of the cgroup (a connection's buffers, allocator slack). Everything else it
 * holds (the hash table, the page tables the region's faults build up, the
 * book-keeping) is in the group's usage and followed every 5 ms. */
#define MARGIN_FIXED (1u << 20)
#define REFRESH_NS 5000000ull            /* the cgroup read again every 5 ms */

#define LRU_SAMPLE 32

static pthread_t evictor;
static bool evictor_running;
static size_t hand;
static uint64_t rng = 0x9e3779b97f4a7c15ull;

size_t uvmm_cap_now(void) {
    if (uv.opt.memory != 0)
        return (size_t)(uv.opt.memory / UVMM_PAGE);
    uint64_t limit, usage;
    char path[1400];
    if (ac_cgroup_memory(&limit, &usage, path, sizeof(path)) != 0 || limit == UINT64_MAX)
        return uv.cap;                   /* checked at start: keep what was set */
    uint64_t ours = (uint64_t)__atomic_load_n(&uv.resident, __ATOMIC_RELAXED) * UVMM_PAGE;
    uint64_t other = usage > ours ? usage - ours : 0;
    uint64_t keep = other + MARGIN_FIXED;
    size_t floor = 2 * (size_t)uv.opt.batch;
    size_t cap = limit > keep ? (size_t)((limit - keep) / UVMM_PAGE) : 0;
    return cap > floor ? cap : floor;
}

static bool resident_state(uint8_t s) {
    return s == UVMM_DIRTY || s == UVMM_CLEAN;
}

void uvmm_evict_resident(size_t p) {
    if (uv.stamp != NULL)
        uv.stamp[p] = __atomic_add_fetch(&uv.clock, 1, __ATOMIC_RELAXED);
    if (uv.opt.evict == UVMM_FIFO) {
        uv.fifo[uv.fifo_tail] = (uint32_t)p;
        uv.fifo_tail = (uv.fifo_tail + 1) % uv.npages;
    }
}

/* Tier emt's pinned pages (uv.pin, set by its colour rounds): passed over
 * while pins are honoured. */
static bool pinned(size_t p, bool pins) {
    if (!pins || uv.pin == NULL || !__atomic_load_n(&uv.pin[p], __ATOMIC_RELAXED))
        return false;
    uv.c.pin_skips++;
    return true;
}

/* The next victim (lock held), passing over pinned pages when pins is set:
 * its index, or SIZE_MAX when none is found. */
static size_t pick_one(bool pins) {
    switch (uv.opt.evict) {
    case UVMM_FIFO: {
        /* a pinned page goes to the back of the ring, so that it keeps its
         * place among the resident pages once its pin is gone; each entry at
         * most once */
        size_t left = (uv.fifo_tail + uv.npages - uv.fifo_head) % uv.npages;
        for (; left > 0; left--) {
            size_t p = uv.fifo[uv.fifo_head];
            uv.fifo_head = (uv.fifo_head + 1) % uv.npages;
            if (!resident_state(uv.pages[p].state))
                continue;
            if (!pinned(p, pins))
                return p;
            uv.fifo[uv.fifo_tail] = (uint32_t)p;
            uv.fifo_tail = (uv.fifo_tail + 1) % uv.npages;
        }
        return SIZE_MAX;
    }
    case UVMM_LRU: {
        size_t best = SIZE_MAX, seen = 0;
        uint32_t now = __atomic_load_n(&uv.clock, __ATOMIC_RELAXED), age = 0;
        for (size_t n = 0; n < uv.npages && seen < LRU_SAMPLE; n++) {
            size_t p = hand;
            hand = hand + 1 == uv.npages ? 0 : hand + 1;
            if (!resident_state(uv.pages[p].state) || pinned(p, pins))
                continue;
            seen++;
            uint32_t a = now - __atomic_load_n(&uv.stamp[p], __ATOMIC_RELAXED);   /* wraps: an age */
            if (best == SIZE_MAX || a > age) {
                best = p;
                age = a;
            }
        }
        return best;
    }
    case UVMM_RANDOM:
        for (int tries = 0; tries < 4096; tries++) {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            size_t p = (size_t)(rng % uv.npages);
            if (resident_state(uv.pages[p].state) && !pinned(p, pins))
                return p;
        }
        return SIZE_MAX;
    default:                             /* clock, hints: at most four turns of the hand */
        for (size_t n = 0; n < 4 * uv.npages; n++) {
            size_t p = hand;
            hand = hand + 1 == uv.npages ? 0 : hand + 1;
            struct uvmm_page *pg = &uv.pages[p];
            if (!resident_state(pg->state) || pinned(p, pins))
                continue;
            uint8_t r = __atomic_load_n(&pg->ref, __ATOMIC_RELAXED);
            if (r == 0)
                return p;
            __atomic_store_n(&pg->ref, uv.opt.evict == UVMM_HINTS ? (uint8_t)(r - 1) : 0, __ATOMIC_RELAXED);
        }
        return SIZE_MAX;
    }
}

/* The next victim: pinned pages are passed over, unless no other resident
 * page can go (a pin never stops the pager making room: counted). */
static size_t pick(void) {
    size_t p = pick_one(true);
    if (p == SIZE_MAX && uv.pin != NULL && (p = pick_one(false)) != SIZE_MAX)
        uv.c.pin_overrides++;
    return p;
}

/* A round's victims, their copies and their writes. */
struct round {
    size_t n;
    size_t *page;
    bool *clean, *ok;
    struct uvmm_page *meta;
    char *out;                           /* n buffers of uvmm_out_bytes() for the compressed pages */
    size_t out_bytes;
    struct ac_io_req *req;
    struct ac_io_ring *ring;             /* the I/O engine's (NULL: none could be made: one at a time) */
};

static void write_failed(size_t p, int err) {
    pthread_mutex_lock(&uv.lock);
    uv.pages[p].state = UVMM_DIRTY;
    uv.c.write_errors++;
    uvmm_protect(p, false);              /* under the lock: wakes the writers that waited */
    pthread_mutex_unlock(&uv.lock);
    static bool said;
    if (!said) {
        said = true;
        fprintf(stderr, "memcached-ac: uvmm: writing page %zu to %s failed: %s (the page stays in"
                " memory; counted as uvmm_write_errors)\n", p, uv.path, strerror(err));
    }
}

/* Writes the round's dirty victims (taken out of service: EVICTING) to their
 * slots, all in flight at once through the I/O engine's ring, then drops
 * every victim whose copy is on disk. A victim whose write failed stays
 * resident and dirty. Returns the pages dropped. */
static size_t evict_round(struct round *r) {
    int fd = uvmm_file_fd();
    size_t inflight = 0;
    for (size_t i = 0; i < r->n; i++) {
        size_t p = r->page[i];
        r->meta[i] = uv.pages[p];
        r->ok[i] = r->clean[i];
        if (r->clean[i])
            continue;                    /* its slot is valid: dropped without a write */
        int rc = uvmm_protect(p, true);  /* writers wait from here on */
        if (rc != 0) {
            write_failed(p, -rc);
            continue;
        }
        /* write-protected, the page cannot change: compressed, or written, from where it is */
        size_t len;
        const void *from = uvmm_page_prepare(uv.base + p * UVMM_PAGE, r->out + i * r->out_bytes, &r->meta[i], &len);
        r->req[i] = (struct ac_io_req){ .fd = fd, .write = true, .buf = (void *)from, .len = len,
                                        .off = (uint64_t)p * UVMM_PAGE, .data = (void *)(uintptr_t)i };
        if (r->ring == NULL || ac_io_submit(r->ring, &r->req[i]) != 0) {
            rc = ac_io_rw(fd, NULL, from, len, r->req[i].off);     /* no ring, or it refused: on its own */
            r->req[i].res = rc == 0 ? (ssize_t)len : rc;
            r->ok[i] = rc == 0;
            if (rc == 0)
                uvmm_page_written(len);
            else
                write_failed(p, -rc);
            continue;
        }
        inflight++;
    }
    while (inflight > 0) {
        struct ac_io_req *done[64];
        int got = ac_io_reap(r->ring, done, 1, 64);
        if (got < 0)
            break;                       /* cannot happen with a ring that has requests in flight */
        for (int k = 0; k < got; k++) {
            struct ac_io_req *q = done[k];
            size_t i = (size_t)(uintptr_t)q->data;
            int rc = q->res == (ssize_t)q->len ? 0 : q->res < 0 ? (int)q->res : 0;
            if (rc == 0 && q->res != (ssize_t)q->len)   /* short: the rest on its own */
                rc = ac_io_rw(fd, NULL, (char *)q->buf + q->res, q->len - (size_t)q->res, q->off + (uint64_t)q->res);
            r->ok[i] = rc == 0;
            if (rc == 0)
                uvmm_page_written(q->len);
            else
                write_failed(r->page[i], -rc);
            inflight--;
        }
    }
    size_t dropped = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (!r->ok[i])
            continue;
        size_t p = r->page[i];
        madvise(uv.base + p * UVMM_PAGE, UVMM_PAGE, MADV_DONTNEED);
        pthread_mutex_lock(&uv.lock);
        struct uvmm_page meta = r->meta[i];
        meta.state = UVMM_EVICTED;
        meta.ref = 0;
        uv.pages[p] = meta;
        uv.resident--;
        uv.c.evictions++;
        if (uv.ra != NULL && __atomic_exchange_n(&uv.ra[p], 0, __ATOMIC_RELAXED))
            uv.c.ra_wasted++;            /* (the exchange: a touch meanwhile counts it used, not both) */
        if (r->clean[i])
            uv.c.evictions_clean++;
        pthread_mutex_unlock(&uv.lock);
        uvmm_wake(p);                    /* who touched it meanwhile faults again: a fetch */
        dropped++;
    }
    return dropped;
}

static void *evictor_main(void *arg) {
    (void)arg;
    size_t batch = (size_t)uv.opt.batch;
    struct round r = {
        .page = calloc(batch, sizeof(size_t)), .clean = calloc(batch, sizeof(bool)),
        .ok = calloc(batch, sizeof(bool)), .meta = calloc(batch, sizeof(struct uvmm_page)),
        .out_bytes = uvmm_out_bytes(),
        .out = aligned_alloc(UVMM_PAGE, (batch * uvmm_out_bytes() + UVMM_PAGE - 1) / UVMM_PAGE * UVMM_PAGE),
        .req = calloc(batch, sizeof(struct ac_io_req)),
    };
    int err = 0;
    r.ring = ac_io_ring_new((unsigned)batch, &err);
    if (r.page == NULL || r.clean == NULL || r.ok == NULL || r.meta == NULL || r.out == NULL
            || r.req == NULL) {
        fprintf(stderr, "memcached-ac: uvmm: no memory for the evictor's buffers; it stops\n");
        batch = 0;
    }
    uint64_t refreshed = 0;
    pthread_mutex_lock(&uv.lock);
    while (!uv.stop) {
        uint64_t t = ac_now_ns();
        if (uv.opt.memory == 0 && t - refreshed >= REFRESH_NS) {
            pthread_mutex_unlock(&uv.lock);
            size_t cap = uvmm_cap_now();
            pthread_mutex_lock(&uv.lock);
            uv.cap = cap;
            refreshed = t;
            pthread_cond_broadcast(&uv.room);
        }
        size_t lw = uvmm_low_water(), free_after = uv.opt.low_water != 0 ? lw + batch : batch;
        size_t low = uv.cap > 2 * free_after ? uv.cap - free_after : uv.cap / 2;
        if (uv.resident + lw < uv.cap) {
            struct timespec ts = uvmm_deadline(2000000);
            pthread_cond_timedwait(&uv.work, &uv.lock, &ts);
            continue;
        }
        size_t n = 0;
        while (n < batch && uv.resident - n > low) {
            size_t p = pick();
            if (p == SIZE_MAX)
                break;
            r.clean[n] = uv.pages[p].state == UVMM_CLEAN;
            uv.pages[p].state = UVMM_EVICTING;
            r.page[n++] = p;
        }
        r.n = n;
        pthread_mutex_unlock(&uv.lock);
        size_t done = evict_round(&r);
        pthread_mutex_lock(&uv.lock);
        pthread_cond_broadcast(&uv.room);
        if (done == 0) {                 /* nothing could go: do not spin */
            pthread_mutex_unlock(&uv.lock);
            struct timespec ts = { 0, 1000000 };
            nanosleep(&ts, NULL);
            pthread_mutex_lock(&uv.lock);
        }
    }
    pthread_mutex_unlock(&uv.lock);
    if (r.ring != NULL)
        ac_io_ring_free(r.ring);
    free(r.page);
    free(r.clean);
    free(r.ok);
    free(r.meta);
    free(r.out);
    free(r.req);
    return NULL;
}

int uvmm_evictor_start(char *err, size_t errlen) {
    int rc = pthread_create(&evictor, NULL, evictor_main, NULL);
    if (rc != 0) {
        snprintf(err, errlen, "cannot start the evictor thread: %s", strerror(rc));
        return -1;
    }
    evictor_running = true;
    return 0;
}

void uvmm_evictor_stop(void) {
    if (!evictor_running)
        return;
    pthread_mutex_lock(&uv.lock);
    uv.stop = true;
    pthread_cond_broadcast(&uv.work);
    pthread_mutex_unlock(&uv.lock);
    pthread_join(evictor, NULL);
    evictor_running = false;
}
