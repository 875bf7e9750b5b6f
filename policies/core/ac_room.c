/* Making room for an allocation: memcached-ac's replacement for the eviction
 * step of memcached's do_item_alloc_pull (items.c), which pulls the class's LRU
 * tail with LRU_PULL_EVICT and gives up after 10 tries.
 *
 * Under anti-caching an allocation must not fail while the spill store can
 * take more (DESIGN.md §4). The patched do_item_alloc_pull calls ac_alloc when
 * slabs_alloc found no free chunk in the class:
 *
 * 1. Under the spill lock it tries the allocation again, else spills a block of
 *    the class's coldest items (ac_make_room_locked, ac_spill.c) and tries
 *    again. Both under one lock: requests in this slow path do not take each
 *    other's room. The fast path (slabs_alloc without the lock) still may take
 *    the chunks just freed; then it spills again (alloc_room_taken).
 * 2. When the class had nothing it could spill (every chunk held by requests in
 *    progress: uploads, values being sent, the old value of an append, chunks
 *    of chunked items) or its room was taken three times, it *borrows* a slab
 *    page: this allocation may take a page past the memory limit (the hook in
 *    do_slabs_newslab asks ac_borrow_page). The repay thread pays it back at
 *    once by moving the first page of another class to memcached's global page
 *    pool (slabs_reassign(src, 0)): memcached's slab mover empties the page
 *    (an item it cannot copy within its class is spilled, ac_rescue), and
 *    slab_rebalance_finish -> memory_release frees pool pages while memory is
 *    over the limit (slabs.c). So a page moves from the class that can spare
 *    one to the class that needs one, only in the order that never blocks.
 *    At most ac_borrow_pages pages are owed at a time (pages_owed).
 *    memcached's own automover never does this for us: slab_automove.c moves
 *    pages only toward a class with evictions ("youngest_evicting"), and
 *    anti-caching evicts nothing, so without it the pages stay where first use
 *    put them and a class of large items can be left with one page of 2 chunks.
 *    Why not move a page first and wait for it: the thread that needs the room
 *    is a worker; while it waits its other connections stall, and an item one
 *    of them is sending (or the item lock a fetch holds) can be exactly what
 *    the mover needs to empty the page (slabs.c waits on busy or locked items,
 *    SLAB_MOVE_MAX_LOOPS), a wait that could only end at the time limit.
 * 3. Otherwise (nothing owed can be added) it waits, sleeping 50 us doubling
 *    to 2 ms, for held chunks to be released or a page to be repaid.
 *
 * It gives up only when the spill store cannot take more (file system full,
 * write error, evicted table full) or after ac_alloc_wait; the request then
 * answers memcached's SERVER_ERROR out of memory, counted in refused_items and
 * refused_<reason>. Optional allocations (logging's migration into RAM) only
 * try once: no borrowing, no waiting, not counted. A block merge's block-mates
 * only take free chunks: a spill round would take them (the coldest) first.
 *
 * Book-keeping that grows with the data (the evicted table holds spilled
 * items only) is charged against -m as it grows (equal provisioning): the same
 * thread lowers the slab allocator's limit to -m minus everything charged
 * (ac_charged_bytes) whenever that moved by a quarter page or more, and while
 * the slab memory is over the limit it moves pages to the pool as for a
 * borrowed page; memory_release frees them. It raises the limit again when
 * the book-keeping shrinks. */
#include "memcached.h"
#include "ac_internal.h"
#include <sys/mman.h>
#include <stdlib.h>
#include <time.h>

static __thread int tl_optional;              /* > 0: allocations only try */
static __thread int tl_free_only;             /* > 0: allocations take a free chunk or fail */
static __thread bool tl_may_borrow, tl_borrowed;

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

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void nap_us(unsigned us) {
    struct timespec ts = { 0, (long)us * 1000L };
    nanosleep(&ts, NULL);
}

void ac_alloc_optional(bool on) {
    tl_optional += on ? 1 : -1;
}

void ac_alloc_free_only(bool on) {
    tl_free_only += on ? 1 : -1;
}

/* do_slabs_newslab (slabs_lock held): the memory limit stops a new page. */
bool ac_borrow_page(void) {
    if (!tl_may_borrow)
        return false;
    tl_may_borrow = false;           /* one page per permission */
    tl_borrowed = true;
    return true;
}

/* Spill lock held for both: the allocation, else a spill round and the
 * allocation again. */
static void *room_and_alloc(size_t ntotal, unsigned int id, int *spilled, enum ac_refusal *why) {
    *spilled = 0;
    *why = AC_REFUSED_NONE;
    pthread_mutex_lock(&ac.spill_lock);
    void *it = slabs_alloc(ntotal, id, 0);
    if (it == NULL) {
        *spilled = ac_make_room_locked(id, why);
        it = slabs_alloc(ntotal, id, 0);
    }
    pthread_mutex_unlock(&ac.spill_lock);
    return it;
}

/* The allocation, allowed one page past the memory limit while fewer than
 * ac_borrow_pages are owed. */
static void *borrow_alloc(size_t ntotal, unsigned int id) {
    if (!repay.enabled)
        return NULL;
    pthread_mutex_lock(&repay.lock);
    bool ok = repay.owed + repay.reserved < ac_opts.borrow_pages;
    if (ok)
        repay.reserved++;
    pthread_mutex_unlock(&repay.lock);
    if (!ok)
        return NULL;
    tl_may_borrow = true;
    tl_borrowed = false;
    void *it = slabs_alloc(ntotal, id, 0);
    tl_may_borrow = false;
    pthread_mutex_lock(&repay.lock);
    repay.reserved--;
    if (it != NULL && tl_borrowed) {  /* else a chunk was free after all, or no page */
        repay.owed++;
        AC_COUNT(pages_borrowed, 1);
        repay.last_borrower = (int)id;
        pthread_cond_signal(&repay.cond);
    }
    pthread_mutex_unlock(&repay.lock);
    return it;
}

static void refuse(enum ac_refusal why) {
    AC_COUNT(refused_items, 1);
    switch (why) {
    case AC_REFUSED_DISK_FULL: AC_COUNT(refused_disk_full, 1); break;
    case AC_REFUSED_IO_ERROR: AC_COUNT(refused_io_error, 1); break;
    case AC_REFUSED_TABLE_FULL: AC_COUNT(refused_table_full, 1); break;
    default: AC_COUNT(refused_timeout, 1); break;
    }
    /* an append/prepend that cannot allocate answers this, not NOT_STORED */
    ac_answer_error(AC_ERR_NOMEM_STORE);
}

void *ac_alloc(size_t ntotal, unsigned int id) {
    if (!ac_tier_spills() || tl_free_only > 0)
        return NULL;         /* kernel paging: nothing leaves RAM; free chunks only: there was none */
    bool optional = tl_optional > 0;
    uint64_t deadline = 0;
    unsigned nap = 50;
    int taken = 0;
    bool waited = false;
    enum ac_refusal why;
    for (;;) {
        int spilled;
        void *it = room_and_alloc(ntotal, id, &spilled, &why);
        if (it != NULL)
            return it;
        if (why != AC_REFUSED_NONE || optional)
            break;                    /* the store cannot take more / only a try */
        if (spilled > 0) {
            taken++;
            AC_COUNT(alloc_room_taken, 1);
        }
        if ((spilled == 0 || taken >= 3) && (it = borrow_alloc(ntotal, id)) != NULL)
            return it;
        uint64_t now = now_ns();
        if (deadline == 0)
            deadline = now + ac_opts.alloc_wait_ns;
        if (now >= deadline) {
            why = AC_REFUSED_TIMEOUT;
            break;
        }
        if (spilled == 0) {
            if (!waited)
                AC_COUNT(alloc_waits, 1);
            waited = true;
            nap_us(nap);
            nap = nap * 2 > 2000 ? 2000 : nap * 2;
        }
    }
    if (!optional)
        refuse(why);
    return NULL;
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

/* --------------------------------------------- a policy's source of slab pages
 * Policy vma keeps the slab memory in one mapping it protects, yet memcached
 * stays in its malloc mode (the budget can move, pages can be borrowed and
 * released, a new class gets its first page): pages are carved from the
 * mapping by a bump pointer, and released ones are kept on a free list (their
 * memory returned to the kernel) for the next allocation. */
static struct {
    pthread_mutex_t lock;
    char *base, *next, *end;
    void *free_pages;            /* released pages of page_size, linked through their first word */
    size_t page_size;
    uint64_t carved, reused, released;
} src = { .lock = PTHREAD_MUTEX_INITIALIZER };

void ac_page_source(char *base, size_t len) {
    pthread_mutex_lock(&src.lock);
    src.base = src.next = base;
    src.end = base + len;
    src.page_size = (size_t)settings.slab_page_size;
    pthread_mutex_unlock(&src.lock);
}

bool ac_page_source_set(void) {
    return src.base != NULL;
}

size_t ac_slab_headroom(void) {
    /* memcached gives each class its first page past the limit, and a starved
     * class may borrow ac_borrow_pages more */
    return ((size_t)MAX_NUMBER_OF_SLAB_CLASSES + ac_opts.borrow_pages + 1) * (size_t)settings.slab_page_size;
}

void *ac_page_alloc(size_t size) {
    if (src.base == NULL)
        return malloc(size);
    void *p = NULL;
    pthread_mutex_lock(&src.lock);
    if (size == src.page_size && src.free_pages != NULL) {
        p = src.free_pages;
        src.free_pages = *(void **)p;
        src.reused++;
    } else if ((size_t)(src.end - src.next) >= size) {
        p = src.next;
        src.next += size;
        src.carved++;
    }
    pthread_mutex_unlock(&src.lock);
    return p;
}

/* A page memcached released: back to the source it came from. */
static void page_release(void *page) {
    char *p = page;
    if (src.base == NULL || p < src.base || p >= src.end) {
        free(page);
        return;
    }
    /* its memory goes back to the kernel (the budget gave it up); the link is
     * written after, in the page's first word */
    madvise(p, src.page_size, MADV_DONTNEED);
    pthread_mutex_lock(&src.lock);
    *(void **)p = src.free_pages;
    src.free_pages = p;
    src.released++;
    pthread_mutex_unlock(&src.lock);
}

void ac_page_source_stats(uint64_t *carved, uint64_t *reused, uint64_t *released) {
    pthread_mutex_lock(&src.lock);
    *carved = src.carved;
    *reused = src.reused;
    *released = src.released;
    pthread_mutex_unlock(&src.lock);
}

static void free_released(void *pages) {
    pthread_mutex_lock(&ac.spill_lock);          /* no hint is being read */
    __atomic_add_fetch(&ac.page_epoch, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&ac.spill_lock);
    while (pages != NULL) {
        void *next = *(void **)pages;
        page_release(pages);
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

int ac_room_init(void) {
    if (!ac_tier_spills())
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

void ac_room_shutdown(void) {
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
