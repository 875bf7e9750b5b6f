/* The evicted table: 256 independently locked stripes, each an open-addressing
 * array of 16-byte slots with linear probing kept in Robin Hood order (every
 * cluster sorted by home slot), so that
 *  - a find stops at the first slot whose entry belongs further on, not at the
 *    next empty slot: a miss reads a few slots even at 90 % load;
 *  - entries under one fingerprint sit next to each other in insertion order;
 *  - a remove shifts the rest of its cluster back by one (no tombstones).
 * A stripe is rebuilt alone, under its own lock, when an insert would take it
 * above 90 % (to 5/4 of its size) or a remove leaves it below 68 % (to 80 %): the
 * load stays in [0.68, 0.9], i.e. at most 16 / 0.68 = 23.5 bytes per entry. */
#include "evicted.h"
#include <stdlib.h>
#include <string.h>

struct ac_evicted_slot {
    uint64_t fp;
    uint64_t loc;      /* packed location; 0 = an empty slot (len is never 0) */
};

struct ac_evicted_stripe {
    pthread_mutex_t lock;
    struct ac_evicted_slot *slots;   /* cap slots, NULL until the first insert */
    uint32_t cap;
    uint32_t n;                      /* entries in this stripe */
} __attribute__((aligned(64)));      /* one cache line each on glibc/x86-64 */

#define MIN_SLOTS 8u

/* ---- location packing: block | offset | len, from high to low bits ---- */

static bool fits(const struct ac_evicted *t, const struct ac_loc *loc) {
    if (loc->len == 0 || loc->block > t->max_block)
        return false;
    if (t->len_bits < 32 && (loc->len >> t->len_bits) != 0)
        return false;
    if (t->offset_bits < 32 && (loc->offset >> t->offset_bits) != 0)
        return false;
    return true;
}

/* block and offset in the bits above len: what remove compares */
static uint64_t block_offset(const struct ac_evicted *t, const struct ac_loc *loc) {
    return ((uint64_t)loc->block << t->offset_bits) | loc->offset;
}

static uint64_t pack(const struct ac_evicted *t, const struct ac_loc *loc) {
    return (block_offset(t, loc) << t->len_bits) | loc->len;
}

static struct ac_loc unpack(const struct ac_evicted *t, uint64_t p) {
    struct ac_loc l;
    l.len = (uint32_t)(p & ((UINT64_C(1) << t->len_bits) - 1));
    l.offset = (uint32_t)((p >> t->len_bits) & ((UINT64_C(1) << t->offset_bits) - 1));
    l.block = (uint32_t)(p >> (t->offset_bits + t->len_bits));
    return l;
}

/* ---- one stripe's slot array ---- */

/* The home slot: the fingerprint's high 32 bits scaled to [0, cap) (multiply-shift;
 * the low 8 bits chose the stripe). Monotone in fp >> 32. */
static uint32_t home(uint64_t fp, uint32_t cap) {
    return (uint32_t)(((fp >> 32) * cap) >> 32);
}

/* How far the entry at pos sits past its home, cyclically. */
static uint32_t displacement(const struct ac_evicted_slot *s, uint32_t cap, uint32_t pos) {
    uint32_t h = home(s[pos].fp, cap);
    return pos >= h ? pos - h : pos + (cap - h);
}

static uint32_t next_pos(uint32_t pos, uint32_t cap) {
    return pos + 1 == cap ? 0 : pos + 1;
}

/* Puts e after every entry whose home is at or before its own (so after the
 * older entries of its fingerprint), shifting the rest of the cluster by one.
 * The array has an empty slot. */
static void slots_insert(struct ac_evicted_slot *s, uint32_t cap, struct ac_evicted_slot e) {
    uint32_t pos = home(e.fp, cap), d = 0;
    while (s[pos].loc != 0 && displacement(s, cap, pos) >= d) {
        pos = next_pos(pos, cap);
        d++;
    }
    uint32_t end = pos;                 /* the empty slot that ends the cluster */
    while (s[end].loc != 0)
        end = next_pos(end, cap);
    while (end != pos) {
        uint32_t prev = end == 0 ? cap - 1 : end - 1;
        s[end] = s[prev];
        end = prev;
    }
    s[pos] = e;
}

/* Moves the stripe to a fresh array of cap slots (> its entries); keeps the order
 * of the entries under each fingerprint. */
static int rebuild(struct ac_evicted *t, struct ac_evicted_stripe *st, uint32_t cap) {
    struct ac_evicted_slot *ns = calloc(cap, sizeof(*ns));
    if (ns == NULL)
        return -1;
    if (st->n > 0) {
        /* walk from an empty slot, so that no cluster is cut in two */
        uint32_t start = 0;
        while (st->slots[start].loc != 0)
            start++;
        uint32_t pos = start;
        do {
            pos = next_pos(pos, st->cap);
            if (st->slots[pos].loc != 0)
                slots_insert(ns, cap, st->slots[pos]);
        } while (pos != start);
    }
    free(st->slots);
    if (cap > st->cap)
        __atomic_add_fetch(&t->bytes, (size_t)(cap - st->cap) * sizeof(*ns), __ATOMIC_RELAXED);
    else
        __atomic_sub_fetch(&t->bytes, (size_t)(st->cap - cap) * sizeof(*ns), __ATOMIC_RELAXED);
    st->slots = ns;
    st->cap = cap;
    return 0;
}

/* Room for one more entry at <= 90 % load; grows by 5/4 (load then ~72 %). */
static int make_room(struct ac_evicted *t, struct ac_evicted_stripe *st) {
    if (((uint64_t)st->n + 1) * 10 <= (uint64_t)st->cap * 9)
        return 0;
    uint64_t cap = st->cap < MIN_SLOTS ? MIN_SLOTS : (uint64_t)st->cap + st->cap / 4;
    if (cap > UINT32_MAX)
        return -1;
    return rebuild(t, st, (uint32_t)cap);
}

/* Below 68 % load, shrinks to about 80 % (not below MIN_SLOTS). A failed
 * allocation keeps the larger array. */
static void maybe_shrink(struct ac_evicted *t, struct ac_evicted_stripe *st) {
    if (st->cap <= MIN_SLOTS || (uint64_t)st->n * 100 >= (uint64_t)st->cap * 68)
        return;
    uint64_t cap = (uint64_t)st->n * 5 / 4 + 1;
    if (cap < MIN_SLOTS)
        cap = MIN_SLOTS;
    if (cap < st->cap)
        rebuild(t, st, (uint32_t)cap);
}

/* Takes one entry out of the cap, or fails when it is reached. */
static bool reserve(struct ac_evicted *t) {
    size_t c = __atomic_load_n(&t->count, __ATOMIC_RELAXED);
    do {
        if (t->max_entries != 0 && c >= t->max_entries)
            return false;
    } while (!__atomic_compare_exchange_n(&t->count, &c, c + 1, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return true;
}

static struct ac_evicted_stripe *stripe_of(struct ac_evicted *t, uint64_t fp) {
    return &t->stripes[fp & (AC_EVICTED_STRIPES - 1)];
}

/* ---- the API ---- */

int ac_evicted_init(struct ac_evicted *t, size_t max_entries, unsigned offset_bits, unsigned len_bits) {
    memset(t, 0, sizeof(*t));
    if (len_bits == 0 || offset_bits > 48 || len_bits > 48 || offset_bits + len_bits > 48)
        return -1;
    void *p;
    size_t hdr = AC_EVICTED_STRIPES * sizeof(struct ac_evicted_stripe);
    if (posix_memalign(&p, __alignof__(struct ac_evicted_stripe), hdr) != 0)
        return -1;
    memset(p, 0, hdr);
    t->stripes = p;
    for (int i = 0; i < AC_EVICTED_STRIPES; i++)
        pthread_mutex_init(&t->stripes[i].lock, NULL);
    unsigned block_bits = 64 - offset_bits - len_bits;
    t->max_block = block_bits >= 32 ? UINT32_MAX : (UINT32_C(1) << block_bits) - 1;
    t->offset_bits = offset_bits;
    t->len_bits = len_bits;
    t->max_entries = max_entries;
    t->bytes = hdr;
    return 0;
}

void ac_evicted_destroy(struct ac_evicted *t) {
    if (t->stripes != NULL) {
        for (int i = 0; i < AC_EVICTED_STRIPES; i++) {
            free(t->stripes[i].slots);
            pthread_mutex_destroy(&t->stripes[i].lock);
        }
        free(t->stripes);
    }
    memset(t, 0, sizeof(*t));
}

int ac_evicted_insert(struct ac_evicted *t, uint64_t fp, const struct ac_loc *loc) {
    if (!fits(t, loc))
        return -2;
    struct ac_evicted_slot e = { fp, pack(t, loc) };
    struct ac_evicted_stripe *st = stripe_of(t, fp);
    int rc = -1;
    pthread_mutex_lock(&st->lock);
    /* counted before the entry can be found, uncounted after it cannot */
    if (reserve(t)) {
        if (make_room(t, st) == 0) {
            slots_insert(st->slots, st->cap, e);
            st->n++;
            rc = 0;
        } else {
            __atomic_sub_fetch(&t->count, 1, __ATOMIC_RELAXED);
        }
    }
    pthread_mutex_unlock(&st->lock);
    return rc;
}

int ac_evicted_find(struct ac_evicted *t, uint64_t fp, struct ac_loc *out, int max) {
    struct ac_evicted_stripe *st = stripe_of(t, fp);
    int n = 0;
    pthread_mutex_lock(&st->lock);
    if (st->n > 0) {
        const struct ac_evicted_slot *s = st->slots;
        uint32_t pos = home(fp, st->cap), d = 0;
        /* past the entries homed before fp's home, through those homed at it */
        while (s[pos].loc != 0) {
            if (s[pos].fp == fp) {
                if (n < max)
                    out[n] = unpack(t, s[pos].loc);
                n++;
            } else if (displacement(s, st->cap, pos) < d) {
                break;
            }
            pos = next_pos(pos, st->cap);
            d++;
        }
    }
    pthread_mutex_unlock(&st->lock);
    return n;
}

/* The slot of (fp, loc) in st (its lock held), or -1. */
static int64_t locate(const struct ac_evicted *t, const struct ac_evicted_stripe *st, uint64_t fp,
                      const struct ac_loc *loc) {
    if (st->n == 0 || loc->block > t->max_block || (t->offset_bits < 32 && (loc->offset >> t->offset_bits) != 0))
        return -1;                      /* could not have been inserted */
    uint64_t want = block_offset(t, loc);
    const struct ac_evicted_slot *s = st->slots;
    uint32_t pos = home(fp, st->cap), d = 0;
    while (s[pos].loc != 0) {
        if (s[pos].fp == fp) {
            if (s[pos].loc >> t->len_bits == want)
                return pos;
        } else if (displacement(s, st->cap, pos) < d) {
            break;
        }
        pos = next_pos(pos, st->cap);
        d++;
    }
    return -1;
}

int ac_evicted_move(struct ac_evicted *t, uint64_t fp, const struct ac_loc *from, const struct ac_loc *to) {
    if (!fits(t, to))
        return -2;
    struct ac_evicted_stripe *st = stripe_of(t, fp);
    pthread_mutex_lock(&st->lock);
    int64_t pos = locate(t, st, fp, from);
    if (pos >= 0)
        st->slots[pos].loc = pack(t, to);    /* same fp, same slot: the probe order holds */
    pthread_mutex_unlock(&st->lock);
    return pos >= 0 ? 0 : -1;
}

bool ac_evicted_remove(struct ac_evicted *t, uint64_t fp, const struct ac_loc *loc) {
    struct ac_evicted_stripe *st = stripe_of(t, fp);
    pthread_mutex_lock(&st->lock);
    int64_t at = locate(t, st, fp, loc);
    bool found = at >= 0;
    if (found) {
        struct ac_evicted_slot *s = st->slots;
        uint32_t cap = st->cap, pos = (uint32_t)at;
        /* backward shift: the followers that are not at home move back one */
        uint32_t nx = next_pos(pos, cap);
        while (s[nx].loc != 0 && displacement(s, cap, nx) > 0) {
            s[pos] = s[nx];
            pos = nx;
            nx = next_pos(nx, cap);
        }
        s[pos].fp = 0;
        s[pos].loc = 0;
        st->n--;
        __atomic_sub_fetch(&t->count, 1, __ATOMIC_RELAXED);
        maybe_shrink(t, st);
    }
    pthread_mutex_unlock(&st->lock);
    return found;
}

size_t ac_evicted_count(struct ac_evicted *t) {
    return __atomic_load_n(&t->count, __ATOMIC_RELAXED);
}

size_t ac_evicted_bytes(struct ac_evicted *t) {
    return __atomic_load_n(&t->bytes, __ATOMIC_RELAXED);
}

uint32_t ac_evicted_max_block(const struct ac_evicted *t) {
    return t->max_block;
}
