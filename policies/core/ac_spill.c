/* Spill rounds (anti-caching, DeBrabant et al. VLDB 2013 §3): the coldest
 * items of a slab class, as the policy picks them, written to the spilling
 * tier and unlinked -- a block's worth when the tier buffers blocks, a batch
 * when it writes at once -- and an item memcached is about to drop (slab
 * mover, tail repair) spilled instead. What a round came to is a named
 * outcome (struct ac_room: made, none, refused with a reason).
 * Lock order: item lock -> spill_lock -> LRU lock -> evicted stripe / store lock.
 * Other items' locks are only ever try-locked. No I/O happens under an LRU lock.
 * Uses: ac_record, ac_budget, ac_state. */
#include "memcached.h"
#include "ac_internal.h"
#include <errno.h>
#include <string.h>

enum spill_result { SPILL_OK, SPILL_DEAD, SPILL_FULL, SPILL_FAIL };

/* Why the spill store could not take an item: a failed write's -errno. */
static enum ac_refusal write_refusal(int rc) {
    return rc == -ENOSPC || rc == -EDQUOT ? AC_REFUSED_DISK_FULL
         : rc == -ETIMEDOUT ? AC_REFUSED_TIMEOUT          /* the block writer's queue stayed full */
         : AC_REFUSED_IO_ERROR;
}

/* Writes a resident item (item lock and a reference held) into the open block
 * and records it in the evicted table. The caller unlinks it on SPILL_OK/DEAD.
 * On SPILL_FAIL *why says what the store could not do. */
static enum spill_result spill_one(struct ac_scratch *s, item *it, enum ac_refusal *why) {
    if (ac_item_dead(it))
        return SPILL_DEAD;
    size_t len;
    char *rec = ac_item_record(s, it, &len);
    if (rec == NULL) {
        *why = AC_REFUSED_NOMEM;         /* no memory for the record buffer */
        return SPILL_FAIL;
    }
    struct ac_loc loc;
    int rc = ac.spill->put(ac_key_fp(ITEM_key(it), it->nkey), rec, len, &loc);
    if (rc == AC_TIER_FULL)
        return SPILL_FULL;
    if (rc != 0) {                       /* the item stays */
        AC_COUNT(spill_failures, 1);
        *why = rc == AC_TIER_NO_ROOM ? AC_REFUSED_TABLE_FULL : write_refusal(rc);
        return SPILL_FAIL;
    }
    AC_COUNT(spilled_items, 1);
    AC_COUNT(spilled_bytes, len);
    return SPILL_OK;
}

/* Locks a victim or migration candidate and takes a reference, re-validating
 * everything the hint may have got wrong. Returns the lock, or NULL to skip it. */
void *ac_grab_item(item *it, unsigned int clsid, uint32_t *hvp) {
    if ((it->it_flags & (ITEM_LINKED | ITEM_SLABBED)) != ITEM_LINKED)
        return NULL;
    uint32_t hv = hash(ITEM_key(it), it->nkey);
    void *lk = item_trylock(hv);
    if (lk == NULL)
        return NULL;
    if ((it->it_flags & (ITEM_LINKED | ITEM_SLABBED)) != ITEM_LINKED || ITEM_clsid(it) != clsid
            || hash(ITEM_key(it), it->nkey) != hv) {
        item_trylock_unlock(lk);
        return NULL;
    }
    if (refcount_incr(it) != 2) {    /* in use by a request: leave it */
        refcount_decr(it);
        item_trylock_unlock(lk);
        return NULL;
    }
    *hvp = hv;
    return lk;
}

/* Spills the candidates (spill_lock held); *full: the open block is packed,
 * *why: a spill could not be done (the store's reason). Returns how many left RAM. */
static int spill_batch(struct ac_scratch *s, unsigned int clsid, item **cand, int n, bool *full,
                       enum ac_refusal *why) {
    int spilled = 0;
    *full = false;
    *why = AC_REFUSED_NONE;
    for (int i = 0; i < n && !*full && *why == AC_REFUSED_NONE; i++) {
        uint32_t hv;
        void *lk = ac_grab_item(cand[i], clsid, &hv);
        if (lk == NULL)
            continue;
        enum spill_result r = spill_one(s, cand[i], why);
        if (r == SPILL_OK || r == SPILL_DEAD) {
            do_item_unlink(cand[i], hv);
            spilled++;
        }
        do_item_remove(cand[i]);
        item_trylock_unlock(lk);
        *full = r == SPILL_FULL;
    }
    return spilled;
}

/* The open block is packed: one sequential write, with no item lock held. */
static int flush_block(enum ac_refusal *why) {
    if (ac.spill->flush == NULL)
        return 0;
    int rc = ac.spill->flush();
    if (rc != 0)
        *why = write_refusal(rc);
    return rc;
}

int ac_spill_batch_items(struct ac_scratch *s, unsigned int clsid, item **cand, int n, unsigned epoch) {
    int spilled = 0;
    ac_spill_lock();
    while (n > 0 && epoch == ac_page_epoch()) {
        bool full;
        enum ac_refusal why;
        int k = spill_batch(s, clsid, cand, n, &full, &why);
        spilled += k;
        if (why != AC_REFUSED_NONE)
            break;
        if (full) {
            if (flush_block(&why) != 0)
                break;
            continue;     /* the candidates already gone are skipped by grab */
        }
        break;
    }
    ac_spill_unlock();
    ac_budget_changed();
    return spilled;
}

struct ac_room ac_make_room_locked(struct ac_scratch *s, unsigned int clsid) {
    struct ac_room room = { AC_ROOM_NONE, 0, AC_REFUSED_NONE };
    for (int batch = 0;; batch++) {
        item *cand[16];
        int n = ac.policy->pick_victims(clsid, cand, 16);
        bool full;
        int k = spill_batch(s, clsid, cand, n, &full, &room.why);
        room.spilled += k;
        if (room.why != AC_REFUSED_NONE)
            break;
        if (full) {
            if (flush_block(&room.why) != 0 || room.spilled > 0)
                break;
            continue;
        }
        if (n == 0)
            break;
        /* a tier that buffers blocks: a block of this class's coldest items
         * (H-Store spills a block at a time); one that writes at once: a batch
         * with something in it is enough room (a busy batch: the victim list
         * moves on, a few more) */
        if (ac.spill->flush == NULL ? k > 0 || batch >= 3 : k == 0)
            break;
    }
    ac_budget_changed();
    room.outcome = room.why != AC_REFUSED_NONE ? AC_ROOM_REFUSED : room.spilled > 0 ? AC_ROOM_MADE : AC_ROOM_NONE;
    return room;
}

int ac_spill_items(unsigned int clsid, item **cand, int n, unsigned epoch) {
    return ac_spill_batch_items(&ac_thread()->scratch, clsid, cand, n, epoch);
}

bool ac_spill_rescue(struct ac_scratch *s, item *it, bool may_block) {
    enum ac_refusal why;
    enum spill_result r = spill_one(s, it, &why);
    if (r == SPILL_FULL && may_block) {
        if (flush_block(&why) == 0)
            r = spill_one(s, it, &why);
    }
    if (r == SPILL_OK) {
        AC_COUNT(rescued_items, 1);
        return true;
    }
    return r == SPILL_DEAD;
}

