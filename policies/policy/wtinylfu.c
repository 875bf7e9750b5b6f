/* Policy "wtinylfu": W-TinyLFU (Einziger, Eytan, Friedman, Manes, "TinyLFU:
 * A Highly Efficient Cache Admission Policy", ACM Transactions on Storage
 * 13(4), 2017, §3 and §4 (W-TinyLFU); the structure Caffeine ships), behind
 * the same spill path as "lru", over any spilling tier (blocks by default).
 *
 * The paper's structure and parameters, per slab class (objects stand for
 * bytes within a class):
 * - a window LRU of 1 % of the cache (ac_wtlfu_window, percent; at least
 *   one item) and a main SLRU of the rest, split into a probation segment
 *   and a protected one of 80 % of main (ac_wtlfu_protected);
 * - TinyLFU's frequency sketch: a count-min sketch of 4 rows of 4-bit
 *   counters (one byte each here, saturating at 15) over the keys'
 *   FNV-1a fingerprints (store/fp.h), as wide as the resident items (a
 *   power of 2, at least 1024; one sketch for the server), incremented on
 *   every access (a hit, and an insert: a miss or a write); aging, the
 *   paper's reset: after W = 10 x the resident items additions
 *   (ac_wtlfu_sample, the multiplier) every counter is halved. No
 *   doorkeeper (optional in the paper);
 * - a new object enters the window's MRU end; a hit moves a window object to
 *   the window's MRU end, a probation one to the protected MRU end (the
 *   protected LRU object then goes to the probation MRU end while the
 *   protected segment holds more than its share), a protected one to the
 *   protected MRU end;
 * - eviction: while the window holds more than its share, its LRU object
 *   (the candidate) is compared with main's victim, the probation LRU object
 *   (the protected one when probation is empty): the one with the higher
 *   estimated frequency stays, the other is the victim; the candidate that
 *   wins enters the probation MRU end, and on a tie the candidate is the
 *   victim (TinyLFU admits only a more frequent newcomer). With the window
 *   within its share the victim is main's.
 * A victim is spilled to the cold tier by the core (not dropped): it comes
 * back through on_insert when it is read, W-TinyLFU's miss: it enters the
 * window with its count in the sketch raised. The read that brought it back
 * is that same request (on_fetched, not on_access): counted once in the
 * sketch, by on_insert, with no hit's move (on_fetched counts a transient
 * copy, which no on_insert saw).
 *
 * The three segments are memcached's own per-class list (head = newest):
 * each item carries its segment, and a move to a segment's MRU end moves it
 * to the list's head, so each segment in LRU order is the list's items of
 * that segment from the tail. Each segment has a cursor, the item its scan
 * examines next, with no item of that segment older; a scan that reaches the
 * head without finding one wraps to the tail once (the order disturbed: an
 * item memcached relinked itself, a cursor sent back to the tail). Unlike
 * lru's batched mode, every hit moves its item at once (under the class's
 * LRU lock and the class mutex). What a scan, an item in use, a victim the
 * core left, a merged block-mate and an overwrite do is as in s3fifo.c: an
 * item a request holds when a scan reaches it moves to its segment's MRU
 * end; the last pick's victims still resident are offered first again (a hit
 * meanwhile put the item back at the window's MRU end); a block-mate merged
 * back unrequested becomes probation's LRU object, the next victim of main,
 * and the sketch increment its on_insert made is undone; an overwrite keeps
 * the segment (the new item at its MRU end) and counts as an access.
 *
 * Per item, in the 6 spare bytes of memcached's item header after nkey: the
 * segment (one byte), the segment a chosen victim came from (one byte) and
 * the tag of queue_items.h (4 bytes).
 *
 * Locking. Class c's cursors, counts and chosen victims are guarded by a
 * mutex of the class's own; memcached's list by lru_locks[c | COLD_LRU]; the
 * sketch by a rwlock (read: counter updates and estimates, relaxed byte
 * stores; write: aging and growing). The order is always LRU lock -> class
 * mutex -> sketch lock, and no path takes one while holding one to its
 * right:
 * - on_access takes the sketch lock alone (the increment), releases it,
 *   then the LRU lock and the class mutex (the move); on_insert the sketch
 *   lock alone, then the class mutex alone (memcached calls it after its own
 *   link, with no LRU lock held); on_fetched at most the sketch lock alone;
 * - pick_victims and on_merged take the LRU lock, then the class mutex, then
 *   the sketch's for the estimates (the undo);
 * - on_remove takes only the class mutex: memcached calls it under the item
 *   lock before it unlinks the item, sometimes with the LRU lock already held
 *   (its reclaim of expired items, the LRU crawler), the same order; it never
 *   takes the LRU lock. A cursor on the item moves to its head-side
 *   neighbour read without the LRU lock, taken only if still linked, else
 *   back to the tail (as s3fifo.c and sieve.c argue).
 * Every item pointer the policy keeps is to an item whose on_remove has not
 * run, still in the list (never stored on an item that reads unlinked), so
 * no chunk it points at is freed and the page epoch does not concern it.
 *
 * Charged (metadata_bytes): per resident item the list links (16 bytes, as
 * lru is charged) and the 6 header bytes above; the sketch as mapped (4
 * bytes per counter column; a replaced one is unmapped: grown_table.h); the
 * per-class state. */
#include "memcached.h"
#include "ac_policy.h"
#include "ac_services.h"
#include "store/fp.h"
#include "lru_list.h"
#include "queue_items.h"
#include "grown_table.h"
#include "test_hooks.h"
#include <stddef.h>
#include <string.h>

#define META_OFF (offsetof(item, nkey) + sizeof(uint8_t))
#define SEG_OFF META_OFF
#define FROM_OFF (META_OFF + 1)
#define TAG_OFF (META_OFF + 2)
#define META_BYTES 6
typedef char wtinylfu_meta_fits_in_header_padding[(offsetof(item, data) - META_OFF >= META_BYTES) ? 1 : -1];

/* the segment byte */
enum { S_NONE = 0, S_WINDOW = 1, S_PROBATION = 2, S_PROTECTED = 3, S_CHOSEN = 4, NSEG = 4 };
#define IN_USE_MAX 64                 /* items in use moved per pick, at most */

struct tl_class {
    pthread_mutex_t lock;             /* after lru_locks[c | COLD_LRU], before the sketch's */
    item *cur[NSEG];                  /* per segment: the next item its scan examines; NULL: the tail */
    uint64_t n[NSEG];                 /* items per segment (chosen victims in none) */
    struct qi_chosen chosen;          /* the last pick's victims still resident */
};
static struct tl_class classes[MAX_NUMBER_OF_SLAB_CLASSES];
static uint64_t resident_total;       /* every class's segments (atomic): sizes the sketch */

struct wtinylfu_options {
    unsigned window_pct;              /* ac_wtlfu_window */
    unsigned protected_pct;           /* ac_wtlfu_protected */
    unsigned sample;                  /* ac_wtlfu_sample */
};
static struct wtinylfu_options opt;
static unsigned window_pct = 1, protected_pct = 80, sample_mult = 10;

static uint64_t st_admitted, st_rejected, st_promoted, st_demoted, st_victims, st_reoffered, st_released;
static uint64_t st_in_use, st_overwrites, st_restarts, st_wraps, st_resets, st_merged;

#define COUNT(v, k) __atomic_add_fetch(&(v), (uint64_t)(k), __ATOMIC_RELAXED)

static inline uint8_t seg_of(item *it) {
    return *((uint8_t *)it + SEG_OFF);
}

static inline void seg_set(item *it, uint8_t s) {
    *((uint8_t *)it + SEG_OFF) = s;
}

static inline bool tagged(const item *it) {
    return qi_tagged(it, TAG_OFF);
}

/* ---- the frequency sketch ---- */

#define SKETCH_DEPTH 4
#define SKETCH_MAX 15                 /* a 4-bit counter */
#define SKETCH_MIN_WIDTH 1024u

static struct {
    pthread_rwlock_t lock;            /* the innermost lock */
    uint8_t *t;                       /* SKETCH_DEPTH rows of width counters */
    uint32_t width, mask;
    uint64_t additions;               /* since the last halving (atomic) */
    size_t bytes;                     /* allocated (atomic) */
} sketch = { .lock = PTHREAD_RWLOCK_INITIALIZER };

static inline uint32_t sketch_index(uint64_t fp, int row) {
    uint64_t h = (fp + (uint64_t)(row + 1) * 0x9E3779B97F4A7C15ULL) * 0xFF51AFD7ED558CCDULL;
    h ^= h >> 33;
    return (uint32_t)h & sketch.mask;
}

/* read lock held */
static unsigned sketch_estimate_locked(uint64_t fp) {
    unsigned m = SKETCH_MAX;
    for (int r = 0; r < SKETCH_DEPTH; r++) {
        unsigned v = __atomic_load_n(&sketch.t[(size_t)r * sketch.width + sketch_index(fp, r)], __ATOMIC_RELAXED);
        if (v < m)
            m = v;
    }
    return m;
}

unsigned ac_wtinylfu_estimate(const char *key, size_t nkey) {
    pthread_rwlock_rdlock(&sketch.lock);
    unsigned m = sketch_estimate_locked(ac_key_fp(key, nkey));
    pthread_rwlock_unlock(&sketch.lock);
    return m;
}

/* the four counters of fp up (d = +1) or down (d = -1), saturating */
static void sketch_bump_locked(uint64_t fp, int d) {
    for (int r = 0; r < SKETCH_DEPTH; r++) {
        uint8_t *p = &sketch.t[(size_t)r * sketch.width + sketch_index(fp, r)];
        uint8_t v = __atomic_load_n(p, __ATOMIC_RELAXED);
        if (d > 0 ? v < SKETCH_MAX : v > 0)
            __atomic_store_n(p, (uint8_t)(v + d), __ATOMIC_RELAXED);
    }
}

/* A zeroed sketch of the given width (a power of 2); the write lock held or
 * no other thread running. */
static bool sketch_alloc(uint32_t width) {
    uint8_t *t = ac_table_map((size_t)SKETCH_DEPTH * width);
    if (t == NULL)
        return false;
    ac_table_unmap(sketch.t, (size_t)SKETCH_DEPTH * sketch.width);
    sketch.t = t;
    sketch.width = width;
    sketch.mask = width - 1;
    __atomic_store_n(&sketch.additions, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&sketch.bytes, (size_t)SKETCH_DEPTH * width, __ATOMIC_RELAXED);
    return true;
}

/* An access to fp (no lock held): counted; the sketch halved after its
 * sample (TinyLFU's reset), or grown to the resident items (zeroed, as
 * Caffeine does when its capacity grows). */
static void sketch_record(uint64_t fp) {
    pthread_rwlock_rdlock(&sketch.lock);
    sketch_bump_locked(fp, +1);
    uint32_t width = sketch.width;
    uint64_t adds = COUNT(sketch.additions, 1);
    pthread_rwlock_unlock(&sketch.lock);
    uint64_t resident = __atomic_load_n(&resident_total, __ATOMIC_RELAXED);
    uint64_t w = resident > SKETCH_MIN_WIDTH ? resident : SKETCH_MIN_WIDTH;
    uint64_t sample = (uint64_t)sample_mult * w;
    bool grow = resident > width && width < (1u << 28);
    if (adds < sample && !grow)
        return;
    pthread_rwlock_wrlock(&sketch.lock);
    if (grow && resident > sketch.width) {
        uint32_t nw = sketch.width;
        while (nw < resident && nw < (1u << 28))
            nw *= 2;
        sketch_alloc(nw);             /* on failure the old one stays */
    } else if (__atomic_load_n(&sketch.additions, __ATOMIC_RELAXED) >= sample) {
        for (size_t i = 0; i < (size_t)SKETCH_DEPTH * sketch.width; i++)
            sketch.t[i] >>= 1;
        __atomic_store_n(&sketch.additions, sketch.additions / 2, __ATOMIC_RELAXED);
        COUNT(st_resets, 1);
    }
    pthread_rwlock_unlock(&sketch.lock);
}

static uint64_t item_fp(item *it) {
    return ac_key_fp(ITEM_key(it), it->nkey);
}

/* ---- the segments on memcached's list ---- */

/* class mutex held */
static void count_add(struct tl_class *c, uint8_t s, int d) {
    if (s < S_WINDOW || s > S_PROTECTED)
        return;
    __atomic_store_n(&c->n[s], c->n[s] + (uint64_t)(int64_t)d, __ATOMIC_RELAXED);
    COUNT(resident_total, (int64_t)d);
}

/* Both locks held: it is about to move; a cursor on it goes to the next
 * item towards the head that is linked (never one leaving). */
static void cursors_off(struct tl_class *c, item *it) {
    item *next = NULL;
    bool found = false;
    for (int s = S_WINDOW; s < NSEG; s++) {
        if (c->cur[s] != it)
            continue;
        if (!found) {
            next = qi_real_from(it->prev);
            while (next != NULL && !qi_linked(next))
                next = qi_real_from(next->prev);
            found = true;
        }
        c->cur[s] = next;
    }
}

/* Both locks held: it moves to segment s's MRU end (the list's head). */
static void to_mru(struct tl_class *c, unsigned int id, item *it, uint8_t s) {
    item **heads = item_lru_ends(false), **tails = item_lru_ends(true);
    cursors_off(c, it);
    count_add(c, seg_of(it), -1);
    if (heads[id] != it) {
        ac_list_unlink(heads, tails, it);
        ac_list_link(heads, tails, it, false);
    }
    seg_set(it, s);
    count_add(c, s, +1);
}

static item *scan_start(item *cur, unsigned int id) {
    if (cur != NULL && !qi_listed(cur, id))
        cur = NULL;
    return qi_real_from(cur != NULL ? cur : item_lru_ends(true)[id]);
}

/* Both locks held: segment s's LRU object no request holds (those held move
 * to its MRU end, up to IN_USE_MAX a pick), or NULL. The cursor ends on it,
 * or on the first item passed that on_insert had not tagged yet. */
static item *seg_lru(struct tl_class *c, unsigned int id, uint8_t s, int *busy) {
    item *x = scan_start(c->cur[s], id), *resume = NULL, *last = NULL;
    bool wrapped = c->cur[s] == NULL;
    uint64_t steps = 0, limit = 2 * (c->n[S_WINDOW] + c->n[S_PROBATION] + c->n[S_PROTECTED]) + 64;
    while (steps++ < limit) {
        if (x == NULL) {
            if (wrapped || c->n[s] == 0)
                break;
            wrapped = true;
            COUNT(st_wraps, 1);
            x = qi_real_from(item_lru_ends(true)[id]);
            resume = NULL;
            continue;
        }
        item *prev = qi_real_from(x->prev);
        if (!qi_linked(x)) {
            x = prev;
            continue;
        }
        if (!tagged(x)) {
            if (resume == NULL)
                resume = x;
        } else if (seg_of(x) == s) {
            if (qi_in_use(x) && *busy < IN_USE_MAX) {
                (*busy)++;
                COUNT(st_in_use, 1);
                to_mru(c, id, x, s);
                x = prev != NULL ? prev : x;
                continue;
            }
            c->cur[s] = resume != NULL ? resume : x;
            return x;
        }
        last = x;
        x = prev;
    }
    c->cur[s] = resume != NULL ? resume : last;
    return NULL;
}

/* Both locks held: main's victim, probation's LRU object, else protected's. */
static item *main_lru(struct tl_class *c, unsigned int id, int *busy) {
    item *v = c->n[S_PROBATION] > 0 ? seg_lru(c, id, S_PROBATION, busy) : NULL;
    if (v == NULL && c->n[S_PROTECTED] > 0)
        v = seg_lru(c, id, S_PROTECTED, busy);
    return v;
}

/* Both locks held: it leaves its segment as a victim. */
static void choose(struct tl_class *c, item *it) {
    uint8_t s = seg_of(it);
    count_add(c, s, -1);
    *((uint8_t *)it + FROM_OFF) = s;
    seg_set(it, S_CHOSEN);
    COUNT(st_victims, 1);
}

/* Both locks held: the protected segment back within its share of main. */
static void protected_trim(struct tl_class *c, unsigned int id) {
    int busy = IN_USE_MAX;            /* no moves of items in use here */
    while (c->n[S_PROTECTED] * 100 > (uint64_t)protected_pct * (c->n[S_PROBATION] + c->n[S_PROTECTED])) {
        item *d = seg_lru(c, id, S_PROTECTED, &busy);
        if (d == NULL)
            break;
        to_mru(c, id, d, S_PROBATION);
        COUNT(st_demoted, 1);
    }
}

static bool window_over(struct tl_class *c) {
    uint64_t total = c->n[S_WINDOW] + c->n[S_PROBATION] + c->n[S_PROTECTED];
    uint64_t share = total * window_pct / 100;
    return c->n[S_WINDOW] > (share > 0 ? share : 1);
}

/* ---- the hooks ---- */

/* An overwrite: the segment memcached's unlink of the old item leaves for
 * its link of the new one, on this thread, under the key's lock. */
static __thread struct {
    uint64_t fp;
    uint8_t seg;
    bool set;
} handover;

static int wtinylfu_init(void) {
    window_pct = opt.window_pct;
    protected_pct = opt.protected_pct;
    sample_mult = opt.sample;
    for (int i = 0; i < MAX_NUMBER_OF_SLAB_CLASSES; i++) {
        struct tl_class *c = &classes[i];
        pthread_mutex_init(&c->lock, NULL);
        memset(c->cur, 0, sizeof(c->cur));
        memset(c->n, 0, sizeof(c->n));
        c->chosen.n = 0;
    }
    resident_total = 0;
    uint64_t *counters[] = { &st_admitted, &st_rejected, &st_promoted, &st_demoted, &st_victims, &st_reoffered,
                             &st_released, &st_in_use, &st_overwrites, &st_restarts, &st_wraps, &st_resets,
                             &st_merged };
    for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
        *counters[i] = 0;
    pthread_rwlock_wrlock(&sketch.lock);
    bool ok = sketch_alloc(SKETCH_MIN_WIDTH);
    pthread_rwlock_unlock(&sketch.lock);
    if (!ok) {
        fprintf(stderr, "memcached-ac: wtinylfu: no memory for the frequency sketch\n");
        return -1;
    }
    return 0;
}

/* Linked at the head by memcached (item lock held, no LRU lock). */
static void wtinylfu_on_insert(item *it) {
    unsigned int cls = ITEM_clsid(it), id = cls | COLD_LRU;
    if (cls >= MAX_NUMBER_OF_SLAB_CLASSES || it->slabs_clsid != id)
        return;                       /* not on the list the segments use */
    uint64_t fp = item_fp(it);
    sketch_record(fp);                /* the sketch's lock alone */
    uint8_t s = S_WINDOW;
    if (handover.set && handover.fp == fp) {
        s = handover.seg;             /* an overwrite: an access to the same object */
        COUNT(st_overwrites, 1);
    }
    handover.set = false;
    struct tl_class *c = &classes[cls];
    pthread_mutex_lock(&c->lock);
    seg_set(it, s);
    qi_tag_set(it, TAG_OFF, true);
    count_add(c, s, +1);
    pthread_mutex_unlock(&c->lock);
}

/* A hit: counted in the sketch, then its segment's move. */
static void wtinylfu_on_access(item *it) {
    unsigned int cls = ITEM_clsid(it), id = cls | COLD_LRU;
    if (cls >= MAX_NUMBER_OF_SLAB_CLASSES || it->slabs_clsid != id)
        return;
    sketch_record(item_fp(it));
    struct tl_class *c = &classes[cls];
    pthread_mutex_lock(&lru_locks[id]);
    pthread_mutex_lock(&c->lock);
    if (tagged(it) && qi_listed(it, id)) {
        uint8_t s = seg_of(it);
        if (s == S_PROBATION) {
            to_mru(c, id, it, S_PROTECTED);
            COUNT(st_promoted, 1);
            protected_trim(c, id);
        } else if (s == S_WINDOW || s == S_PROTECTED) {
            to_mru(c, id, it, s);
        } else if (s == S_CHOSEN) {   /* a victim the core left, read: not a victim any more */
            qi_chosen_drop(&c->chosen, it);
            to_mru(c, id, it, S_WINDOW);
        }
    }
    pthread_mutex_unlock(&c->lock);
    pthread_mutex_unlock(&lru_locks[id]);
}

/* A read-back (a disk hit), TinyLFU's miss: the request counts once in the
 * sketch, as every request; on_insert counted it when the lookup linked the
 * item, and it stays at the window's MRU end where on_insert put it. */
static void wtinylfu_on_fetched(item *it) {
    if (AC_ITEM_TRANSIENT(it))
        sketch_record(item_fp(it));   /* a copy not linked: no on_insert counted it */
}

/* Before memcached unlinks it (item lock held, ITEM_LINKED already clear;
 * maybe under the list's LRU lock): the class mutex only. */
static void wtinylfu_on_remove(item *it) {
    unsigned int cls = ITEM_clsid(it), id = cls | COLD_LRU;
    if (cls >= MAX_NUMBER_OF_SLAB_CLASSES || it->slabs_clsid != id)
        return;
    struct tl_class *c = &classes[cls];
    uint64_t fp = item_fp(it);
    pthread_mutex_lock(&c->lock);
    if (tagged(it)) {
        uint8_t s = seg_of(it);
        item *next = NULL;
        bool moved = false;
        for (int k = S_WINDOW; k < NSEG; k++) {
            if (c->cur[k] != it)
                continue;
            if (!moved) {
                /* its head-side neighbour, read without the LRU lock: taken
                 * only if still linked (see the header) */
                next = qi_real_from(__atomic_load_n(&it->prev, __ATOMIC_RELAXED));
                if (next != NULL && !qi_linked(next)) {
                    next = NULL;
                    COUNT(st_restarts, 1);
                }
                moved = true;
            }
            c->cur[k] = next;
        }
        count_add(c, s, -1);
        handover.set = false;
        if (s == S_CHOSEN) {
            qi_chosen_drop(&c->chosen, it);
        } else {
            handover.fp = fp;
            handover.seg = s;
            handover.set = true;
        }
        qi_tag_set(it, TAG_OFF, false);
        seg_set(it, S_NONE);
    }
    pthread_mutex_unlock(&c->lock);
}

/* A block-mate merged back unrequested (item lock held; memcached linked it
 * at the head and on_insert counted it): probation's LRU object, its count
 * taken back. */
static void wtinylfu_on_merged(item *it) {
    unsigned int cls = ITEM_clsid(it), id = cls | COLD_LRU;
    if (cls >= MAX_NUMBER_OF_SLAB_CLASSES || it->slabs_clsid != id)
        return;
    struct tl_class *c = &classes[cls];
    item **heads = item_lru_ends(false), **tails = item_lru_ends(true);
    uint64_t fp = item_fp(it);
    pthread_mutex_lock(&lru_locks[id]);
    pthread_mutex_lock(&c->lock);
    uint8_t s = seg_of(it);
    if (tagged(it) && qi_listed(it, id) && s >= S_WINDOW && s <= S_PROTECTED) {
        cursors_off(c, it);
        count_add(c, s, -1);
        item *at = c->cur[S_PROBATION] != NULL && qi_listed(c->cur[S_PROBATION], id) ? c->cur[S_PROBATION] : NULL;
        ac_list_unlink(heads, tails, it);
        qi_link_before(heads, tails, id, at, it);   /* on the tail side of the cursor (NULL: the tail) */
        c->cur[S_PROBATION] = it;
        seg_set(it, S_PROBATION);
        count_add(c, S_PROBATION, +1);
        pthread_rwlock_rdlock(&sketch.lock);
        sketch_bump_locked(fp, -1);
        pthread_rwlock_unlock(&sketch.lock);
        COUNT(st_merged, 1);
    }
    pthread_mutex_unlock(&c->lock);
    pthread_mutex_unlock(&lru_locks[id]);
}

static int wtinylfu_pick_victims(unsigned int clsid, item **out, int max) {
    if (clsid >= MAX_NUMBER_OF_SLAB_CLASSES)
        return 0;
    if (max > QI_CHOSEN_MAX)
        max = QI_CHOSEN_MAX;
    unsigned int id = clsid | COLD_LRU;
    struct tl_class *c = &classes[clsid];
    int n = 0, busy = 0;
    pthread_mutex_lock(&lru_locks[id]);
    pthread_mutex_lock(&c->lock);
    /* the last pick's victims the core left (a hit took any out): again, unless in use */
    item *prev_chosen[QI_CHOSEN_MAX];
    int nprev = qi_chosen_take(&c->chosen, prev_chosen);
    for (int i = 0; i < nprev; i++) {
        item *p = prev_chosen[i];
        if (n < max && !qi_in_use(p)) {
            out[n++] = p;
            COUNT(st_reoffered, 1);
        } else {
            to_mru(c, id, p, *((uint8_t *)p + FROM_OFF));
            COUNT(st_released, 1);
        }
    }
    while (n < max) {
        item *cand = window_over(c) ? seg_lru(c, id, S_WINDOW, &busy) : NULL;
        if (cand != NULL) {
            item *v = main_lru(c, id, &busy);
            if (v == NULL) {          /* main empty: admitted */
                to_mru(c, id, cand, S_PROBATION);
                COUNT(st_admitted, 1);
                continue;
            }
            pthread_rwlock_rdlock(&sketch.lock);
            bool admit = sketch_estimate_locked(item_fp(cand)) > sketch_estimate_locked(item_fp(v));
            pthread_rwlock_unlock(&sketch.lock);
            if (admit) {
                to_mru(c, id, cand, S_PROBATION);
                COUNT(st_admitted, 1);
                choose(c, v);
                out[n++] = v;
            } else {
                COUNT(st_rejected, 1);
                choose(c, cand);
                out[n++] = cand;
            }
            continue;
        }
        item *v = main_lru(c, id, &busy);
        if (v == NULL)
            v = seg_lru(c, id, S_WINDOW, &busy);
        if (v == NULL)
            break;
        choose(c, v);
        out[n++] = v;
    }
    qi_chosen_keep(&c->chosen, out, n);
    pthread_mutex_unlock(&c->lock);
    pthread_mutex_unlock(&lru_locks[id]);
    return n;
}

static size_t wtinylfu_metadata_bytes(void) {
    STATS_LOCK();
    size_t n = stats_state.curr_items;
    STATS_UNLOCK();
    return n * (2 * sizeof(void *) + META_BYTES) + __atomic_load_n(&sketch.bytes, __ATOMIC_RELAXED)
           + sizeof(classes);
}

static void wtinylfu_stats(ADD_STAT add_stats, void *c) {
    uint64_t seg[NSEG] = { 0 };
    for (int i = 0; i < MAX_NUMBER_OF_SLAB_CLASSES; i++)
        for (int s = S_WINDOW; s < NSEG; s++)
            seg[s] += __atomic_load_n(&classes[i].n[s], __ATOMIC_RELAXED);
    APPEND_STAT("wtinylfu_window_pct", "%u", window_pct);
    APPEND_STAT("wtinylfu_protected_pct", "%u", protected_pct);
    APPEND_STAT("wtinylfu_window_items", "%llu", (unsigned long long)seg[S_WINDOW]);
    APPEND_STAT("wtinylfu_probation_items", "%llu", (unsigned long long)seg[S_PROBATION]);
    APPEND_STAT("wtinylfu_protected_items", "%llu", (unsigned long long)seg[S_PROTECTED]);
    APPEND_STAT("wtinylfu_sketch_bytes", "%zu", __atomic_load_n(&sketch.bytes, __ATOMIC_RELAXED));
#define TL_STAT(name, v) APPEND_STAT(name, "%llu", (unsigned long long)__atomic_load_n(&v, __ATOMIC_RELAXED))
    TL_STAT("wtinylfu_sketch_resets", st_resets);
    TL_STAT("wtinylfu_admitted", st_admitted);
    TL_STAT("wtinylfu_rejected", st_rejected);
    TL_STAT("wtinylfu_promoted", st_promoted);
    TL_STAT("wtinylfu_demoted", st_demoted);
    TL_STAT("wtinylfu_victims", st_victims);
    TL_STAT("wtinylfu_reoffered", st_reoffered);
    TL_STAT("wtinylfu_released", st_released);
    TL_STAT("wtinylfu_merged", st_merged);
    TL_STAT("wtinylfu_overwrites", st_overwrites);
    TL_STAT("wtinylfu_passed_in_use", st_in_use);
    TL_STAT("wtinylfu_wraps", st_wraps);
    TL_STAT("wtinylfu_restarts", st_restarts);
#undef TL_STAT
}

static const struct ac_opt wtinylfu_opts[] = {
    { .key = "ac_wtlfu_window", .type = AC_T_COUNT, AC_FIELD(struct wtinylfu_options, window_pct), .min = 1,
      .max = 50, .noun = "a percentage", .note = "(of each class's items, at least one item; the paper: 1)",
      .def = "1", .def_is_value = true,
      .help = "size of the window LRU, percent of the cache (W-TinyLFU: 1)" },
    { .key = "ac_wtlfu_protected", .type = AC_T_COUNT, AC_FIELD(struct wtinylfu_options, protected_pct), .min = 1,
      .max = 99, .noun = "a percentage", .note = "(of the main SLRU; the paper: 80)",
      .def = "80", .def_is_value = true,
      .help = "size of the protected segment, percent of the main SLRU (W-TinyLFU: 80)" },
    { .key = "ac_wtlfu_sample", .type = AC_T_COUNT, AC_FIELD(struct wtinylfu_options, sample), .min = 1,
      .max = 1000, .noun = "a multiple of the resident items", .note = "(counters halved after that many accesses)",
      .def = "10", .def_is_value = true,
      .help = "accesses between two halvings of the sketch, per resident item (TinyLFU's W/C: 10)" },
};
static const struct ac_opt_table wtinylfu_options = AC_OPT_TABLE("policy wtinylfu", wtinylfu_opts, &opt);

const struct ac_policy_ops ac_policy_wtinylfu = {
    .name = "wtinylfu",
    .summary = "W-TinyLFU: window LRU, count-min sketch admission, SLRU main per slab class (Einziger et al. ToS 2017)",
    .default_tier = "blocks",
    .tier_shapes = AC_CAP_SPILL,
    .options = { &wtinylfu_options },
    .fetch_on_read = true,
    .init = wtinylfu_init,
    .on_insert = wtinylfu_on_insert,
    .on_access = wtinylfu_on_access,
    .on_fetched = wtinylfu_on_fetched,
    .on_remove = wtinylfu_on_remove,
    .on_merged = wtinylfu_on_merged,
    .pick_victims = wtinylfu_pick_victims,
    .metadata_bytes = wtinylfu_metadata_bytes,
    .stats = wtinylfu_stats,
};
