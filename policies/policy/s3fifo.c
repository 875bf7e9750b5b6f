/* Policy "s3fifo": S3-FIFO (Yang, Zhang, Qiu, Yue, Rashmi, "FIFO queues are
 * all you need for cache eviction", SOSP 2023, §4 and Algorithm 1), behind the
 * same spill path as "lru", over any spilling tier (blocks by default).
 *
 * The paper's structure and parameters, per slab class (all items of a class
 * have one chunk size, so objects stand for bytes):
 * - a small FIFO S of 10 % of the cache (ac_s3fifo_small, percent) and a main
 *   FIFO M of the rest; a ghost FIFO G of keys only (FNV-1a fingerprints,
 *   store/fp.h; ghost.c) holding as many entries as M's share of the cache (90 % of
 *   the resident items; one ghost for the server, as a key may come back in
 *   another class);
 * - a 2-bit frequency per object, saturating at 3, incremented on a hit;
 * - an insert goes to the head of S, or of M if its key is in G (the entry
 *   is then removed from G);
 * - a victim is taken from S when S holds at least 10 % of the class's
 *   objects, else from M. From S: the tail object moves to the head of M if
 *   its frequency is at least ac_s3fifo_promote (default 1: accessed again
 *   while in S, a second access, as the paper's text says; 2 is the
 *   "freq > 1" of its pseudo-code), else it is the victim and its key goes
 *   to G. From M: the tail object with a frequency above 0 has it
 *   decremented and goes back to the head of M, else it is the victim. The
 *   frequency is kept when an object moves from S to M (the pseudo-code does
 *   not reset it).
 * A victim is spilled to the cold tier by the core (not dropped): it comes
 * back through on_insert when it is read, which is S3-FIFO's miss; a key in
 * G then enters M. The read that brought it back does not count as a hit
 * (on_fetched, not on_access): it enters at frequency 0, as the paper inserts
 * a missed object. The key of an S victim enters G when the victim leaves
 * RAM (on_remove), so a victim the core left never reaches G.
 *
 * Both queues are memcached's own per-class list (head = newest): each item
 * carries the queue it is in, and the list is ordered by when each item
 * entered its queue (memcached links a new item at the head; a move to M's
 * head moves it to the list's head), so S in FIFO order is the list's S
 * items from the tail, and M likewise. Each queue has a cursor, the item its
 * scan examines next, with no item of that queue older (nearer the tail):
 * a scan walks from its cursor towards the head and passes each item of the
 * other queue once per move of that item (amortized O(1) per event). If the
 * order was disturbed (memcached relinks an item at the head on an add of an
 * existing key or an incr/decr 60 s after its last move; a cursor sent back
 * to the tail) a scan that reaches the head wraps to the tail once. M's
 * reinsertions end within 4 rounds of M (frequencies only go down during a
 * scan); after 4 x (objects + 16) steps the M item at hand is taken
 * whatever its frequency (hits during the scan can keep raising them), so
 * victims are always named while the class holds an item no request uses.
 *
 * In this system a victim is a hint the core re-validates and spills; the
 * core may leave some (a packed block, an item just locked or in use). A
 * chosen victim is in neither queue; the victims of a class's last pick that
 * are still resident are offered first at its next pick, unless one was hit
 * meanwhile or is in use: it then goes to M's head (it was accessed: S3-FIFO
 * would have promoted or reinserted it). An item a request holds when a scan
 * reaches it is treated as accessed: from S to M's head, in M to its head
 * without a decrement. A block-mate merged back unrequested (on_merged)
 * becomes S's next victim: in S, frequency 0, at S's cursor. An overwrite
 * (memcached unlinks the old item and links the new one at the head, on one
 * thread under the key's lock) keeps the old item's queue and counts as a
 * hit (frequency + 1), as a request for a cached object; so does the slab
 * mover's copy of an item.
 *
 * Per item, in the 6 spare bytes of memcached's item header after nkey: the
 * frequency (one byte), the queue (one byte) and a 4-byte tag, a hash of the
 * item's address, set by on_insert and cleared by on_remove. A scan only
 * counts an item whose tag matches: memcached links an item before it calls
 * on_insert (a fresh chunk holds old bytes; the slab mover's copy holds the
 * tag of the original's address). A scan passes such an item and leaves its
 * cursor on it, so that once tagged it is still ahead of the cursor.
 *
 * Locking. Class c's cursors, counts and chosen victims are guarded by a
 * mutex of the class's own; memcached's list by lru_locks[c | COLD_LRU]; the
 * ghost by a mutex of its own. The order is always LRU lock -> class mutex ->
 * ghost mutex, and no path takes one while holding one to its right:
 * - pick_victims and on_merged take the LRU lock, then the class mutex (they
 *   move items in the list), and add nothing to the ghost;
 * - on_remove takes only the class mutex, then the ghost's to add an S
 *   victim's key: memcached calls it under the item lock before it unlinks
 *   the item, sometimes with the LRU lock already held (its reclaim of
 *   expired items, the LRU crawler), which is the same order; it never takes
 *   the LRU lock. A cursor on the item moves to its head-side neighbour, read
 *   without the LRU lock, taken only if still linked (memcached clears
 *   ITEM_LINKED before calling on_remove, and every on_remove of the class
 *   is serialized on the class mutex, so a neighbour whose on_remove is done
 *   reads unlinked and one whose on_remove is to come will move the cursor in
 *   its turn); else the cursor goes back to the tail;
 * - on_insert takes the ghost mutex alone (the ghost hit), releases it, then
 *   the class mutex alone (memcached calls it after its own link, with no LRU
 *   lock held);
 * - on_access only stores the item's frequency byte (a relaxed read and
 *   store: a lost increment under a race costs one count); stats and
 *   metadata_bytes read counters atomically and take the ghost mutex alone.
 * A scan holds the class mutex from its first look at an item's ITEM_LINKED
 * to its last store of a cursor or a chosen victim, and never stores one on
 * an item that reads unlinked; so every item pointer the policy keeps is to
 * an item whose on_remove has not run, still in the list; no chunk it points
 * at is freed, and the page epoch does not concern the policy.
 *
 * Charged (metadata_bytes): per resident item the list links (16 bytes, as
 * lru is charged) and the 6 header bytes above; the ghost's ring of
 * fingerprints and its hash table as mapped (they grow by doubling, are
 * not shrunk, and a replaced one is unmapped: grown_table.h); the
 * per-class state. */
#include "memcached.h"
#include "ac_policy.h"
#include "ac_services.h"
#include "store/fp.h"
#include "lru_list.h"
#include "queue_items.h"
#include "ghost.h"
#include <stddef.h>
#include <string.h>

#define META_OFF (offsetof(item, nkey) + sizeof(uint8_t))
#define FREQ_OFF META_OFF
#define QUEUE_OFF (META_OFF + 1)
#define TAG_OFF (META_OFF + 2)
#define META_BYTES 6
typedef char s3fifo_meta_fits_in_header_padding[(offsetof(item, data) - META_OFF >= META_BYTES) ? 1 : -1];

/* the queue byte: chosen victims remember the queue they were taken from */
enum { Q_NONE = 0, Q_SMALL = 1, Q_MAIN = 2, Q_CHOSEN_S = 3, Q_CHOSEN_M = 4 };
#define FREQ_MAX 3
#define IN_USE_MAX 64                 /* items in use moved per pick, at most */

struct s3_class {
    pthread_mutex_t lock;             /* after lru_locks[c | COLD_LRU], before the ghost's */
    item *cur_s, *cur_m;              /* next item each queue's scan examines; NULL: the tail */
    uint64_t small, main;             /* objects in S and in M (chosen victims in neither) */
    struct qi_chosen chosen;          /* the last pick's victims still resident */
};
static struct s3_class classes[MAX_NUMBER_OF_SLAB_CLASSES];
static uint64_t resident_total;       /* S and M of every class (atomic): sizes the ghost */

struct s3fifo_options {
    unsigned small_pct;               /* ac_s3fifo_small */
    unsigned promote;                 /* ac_s3fifo_promote */
};
static struct s3fifo_options opt;
static unsigned small_pct = 10, promote = 1;

static uint64_t st_promoted, st_reinserted, st_victims_s, st_victims_m, st_reoffered, st_released, st_forced;
static uint64_t st_in_use, st_ghost_hits, st_ghost_added, st_overwrites, st_restarts, st_wraps;

#define COUNT(v, n) __atomic_add_fetch(&(v), (uint64_t)(n), __ATOMIC_RELAXED)

/* ---- per-item bytes ---- */

static inline uint8_t freq_of(item *it) {
    return __atomic_load_n((uint8_t *)it + FREQ_OFF, __ATOMIC_RELAXED);
}

static inline void freq_set(item *it, uint8_t f) {
    __atomic_store_n((uint8_t *)it + FREQ_OFF, f, __ATOMIC_RELAXED);
}

static inline uint8_t queue_of(item *it) {
    return *((uint8_t *)it + QUEUE_OFF);
}

static inline void queue_set(item *it, uint8_t q) {
    *((uint8_t *)it + QUEUE_OFF) = q;
}

static inline bool tagged(const item *it) {
    return qi_tagged(it, TAG_OFF);
}

/* G's size: M's share of the resident items */
static uint64_t ghost_bound(void) {
    return __atomic_load_n(&resident_total, __ATOMIC_RELAXED) * (100 - small_pct) / 100;
}

/* ---- the queues on memcached's list ---- */

/* class mutex held */
static void count_add(struct s3_class *c, uint8_t q, int d) {
    if (q == Q_SMALL)
        __atomic_store_n(&c->small, c->small + (uint64_t)(int64_t)d, __ATOMIC_RELAXED);
    else if (q == Q_MAIN)
        __atomic_store_n(&c->main, c->main + (uint64_t)(int64_t)d, __ATOMIC_RELAXED);
    else
        return;
    COUNT(resident_total, (int64_t)d);
}

/* Both locks held: it is about to move; a cursor on it goes to the next
 * item towards the head that is linked (never one leaving). */
static void cursors_off(struct s3_class *c, item *it) {
    if (c->cur_s != it && c->cur_m != it)
        return;
    item *next = qi_real_from(it->prev);
    while (next != NULL && !qi_linked(next))
        next = qi_real_from(next->prev);
    if (c->cur_s == it)
        c->cur_s = next;
    if (c->cur_m == it)
        c->cur_m = next;
}

/* Both locks held: it moves to M's head (the list's head). */
static void to_main_head(struct s3_class *c, unsigned int id, item *it) {
    item **heads = item_lru_ends(false), **tails = item_lru_ends(true);
    cursors_off(c, it);
    count_add(c, queue_of(it), -1);
    if (heads[id] != it) {
        ac_list_unlink(heads, tails, it);
        ac_list_link(heads, tails, it, false);
    }
    queue_set(it, Q_MAIN);
    count_add(c, Q_MAIN, +1);
}

/* Where a scan of a queue starts: its cursor if still in the list, else the tail. */
static item *scan_start(item *cur, unsigned int id) {
    if (cur != NULL && !qi_listed(cur, id))
        cur = NULL;
    return qi_real_from(cur != NULL ? cur : item_lru_ends(true)[id]);
}

/* Both locks held: the next victim from S, or NULL (none in S a scan can
 * take). The cursor ends on the victim (its on_remove moves it on), or on
 * the first item passed that on_insert had not tagged yet. */
static item *evict_small(struct s3_class *c, unsigned int id, int *busy) {
    item *x = scan_start(c->cur_s, id), *resume = NULL, *last = NULL;
    bool wrapped = c->cur_s == NULL;
    for (;;) {
        if (x == NULL) {              /* past the head: S items behind the cursor? */
            if (wrapped || c->small == 0)
                break;
            wrapped = true;
            COUNT(st_wraps, 1);
            x = qi_real_from(item_lru_ends(true)[id]);
            resume = NULL;
            continue;
        }
        item *prev = qi_real_from(x->prev);
        if (!qi_linked(x)) {          /* leaving */
            x = prev;
            continue;
        }
        if (!tagged(x)) {             /* linked, on_insert not done: it may become an S item */
            if (resume == NULL)
                resume = x;
        } else if (queue_of(x) == Q_SMALL) {
            bool used = qi_in_use(x) && *busy < IN_USE_MAX;
            if (freq_of(x) >= promote || used) {
                if (used) {
                    (*busy)++;
                    COUNT(st_in_use, 1);
                } else {
                    COUNT(st_promoted, 1);
                }
                to_main_head(c, id, x);   /* accessed while in S: to M */
                x = prev;
                continue;
            }
            count_add(c, Q_SMALL, -1);
            queue_set(x, Q_CHOSEN_S);
            c->cur_s = resume != NULL ? resume : x;
            return x;
        }
        last = x;
        x = prev;
    }
    c->cur_s = resume != NULL ? resume : last;
    return NULL;
}

/* Both locks held: the next victim from M, or NULL. */
static item *evict_main(struct s3_class *c, unsigned int id, int *busy) {
    item *x = scan_start(c->cur_m, id), *resume = NULL, *last = NULL;
    bool wrapped = c->cur_m == NULL;
    uint64_t limit = 4 * (c->main + c->small + 16), steps = 0;
    while (steps++ < 2 * limit) {
        if (x == NULL) {
            if (wrapped || c->main == 0)
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
        } else if (queue_of(x) == Q_MAIN) {
            uint8_t f = freq_of(x);
            if (qi_in_use(x) && *busy < IN_USE_MAX) {
                (*busy)++;
                COUNT(st_in_use, 1);
                to_main_head(c, id, x);   /* being read: to the head as it is */
                x = prev != NULL ? prev : x;
                continue;
            }
            if (f > 0 && steps < limit) {
                freq_set(x, (uint8_t)(f - 1));
                COUNT(st_reinserted, 1);
                to_main_head(c, id, x);
                x = prev != NULL ? prev : x;   /* it was the head: it is M's next again */
                continue;
            }
            if (f > 0)
                COUNT(st_forced, 1);
            freq_set(x, 0);
            count_add(c, Q_MAIN, -1);
            queue_set(x, Q_CHOSEN_M);
            c->cur_m = resume != NULL ? resume : x;
            return x;
        }
        last = x;
        x = prev;
    }
    c->cur_m = resume != NULL ? resume : last;
    return NULL;
}

/* ---- the hooks ---- */

/* An overwrite: the queue and frequency memcached's unlink of the old item
 * leaves for its link of the new one, on this thread, under the key's lock. */
static __thread struct {
    uint64_t fp;
    uint8_t queue, freq;
    bool set;
} handover;

static int s3fifo_init(void) {
    small_pct = opt.small_pct;
    promote = opt.promote;
    for (int i = 0; i < MAX_NUMBER_OF_SLAB_CLASSES; i++) {
        struct s3_class *c = &classes[i];
        pthread_mutex_init(&c->lock, NULL);
        c->cur_s = c->cur_m = NULL;
        c->small = c->main = 0;
        c->chosen.n = 0;
    }
    resident_total = 0;
    uint64_t *counters[] = { &st_promoted, &st_reinserted, &st_victims_s, &st_victims_m, &st_reoffered, &st_released,
                             &st_forced, &st_in_use, &st_ghost_hits, &st_ghost_added, &st_overwrites, &st_restarts,
                             &st_wraps };
    for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
        *counters[i] = 0;
    bool ok = ac_ghost_reset();
    if (!ok) {
        fprintf(stderr, "memcached-ac: s3fifo: no memory for the ghost queue\n");
        return -1;
    }
    return 0;
}

/* Linked at the head by memcached (item lock held, no LRU lock). */
static void s3fifo_on_insert(item *it) {
    unsigned int cls = ITEM_clsid(it), id = cls | COLD_LRU;
    if (cls >= MAX_NUMBER_OF_SLAB_CLASSES || it->slabs_clsid != id)
        return;                       /* not on the list the queues use */
    uint64_t fp = ac_key_fp(ITEM_key(it), it->nkey);
    uint8_t q = Q_SMALL, f = 0;
    if (handover.set && handover.fp == fp) {
        q = handover.queue;           /* an overwrite: a hit on the same object */
        f = handover.freq < FREQ_MAX ? handover.freq + 1 : FREQ_MAX;
        COUNT(st_overwrites, 1);
    } else if (ac_ghost_take(fp)) {   /* the ghost's mutex alone */
        q = Q_MAIN;
        COUNT(st_ghost_hits, 1);
    }
    handover.set = false;
    struct s3_class *c = &classes[cls];
    pthread_mutex_lock(&c->lock);
    freq_set(it, f);
    queue_set(it, q);
    qi_tag_set(it, TAG_OFF, true);
    count_add(c, q, +1);
    pthread_mutex_unlock(&c->lock);
}

static void s3fifo_on_access(item *it) {
    uint8_t f = freq_of(it);
    if (f < FREQ_MAX)
        freq_set(it, (uint8_t)(f + 1));
}

/* A read-back (a disk hit): on_insert put it in S (or M after a ghost hit)
 * at frequency 0, the miss; nothing more. */
static void s3fifo_on_fetched(item *it) {
    (void)it;
}

/* Before memcached unlinks it (item lock held, ITEM_LINKED already clear;
 * maybe under the list's LRU lock): the class mutex only. */
static void s3fifo_on_remove(item *it) {
    unsigned int cls = ITEM_clsid(it), id = cls | COLD_LRU;
    if (cls >= MAX_NUMBER_OF_SLAB_CLASSES || it->slabs_clsid != id)
        return;
    struct s3_class *c = &classes[cls];
    uint64_t fp = ac_key_fp(ITEM_key(it), it->nkey);
    bool to_ghost = false;
    pthread_mutex_lock(&c->lock);
    if (tagged(it)) {
        uint8_t q = queue_of(it);
        if (c->cur_s == it || c->cur_m == it) {
            /* its head-side neighbour, read without the LRU lock: taken only
             * if still linked (see the header) */
            item *next = qi_real_from(__atomic_load_n(&it->prev, __ATOMIC_RELAXED));
            if (next != NULL && !qi_linked(next)) {
                next = NULL;
                COUNT(st_restarts, 1);
            }
            if (c->cur_s == it)
                c->cur_s = next;
            if (c->cur_m == it)
                c->cur_m = next;
        }
        count_add(c, q, -1);
        handover.set = false;
        if (q == Q_CHOSEN_S || q == Q_CHOSEN_M) {
            qi_chosen_drop(&c->chosen, it);
            to_ghost = q == Q_CHOSEN_S;
        } else {
            handover.fp = fp;
            handover.queue = q;
            handover.freq = freq_of(it);
            handover.set = true;
        }
        qi_tag_set(it, TAG_OFF, false);
        queue_set(it, Q_NONE);
    }
    if (to_ghost) {                   /* class mutex -> ghost mutex */
        ac_ghost_add(fp, ghost_bound());
        COUNT(st_ghost_added, 1);
    }
    pthread_mutex_unlock(&c->lock);
}

/* A block-mate merged back unrequested (item lock held; memcached linked it
 * at the head and on_insert ran): S's next victim. */
static void s3fifo_on_merged(item *it) {
    unsigned int cls = ITEM_clsid(it), id = cls | COLD_LRU;
    if (cls >= MAX_NUMBER_OF_SLAB_CLASSES || it->slabs_clsid != id)
        return;
    struct s3_class *c = &classes[cls];
    item **heads = item_lru_ends(false), **tails = item_lru_ends(true);
    pthread_mutex_lock(&lru_locks[id]);
    pthread_mutex_lock(&c->lock);
    uint8_t q = queue_of(it);
    if (tagged(it) && qi_listed(it, id) && (q == Q_SMALL || q == Q_MAIN)) {
        cursors_off(c, it);
        count_add(c, q, -1);
        item *at = c->cur_s != NULL && qi_listed(c->cur_s, id) ? c->cur_s : NULL;
        ac_list_unlink(heads, tails, it);
        qi_link_before(heads, tails, id, at, it);   /* on the tail side of the cursor (NULL: the tail) */
        c->cur_s = it;
        queue_set(it, Q_SMALL);
        freq_set(it, 0);
        count_add(c, Q_SMALL, +1);
    }
    pthread_mutex_unlock(&c->lock);
    pthread_mutex_unlock(&lru_locks[id]);
}

static int s3fifo_pick_victims(unsigned int clsid, item **out, int max) {
    if (clsid >= MAX_NUMBER_OF_SLAB_CLASSES)
        return 0;
    if (max > QI_CHOSEN_MAX)
        max = QI_CHOSEN_MAX;
    unsigned int id = clsid | COLD_LRU;
    struct s3_class *c = &classes[clsid];
    int n = 0, busy = 0;
    pthread_mutex_lock(&lru_locks[id]);
    pthread_mutex_lock(&c->lock);
    /* the last pick's victims the core left: offered again unless hit or in use */
    item *prev_chosen[QI_CHOSEN_MAX];
    int nprev = qi_chosen_take(&c->chosen, prev_chosen);
    for (int i = 0; i < nprev; i++) {
        item *p = prev_chosen[i];
        if (n < max && freq_of(p) == 0 && !qi_in_use(p)) {
            out[n++] = p;
            COUNT(st_reoffered, 1);
        } else {
            to_main_head(c, id, p);
            COUNT(st_released, 1);
        }
    }
    while (n < max) {
        bool small_first = c->small > 0 && c->small * 100 >= (uint64_t)small_pct * (c->small + c->main);
        item *x = small_first ? evict_small(c, id, &busy) : evict_main(c, id, &busy);
        if (x != NULL) {
            COUNT(*(small_first ? &st_victims_s : &st_victims_m), 1);
        } else {
            x = small_first ? evict_main(c, id, &busy) : evict_small(c, id, &busy);
            if (x == NULL)
                break;
            COUNT(*(small_first ? &st_victims_m : &st_victims_s), 1);
        }
        out[n++] = x;
    }
    qi_chosen_keep(&c->chosen, out, n);
    pthread_mutex_unlock(&c->lock);
    pthread_mutex_unlock(&lru_locks[id]);
    return n;
}

static size_t s3fifo_metadata_bytes(void) {
    STATS_LOCK();
    size_t n = stats_state.curr_items;
    STATS_UNLOCK();
    return n * (2 * sizeof(void *) + META_BYTES) + ac_ghost_bytes() + sizeof(classes);
}

static void s3fifo_stats(ADD_STAT add_stats, void *c) {
    uint64_t s = 0, m = 0;
    for (int i = 0; i < MAX_NUMBER_OF_SLAB_CLASSES; i++) {
        s += __atomic_load_n(&classes[i].small, __ATOMIC_RELAXED);
        m += __atomic_load_n(&classes[i].main, __ATOMIC_RELAXED);
    }
    uint32_t live = ac_ghost_live();
    APPEND_STAT("s3fifo_small_pct", "%u", small_pct);
    APPEND_STAT("s3fifo_promote", "%u", promote);
    APPEND_STAT("s3fifo_small_items", "%llu", (unsigned long long)s);
    APPEND_STAT("s3fifo_main_items", "%llu", (unsigned long long)m);
    APPEND_STAT("s3fifo_ghost_items", "%u", live);
    APPEND_STAT("s3fifo_ghost_bytes", "%zu", ac_ghost_bytes());
#define S3_STAT(name, v) APPEND_STAT(name, "%llu", (unsigned long long)__atomic_load_n(&v, __ATOMIC_RELAXED))
    S3_STAT("s3fifo_ghost_added", st_ghost_added);
    S3_STAT("s3fifo_ghost_hits", st_ghost_hits);
    S3_STAT("s3fifo_overwrites", st_overwrites);
    S3_STAT("s3fifo_promoted", st_promoted);
    S3_STAT("s3fifo_reinserted", st_reinserted);
    S3_STAT("s3fifo_victims_small", st_victims_s);
    S3_STAT("s3fifo_victims_main", st_victims_m);
    S3_STAT("s3fifo_reoffered", st_reoffered);
    S3_STAT("s3fifo_released", st_released);
    S3_STAT("s3fifo_forced", st_forced);
    S3_STAT("s3fifo_passed_in_use", st_in_use);
    S3_STAT("s3fifo_wraps", st_wraps);
    S3_STAT("s3fifo_restarts", st_restarts);
#undef S3_STAT
}

static const struct ac_opt s3fifo_opts[] = {
    { .key = "ac_s3fifo_small", .type = AC_T_COUNT, AC_FIELD(struct s3fifo_options, small_pct), .min = 1, .max = 50,
      .noun = "a percentage", .note = "(of each class's items; the paper: 10)",
      .def = "10", .def_is_value = true,
      .help = "size of the small FIFO, percent of the cache (S3-FIFO: 10)" },
    { .key = "ac_s3fifo_promote", .type = AC_T_COUNT, AC_FIELD(struct s3fifo_options, promote), .min = 1, .max = 3,
      .noun = "a count of hits", .note = "(1: accessed again while in the small FIFO; 2: twice)",
      .def = "1", .def_is_value = true,
      .help = "hits an object needs in the small FIFO to move to the main one (1: freq > 0, 2: freq > 1)" },
};
static const struct ac_opt_table s3fifo_options = AC_OPT_TABLE("policy s3fifo", s3fifo_opts, &opt);

const struct ac_policy_ops ac_policy_s3fifo = {
    .name = "s3fifo",
    .summary = "S3-FIFO: small, main and ghost FIFOs per slab class (Yang et al. SOSP 2023)",
    .default_tier = "blocks",
    .tier_shapes = AC_CAP_SPILL,
    .options = { &s3fifo_options },
    .fetch_on_read = true,
    .init = s3fifo_init,
    .on_insert = s3fifo_on_insert,
    .on_access = s3fifo_on_access,
    .on_fetched = s3fifo_on_fetched,
    .on_remove = s3fifo_on_remove,
    .on_merged = s3fifo_on_merged,
    .pick_victims = s3fifo_pick_victims,
    .metadata_bytes = s3fifo_metadata_bytes,
    .stats = s3fifo_stats,
};
