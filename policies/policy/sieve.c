/* Policy "sieve": SIEVE (Zhang, Yang, Yue, Vigfusson, Rashmi, "SIEVE is
 * Simpler than LRU: an Efficient Turn-Key Eviction Algorithm for Web Caches",
 * NSDI 2024, §3 and Algorithm 1), behind the same spill path as "lru", over
 * any spilling tier (blocks by default). SIEVE has no parameter.
 *
 * - The queue is memcached's own per-class list (head = newest, tail =
 *   oldest): memcached links a new item at the head and, with anti-caching,
 *   never moves it on an access, so the list is SIEVE's FIFO. SIEVE never
 *   moves an item either (a pick gathers its victims at the hand, and merged
 *   block-mates go there, below; memcached itself relinks an item at the head
 *   on an add of an existing key or an incr/decr more than 60 s after its
 *   last such move, do_item_update).
 * - A visited bit per item, one byte in the spare bytes of memcached's item
 *   header (after nkey, where alru keeps its clock): cleared on insert, set on
 *   a hit (a relaxed byte store, no lock). A spilled item a request reads back
 *   is a miss for SIEVE (Algorithm 1 inserts a missed object unvisited):
 *   on_fetched leaves the bit on_insert cleared, where on_access would set it.
 * - One hand per class, on the next item it examines (NULL: the tail). To name a
 *   victim the hand moves from the tail towards the head; it clears the bit of
 *   each visited item it passes, and the first unvisited item is the victim;
 *   the hand then rests on the item after it (paper: hand = victim's prev)
 *   and goes on from there at the next eviction. At the head it wraps to the
 *   tail. When every item is visited the first pass clears them all and the
 *   second finds a victim; a third traversal (only reached if accesses keep
 *   setting bits meanwhile) takes the items whatever their bits, so victims
 *   are always named while the class holds an item no request is using.
 *
 * In this system a victim is a hint the core re-validates and spills, not an
 * item SIEVE drops at once: the core may leave some (a packed block, an item
 * just locked or in use). So a pick gathers its victims where the hand
 * stands: they are moved, in the order chosen, to just before the next item
 * the hand would examine, and the hand is put on the first of them. As the
 * core unlinks each one the hand moves on to the next (as SIEVE's hand,
 * which stays where it evicted), and ends on the item after the last; a
 * victim the core left is where the hand stands, so the next pick examines
 * it first: offered again if still unvisited (SIEVE would have evicted it),
 * passed (its bit cleared) if hit meanwhile. Items a request holds are
 * passed over by the hand with their bit left as it is.
 *
 * Merged block-mates (on_merged: brought back by a block merge, not asked
 * for) go where the next victim is taken: at the hand, unvisited. An
 * overwrite is an unlink and a new item at the head (unvisited), as lru
 * treats it as a new most recent item.
 *
 * Locking: each class has a mutex of its own for its hand, taken by
 * on_remove, pick_victims and on_merged. The list is memcached's, guarded by
 * lru_locks[c | COLD_LRU]: pick_victims and on_merged take that lock first,
 * then the class's (the order is always LRU lock -> class lock). on_remove
 * takes only the class's: memcached calls it under the item lock before it
 * unlinks the item, sometimes with the LRU lock already held (its reclaim of
 * expired items, the crawler). When the item it removes is the hand, the
 * hand moves to the item's head-side neighbour, read without the LRU lock:
 * that neighbour is taken only if it is still linked (memcached clears
 * ITEM_LINKED before calling on_remove, and every on_remove is serialized on
 * the class mutex, so a neighbour whose on_remove is done reads unlinked, and
 * one whose on_remove is to come will move the hand on in its turn); if that
 * neighbour is leaving at the same moment (rare), the hand goes back to the
 * tail. A pick holds the class mutex
 * from its first look at an item's ITEM_LINKED to its store of the hand, and
 * never puts the hand on an item that reads unlinked; it re-validates the
 * hand under the LRU lock (linked, in this class's list: lru's test) before
 * it walks from it. So the hand always points at an item whose on_remove has
 * not run, still in the list; no chunk it points at is freed, and the page
 * epoch does not concern the policy. on_insert and on_access only store the
 * item's own bit (a relaxed byte store).
 *
 * Charged (metadata_bytes): the list links (16 bytes per item, as lru) and
 * the byte that holds the visited bit, per resident item, and the per-class
 * hands and their mutexes. */
#include "memcached.h"
#include "ac_policy.h"
#include "ac_services.h"
#include "lru_list.h"
#include "queue_items.h"
#include "victim_checks.h"
#include <stddef.h>
#include <string.h>

/* the visited byte lives in the header padding after nkey (the byte alru's
 * clock starts at: one policy runs at a time) */
#define VISITED_OFF (offsetof(item, nkey) + sizeof(uint8_t))
typedef char sieve_visited_fits_in_header_padding[(offsetof(item, data) - VISITED_OFF >= 1) ? 1 : -1];

struct sieve_class {
    pthread_mutex_t lock;             /* the hand's (after the list's LRU lock, if both) */
    item *hand;                       /* the next item the hand examines; NULL: the tail */
};
static struct sieve_class classes[MAX_NUMBER_OF_SLAB_CLASSES];
static uint64_t st_examined, st_cleared, st_victims, st_wraps, st_forced, st_passed, st_restarts;

static inline uint8_t *visited_byte(item *it) {
    return (uint8_t *)it + VISITED_OFF;
}

static inline bool visited(item *it) {
    return __atomic_load_n(visited_byte(it), __ATOMIC_RELAXED) != 0;
}

static inline void set_visited(item *it, uint8_t v) {
    __atomic_store_n(visited_byte(it), v, __ATOMIC_RELAXED);
}

static void list_unlink(unsigned int id, item *it) {
    (void)id;          /* a listed item's slabs_clsid is its list (qi_listed()) */
    ac_list_unlink(item_lru_ends(false), item_lru_ends(true), it);
    it->prev = it->next = NULL;
}

/* Links it on the tail side of at (between at and at->next); at NULL: at the head. */
static void link_tail_side(unsigned int id, item *at, item *it) {
    item **heads = item_lru_ends(false), **tails = item_lru_ends(true);
    if (at == NULL) {
        it->prev = NULL;
        it->next = heads[id];
        if (it->next)
            it->next->prev = it;
        heads[id] = it;
    } else {
        it->prev = at;
        it->next = at->next;
        if (at->next)
            at->next->prev = it;
        else
            tails[id] = it;
        at->next = it;
    }
    if (tails[id] == NULL)
        tails[id] = it;
}

static int sieve_init(void) {
    for (int c = 0; c < MAX_NUMBER_OF_SLAB_CLASSES; c++) {
        pthread_mutex_init(&classes[c].lock, NULL);
        classes[c].hand = NULL;
    }
    return 0;
}

static void sieve_on_insert(item *it) {
    set_visited(it, 0);
}

static void sieve_on_access(item *it) {
    if (!visited(it))
        set_visited(it, 1);
}

/* A read-back (a disk hit): linked unvisited by on_insert, it stays so. */
static void sieve_on_fetched(item *it) {
    (void)it;
}

/* Before memcached unlinks it (item lock held, ITEM_LINKED already clear;
 * maybe under the list's LRU lock): the hand on it moves on to the next item
 * towards the head, where SIEVE's hand goes after an item it examined. */
static void sieve_on_remove(item *it) {
    unsigned int cls = ITEM_clsid(it);
    if (cls >= MAX_NUMBER_OF_SLAB_CLASSES || it->slabs_clsid != (cls | COLD_LRU))
        return;                       /* not on the list the hand walks */
    struct sieve_class *c = &classes[cls];
    /* always under the lock: a pick holds it from its first look at an item's
     * ITEM_LINKED to its last store of the hand, so either this runs first and
     * the pick sees the item unlinked, or after it and sees the hand on it */
    pthread_mutex_lock(&c->lock);
    if (c->hand == it) {
        item *next = qi_real_from(__atomic_load_n(&it->prev, __ATOMIC_RELAXED));
        if (next != NULL && !qi_linked(next)) {
            next = NULL;              /* leaving too (its on_remove is done): back to the tail */
            __atomic_add_fetch(&st_restarts, 1, __ATOMIC_RELAXED);
        }
        c->hand = next;
    }
    pthread_mutex_unlock(&c->lock);
}

/* A block-mate merged back unrequested (item lock held; memcached linked it
 * at the head): it moves to where the hand stands and the hand onto it,
 * unvisited: the hand takes it first. */
static void sieve_on_merged(item *it) {
    unsigned int cls = ITEM_clsid(it), id = cls | COLD_LRU;
    if (cls >= MAX_NUMBER_OF_SLAB_CLASSES || it->slabs_clsid != id)
        return;
    struct sieve_class *c = &classes[cls];
    item **tails = item_lru_ends(true);
    pthread_mutex_lock(&lru_locks[id]);
    pthread_mutex_lock(&c->lock);
    set_visited(it, 0);
    item *h = c->hand;
    if (h != NULL && !qi_listed(h, id))
        h = NULL;
    if (qi_listed(it, id) && h != it) {
        list_unlink(id, it);
        if (h != NULL)
            link_tail_side(id, h, it);            /* examined just before h */
        else
            link_tail_side(id, tails[id], it);    /* the hand starts at the tail */
        c->hand = it;
    }
    pthread_mutex_unlock(&c->lock);
    pthread_mutex_unlock(&lru_locks[id]);
}

static int sieve_pick_victims(unsigned int clsid, item **out, int max) {
    if (clsid >= MAX_NUMBER_OF_SLAB_CLASSES)
        return 0;
    unsigned int id = clsid | COLD_LRU;
    struct sieve_class *c = &classes[clsid];
    item **tails = item_lru_ends(true);
    int n = 0;
    uint64_t examined = 0, cleared = 0, wraps = 0, forced = 0, passed = 0;
    pthread_mutex_lock(&lru_locks[id]);
    pthread_mutex_lock(&c->lock);
    item *h = c->hand;
    if (h != NULL && !qi_listed(h, id))
        h = NULL;
    item *it = qi_real_from(h != NULL ? h : tails[id]);
    /* traversals begun from the tail: the first counts when the hand starts there */
    unsigned laps = h == NULL ? 1 : 0;
    while (n < max) {
        if (it == NULL) {             /* past the head: wrap to the tail */
            if (laps >= 3)
                break;
            laps++;
            wraps++;
            it = qi_real_from(tails[id]);
            if (it == NULL)
                break;                /* no item at all */
            continue;
        }
        item *prev = it->prev;
        examined++;
        if (qi_in_use(it) || !qi_linked(it)) {
            passed++;                 /* a request holds it (or it is leaving): it stays, bit as it is */
        } else if (visited(it) && laps < 3) {
            set_visited(it, 0);       /* a second chance */
            cleared++;
        } else if (!ac_chosen(it, out, n)) {
            if (visited(it)) {
                set_visited(it, 0);
                forced++;             /* accesses kept setting bits: taken anyway */
            }
            out[n++] = it;
        }
        it = qi_real_from(prev);
    }
    /* it: the next item the hand examines (NULL: past the head). The victims
     * go just before it, in order, and the hand onto the first of them: from
     * the tail, out[0], ..., out[n-1], it. */
    while (it != NULL && (ac_chosen(it, out, n) || !qi_linked(it)))
        it = qi_real_from(it->prev);     /* never onto an item leaving (its on_remove may be done) */
    for (int i = 0; i < n; i++)
        list_unlink(id, out[i]);
    item *at = it;
    for (int i = n - 1; i >= 0; i--) {
        link_tail_side(id, at, out[i]);
        at = out[i];
    }
    c->hand = n > 0 ? out[0] : it;
    pthread_mutex_unlock(&c->lock);
    pthread_mutex_unlock(&lru_locks[id]);
    __atomic_add_fetch(&st_examined, examined, __ATOMIC_RELAXED);
    __atomic_add_fetch(&st_cleared, cleared, __ATOMIC_RELAXED);
    __atomic_add_fetch(&st_victims, (uint64_t)n, __ATOMIC_RELAXED);
    __atomic_add_fetch(&st_wraps, wraps, __ATOMIC_RELAXED);
    __atomic_add_fetch(&st_forced, forced, __ATOMIC_RELAXED);
    __atomic_add_fetch(&st_passed, passed, __ATOMIC_RELAXED);
    return n;
}

static size_t sieve_metadata_bytes(void) {
    /* the list links and the visited byte of every resident item, the hands */
    STATS_LOCK();
    size_t n = stats_state.curr_items;
    STATS_UNLOCK();
    return n * (2 * sizeof(void *) + 1) + sizeof(classes);
}

static void sieve_stats(ADD_STAT add_stats, void *c) {
#define SIEVE_STAT(name, v) APPEND_STAT(name, "%llu", (unsigned long long)__atomic_load_n(&v, __ATOMIC_RELAXED))
    SIEVE_STAT("sieve_examined", st_examined);
    SIEVE_STAT("sieve_cleared", st_cleared);
    SIEVE_STAT("sieve_victims", st_victims);
    SIEVE_STAT("sieve_wraps", st_wraps);
    SIEVE_STAT("sieve_forced", st_forced);
    SIEVE_STAT("sieve_passed_in_use", st_passed);
    SIEVE_STAT("sieve_restarts", st_restarts);
#undef SIEVE_STAT
}

const struct ac_policy_ops ac_policy_sieve = {
    .name = "sieve",
    .summary = "SIEVE: a FIFO per slab class, visited bits and a moving hand (Zhang et al. NSDI 2024)",
    .default_tier = "blocks",
    .tier_shapes = AC_CAP_SPILL,
    .fetch_on_read = true,
    .init = sieve_init,
    .on_insert = sieve_on_insert,
    .on_access = sieve_on_access,
    .on_fetched = sieve_on_fetched,
    .on_remove = sieve_on_remove,
    .on_merged = sieve_on_merged,
    .pick_victims = sieve_pick_victims,
    .metadata_bytes = sieve_metadata_bytes,
    .stats = sieve_stats,
};
