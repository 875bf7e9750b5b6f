/* The budget of equal provisioning and the pages borrowed past it.
 *
 * Book-keeping that grows with the data (the evicted table holds spilled
 * items only) is charged against -m as it grows: one thread (the room thread)
 * lowers the slab allocator's limit to -m minus everything charged
 * (ac_charged_bytes) whenever that moved by a quarter page or more, and while
 * the slab memory is over the limit it moves pages to memcached's global pool
 * through the slab mover (slabs_reassign(src, 0): their items are copied or
 * spilled, ac_rescue), where memory_release frees them. It raises the limit
 * again when the book-keeping shrinks.
 *
 * The same thread repays pages that allocations borrowed (ac_room.c: a class
 * with nothing it could spill may take one page past the limit,
 * ac_borrow_alloc): while pages are owed it moves the first page of another
 * class to the pool, so a page moves from the class that can spare one to the
 * class that needs one, only in the order that never blocks. At most
 * ac_borrow_pages pages are owed at a time (pages_owed). memcached's own
 * automover never does this for us: slab_automove.c moves pages only toward a
 * class with evictions ("youngest_evicting"), and anti-caching evicts nothing.
 *
 * Pages memcached releases are freed only after the page epoch moved on under
 * the spill lock (policies keep item pointers as hints; ac_services.h), to the
 * policy's own page source when it has one (ac_policy.h page_release).
 * Uses: ac_options, ac_state. */
#include "memcached.h"
#include "ac_internal.h"
#include <stdlib.h>
#include <time.h>

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    unsigned owed;               /* pages borrowed, not yet repaid */
    unsigned reserved;           /* borrowings under way (counted against the cap) */
    void *released;              /* pages memcached released, to free (ac_page_free) */
    int last_borrower;           /* class that borrowed last: not the first to pay */
    bool enabled, started, stop;
    pthread_t tid;
} repay = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, NULL, -1, false, false, false, 0 };

static void nap_us(unsigned us) {
    struct timespec ts = { 0, (long)us * 1000L };
    nanosleep(&ts, NULL);
}

/* do_slabs_newslab (slabs_lock held): the memory limit stops a new page. */
bool ac_borrow_page(void) {
    struct ac_thread *th = ac_thread();
    if (!th->may_borrow)
        return false;
    th->may_borrow = false;          /* one page per permission */
    th->borrowed = true;
    return true;
}

void *ac_page_alloc(size_t size) {
    return ac.policy->page_alloc != NULL ? ac.policy->page_alloc(size) : malloc(size);
}

/* The allocation, allowed one page past the memory limit while fewer than
 * ac_borrow_pages are owed. */
void *ac_borrow_alloc(struct ac_thread *th, size_t ntotal, unsigned int id) {
    if (!repay.enabled)
        return NULL;
    pthread_mutex_lock(&repay.lock);
    bool ok = repay.owed + repay.reserved < ac_opts.borrow_pages;
    if (ok)
        repay.reserved++;
    pthread_mutex_unlock(&repay.lock);
    if (!ok)
        return NULL;
    th->may_borrow = true;
    th->borrowed = false;
    void *it = slabs_alloc(ntotal, id, 0);
    th->may_borrow = false;
    pthread_mutex_lock(&repay.lock);
    repay.reserved--;
    if (it != NULL && th->borrowed) {  /* else a chunk was free after all, or no page */
        repay.owed++;
        AC_COUNT(pages_borrowed, 1);
        repay.last_borrower = (int)id;
        pthread_cond_signal(&repay.cond);
    }
    pthread_mutex_unlock(&repay.lock);
    return it;
}

/* ---------------------------------------------------------------- repaying */

static uint64_t slabs_moved_now(bool *running) {
    STATS_LOCK();
    uint64_t n = stats.slabs_moved;
    *running = stats_state.slab_reassign_running;
    STATS_UNLOCK();
    return n;
}

/* The class to give a page: one with at least 2 pages (slab_rebalance_start
 * needs that), preferring a page's worth of free chunks (the mover copies the
 * first page's items into them: nothing is spilled), then not the last
 * borrower, then the oldest LRU tail (memcached's automover's choice of
 * source, slab_automove.c), then the most pages. -1: none. */
static int repay_source(int avoid) {
    static slab_stats_automove sam[MAX_NUMBER_OF_SLAB_CLASSES];   /* repay thread only */
    static item_stats_automove iam[MAX_NUMBER_OF_SLAB_CLASSES];
    fill_slab_stats_automove(sam);
    fill_item_stats_automove(iam);
    int best = -1;
    bool best_spare = false, best_other = false;
    for (int n = POWER_SMALLEST; n < MAX_NUMBER_OF_SLAB_CLASSES; n++) {
        if (sam[n].total_pages < 2)
            continue;
        bool spare = sam[n].free_chunks >= (long)sam[n].chunks_per_page;
        bool other = n != avoid;
        if (best < 0 || spare > best_spare || (spare == best_spare && (other > best_other
                || (other == best_other && (iam[n].age > iam[best].age
                    || (iam[n].age == iam[best].age && sam[n].total_pages > sam[best].total_pages)))))) {
            best = n;
            best_spare = spare;
            best_other = other;
        }
    }
    return best;
}

static bool stopping(void) {
    return __atomic_load_n(&repay.stop, __ATOMIC_RELAXED);
}

/* Pages memcached released (memory_release), linked through their first
 * word (the page is unused; slab_rebalance_finish zeroed its first item
 * header). Freed only after the page epoch moved on under the spill lock:
 * policies keep item pointers as hints (alru's candidate pools, logging's
 * victim lists, LRU tails between the LRU lock and the item lock) and
 * dereference them under the spill lock; a hint older than the epoch is
 * dropped unread, and no live structure leads to a released page. */
void ac_page_free(void *page) {
    pthread_mutex_lock(&repay.lock);
    *(void **)page = repay.released;
    repay.released = page;
    pthread_cond_signal(&repay.cond);
    pthread_mutex_unlock(&repay.lock);
}

unsigned ac_page_epoch(void) {
    return __atomic_load_n(&ac.page_epoch, __ATOMIC_ACQUIRE);
}

static void free_released(void *pages) {
    ac_spill_lock();                              /* no hint is being read */
    __atomic_add_fetch(&ac.page_epoch, 1, __ATOMIC_RELEASE);
    ac_spill_unlock();
    if (ac.policy->epoch_moved != NULL)
        ac.policy->epoch_moved();               /* nor under the policy's own locks */
    while (pages != NULL) {
        void *next = *(void **)pages;
        if (ac.policy->page_release != NULL)
            ac.policy->page_release(pages);     /* a page of the policy's own source */
        else
            free(pages);
        pages = next;
    }
}

/* ------------------------------------------------------ charging the budget */

static struct {
    pthread_mutex_t lock;        /* one change of the slab allocator's limit at a time */
    size_t budget;               /* -m, or what `cache_memlimit` set since */
    size_t applied;              /* the slab allocator's limit last set */
    bool fixed;                  /* preallocated slab memory (-L, -e): the limit cannot move */
} budget = { PTHREAD_MUTEX_INITIALIZER, 0, 0, false };

/* The item memory the budget leaves after everything charged now (at least
 * two slab pages). */
static size_t item_limit_for(size_t total) {
    size_t charged = ac_charged_bytes();
    size_t floor = settings.slab_page_size * 2;
    return total > charged + floor ? total - charged : floor;
}

/* budget.lock held: sets the slab allocator's limit when forced or when it
 * moved by a quarter page or more. false: the slab memory is preallocated. */
static bool apply_locked(bool force) {
    size_t limit = item_limit_for(budget.budget);
    size_t d = limit > budget.applied ? limit - budget.applied : budget.applied - limit;
    if (!force && d < settings.slab_page_size / 4)
        return true;
    if (!slabs_adjust_mem_limit(limit)) {
        budget.fixed = true;     /* what grows after start is not charged (policies/README.md) */
        return false;
    }
    settings.maxbytes = budget.budget;   /* slabs_adjust_mem_limit set it to the item limit: -m stays the budget */
    budget.applied = limit;
    __atomic_store_n(&ac.item_limit, limit, __ATOMIC_RELAXED);
    return true;
}

bool ac_set_budget(size_t bytes) {
    pthread_mutex_lock(&budget.lock);
    size_t old = budget.budget;
    budget.budget = bytes;
    bool ok = apply_locked(true);
    if (!ok)
        budget.budget = old;
    pthread_mutex_unlock(&budget.lock);
    if (ok) {
        pthread_mutex_lock(&repay.lock);     /* the room thread looks at the pages now */
        pthread_cond_signal(&repay.cond);
        pthread_mutex_unlock(&repay.lock);
    }
    return ok;
}

/* The slab memory now: every class's pages and the pool's (memcached's
 * mem_malloced, which slabs.c keeps to itself). */
static size_t slab_bytes(void) {
    slab_stats_automove sam[MAX_NUMBER_OF_SLAB_CLASSES];
    fill_slab_stats_automove(sam);
    size_t pages = 0;
    for (int n = 0; n < MAX_NUMBER_OF_SLAB_CLASSES; n++)
        pages += (size_t)sam[n].total_pages;
    return pages * settings.slab_page_size;
}

size_t ac_slab_bytes(void) {
    return slab_bytes();
}

/* Room thread: the limit follows the book-keeping; true if the slab memory
 * (every class's pages and the pool's) is over it. */
static bool apply_limit(void) {
    if (__atomic_load_n(&budget.fixed, __ATOMIC_RELAXED))
        return false;
    pthread_mutex_lock(&budget.lock);
    apply_locked(false);
    size_t limit = budget.applied;
    pthread_mutex_unlock(&budget.lock);
    return slab_bytes() > limit;
}

/* The slab memory is within the budget and nothing is pending: no change of
 * the limit due, no page over it, none owed (tests wait for this before
 * exact counts: a page move spills a page's items at its own time). */
bool ac_budget_settled(void) {
    if (!repay.started || __atomic_load_n(&budget.fixed, __ATOMIC_RELAXED))
        return ac_pages_owed() == 0;
    size_t limit = item_limit_for(__atomic_load_n(&budget.budget, __ATOMIC_RELAXED));
    size_t applied = __atomic_load_n(&budget.applied, __ATOMIC_RELAXED);
    size_t d = limit > applied ? limit - applied : applied - limit;
    if (d >= settings.slab_page_size / 4 || ac_pages_owed() > 0)
        return false;
    return slab_bytes() <= applied;
}

void ac_budget_changed(void) {
    if (!repay.started || __atomic_load_n(&budget.fixed, __ATOMIC_RELAXED))
        return;
    size_t limit = item_limit_for(__atomic_load_n(&budget.budget, __ATOMIC_RELAXED));
    size_t applied = __atomic_load_n(&budget.applied, __ATOMIC_RELAXED);
    size_t d = limit > applied ? limit - applied : applied - limit;
    if (d >= settings.slab_page_size / 4) {
        pthread_mutex_lock(&repay.lock);
        pthread_cond_signal(&repay.cond);
        pthread_mutex_unlock(&repay.lock);
    }
}

/* One thread frees released pages (above) and repays borrowed ones: while
 * pages are owed and no move runs, it asks memcached's slab mover to move a
 * page to the global pool, then polls (1 ms) until the move count rises; a
 * move that did not start within 200 ms (its source changed) is asked again. */
static void *repay_main(void *arg) {
    (void)arg;
    bool moving = false;
    uint64_t moved0 = 0;
    int idle = 0;
    bool over = false;
    for (;;) {
        pthread_mutex_lock(&repay.lock);
        if (!stopping() && repay.released == NULL && !moving && repay.owed == 0 && !over) {
            /* woken by a borrowing, a released page or a change of the book-keeping;
             * the budget is looked at every 100 ms besides */
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += 100000000L;
            if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&repay.cond, &repay.lock, &until);
        }
        void *pages = repay.released;
        repay.released = NULL;
        unsigned owed = repay.owed;
        int avoid = repay.last_borrower;
        pthread_mutex_unlock(&repay.lock);
        if (pages != NULL)
            free_released(pages);
        if (stopping())
            break;
        over = apply_limit() && settings.slab_reassign;
        bool running;
        if (moving) {
            if (slabs_moved_now(&running) != moved0) {
                moving = false;
                pthread_mutex_lock(&repay.lock);
                if (repay.owed > 0)
                    repay.owed--;
                pthread_mutex_unlock(&repay.lock);
                AC_COUNT(pages_repaid, 1);
                continue;
            }
            idle = running ? 0 : idle + 1;
            if (idle >= 200)
                moving = false;
            else
                nap_us(1000);
        } else if (owed > 0 || over) {
            int src = repay_source(avoid);
            if (src >= 0) {
                moved0 = slabs_moved_now(&running);
                moving = slabs_reassign(src, SLAB_GLOBAL_PAGE_POOL) == REASSIGN_OK;
                idle = 0;
            }
            if (!moving)
                nap_us(10000);           /* no source, or another move first */
        }
    }
    return NULL;
}

int ac_budget_init(void) {
    if (ac.spill == NULL)
        return 0;
    budget.budget = settings.maxbytes;
    budget.applied = ac.item_limit;      /* what slabs_init got */
    /* pages are only released and repaid through memcached's slab mover;
     * without it the thread still applies the budget (no page can move) */
    repay.enabled = settings.slab_reassign && ac_opts.borrow_pages > 0;
    if (pthread_create(&repay.tid, NULL, repay_main, NULL) != 0) {
        fprintf(stderr, "memcached-ac: cannot start the page repay thread\n");
        repay.enabled = false;
        return -1;
    }
    repay.started = true;
    return 0;
}

void ac_budget_shutdown(void) {
    if (!repay.started)
        return;
    pthread_mutex_lock(&repay.lock);
    __atomic_store_n(&repay.stop, true, __ATOMIC_RELAXED);
    pthread_cond_signal(&repay.cond);
    pthread_mutex_unlock(&repay.lock);
    pthread_join(repay.tid, NULL);
    repay.started = false;
    repay.enabled = false;
}

unsigned ac_pages_owed(void) {
    pthread_mutex_lock(&repay.lock);
    unsigned n = repay.owed;
    pthread_mutex_unlock(&repay.lock);
    return n;
}
