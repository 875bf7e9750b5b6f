/* Making room for an allocation: memcached-ac's replacement for the eviction
 * step of memcached's do_item_alloc_pull (items.c), which pulls the class's LRU
 * tail with LRU_PULL_EVICT and gives up after 10 tries.
 *
 * Under anti-caching an allocation must not fail while the spill store can
 * take more (policies/README.md, "Making room, never refusing while the store
 * has room"). The patched do_item_alloc_pull calls ac_alloc when slabs_alloc
 * found no free chunk in the class:
 *
 * 1. Under the spill lock it tries the allocation again, else spills a block of
 *    the class's coldest items (ac_make_room_locked, ac_spill.c, whose outcome
 *    says: room made, none to be had, or refused by the tier) and tries
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
 * How an allocation may get room is its lookup's (struct ac_lookup alloc,
 * the lookup being materialized when memcached's allocator calls in).
 * Uses: ac_spill, ac_budget, ac_record, ac_options, ac_state. */
#include "memcached.h"
#include "ac_internal.h"
#include "store/clock.h"
#include <time.h>

static void nap_us(unsigned us) {
    struct timespec ts = { 0, (long)us * 1000L };
    nanosleep(&ts, NULL);
}

/* What one try came to: the allocation, or the room a spill round made. */
struct try {
    void *it;
    struct ac_room room;
};

/* Spill lock held for both: the allocation, else a spill round and the
 * allocation again. */
static struct try room_and_alloc(struct ac_scratch *s, size_t ntotal, unsigned int id) {
    struct try t = { NULL, { AC_ROOM_NONE, 0, AC_REFUSED_NONE } };
    ac_spill_lock();
    t.it = slabs_alloc(ntotal, id, 0);
    if (t.it == NULL) {
        t.room = ac_make_room_locked(s, id);
        t.it = slabs_alloc(ntotal, id, 0);
    }
    ac_spill_unlock();
    return t;
}

static void refuse(struct ac_thread *th, enum ac_refusal why) {
    AC_COUNT(refused_items, 1);
    switch (why) {
    case AC_REFUSED_DISK_FULL: AC_COUNT(refused_disk_full, 1); break;
    case AC_REFUSED_IO_ERROR: AC_COUNT(refused_io_error, 1); break;
    case AC_REFUSED_TABLE_FULL: AC_COUNT(refused_table_full, 1); break;
    case AC_REFUSED_NOMEM: AC_COUNT(refused_nomem, 1); break;
    default: AC_COUNT(refused_timeout, 1); break;
    }
    /* an append/prepend that cannot allocate answers this, not NOT_STORED (a
     * lookup's own allocation answers what the lookup came to) */
    if (th->lookup == NULL)
        th->error = ac_error_text(AC_ERR_NOMEM_STORE);
}

void *ac_alloc(size_t ntotal, unsigned int id) {
    struct ac_thread *th = ac_thread();
    enum ac_alloc_mode mode = th->lookup != NULL ? th->lookup->alloc : AC_ALLOC_FULL;
    if (ac.spill == NULL || mode == AC_ALLOC_FREE_ONLY)
        return NULL;         /* paging: nothing leaves RAM; free chunks only: there was none */
    uint64_t deadline = 0;
    unsigned nap = 50;
    int taken = 0;
    bool waited = false;
    enum ac_refusal why = AC_REFUSED_NONE;
    for (;;) {
        struct try t = room_and_alloc(&th->scratch, ntotal, id);
        if (t.it != NULL)
            return t.it;
        if (t.room.outcome == AC_ROOM_REFUSED) {
            why = t.room.why;        /* the store cannot take more */
            break;
        }
        if (mode == AC_ALLOC_TRY)
            break;                   /* only a try */
        if (t.room.outcome == AC_ROOM_MADE) {
            taken++;                 /* another request took the room */
            AC_COUNT(alloc_room_taken, 1);
        }
        void *it;
        if ((t.room.outcome == AC_ROOM_NONE || taken >= 3) && (it = ac_borrow_alloc(th, ntotal, id)) != NULL)
            return it;
        uint64_t now = ac_now_ns();
        if (deadline == 0)
            deadline = now + ac_opts.alloc_wait_ns;
        if (now >= deadline) {
            why = AC_REFUSED_TIMEOUT;
            break;
        }
        if (t.room.outcome == AC_ROOM_NONE) {
            if (!waited)
                AC_COUNT(alloc_waits, 1);
            waited = true;
            nap_us(nap);
            nap = nap * 2 > 2000 ? 2000 : nap * 2;
        }
    }
    if (mode != AC_ALLOC_TRY)
        refuse(th, why);
    return NULL;
}

bool ac_rescue(item *it, bool may_block) {
    if (ac_item_dead(it))
        return true;
    if (ac.spill == NULL)
        return false;        /* nowhere to put it: the mover retries later */
    return ac_spill_rescue(&ac_thread()->scratch, it, may_block);
}
