/* Policy "lru": exact LRU anti-caching as in H-Store (DeBrabant et al., VLDB
 * 2013 §3.1). Each slab class keeps its items on memcached's own doubly linked
 * list (the item header's prev/next, 16 bytes per item); every access moves the
 * item to the MRU end, without memcached's 60-second rule. With ac_lru_sample=N
 * only 1 in N accesses updates the order (H-Store's aLRU with alpha = 1/N, per
 * worker thread, deterministic). Victims are taken from the LRU end; items a
 * block merge brings back without a request go there too.
 *
 * Batched moves (ac_lru_batch=B, B > 0; BP-Wrapper, Ding, Jiang & Zhang, ICDE
 * 2009): a worker records its accesses in a buffer of its own and applies them
 * to the order in access order, each class's lock taken once per run of
 * entries of that class, when the buffer holds B, before the thread links an
 * item (its link is newer than every buffered access: the item moves to the
 * MRU end again after them), before it merges one to the LRU end and before it
 * picks victims. So the order a thread sees when it links, merges or picks
 * is exact LRU over every access it made; what it does not see yet are other
 * threads' accesses still in their buffers: at most B per thread, the newest
 * ones. With one worker thread the order at every pick equals ac_lru_batch=0's
 * (memcached/tests/test_lru_batch.py checks the hit counts are equal), unless
 * another thread linked an item meanwhile (the fetch threads of driver depth
 * > 1; the slab mover's copies of items of a page it moves). B = 0 moves at
 * each access (strict).
 * A buffered entry is a hint: it is applied only if, under its class's lock,
 * the item is still linked in that class's list and has the CAS it had when
 * accessed (a chunk freed and used by another item meanwhile is skipped; with
 * CAS off (-C) such an item moves instead, at most B per thread). It is read
 * only while the page epoch it was taken at holds, under a class lock that
 * the epoch's move waits for (lru_epoch_moved), so its page cannot be freed
 * under it. */
#include "memcached.h"
#include "ac_policy.h"
#include "ac_services.h"
#include "lru_list.h"

struct lru_options {
    unsigned sample;                  /* ac_lru_sample */
    unsigned batch;                   /* ac_lru_batch */
};
static struct lru_options opt;
static unsigned sample, batch;

#define LRU_BATCH_MAX 1024
struct lru_pending {
    item *it;
    uint64_t cas;
    unsigned int id;                  /* its class list when accessed */
};
static __thread struct {
    unsigned tick;                    /* ac_lru_sample's count */
    unsigned n;                       /* buffered accesses */
    unsigned epoch;                   /* page epoch when the first was buffered */
    struct lru_pending e[LRU_BATCH_MAX];
} tl;
static uint64_t batches, batched, batch_skipped;   /* atomic */

static int lru_init(void) {
    sample = opt.sample;
    batch = opt.batch;
    return 0;
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

/* Under lru_locks[id]: the buffered item is still in the list of class id.
 * A chunk that is free or allocated but not linked yet has prev NULL and is
 * no head (memcached sets prev = 0 on both); links change under this lock. */
static bool lru_listed(item *it, unsigned int id, item **heads) {
    return (it->it_flags & ITEM_LINKED) && it->slabs_clsid == id && (it->prev != NULL || heads[id] == it);
}

/* Applies the calling thread's buffered accesses in order (batched mode). */
static void lru_apply(void) {
    unsigned n = tl.n;
    if (n == 0)
        return;
    tl.n = 0;
    item **heads = item_lru_ends(false), **tails = item_lru_ends(true);
    unsigned skipped = 0;
    unsigned int held = 0;
    bool locked = false, stale = false;
    for (unsigned i = 0; i < n; i++) {
        struct lru_pending *p = &tl.e[i];
        if (!locked || held != p->id) {
            if (locked)
                pthread_mutex_unlock(&lru_locks[held]);
            held = p->id;
            lru_lock(&lru_locks[held]);
            locked = true;
            /* the page epoch moved since the first entry: their pages may be
             * gone (they are freed once lru_epoch_moved has had every lock) */
            stale = ac_page_epoch() != tl.epoch;
        }
        item *it = p->it;
        if (stale || !lru_listed(it, held, heads) || ITEM_get_cas(it) != p->cas) {
            skipped++;
            continue;
        }
        if (heads[held] != it) {
            ac_list_unlink(heads, tails, it);
            ac_list_link(heads, tails, it, false);
        }
    }
    if (locked)
        pthread_mutex_unlock(&lru_locks[held]);
    __atomic_add_fetch(&batches, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&batched, n, __ATOMIC_RELAXED);
    if (skipped > 0)
        __atomic_add_fetch(&batch_skipped, skipped, __ATOMIC_RELAXED);
}

static void lru_on_access(item *it) {
    if (sample > 1 && ++tl.tick % sample != 0)
        return;
    it->time = current_time;
    if (batch == 0) {
        lru_move(it, false);
        return;
    }
    if (tl.n == 0)
        tl.epoch = ac_page_epoch();
    tl.e[tl.n++] = (struct lru_pending){ it, ITEM_get_cas(it), it->slabs_clsid };
    if (tl.n >= batch)
        lru_apply();
}

/* memcached links new items at the MRU end; with accesses buffered before it,
 * it goes there again after them (its link is the newest event). */
static void lru_on_insert(item *it) {
    if (tl.n > 0) {
        lru_apply();
        lru_move(it, false);
    }
}

/* A block-mate merged back unrequested goes to the LRU end (H-Store, DeBrabant et al.
 * VLDB 2013 §3.4): the next spill of its class takes it first unless it is asked for. */
static void lru_on_merged(item *it) {
    lru_apply();
    lru_move(it, true);
}

/* The page epoch moved (ac_budget.c, before released pages are freed): a
 * thread applying entries of the old epoch holds a class lock while it reads
 * them; having had every lock once, none still reads them. */
static void lru_epoch_moved(void) {
    if (batch == 0)
        return;
    for (int id = 0; id < POWER_LARGEST; id++) {
        pthread_mutex_lock(&lru_locks[id]);
        pthread_mutex_unlock(&lru_locks[id]);
    }
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
    lru_apply();                      /* the thread's own accesses first */
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
    APPEND_STAT("lru_batch", "%u", batch);
    APPEND_STAT("lru_batches", "%llu", (unsigned long long)__atomic_load_n(&batches, __ATOMIC_RELAXED));
    APPEND_STAT("lru_batched", "%llu", (unsigned long long)__atomic_load_n(&batched, __ATOMIC_RELAXED));
    APPEND_STAT("lru_batch_skipped", "%llu", (unsigned long long)__atomic_load_n(&batch_skipped, __ATOMIC_RELAXED));
}

static const struct ac_opt lru_opts[] = {
    { .key = "ac_lru_sample", .type = AC_T_COUNT, AC_FIELD(struct lru_options, sample), .min = 1, .max = 1000000,
      .noun = "an integer N", .note = "(order updated on 1 in N accesses)",
      .def = "1", .def_is_value = true,
      .help = "update the order on 1 in N accesses" },
    { .key = "ac_lru_batch", .type = AC_T_COUNT, AC_FIELD(struct lru_options, batch), .min = 0, .max = LRU_BATCH_MAX,
      .noun = "a count of accesses", .note = "(0: each access moves its item at once, under the class lock)",
      .def = "32", .def_is_value = true,
      .help = "accesses a worker buffers before it moves their items, in order, under the class locks" },
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
    .epoch_moved = lru_epoch_moved,
    .metadata_bytes = lru_metadata_bytes,
    .stats = lru_stats,
};
