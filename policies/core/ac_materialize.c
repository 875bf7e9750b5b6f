/* A spilled record made an item in RAM again (materialize: allocated, filled,
 * the tier's entry dropped, linked with its old identity), or served as a
 * transient copy that stays spilled (read-through); and H-Store's block merge,
 * which materializes every live record of a claimed block (DeBrabant et al.
 * VLDB 2013 §3.4), over a walk of the block's records that lazy compaction by
 * copy shares (ac_compact.c). A whole merge (ac_merge=block) empties its
 * block: the mates no free chunk takes are moved to the open block, as
 * H-Store's eviction would write the merged tuples out again; left in the
 * block, cold ones kept its extent for good (at 1M × 1 KB, θ 0.99, M/D 1/2:
 * 84 GB on disk for 0.56 GB live, until the disk was full).
 * memcached's allocator and link call back into the core while an item is
 * materialized (ac_alloc, ac_item_linked): the lookup being materialized is
 * handed to them in the thread record for that long.
 * Uses: ac_record, ac_state. */
#include "memcached.h"
#include "ac_internal.h"
#include <stdlib.h>
#include <string.h>

/* A drop that left its block below the compaction threshold claimed the
 * block for a whole-block merge (spill->drop returned 1). A path that does not
 * merge it now releases the claim, or the block would stay claimed for good
 * (never merged, its id never reused): a later fetch from it claims it again. */
static void release_claim(int rc, const struct ac_loc *loc) {
    if (rc == 1 && ac.spill->merge_done != NULL)
        ac.spill->merge_done(loc->block);
}

bool ac_drop_spilled(uint64_t fp, const struct ac_loc *loc) {
    int rc = ac.spill->drop(fp, loc);
    release_claim(rc, loc);
    return rc >= 0;
}

bool ac_spilled_at(uint64_t fp, const struct ac_loc *loc) {
    struct ac_loc locs[AC_LOCS];
    int n = ac.spill->peek(fp, locs, AC_LOCS);
    for (int i = 0; i < n && i < AC_LOCS; i++)
        if (ac_loc_same(&locs[i], loc))
            return true;
    return false;
}

item *ac_materialize(struct ac_lookup *lk, const struct ac_record *r, const struct ac_loc *loc, bool *claimed) {
    struct ac_thread *th = ac_thread();
    struct ac_lookup *outer = th->lookup;
    th->lookup = lk;
    item *it = do_item_alloc((char *)r->key, r->nkey, r->client_flags, r->exptime, (int)r->nbytes);
    int rc = -1;
    if (it != NULL && (ac_item_fill(it, r->value, r->nbytes) != 0 || (rc = ac.spill->drop(lk->fp, loc)) < 0)) {
        do_item_remove(it);
        it = NULL;
    }
    if (it != NULL) {
        *claimed = rc == 1;
        uint64_t cas = r->cas;      /* r may point into the scratch buffer linking reuses */
        rel_time_t time = r->time;
        do_item_link(it, lk->hv);
        ITEM_set_cas(it, cas);      /* the item keeps its identity: same CAS, same age */
        it->time = time;
        do_item_remove(it);         /* drop the allocation's reference: the hash keeps one */
    }
    th->lookup = outer;
    return it;
}

/* A transient copy of a verified record for a read that found no memory (both
 * RAM and the spill store full): malloc'd, never linked, laid out as
 * do_item_alloc lays out a contiguous item; slab class 0 marks it. Returns NULL
 * (and drops the record) when the record is expired or flushed. */
static item *transient_copy(const struct ac_record *r, uint64_t fp, const struct ac_loc *loc) {
    bool cas = settings.use_cas;
    size_t n = sizeof(item) + (cas ? sizeof(uint64_t) : 0) + r->nkey + 1
        + (r->client_flags ? sizeof(uint32_t) : 0) + r->nbytes;
    item *it = calloc(1, n);
    if (it == NULL)
        return NULL;
    it->it_flags = (cas ? ITEM_CAS : 0) | (r->client_flags ? ITEM_CFLAGS : 0);
    it->slabs_clsid = 0;
    it->nkey = r->nkey;
    it->nbytes = (int)r->nbytes;
    it->exptime = r->exptime;
    it->time = r->time;
    memcpy(ITEM_key(it), r->key, r->nkey);
    ITEM_key(it)[r->nkey] = '\0';
    if (r->client_flags)
        memcpy(ITEM_suffix(it), &r->client_flags, sizeof(uint32_t));
    memcpy(ITEM_data(it), r->value, r->nbytes);
    ITEM_set_cas(it, r->cas);
    if (ac_item_dead(it)) {
        ac_drop_spilled(fp, loc);
        free(it);
        return NULL;
    }
    return it;
}

item *ac_read_through(const struct ac_record *r, uint64_t fp, const struct ac_loc *loc) {
    item *it = transient_copy(r, fp, loc);
    if (it != NULL)
        AC_COUNT(read_through_items, 1);
    return it;
}

int ac_walk_block(uint32_t block, bool (*each)(const struct ac_walk *w, void *arg), void *arg) {
    void *buf;
    ssize_t len = ac.spill->read_block(block, &buf);
    if (len < 0) {
        ac.spill->merge_done(block);
        return -1;
    }
    AC_COUNT(block_read_bytes, (uint64_t)len);
    int done = 1;
    size_t off = 0;
    while (done == 1 && off + AC_RECORD_HDR <= (size_t)len) {
        struct ac_walk w = { .rec = (char *)buf + off };
        if (ac_record_parse(w.rec, (size_t)len - off, &w.r) != AC_REC_OK) {
            AC_COUNT(checksum_errors, 1);
            done = 0;                          /* the rest cannot be parsed: it stays */
            break;
        }
        w.loc = (struct ac_loc){ block, (uint32_t)off, w.r.len };
        w.fp = ac_key_fp(w.r.key, w.r.nkey);
        off += w.r.len;
        if (!each(&w, arg))
            done = 0;
    }
    free(buf);
    ac.spill->merge_done(block);
    return done;
}

/* ac_walk_lock's mark for the lock the caller holds already: used, never released. */
static char held_mark;
void *ac_walk_lock(uint32_t hv, const uint32_t *held) {
    /* memcached's item locks: 2^item_lock_hashpower of them, a key's the one
     * of hv's low bits (thread.c, assoc.h) */
    uint32_t mask = item_lock_hashpower >= 32 ? UINT32_MAX : (1u << item_lock_hashpower) - 1;
    if (held != NULL && (hv & mask) == (*held & mask))
        return &held_mark;
    return item_trylock(hv);
}

void ac_walk_unlock(void *lk) {
    if (lk != &held_mark)
        item_trylock_unlock(lk);
}

int ac_move_spilled(const struct ac_walk *w) {
    int out = 0;
    struct ac_loc to;
    ac_spill_lock();
    while (ac_spilled_at(w->fp, &w->loc)) {
        int rc = ac.spill->move(w->fp, w->rec, w->r.len, &w->loc, &to);
        if (rc == 0) {
            AC_COUNT(copied_items, 1);
            AC_COUNT(copied_bytes, w->r.len);
            out = 1;
            break;
        }
        if (rc != AC_TIER_FULL) {
            AC_COUNT(copy_skipped, 1);     /* not moved (a write failed): it stays */
            break;
        }
        if (ac.spill->flush() != 0) {       /* the open block could not be written: the rest stays */
            AC_COUNT(copy_skipped, 1);
            out = -1;
            break;
        }
    }
    ac_spill_unlock();
    return out;
}

struct merge_walk {
    struct ac_scratch *s;
    bool whole;
    const uint32_t *held;
};

/* One record of a block being merged back into RAM (H-Store block-merge):
 * skipped when it is no longer spilled there or its key is locked by others;
 * in a whole merge, moved to the open block when no free chunk takes it. */
static bool merge_record(const struct ac_walk *w, void *arg) {
    struct merge_walk *m = arg;
    if (!ac_spilled_at(w->fp, &w->loc))
        return true;
    uint32_t hv = hash(w->r.key, w->r.nkey);
    void *lk = ac_walk_lock(hv, m->held);
    if (lk == NULL)
        return true;
    struct ac_record r = w->r;
    enum ac_error e = ac_record_expand_value(m->s, &r);   /* only the records brought back are expanded */
    if (e != AC_ERR_NONE) {
        if (e == AC_ERR_CHECKSUM)
            AC_COUNT(checksum_errors, 1);
        ac_walk_unlock(lk);
        return true;                       /* stays spilled: a request for it answers the error */
    }
    /* block-mates come back into free chunks only: a spill round would take
     * them (the coldest) first */
    struct ac_lookup mate = { .key = r.key, .nkey = r.nkey, .hv = hv, .fp = w->fp,
                              .alloc = AC_ALLOC_FREE_ONLY, .scratch = m->s };
    bool ignored, go_on = true;
    item *it = ac_materialize(&mate, &r, &w->loc, &ignored);
    if (it != NULL) {
        /* not asked for: the cold end (H-Store, DeBrabant et al. VLDB 2013 §3.4) */
        if (ac.policy->on_merged != NULL)
            ac.policy->on_merged(it);
        AC_COUNT(merged_items, 1);
    } else if (m->whole && ac.spill->move != NULL) {
        go_on = ac_move_spilled(w) >= 0;   /* no free chunk: out again, the block empties */
    }
    ac_walk_unlock(lk);
    return go_on;
}

void ac_merge_block(struct ac_scratch *s, uint32_t block, bool whole, const uint32_t *held) {
    struct merge_walk m = { s, whole, held };
    if (ac_walk_block(block, merge_record, &m) >= 0)
        AC_COUNT(merged_blocks, 1);
}
