/* Policy "lru": exact LRU anti-caching as in H-Store (DeBrabant et al., VLDB
 * 2013 §3.1). Each slab class keeps its items on memcached's own doubly linked
 * list (the item header's prev/next, 16 bytes per item); every access moves the
 * item to the MRU end, without memcached's 60-second rule. With ac_lru_sample=N
 * only 1 in N accesses updates the order (H-Store's aLRU with alpha = 1/N, per
 * worker thread, deterministic). Victims are taken from the LRU end; items a
 * block merge brings back without a request go there too. */
#include "memcached.h"
#include "ac_policy.h"
#include "ac_services.h"
#include "lru_list.h"

struct lru_options {
    unsigned sample;                  /* ac_lru_sample */
};
static struct lru_options opt;
static unsigned sample;
static __thread unsigned tick;

static int lru_init(void) {
    sample = opt.sample;
    return 0;
}

static void lru_on_insert(item *it) {
    (void)it;          /* memcached links new items at the MRU end */
}

/* Takes a class's LRU lock for a move. Every access moves its item under it
 * and holds it for a few pointer writes, so with several worker threads the
 * lock is often taken but never for long: a waiter spins a little before it
 * sleeps on the mutex, since a sleep and a wake-up (two system calls, one on
 * each side) cost far more than the wait (at 2 driver threads in RAM they
 * were most of lru's cost against none). */
static void lru_lock(pthread_mutex_t *m) {
    for (int i = 0; i < 64; i++) {
        if (pthread_mutex_trylock(m) == 0)
            return;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ __volatile__("yield");
#endif
    }
    pthread_mutex_lock(m);
}

/* Moves a linked item to the MRU end (head) or the LRU end (tail) of its list. */
static void lru_move(item *it, bool to_tail) {
    unsigned int id = it->slabs_clsid;
    item **heads = item_lru_ends(false), **tails = item_lru_ends(true);
    /* The items whose links the move rewrites (its neighbours and the end it
     * goes to) are fetched for writing before the lock is taken, so that the
     * lock is held for the writes, not for their cache misses. Read without
     * the lock, they are hints: a stale one costs a useless prefetch (which
     * never faults). */
    item *near[3] = { __atomic_load_n(&it->prev, __ATOMIC_RELAXED), __atomic_load_n(&it->next, __ATOMIC_RELAXED),
                      __atomic_load_n(to_tail ? &tails[id] : &heads[id], __ATOMIC_RELAXED) };
    for (int i = 0; i < 3; i++)
        if (near[i] != NULL)
            __builtin_prefetch(near[i], 1);
    lru_lock(&lru_locks[id]);
    if ((it->it_flags & ITEM_LINKED) && (to_tail ? tails[id] : heads[id]) != it) {
        ac_list_unlink(heads, tails, it);
        ac_list_link(heads, tails, it, to_tail);
    }
    pthread_mutex_unlock(&lru_locks[id]);
}

static void lru_on_access(item *it) {
    if (sample > 1 && ++tick % sample != 0)
        return;
    it->time = current_time;
    lru_move(it, false);
}

/* A block-mate merged back unrequested goes to the LRU end (H-Store, DeBrabant et al.
 * VLDB 2013 §3.4): the next spill of its class takes it first unless it is asked for. */
static void lru_on_merged(item *it) {
    lru_move(it, true);
}

static void lru_on_remove(item *it) {
    (void)it;
}

/* Items in use by a request (a reference besides the hash table's) cannot be
 * spilled now; they are passed over, up to this many, so that items a request
 * holds at the tail (a multi-get whose block merges pushed its own earlier
 * keys there) do not hide the spillable ones above them. */
#define MAX_PASSED_OVER 4096

static int lru_pick_victims(unsigned int clsid, item **out, int max) {
    unsigned int id = clsid | COLD_LRU;
    int n = 0, passed = 0;
    pthread_mutex_lock(&lru_locks[id]);
    for (item *it = item_lru_ends(true)[id]; it != NULL && n < max; it = it->prev) {
        if (it->nbytes == 0 && it->nkey == 0 && it->it_flags == 1)
            continue;  /* an LRU crawler's placeholder */
        if (__atomic_load_n(&it->refcount, __ATOMIC_RELAXED) > 1 && passed < MAX_PASSED_OVER) {
            passed++;
            continue;
        }
        out[n++] = it;
    }
    pthread_mutex_unlock(&lru_locks[id]);
    return n;
}

static size_t lru_metadata_bytes(void) {
    /* the prev/next links of every resident item */
    STATS_LOCK();
    size_t n = stats_state.curr_items;
    STATS_UNLOCK();
    return n * 2 * sizeof(void *);
}

static void lru_stats(ADD_STAT add_stats, void *c) {
    APPEND_STAT("lru_sample", "%u", sample);
}

static const struct ac_opt lru_opts[] = {
    { .key = "ac_lru_sample", .type = AC_T_COUNT, AC_FIELD(struct lru_options, sample), .min = 1, .max = 1000000,
      .noun = "an integer N", .note = "(order updated on 1 in N accesses)",
      .def = "1", .def_is_value = true,
      .help = "update the order on 1 in N accesses" },
};
static const struct ac_opt_table lru_options = AC_OPT_TABLE("policy lru", lru_opts, &opt);

const struct ac_policy_ops ac_policy_lru = {
    .name = "lru",
    .summary = "exact LRU per slab class (H-Store anti-caching)",
    .default_tier = "blocks",
    .tier_shapes = AC_CAP_SPILL,
    .options = { &lru_options },
    .fetch_on_read = true,
    .init = lru_init,
    .on_insert = lru_on_insert,
    .on_access = lru_on_access,
    .on_remove = lru_on_remove,
    .on_merged = lru_on_merged,
    .pick_victims = lru_pick_victims,
    .metadata_bytes = lru_metadata_bytes,
    .stats = lru_stats,
};
