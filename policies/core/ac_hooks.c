/* The request path's hooks (ac_hooks.h), where memcached calls in: the lookup
 * (ac_item_find builds the request's struct ac_lookup and hands it down to
 * ac_fetch), hit counting on access, link and unlink, a plain set's drop of a
 * spilled old value, and the error a command answers instead of a miss.
 *
 * What must survive memcached's own code between two hooks is in the thread
 * record (ac_thread, ac_state.c): the error text, the item a lookup read from
 * the tier (its access is a disk hit), proto_text's permission to park. This
 * file reads it directly on the hot path (a hit in RAM: ac_item_find and
 * ac_item_accessed).
 *
 * Hits: a hit in RAM counts a memory hit; one the lookup read from the tier a
 * disk hit, which the policy sees through on_fetched when it has one (a miss
 * for it: ac_policy.h), else through on_access as any hit. Under a paging
 * tier a read is a disk hit when the pages its thread waited for
 * (page->thread_page_ins: the kernel's major faults) rose while it was
 * served: the window opens in the lookup (before the hash walk) and closes in
 * the access hook, which first reads one byte of every page the item occupies
 * (the reply is copied from the item later); the in-process driver opens and
 * closes it itself, around the lookup and the copy of the value.
 * Uses: ac_fetch, ac_state. */
#include "memcached.h"
#include "ac_internal.h"
#include <stdlib.h>
#include <string.h>

extern __thread struct ac_thread ac_self;    /* ac_state.c: the boundary's record */

/* Hit counters are bumped on every access: one cache line per worker thread,
 * so threads do not share a counter line. The first HIT_SLOTS threads have a
 * line each and bump it with a plain add (one writer; readers load it
 * atomically); threads beyond them share lines, with an atomic add. Summed by
 * `stats anticache`. */
#define HIT_SLOTS 64
struct ac_hit_slot {
    uint64_t mem_hits, disk_hits;
    char pad[64 - 2 * sizeof(uint64_t)];
};
static struct ac_hit_slot hit_slots[HIT_SLOTS];
static unsigned next_hit_slot;
/* Pages waited for while serving reads (a read may wait for more than one:
 * an item straddling a page boundary, a hash bucket). */
static uint64_t read_page_ins;
static uint64_t write_page_ins;       /* faults inside the in-process driver's stores */

static void count_hit(struct ac_thread *th, bool disk) {
    struct ac_hit_slot *s = th->hit_slot;
    if (s == NULL) {
        unsigned i = __atomic_fetch_add(&next_hit_slot, 1, __ATOMIC_RELAXED);
        s = th->hit_slot = &hit_slots[i % HIT_SLOTS];
        th->hit_slot_shared = i >= HIT_SLOTS;
    }
    uint64_t *n = disk ? &s->disk_hits : &s->mem_hits;
    if (th->hit_slot_shared)
        __atomic_add_fetch(n, 1, __ATOMIC_RELAXED);
    else
        __atomic_store_n(n, __atomic_load_n(n, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
    if (disk)
        th->disk_hits++;
}

void ac_hit_totals(uint64_t *mem, uint64_t *disk) {
    *mem = *disk = 0;
    for (int i = 0; i < HIT_SLOTS; i++) {
        *mem += __atomic_load_n(&hit_slots[i].mem_hits, __ATOMIC_RELAXED);
        *disk += __atomic_load_n(&hit_slots[i].disk_hits, __ATOMIC_RELAXED);
    }
}

uint64_t ac_read_page_ins(void) {
    return __atomic_load_n(&read_page_ins, __ATOMIC_RELAXED);
}

uint64_t ac_write_page_ins(void) {
    return __atomic_load_n(&write_page_ins, __ATOMIC_RELAXED);
}

uint64_t ac_thread_disk_hits(void) {
    return ac_self.disk_hits;
}

bool ac_kernel_paged(void) {
    return ac_enabled && ac.page != NULL;
}

/* A paging tier's window over one read: closed, the read counted. */
static int window_close(struct ac_thread *th) {
    uint64_t delta = ac.page->thread_page_ins() - th->page_ins_start;
    if (delta > 0)
        __atomic_add_fetch(&read_page_ins, delta, __ATOMIC_RELAXED);
    count_hit(th, delta != 0);
    return delta != 0;
}

void ac_fault_window_begin(void) {
    struct ac_thread *th = &ac_self;
    th->window_external = true;
    th->window_accessed = false;
    th->page_ins_start = ac.page->thread_page_ins();
}

/* A paging tier's window over one store of the in-process driver: the faults
 * a write takes (its old item, the hash chain and LRU neighbours it relinks)
 * are the request's, though no read's. */
void ac_write_window_begin(void) {
    ac_self.write_page_ins_start = ac.page->thread_page_ins();
}

void ac_write_window_end(void) {
    uint64_t delta = ac.page->thread_page_ins() - ac_self.write_page_ins_start;
    if (delta > 0)
        __atomic_add_fetch(&write_page_ins, delta, __ATOMIC_RELAXED);
}

int ac_fault_window_end(void) {
    struct ac_thread *th = &ac_self;
    th->window_external = false;
    if (!th->window_accessed)
        return -1;
    th->window_accessed = false;
    return window_close(th);
}

/* Network reads: the reply is copied from the item after the hook returns,
 * so the hook reads one byte of every page the item occupies (header, key,
 * value, chunks) inside the measured window. */
static void touch_pages(const void *p, size_t n) {
    const volatile char *b = p;
    uintptr_t page = 4096;
    for (uintptr_t a = (uintptr_t)b; a < (uintptr_t)b + n; a = (a & ~(page - 1)) + page)
        (void)*(const volatile char *)a;
    if (n > 0)
        (void)b[n - 1];
}

static void touch_item(item *it) {
    if ((it->it_flags & ITEM_CHUNKED) == 0) {
        touch_pages(it, ITEM_ntotal(it));
        return;
    }
    touch_pages(it, ITEM_schunk(it) - (char *)it + sizeof(item_chunk));
    for (item_chunk *ch = (item_chunk *)ITEM_schunk(it); ch != NULL; ch = ch->next)
        touch_pages(ch, sizeof(*ch) + (size_t)ch->used);
}

item *ac_item_find(const char *key, size_t nkey, uint32_t hv, bool do_update) {
    struct ac_thread *th = &ac_self;
    th->fetched = NULL;
    th->error = NULL;
    bool may_park = th->park == AC_PARK_ALLOWED;
    th->park = AC_PARK_NONE;
    if (ac.spill == NULL) {
        if (!th->window_external)    /* the hash walk may wait for a page too */
            th->page_ins_start = ac.page->thread_page_ins();
        return assoc_find(key, nkey, hv);
    }
    item *it = assoc_find(key, nkey, hv);
    if (it != NULL)
        return it;
    struct ac_lookup lk = {
        .key = key, .nkey = nkey, .hv = hv, .fp = ac_key_fp(key, nkey), .update = do_update,
        .may_park = may_park, .alloc = AC_ALLOC_FULL, .pf = th->pf, .scratch = &th->scratch,
    };
    it = ac_fetch(&lk);
    if (lk.parked)
        th->park = AC_PARK_PARKED;
    if (lk.disk)
        th->fetched = it;
    /* served (a read-through may follow a refused allocation): no error stays */
    th->error = it == NULL ? ac_error_text(lk.error) : NULL;
    return it;
}

bool ac_check_items;

/* The hash walk is about to read it's header, and its key when the lengths
 * match (the key of nkey bytes it looks for): their pages first, no more than
 * the walk itself reads. */
void ac_item_check(const void *p, size_t nkey) {
    const item *it = p;
    ac.page->check(it, sizeof(item));
    if (it->nkey == nkey)
        ac.page->check(it, (size_t)(ITEM_key(it) - (const char *)it) + it->nkey);
}

void ac_item_accessed(item *it) {
    struct ac_thread *th = &ac_self;
    if (ac_check_items)
        ac.page->check(it, ITEM_ntotal(it));      /* the value's pages before the reply reads them */
    it->it_flags |= ITEM_FETCHED;
    if (ac.spill == NULL) {
        if (ac.page->touched != NULL)
            ac.page->touched(it, ITEM_ntotal(it));
        if (th->window_external) {
            th->window_accessed = true;     /* counted when the driver closes its window */
        } else {
            touch_item(it);
            window_close(th);
        }
    } else {
        bool disk = th->fetched == it;
        count_hit(th, disk);
        if (disk) {
            th->fetched = NULL;
            if (ac.policy->on_fetched != NULL) {
                ac.policy->on_fetched(it);   /* a read-back: the policy's miss */
                return;
            }
        }
    }
    ac.policy->on_access(it);
}

void ac_item_linked(item *it, uint32_t hv) {
    (void)hv;
    if (ac.spill != NULL) {
        struct ac_lookup *lk = ac_self.lookup;   /* a lookup materializing this item, or NULL */
        if (lk == NULL || !lk->sole_copy)
            ac_drop_stale_copies(&ac_self.scratch, it);
    } else if (ac.page != NULL && ac.page->touched != NULL) {
        ac.page->touched(it, ITEM_ntotal(it));
    }
    ac.policy->on_insert(it);
}

void ac_item_unlinked(item *it) {
    ac.policy->on_remove(it);
}

void ac_item_overwrite(const char *key, size_t nkey, uint32_t hv) {
    if (ac.spill == NULL || assoc_find(key, nkey, hv) != NULL)
        return;                       /* resident: memcached replaces it */
    ac_overwrite(ac_key_fp(key, nkey));
}

void ac_item_free(item *it) {
    free(it);
}

item *ac_item_for_update(item *it) {
    if (it == NULL || !AC_ITEM_TRANSIENT(it))
        return it;
    if (!ac.policy->fetch_on_read) {
        /* a cold item read as a transient copy: a modify brings it into RAM
         * (the caller holds its item lock, as for the lookup) */
        char key[KEY_MAX_LENGTH + 1];
        size_t nkey = it->nkey;
        memcpy(key, ITEM_key(it), nkey);
        do_item_remove(it);
        item *m = ac_item_find(key, nkey, hash(key, nkey), false);
        if (m != NULL)
            refcount_incr(m);        /* as do_item_get takes one */
        return m;
    }
    do_item_remove(it);              /* a read served without memory: still none */
    ac_self.error = ac_error_text(AC_ERR_NOMEM_FETCH);
    return NULL;
}

const char *ac_lookup_error(void) {
    return ac_self.error;
}

const char *ac_take_lookup_error(void) {
    const char *e = ac_self.error;
    ac_self.error = NULL;
    return e;
}

const char *ac_text_reply(const char *reply) {
    const char *e = ac_take_lookup_error();
    if (e != NULL && (strcmp(reply, "NOT_FOUND") == 0 || strcmp(reply, "NOT_STORED") == 0))
        return e;
    return reply;
}

bool ac_reply_error(conn *c) {
    const char *e = ac_take_lookup_error();
    if (e == NULL)
        return false;
    out_errstring(c, e);
    return true;
}

void ac_prefetcher_use(struct ac_prefetcher *p) {
    ac_self.pf = p;
}
