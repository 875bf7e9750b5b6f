/* The lookup of a key that is not in RAM (DeBrabant et al. VLDB 2013 §3.2):
 * its records under the key's fingerprint, each read at its location (maybe
 * read ahead) and compared with the key; the key's record is brought back into
 * RAM (materialize) and its block compacted when the drop left it below the
 * threshold, or, for a read under a policy that keeps reads cold
 * (fetch_on_read false: Siberia) or when no memory can be had, served from
 * the record (read-through). A network get may instead be left to a fetcher
 * (ac_park.c) when the tier may hold the key. Also here: a plain set's drop
 * of a spilled old value (overwrite), the drop of stale copies when a key is
 * linked, and a policy's migration of spilled items back into RAM.
 * The tier is asked (core/ac_tier.h), never named.
 * Uses: ac_compact, ac_materialize, ac_record, ac_prefetch, ac_state. */
#include "memcached.h"
#include "ac_internal.h"
#include <string.h>

item *ac_fetch(struct ac_lookup *lk) {
    if (lk->may_park && ac.spill->maybe(lk->fp)) {
        lk->parked = true;           /* a fetcher reads it (ac_park.c) */
        return NULL;
    }
    struct ac_loc locs[AC_LOCS];
    int n = ac.spill->find(lk->fp, locs, AC_LOCS);
    if (n < 0) {
        AC_COUNT(read_errors, 1);
        lk->error = AC_ERR_READ;
        return NULL;
    }
    for (int i = 0; i < n && i < AC_LOCS; i++) {
        struct ac_record r;
        enum ac_read rd = ac_read_record_at(lk->scratch, lk->pf, lk->fp, &locs[i], AC_RR_COUNT, lk->key, lk->nkey,
                                            &r, &lk->error);
        if (rd == AC_READ_FAILED)
            return NULL;
        if (rd == AC_READ_OTHER_KEY)
            continue;                /* another key with the same fingerprint */
        item *it = NULL;
        bool claimed = false;
        /* Siberia: a read is served from the cold store, the item stays cold */
        if (!(lk->update && !ac.policy->fetch_on_read)) {
            lk->sole_copy = n == 1;
            it = ac_materialize(lk, &r, &locs[i], &claimed);
            if (it == NULL && !lk->update) {
                AC_COUNT(fetch_nomem, 1);
                lk->error = AC_ERR_NOMEM_FETCH;
                return NULL;
            }
        }
        if (it == NULL) {            /* a read: from the record (Siberia, or no memory) */
            it = ac_read_through(&r, lk->fp, &locs[i]);
            lk->disk = it != NULL;
            return it;
        }
        AC_COUNT(fetched_items, 1);
        AC_COUNT(fetched_bytes, r.len);
        if (ac.spill->begin_merge != NULL && ac.spill->begin_merge(locs[i].block, claimed))
            ac_compact(lk->scratch, locs[i].block, claimed, &lk->hv);
        lk->disk = true;
        return it;
    }
    return NULL;
}

bool ac_maybe_spilled(uint64_t fp) {
    return ac.spill->maybe(fp);
}

uint64_t ac_spilled_now(void) {
    struct ac_tier_stats ts;
    memset(&ts, 0, sizeof(ts));
    ac.tier->get_stats(&ts);
    return ts.spilled;
}

/* Normally a lookup fetches a spilled key before anything links it again, so
 * this finds nothing (and a fetch that dropped the key's only copy to link it
 * is not even asked: struct ac_lookup sole_copy). It matters when that fetch
 * failed (unreadable record, no memory) and a store then linked a new value:
 * the old copy must not come back once the new one is spilled too.
 * Unreadable records under the same fingerprint are dropped with it. */
void ac_drop_stale_copies(struct ac_scratch *s, item *it) {
    uint64_t fp = ac_key_fp(ITEM_key(it), it->nkey);
    struct ac_loc locs[AC_LOCS];
    int n = ac.spill->peek(fp, locs, AC_LOCS);
    for (int i = 0; i < n && i < AC_LOCS; i++) {
        struct ac_record r;
        enum ac_error e;
        if (ac_read_record_at(s, NULL, fp, &locs[i], AC_RR_HEADER, ITEM_key(it), it->nkey, &r, &e)
                != AC_READ_OTHER_KEY)
            ac_drop_spilled(fp, &locs[i]);
    }
}

/* A plain set replaces whatever value the key had: a spilled one is dropped
 * without being read (H-Store does not read an evicted tuple it overwrites).
 * Identity is the 64-bit fingerprint: another spilled key with the same
 * fingerprint would be dropped with it; with n spilled items that happens to a
 * set with probability n / 2^64 (5e-14 at a million), which we accept here and
 * nowhere else (every read compares the key). */
void ac_overwrite(uint64_t fp) {
    struct ac_loc locs[AC_LOCS];
    int n = ac.spill->peek(fp, locs, AC_LOCS);
    for (int i = 0; i < n && i < AC_LOCS; i++)
        if (ac_drop_spilled(fp, &locs[i]))
            AC_COUNT(overwritten_unread, 1);
}

/* The record of lk's key as the tier holds it now, read and verified (*r
 * points into lk's fetch buffer), its location in *loc. The key's item lock
 * is held: the record cannot move or go meanwhile. 0, or -1 when there is none
 * (or it is unreadable: a request answers that error). seen: where the fetch
 * buffer already holds bytes read with no lock held, after the tier named that
 * place token (read_token): when the record is still there and the place was
 * not taken again since (read_valid), those bytes are the record's and are not
 * read again. */
static int record_of(struct ac_lookup *lk, struct ac_record *r, struct ac_loc *loc, const struct ac_loc *seen,
                     uint64_t token) {
    struct ac_loc locs[AC_LOCS];
    int n = ac.spill->peek(lk->fp, locs, AC_LOCS);
    for (int i = 0; i < n && i < AC_LOCS; i++) {
        unsigned how = AC_RR_MIGRATE;
        if (seen != NULL && ac_loc_same(seen, &locs[i]) && ac.spill->read_valid != NULL &&
                ac.spill->read_valid(seen, token))
            how |= AC_RR_SEEN;
        enum ac_error e;
        if (ac_read_record_at(lk->scratch, lk->pf, lk->fp, &locs[i], how, lk->key, lk->nkey, r, &e) == AC_READ_OK) {
            *loc = locs[i];
            lk->sole_copy = n == 1;
            return 0;
        }
    }
    return -1;
}

/* The records of fp at locs (n of them, found before) back into RAM: how many
 * came, or -1 when memory could not be had. */
static int migrate_one(struct ac_scratch *s, struct ac_prefetcher *pf, uint64_t fp, const struct ac_loc *locs,
                       int n) {
    int moved = 0;
    for (int i = 0; i < n && i < AC_LOCS; i++) {
        /* read without the key's lock, only to learn the key: the location may
         * be stale by the time the lock is held (fetched, moved by cleaning);
         * the tier's name for the place, taken first, tells record_of whether
         * these bytes still are the record's. Bytes read ahead are checked
         * again by record_of itself. */
        bool ahead = ac_prefetched(pf, fp, &locs[i]) != NULL;
        uint64_t token = !ahead && ac.spill->read_token != NULL ? ac.spill->read_token(&locs[i]) : 0;
        struct ac_record r;
        enum ac_error e;
        if (ac_read_record_at(s, ahead ? pf : NULL, fp, &locs[i], AC_RR_HEADER, NULL, 0, &r, &e) != AC_READ_OK)
            continue;      /* left in place: a request for it answers the error */
        char key[KEY_MAX_LENGTH + 1];
        size_t nkey = r.nkey;
        memcpy(key, r.key, nkey);
        uint32_t hv = hash(key, nkey);
        item_lock(hv);
        /* under the lock: not brought in by a request meanwhile, and its record as it is now */
        struct ac_lookup lk = { .key = key, .nkey = nkey, .hv = hv, .fp = fp, .alloc = AC_ALLOC_TRY, .pf = pf,
                                .scratch = s };
        struct ac_loc loc;
        const struct ac_loc *seen = !ahead && ac.spill->read_token != NULL ? &locs[i] : NULL;
        if (assoc_find(key, nkey, hv) == NULL && record_of(&lk, &r, &loc, seen, token) == 0) {
            /* a migration waits for the next round rather than for room: AC_ALLOC_TRY */
            bool claimed = false;
            item *m = ac_materialize(&lk, &r, &loc, &claimed);
            if (m == NULL) {
                item_unlock(hv);
                return -1;
            }
            moved++;
            AC_COUNT(fetched_items, 1);
            AC_COUNT(fetched_bytes, loc.len);
            if (ac.spill->begin_merge != NULL && ac.spill->begin_merge(loc.block, claimed))
                ac_compact(s, loc.block, claimed, &hv);   /* as a fetch does (lazy compaction) */
        }
        item_unlock(hv);
    }
    return moved;
}

int ac_migrate_in(const uint64_t *fps, int n, struct ac_prefetcher *pf, bool *nomem) {
    struct ac_scratch *s = &ac_thread()->scratch;
    struct ac_loc locs[AC_MIGRATE_BATCH][AC_LOCS];
    int nl[AC_MIGRATE_BATCH];
    if (n > AC_MIGRATE_BATCH)
        n = AC_MIGRATE_BATCH;
    for (int i = 0; i < n; i++) {
        nl[i] = ac.spill->find(fps[i], locs[i], AC_LOCS);
        for (int j = 0; pf != NULL && j < nl[i] && j < AC_LOCS; j++)
            ac_prefetch_at(pf, fps[i], &locs[i][j]);
    }
    int moved = 0;
    for (int i = 0; i < n; i++) {
        int k = migrate_one(s, pf, fps[i], locs[i], nl[i]);
        if (k < 0) {
            *nomem = true;
            break;
        }
        moved += k;
    }
    if (pf != NULL)
        ac_prefetch_batch(pf);
    return moved;
}
