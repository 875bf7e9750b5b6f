/* Moving items between RAM and the cold tier (anti-caching, DeBrabant et al.
 * VLDB 2013 §3): spill the coldest items of a slab class the policy picks
 * (a block's worth when the tier buffers blocks, a batch when it writes at
 * once); fetch a spilled item back on lookup, merging its whole block when
 * the tier says so (block merge, or lazy compaction). A policy that keeps
 * reads cold (fetch_on_read false: Siberia) has a read of a spilled item
 * served from its record as a transient copy; lookups that modify it bring
 * it back (materialize). The tier is asked (core/ac_tier.h), never named.
 * Lock order: item lock -> spill_lock -> LRU lock -> evicted stripe / store lock.
 * Other items' locks are only ever try-locked. No I/O happens under an LRU lock. */
#include "memcached.h"
#include "ac_internal.h"
#include "ac_chunk.h"
#include "store/compress.h"
#include "store/record.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Per-thread scratch buffers: one for building records, one for reading them
 * (a fetch may spill while it holds the record it read). */
struct scratch { char *p; size_t cap; };
static __thread struct scratch spill_buf, fetch_buf, codec_buf, value_buf;
static __thread item *tl_fetched;
/* The error this thread's current request answers (ac_hooks.h: the one place
 * where an error crosses memcached's pointer-returning item API); inside the
 * core errors travel as return values (enum ac_error). */
static __thread const char *tl_error;

static char *scratch_get(struct scratch *s, size_t n) {
    if (n > s->cap) {
        char *p = realloc(s->p, n);
        if (p == NULL)
            return NULL;
        s->p = p;
        s->cap = n;
    }
    return s->p;
}

bool ac_take_fetched(item *it) {
    if (tl_fetched != it)
        return false;
    tl_fetched = NULL;
    return true;
}

const char *ac_error_text(enum ac_error e) {
    switch (e) {
    case AC_ERR_READ: return "SERVER_ERROR anti-caching: reading a spilled item failed";
    case AC_ERR_CHECKSUM: return "SERVER_ERROR anti-caching: a spilled item failed its checksum";
    case AC_ERR_NOMEM_FETCH: return "SERVER_ERROR out of memory fetching a spilled item";
    case AC_ERR_NOMEM_STORE: return "SERVER_ERROR out of memory storing object";
    default: return NULL;
    }
}

const char *ac_lookup_error(void) {
    return tl_error;
}

void ac_answer_error(enum ac_error e) {
    tl_error = ac_error_text(e);
}

const char *ac_take_lookup_error(void) {
    const char *e = tl_error;
    tl_error = NULL;
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

static bool item_dead(item *it) {
    return (it->exptime != 0 && it->exptime <= current_time) || item_is_flushed(it);
}

/* The spilled records' own options (tiers blocks and tuples list this table). */
struct record_options {
    unsigned compress;               /* ac_compress: an AC_CODEC_* */
};
static struct record_options rec_opt;

static const struct ac_word compress_words[] = {
    { "none", "values stored as they are", AC_CODEC_NONE, NULL },
    { "lz4", "liblz4, fast", AC_CODEC_LZ4, NULL },
    { "zstd", "libzstd level 1, smaller", AC_CODEC_ZSTD, NULL },
    { NULL, NULL, 0, NULL },
};

static const struct ac_opt record_opts[] = {
    { .key = "ac_compress", .type = AC_T_ENUM, AC_FIELD(struct record_options, compress),
      .words = compress_words, .def = "none", .def_is_value = true,
      .help = "compress each spilled value (kept as is when it would not shrink)" },
};
const struct ac_opt_table ac_record_options = AC_OPT_TABLE("spilled records (tiers blocks and tuples)",
                                                           record_opts, &rec_opt);

const char *ac_compression(void) {
    return ac_codec_name((int)rec_opt.compress);
}

/* Compresses the sealed record buf (*lenp bytes) in place when ac_compress asks. */
static void compress_record(char *buf, size_t *lenp, size_t nbytes) {
    int codec = (int)rec_opt.compress;
    size_t cap = ac_compress_bound(codec, nbytes);
    char *tmp = cap > 0 ? scratch_get(&codec_buf, cap) : NULL;
    AC_COUNT(compress_in_bytes, nbytes);
    if (tmp == NULL) {                   /* stored as is: still a valid record */
        AC_COUNT(compress_out_bytes, nbytes);
        AC_COUNT(compress_skipped, 1);
        return;
    }
    size_t len = ac_record_compress(buf, *lenp, codec, tmp, cap);
    AC_COUNT(compress_out_bytes, nbytes - (*lenp - len));
    if (len == *lenp)
        AC_COUNT(compress_skipped, 1);
    *lenp = len;
}

/* Builds the record of a resident item in this thread's spill buffer. */
static char *item_to_record(item *it, size_t *lenp) {
    size_t len = ac_record_size(it->nkey, it->nbytes);
    char *buf = scratch_get(&spill_buf, len);
    if (buf == NULL)
        return NULL;
    struct ac_record r = {
        .len = (uint32_t)len, .nbytes = (uint32_t)it->nbytes, .exptime = it->exptime,
        .time = it->time, .cas = ITEM_get_cas(it), .nkey = it->nkey,
    };
    if (it->it_flags & ITEM_CFLAGS)   /* after the key: unaligned, hence no FLAGS_CONV */
        memcpy(&r.client_flags, ITEM_suffix(it), sizeof(r.client_flags));
    ac_record_put_header(buf, &r);
    memcpy(buf + AC_RECORD_HDR, ITEM_key(it), it->nkey);
    char *dst = buf + AC_RECORD_HDR + it->nkey;
    if ((it->it_flags & ITEM_CHUNKED) == 0) {
        memcpy(dst, ITEM_data(it), it->nbytes);
    } else {
        for (char *ch = ac_chunk_first(it); ch != NULL; ch = ac_chunk_next(ch)) {
            int used = ac_chunk_used(ch);
            memcpy(dst, ac_chunk_data(ch), (size_t)used);
            dst += used;
        }
    }
    ac_record_seal(buf, len);
    *lenp = len;
    if (rec_opt.compress != AC_CODEC_NONE)
        compress_record(buf, lenp, (size_t)it->nbytes);
    return buf;
}

/* A record read from the tier; the bytes asked for are counted (record_read_bytes:
 * what the disk reads are compared with, read amplification). */
static int tier_read(const struct ac_loc *loc, void *buf) {
    int rc = ac.tier->read(loc, buf);
    if (rc == 0)
        AC_COUNT(record_read_bytes, loc->len);
    return rc;
}

/* A verified record's compressed value expanded into this thread's value
 * buffer (r->value then points there): AC_ERR_NONE; AC_ERR_CHECKSUM when it
 * does not expand to its length or claims more than an item can hold (a bad
 * record under a good CRC); AC_ERR_READ when the buffer cannot be had. */
static enum ac_error expand_value(struct ac_record *r) {
    if (r->codec == AC_CODEC_NONE)
        return AC_ERR_NONE;
    if (r->nbytes > (uint32_t)settings.item_size_max + 2)
        return AC_ERR_CHECKSUM;
    char *dst = scratch_get(&value_buf, r->nbytes);
    if (dst == NULL)
        return AC_ERR_READ;
    return ac_record_expand(r, dst) == 0 ? AC_ERR_NONE : AC_ERR_CHECKSUM;
}

/* Parses and verifies a record of exactly len bytes and expands its value. */
static enum ac_error parse_record(const char *buf, size_t len, struct ac_record *r) {
    if (ac_record_parse(buf, len, r) != AC_REC_OK || r->len != len)
        return AC_ERR_CHECKSUM;
    return expand_value(r);
}

/* Copies n value bytes into a freshly allocated item, chunked or not. */
int ac_item_fill(item *it, const char *src, size_t n) {
    if ((it->it_flags & ITEM_CHUNKED) == 0) {
        memcpy(ITEM_data(it), src, n);
        return 0;
    }
    char *ch = ac_chunk_first(it);     /* ac_chunk.h: the first one is unaligned */
    size_t done = 0;
    while (done < n) {
        int used = ac_chunk_used(ch);
        if (used == ac_chunk_size(ch)) {
            item_chunk *nch = do_item_alloc_chunk((item_chunk *)(void *)ch, n - done);
            if (nch == NULL)
                return -1;
            ch = (char *)nch;
            used = ac_chunk_used(ch);
        }
        size_t k = (size_t)(ac_chunk_size(ch) - used);
        if (k > n - done)
            k = n - done;
        memcpy(ac_chunk_data(ch) + used, src + done, k);
        ac_chunk_set_used(ch, used + (int)k);
        done += k;
    }
    return 0;
}

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
static enum spill_result spill_one(item *it, enum ac_refusal *why) {
    if (item_dead(it))
        return SPILL_DEAD;
    size_t len;
    char *rec = item_to_record(it, &len);
    if (rec == NULL) {
        *why = AC_REFUSED_IO_ERROR;      /* no memory for the record buffer */
        return SPILL_FAIL;
    }
    struct ac_loc loc;
    int rc = ac.tier->put(ac_key_fp(ITEM_key(it), it->nkey), rec, len, &loc);
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
static int spill_batch(unsigned int clsid, item **cand, int n, bool *full, enum ac_refusal *why) {
    int spilled = 0;
    *full = false;
    *why = AC_REFUSED_NONE;
    for (int i = 0; i < n && !*full && *why == AC_REFUSED_NONE; i++) {
        uint32_t hv;
        void *lk = ac_grab_item(cand[i], clsid, &hv);
        if (lk == NULL)
            continue;
        enum spill_result r = spill_one(cand[i], why);
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
    if (ac.tier->flush == NULL)
        return 0;
    int rc = ac.tier->flush();
    if (rc != 0)
        *why = write_refusal(rc);
    return rc;
}

int ac_spill_items(unsigned int clsid, item **cand, int n, unsigned epoch) {
    int spilled = 0;
    pthread_mutex_lock(&ac.spill_lock);
    while (n > 0 && epoch == ac_page_epoch()) {
        bool full;
        enum ac_refusal why;
        int k = spill_batch(clsid, cand, n, &full, &why);
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
    pthread_mutex_unlock(&ac.spill_lock);
    ac_budget_changed();
    return spilled;
}

int ac_make_room_locked(unsigned int clsid, enum ac_refusal *why) {
    int spilled = 0;
    *why = AC_REFUSED_NONE;
    for (int batch = 0;; batch++) {
        item *cand[16];
        int n = ac.policy->pick_victims(clsid, cand, 16);
        bool full;
        int k = spill_batch(clsid, cand, n, &full, why);
        spilled += k;
        if (*why != AC_REFUSED_NONE)
            break;
        if (full) {
            if (flush_block(why) != 0 || spilled > 0)
                break;
            continue;
        }
        if (n == 0)
            break;
        /* a tier that buffers blocks: a block of this class's coldest items
         * (H-Store spills a block at a time); one that writes at once: a batch
         * with something in it is enough room (a busy batch: the victim list
         * moves on, a few more) */
        if (ac.tier->flush == NULL ? k > 0 || batch >= 3 : k == 0)
            break;
    }
    ac_budget_changed();
    return spilled;
}

bool ac_rescue(item *it, bool may_block) {
    if (item_dead(it))
        return true;
    if (!ac_tier_spills())
        return false;        /* nowhere to put it: the mover retries later */
    enum ac_refusal why;
    enum spill_result r = spill_one(it, &why);
    if (r == SPILL_FULL && may_block) {
        if (flush_block(&why) == 0)
            r = spill_one(it, &why);
    }
    if (r == SPILL_OK) {
        AC_COUNT(rescued_items, 1);
        return true;
    }
    return r == SPILL_DEAD;
}

/* Builds a resident item from a verified record and links it in place of the
 * evicted-table entry (item lock for hv held). *merge is set when the record's
 * block should now be merged whole. Returns the item (reference as assoc_find
 * gives it), or NULL: out of memory, or the entry is gone. */
static item *materialize(const struct ac_record *r, uint32_t hv, uint64_t fp,
                         const struct ac_loc *loc, int *merge) {
    item *it = do_item_alloc((char *)r->key, r->nkey, r->client_flags, r->exptime, (int)r->nbytes);
    if (it == NULL)
        return NULL;
    int rc;
    if (ac_item_fill(it, r->value, r->nbytes) != 0 || (rc = ac.tier->drop(fp, loc)) < 0) {
        do_item_remove(it);
        return NULL;
    }
    *merge = rc == 1;
    uint64_t cas = r->cas;      /* r may point into the scratch buffer linking reuses */
    rel_time_t time = r->time;
    do_item_link(it, hv);
    ITEM_set_cas(it, cas);      /* the item keeps its identity: same CAS, same age */
    it->time = time;
    do_item_remove(it);         /* drop the allocation's reference: the hash keeps one */
    return it;
}

int ac_walk_block(uint32_t block, bool (*each)(const struct ac_walk *w, void *arg), void *arg) {
    void *buf;
    ssize_t len = ac.tier->read_block(block, &buf);
    if (len < 0) {
        ac.tier->merge_done(block);
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
    ac.tier->merge_done(block);
    return done;
}

bool ac_spilled_at(uint64_t fp, const struct ac_loc *loc) {
    struct ac_loc locs[4];
    int n = ac.tier->peek(fp, locs, 4);
    for (int i = 0; i < n && i < 4; i++)
        if (locs[i].block == loc->block && locs[i].offset == loc->offset)
            return true;
    return false;
}

/* One record of a block being merged back into RAM (H-Store block-merge):
 * skipped when it is no longer spilled there or its key is locked by others. */
static bool merge_record(const struct ac_walk *w, void *arg) {
    (void)arg;
    if (!ac_spilled_at(w->fp, &w->loc))
        return true;
    uint32_t hv = hash(w->r.key, w->r.nkey);
    void *lk = item_trylock(hv);
    if (lk == NULL)
        return true;
    struct ac_record r = w->r;
    enum ac_error e = expand_value(&r);     /* only the records brought back are expanded */
    if (e != AC_ERR_NONE) {
        if (e == AC_ERR_CHECKSUM)
            AC_COUNT(checksum_errors, 1);
        item_trylock_unlock(lk);
        return true;                       /* stays spilled: a request for it answers the error */
    }
    int ignored;
    ac_alloc_free_only(true);      /* block-mates come back into free chunks only */
    item *it = materialize(&r, hv, w->fp, &w->loc, &ignored);
    if (it != NULL) {
        /* not asked for: the cold end (H-Store, DeBrabant et al. VLDB 2013 §3.4) */
        if (ac.policy->on_merged != NULL)
            ac.policy->on_merged(it);
        AC_COUNT(merged_items, 1);
    }
    ac_alloc_free_only(false);
    item_trylock_unlock(lk);
    return true;
}

void ac_merge_block(uint32_t block) {
    if (ac_walk_block(block, merge_record, NULL) >= 0)
        AC_COUNT(merged_blocks, 1);
}

/* The spilled locations stored under fp (up to 4), without counting a
 * lookup (the Bloom filter's own answer, or an empty table, first). */
static int spilled_locs(uint64_t fp, struct ac_loc locs[4]) {
    return ac.tier->peek(fp, locs, 4);
}

/* A drop that left its block below the compaction threshold claimed the
 * block for a whole-block merge (tier->drop returned 1). A path that does not
 * merge it now releases the claim, or the block would stay claimed for good
 * (never merged, its id never reused): a later fetch from it claims it again. */
static void release_claim(int rc, const struct ac_loc *loc) {
    if (rc == 1 && ac.tier->merge_done != NULL)
        ac.tier->merge_done(loc->block);
}

/* Drops the spilled record (fp, loc): true if it was there. */
static bool drop_spilled(uint64_t fp, const struct ac_loc *loc) {
    int rc = ac.tier->drop(fp, loc);
    release_claim(rc, loc);
    return rc >= 0;
}

bool ac_maybe_spilled(uint64_t fp) {
    return ac.tier->maybe(fp);
}

/* Normally a lookup fetches a spilled key before anything links it again, so
 * this finds nothing. It matters when that fetch failed (unreadable record, no
 * memory) and a store then linked a new value: the old copy must not come back
 * once the new one is spilled too. Unreadable records under the same
 * fingerprint are dropped with it. */
void ac_drop_stale_copies(item *it) {
    uint64_t fp = ac_key_fp(ITEM_key(it), it->nkey);
    struct ac_loc locs[4];
    int n = spilled_locs(fp, locs);
    for (int i = 0; i < n && i < 4; i++) {
        char *buf = scratch_get(&fetch_buf, locs[i].len);
        struct ac_record r;
        int rc = buf == NULL ? -ENOMEM : tier_read(&locs[i], buf);
        bool ours = rc != 0 || ac_record_parse(buf, locs[i].len, &r) != AC_REC_OK
            || (r.nkey == it->nkey && memcmp(r.key, ITEM_key(it), it->nkey) == 0);
        if (ours)
            drop_spilled(fp, &locs[i]);
    }
}

/* A plain set replaces whatever value the key had: a spilled one is dropped
 * without being read (H-Store does not read an evicted tuple it overwrites).
 * Identity is the 64-bit fingerprint: another spilled key with the same
 * fingerprint would be dropped with it; with n spilled items that happens to a
 * set with probability n / 2^64 (5e-14 at a million), which we accept here and
 * nowhere else (every read compares the key). */
void ac_item_overwrite(const char *key, size_t nkey, uint32_t hv) {
    if (!ac_tier_spills() || assoc_find(key, nkey, hv) != NULL)
        return;                       /* resident: memcached replaces it */
    uint64_t fp = ac_key_fp(key, nkey);
    struct ac_loc locs[4];
    int n = spilled_locs(fp, locs);
    for (int i = 0; i < n && i < 4; i++)
        if (drop_spilled(fp, &locs[i]))
            AC_COUNT(overwritten_unread, 1);
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
    if (item_dead(it)) {
        drop_spilled(fp, loc);
        free(it);
        return NULL;
    }
    return it;
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
    ac_answer_error(AC_ERR_NOMEM_FETCH);
    return NULL;
}

/* Reads the record of fp at loc from the tier, or takes what this thread's
 * driver read ahead (ac_prefetch.c), and verifies it (*r then points into that
 * buffer); a failure is counted. */
static enum ac_error read_record(uint64_t fp, const struct ac_loc *loc, struct ac_record *r) {
    char *buf = ac_prefetched(fp, loc);
    if (buf != NULL) {
        AC_COUNT(record_read_bytes, loc->len);
        if (parse_record(buf, loc->len, r) == AC_ERR_NONE)
            return AC_ERR_NONE;
        /* bytes read ahead that do not verify: the record read again, as at depth 1 */
    }
    if ((buf = scratch_get(&fetch_buf, loc->len)) == NULL || tier_read(loc, buf) != 0) {
        AC_COUNT(read_errors, 1);
        return AC_ERR_READ;
    }
    enum ac_error e = parse_record(buf, loc->len, r);
    if (e == AC_ERR_CHECKSUM)
        AC_COUNT(checksum_errors, 1);
    else if (e == AC_ERR_READ)
        AC_COUNT(read_errors, 1);
    return e;
}

/* A read served from the record: a transient copy, the item stays spilled. */
static item *read_through(const struct ac_record *r, uint64_t fp, const struct ac_loc *loc) {
    item *it = transient_copy(r, fp, loc);
    if (it != NULL) {
        AC_COUNT(read_through_items, 1);
        tl_fetched = it;
    }
    return it;
}

/* The record of key (fingerprint fp) as the tier holds it now, read and
 * verified (*r points into this thread's fetch buffer), its location in *loc.
 * The key's item lock is held: the record cannot move or go meanwhile. 0, or
 * -1 when there is none (or it is unreadable: a request answers that error).
 * seen: where this thread's fetch buffer already holds bytes read with no lock
 * held, after the tier named that place token (read_token): when the record
 * is still there and the place was not taken again since (read_valid), those
 * bytes are the record's and are not read again. */
static int record_of(const char *key, size_t nkey, uint64_t fp, struct ac_record *r, struct ac_loc *loc,
                     const struct ac_loc *seen, uint64_t token) {
    struct ac_loc locs[4];
    int n = ac.tier->peek(fp, locs, 4);
    for (int i = 0; i < n && i < 4; i++) {
        char *buf = ac_prefetched(fp, &locs[i]);       /* read in flight by ac_migrate_in */
        bool have = buf != NULL;
        if (!have) {
            buf = scratch_get(&fetch_buf, locs[i].len);
            have = seen != NULL && buf != NULL && seen->block == locs[i].block && seen->offset == locs[i].offset &&
                   seen->len == locs[i].len && ac.tier->read_valid != NULL && ac.tier->read_valid(seen, token);
        }
        if (have)
            AC_COUNT(migrate_reads_saved, 1);
        if (buf == NULL || (!have && tier_read(&locs[i], buf) != 0) || parse_record(buf, locs[i].len, r) != AC_ERR_NONE)
            continue;
        if (r->nkey == nkey && memcmp(r->key, key, nkey) == 0) {
            *loc = locs[i];
            return 0;
        }
    }
    return -1;
}

/* The records of fp at locs (n of them, found before) back into RAM: how many
 * came, or -1 when memory could not be had. */
static int migrate_one(uint64_t fp, const struct ac_loc *locs, int n) {
    int moved = 0;
    for (int i = 0; i < n && i < 4; i++) {
        /* read without the key's lock, only to learn the key: the location may
         * be stale by the time the lock is held (fetched, moved by cleaning);
         * the tier's name for the place, taken first, tells record_of whether
         * these bytes still are the record's. Bytes read ahead (ac_prefetched)
         * are checked again by record_of itself. */
        char *buf = ac_prefetched(fp, &locs[i]);
        bool ahead = buf != NULL;
        uint64_t token = 0;
        if (ahead) {
            AC_COUNT(record_read_bytes, locs[i].len);   /* as tier_read counts its own */
        } else {
            token = ac.tier->read_token != NULL ? ac.tier->read_token(&locs[i]) : 0;
            buf = scratch_get(&fetch_buf, locs[i].len);
            if (buf != NULL && tier_read(&locs[i], buf) != 0)
                buf = NULL;
        }
        struct ac_record r;
        if (buf == NULL || ac_record_parse(buf, locs[i].len, &r) != AC_REC_OK || r.len != locs[i].len)
            continue;      /* left in place: a request for it answers the error */
        char key[KEY_MAX_LENGTH + 1];
        size_t nkey = r.nkey;
        memcpy(key, r.key, nkey);
        uint32_t hv = hash(key, nkey);
        item_lock(hv);
        /* under the lock: not brought in by a request meanwhile, and its record as it is now */
        struct ac_loc loc;
        const struct ac_loc *seen = !ahead && ac.tier->read_token != NULL ? &locs[i] : NULL;
        if (assoc_find(key, nkey, hv) == NULL && record_of(key, nkey, fp, &r, &loc, seen, token) == 0) {
            int merge = 0;
            ac_alloc_optional(true);   /* migration waits for the next round rather than for room */
            item *m = materialize(&r, hv, fp, &loc, &merge);
            ac_alloc_optional(false);
            if (m == NULL) {
                item_unlock(hv);
                return -1;
            }
            moved++;
            AC_COUNT(fetched_items, 1);
            AC_COUNT(fetched_bytes, loc.len);
            if (ac.tier->begin_merge != NULL && ac.tier->begin_merge(loc.block, merge))
                ac_compact(loc.block, merge);   /* as a fetch does (lazy compaction) */
        }
        item_unlock(hv);
    }
    return moved;
}

int ac_migrate_in(const uint64_t *fps, int n, struct ac_prefetcher *pf, bool *nomem) {
    struct ac_loc locs[AC_MIGRATE_BATCH][4];
    int nl[AC_MIGRATE_BATCH];
    if (n > AC_MIGRATE_BATCH)
        n = AC_MIGRATE_BATCH;
    for (int i = 0; i < n; i++) {
        nl[i] = ac.tier->find(fps[i], locs[i], 4);
        for (int j = 0; pf != NULL && j < nl[i] && j < 4; j++)
            ac_prefetch_at(pf, fps[i], &locs[i][j]);
    }
    int moved = 0;
    for (int i = 0; i < n; i++) {
        int k = migrate_one(fps[i], locs[i], nl[i]);
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

/* The lookup behind ac_item_find for a key not in RAM: its spilled record, read
 * back (fetch), served from the record (read-through), or none. *err says why
 * there is no item when the key does have a record that could not be used. */
static item *fetch(const char *key, size_t nkey, uint32_t hv, bool do_update, enum ac_error *err) {
    uint64_t fp = ac_key_fp(key, nkey);
    struct ac_loc locs[4];
    int n = ac.tier->find(fp, locs, 4);
    if (n < 0) {
        AC_COUNT(read_errors, 1);
        *err = AC_ERR_READ;
        return NULL;
    }
    for (int i = 0; i < n && i < 4; i++) {
        struct ac_record r;
        if ((*err = read_record(fp, &locs[i], &r)) != AC_ERR_NONE)
            return NULL;
        if (r.nkey != nkey || memcmp(r.key, key, nkey) != 0)
            continue;      /* another key with the same fingerprint */
        /* Siberia: a read is served from the cold store, the item stays cold */
        if (do_update && !ac.policy->fetch_on_read)
            return read_through(&r, fp, &locs[i]);
        int merge = 0;
        item *it = materialize(&r, hv, fp, &locs[i], &merge);
        if (it == NULL && do_update)
            return read_through(&r, fp, &locs[i]);   /* no memory: this read from the record */
        if (it == NULL) {
            AC_COUNT(fetch_nomem, 1);
            *err = AC_ERR_NOMEM_FETCH;
            return NULL;
        }
        AC_COUNT(fetched_items, 1);
        AC_COUNT(fetched_bytes, r.len);
        if (ac.tier->begin_merge != NULL && ac.tier->begin_merge(locs[i].block, merge))
            ac_compact(locs[i].block, merge);
        tl_fetched = it;
        return it;
    }
    return NULL;
}

item *ac_item_find(const char *key, size_t nkey, uint32_t hv, bool do_update) {
    tl_fetched = NULL;
    tl_error = NULL;
    bool may_park = ac_park_take();
    if (!ac_tier_spills()) {
        ac_fault_mark();             /* the hash walk may fault too */
        return assoc_find(key, nkey, hv);
    }
    item *it = assoc_find(key, nkey, hv);
    if (it != NULL)
        return it;
    if (may_park && ac.tier->maybe(ac_key_fp(key, nkey))) {
        ac_park_mark();              /* a fetcher reads it (ac_park.c) */
        return NULL;
    }
    enum ac_error err = AC_ERR_NONE;
    it = fetch(key, nkey, hv, do_update, &err);
    /* served (a read-through may follow a refused allocation): no error stays */
    ac_answer_error(it == NULL ? err : AC_ERR_NONE);
    return it;
}
