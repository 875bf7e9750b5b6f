/* Unit test of the core's request path (core/: ac_hooks, ac_fetch,
 * ac_materialize, ac_compact, ac_room, ac_spill, ac_record, ac_prefetch,
 * ac_state) over the stand-in of memcached (tests/fake/memcached.h with
 * AC_FAKE_CORE: a table of resident items, item locks, an allocator with a
 * settable number of free chunks that calls ac_alloc when it has none, as the
 * patched do_item_alloc_pull does), a FIFO policy and an in-memory spilling
 * tier that counts what it is asked (find, peek, read, drop), can fail puts
 * and reads, names each block's space by a generation (read tokens), and
 * claims a block for a merge when a drop leaves it below a set fill.
 * Checked, step by step:
 *  - lookup: a resident key is a memory hit and asks the tier nothing; an
 *    absent one asks once; a spilled one comes back as a disk hit, with its
 *    CAS and age, its record dropped, and linking it does not look the key up
 *    again when that was its only copy (but drops a stale copy when not);
 *    the policy sees a disk hit through on_fetched when it has one, else
 *    through on_access as a hit in RAM;
 *  - fetch: a record of another key under the same fingerprint is passed
 *    over; a failed read and a damaged record answer their errors (not a
 *    miss); a read under a policy that keeps reads cold, or without memory,
 *    is served from the record (a transient copy, the item stays spilled) and
 *    a modify then brings it in or answers the memory error;
 *  - make room: the named outcomes (made, none, refused by reason), ac_alloc's
 *    refusals counted by reason, the error a store answers, a migration's
 *    allocation only trying, a block-mate's taking free chunks only, a fetch
 *    that needs room spilling the oldest item;
 *  - park: a get allowed to park is parked without a read when the tier may
 *    hold the key, and read as usual when it cannot;
 *  - prefetch tokens: bytes read ahead serve the fetch when the block's
 *    space was not taken again (no second read), and are read again when it
 *    was; a key asked for twice is read once;
 *  - compaction claims: a drop that claims its block merges the block-mates
 *    back at the cold end (into free chunks only; none: they stay spilled),
 *    and every claim is released; an overwrite's claim too. */
#include "memcached.h"          /* tests/fake/, with AC_FAKE_CORE (the Makefile defines it) */
#include "ac_internal.h"
#include "check.h"
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- the stand-in of memcached ---------------------------------------------- */

struct settings settings = { .use_cas = true, .item_size_max = 1024 * 1024, .slab_page_size = 1024 * 1024 };
volatile rel_time_t current_time = 1000;
struct stats_state stats_state;
pthread_mutex_t lru_locks[POWER_LARGEST];
struct ac_options ac_opts;

#define MAX_ITEMS 512
static item *resident[MAX_ITEMS];      /* linked items, oldest first */
static int nresident;
static int free_chunks;                /* chunks slabs_alloc can still hand out */
static uint64_t next_cas = 100;
static int locks_held;
static const char *answered;           /* out_errstring's text */

uint32_t hash(const void *key, size_t length) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < length; i++)
        h = (h ^ ((const unsigned char *)key)[i]) * 16777619u;
    return h;
}

int item_is_flushed(item *it) {
    (void)it;
    return 0;
}

/* Item locks, one thread: a key's lock is held or not (memcached's are a table of
 * mutexes by hash; a try-lock of a held one fails, as spill rounds meet it). */
static uint32_t held[32];

static void hold(uint32_t hv) {
    held[locks_held++] = hv;
}

static void release(uint32_t hv) {
    for (int i = locks_held - 1; i >= 0; i--)
        if (held[i] == hv) {
            held[i] = held[--locks_held];
            return;
        }
    CHECK(!"an item lock released that was not held");
}

void item_lock(uint32_t hv) {
    hold(hv);
}

void item_unlock(uint32_t hv) {
    release(hv);
}

unsigned int item_lock_hashpower = 32;     /* the locks above: one per hash value */

static uint32_t trylocked[32];
static int ntrylocked;

void *item_trylock(uint32_t hv) {
    for (int i = 0; i < locks_held; i++)
        if (held[i] == hv)
            return NULL;
    hold(hv);
    trylocked[ntrylocked++] = hv;
    return &trylocked[ntrylocked - 1];
}

void item_trylock_unlock(void *lock) {
    uint32_t hv = *(uint32_t *)lock;
    release(hv);
    for (int i = ntrylocked - 1; i >= 0; i--)
        if (trylocked[i] == hv) {
            trylocked[i] = trylocked[--ntrylocked];
            break;
        }
}

void out_errstring(conn *c, const char *str) {
    (void)c;
    answered = str;
}

unsigned short refcount_incr(item *it) {
    return ++it->refcount;
}

unsigned short refcount_decr(item *it) {
    return --it->refcount;
}

item *assoc_find(const char *key, const size_t nkey, const uint32_t hv) {
    (void)hv;
    for (int i = 0; i < nresident; i++)
        if (resident[i]->nkey == nkey && memcmp(ITEM_key(resident[i]), key, nkey) == 0)
            return resident[i];
    return NULL;
}

void *slabs_alloc(const size_t size, unsigned int id, unsigned int flags) {
    (void)id;
    (void)flags;
    if (free_chunks <= 0)
        return NULL;
    free_chunks--;
    return calloc(1, size + 64);
}

item *do_item_alloc(const char *key, const size_t nkey, const unsigned int flags, const rel_time_t exptime,
                    const int nbytes) {
    size_t ntotal = sizeof(item) + nkey + 1 + (size_t)nbytes + (settings.use_cas ? 8 : 0) + (flags ? 4 : 0);
    item *it = slabs_alloc(ntotal, 1, 0);
    if (it == NULL && ac_enabled)
        it = ac_alloc(ntotal, 1);      /* as the patched do_item_alloc_pull */
    if (it == NULL)
        return NULL;
    memset(it, 0, sizeof(*it));
    it->slabs_clsid = 1;
    it->refcount = 1;
    it->nkey = (uint8_t)nkey;
    it->nbytes = nbytes;
    it->exptime = exptime;
    it->it_flags = (settings.use_cas ? ITEM_CAS : 0) | (flags ? ITEM_CFLAGS : 0);
    memcpy(ITEM_key(it), key, nkey);
    ITEM_key(it)[nkey] = '\0';
    if (flags)
        memcpy(ITEM_suffix(it), &flags, sizeof(flags));
    return it;
}

item_chunk *do_item_alloc_chunk(item_chunk *ch, const size_t bytes_remain) {
    (void)ch;
    (void)bytes_remain;
    return NULL;
}

int do_item_link(item *it, const uint32_t hv) {
    it->it_flags |= ITEM_LINKED;
    it->time = current_time;
    ITEM_set_cas(it, next_cas++);     /* memcached gives a linked item a new CAS */
    resident[nresident++] = it;
    refcount_incr(it);
    if (ac_enabled)
        ac_item_linked(it, hv);
    return 1;
}

void do_item_remove(item *it) {
    if (refcount_decr(it) != 0)
        return;
    if (AC_ITEM_TRANSIENT(it)) {
        ac_item_free(it);
        return;
    }
    free(it);
    free_chunks++;
}

void do_item_unlink(item *it, const uint32_t hv) {
    (void)hv;
    if ((it->it_flags & ITEM_LINKED) == 0)
        return;
    it->it_flags &= ~ITEM_LINKED;
    for (int i = 0; i < nresident; i++)
        if (resident[i] == it) {
            memmove(&resident[i], &resident[i + 1], (size_t)(nresident - i - 1) * sizeof(item *));
            nresident--;
            break;
        }
    ac_item_unlinked(it);
    do_item_remove(it);
}

void append_stat(const char *name, ADD_STAT f, void *c, const char *fmt, ...) {
    (void)name;
    (void)f;
    (void)c;
    (void)fmt;
}

/* ---- what the core's files below the chain would give (ac_budget.c) ---------- */

static int borrow_asked;
void ac_budget_changed(void) {}
unsigned ac_page_epoch(void) { return 0; }
void *ac_borrow_alloc(struct ac_thread *th, size_t ntotal, unsigned int id) {
    (void)th;
    (void)ntotal;
    (void)id;
    borrow_asked++;
    return NULL;
}

/* ---- a FIFO policy ------------------------------------------------------------- */

static int merged_back, no_victims, accessed, fetched;

static void no_op(item *it) {
    (void)it;
}

static void on_access(item *it) {
    (void)it;
    accessed++;
}

static void on_fetched(item *it) {
    (void)it;
    fetched++;
}

static void on_merged(item *it) {
    (void)it;
    merged_back++;
}

static int pick_oldest(unsigned int clsid, item **out, int max) {
    (void)clsid;
    int n = 0;
    for (int i = 0; i < nresident && n < max && !no_victims; i++)
        if (resident[i]->refcount <= 1)
            out[n++] = resident[i];
    return n;
}

static size_t no_bytes(void) {
    return 0;
}

static const struct ac_policy_ops hstore = {
    .name = "fifo", .summary = "test", .default_tier = "test", .tier_shapes = AC_CAP_SPILL,
    .fetch_on_read = true, .on_insert = no_op, .on_access = on_access, .on_remove = no_op,
    .on_merged = on_merged, .pick_victims = pick_oldest, .metadata_bytes = no_bytes,
};
static const struct ac_policy_ops hstore_misses = {    /* a read-back is its miss */
    .name = "fifo-misses", .summary = "test", .default_tier = "test", .tier_shapes = AC_CAP_SPILL,
    .fetch_on_read = true, .on_insert = no_op, .on_access = on_access, .on_fetched = on_fetched,
    .on_remove = no_op, .on_merged = on_merged, .pick_victims = pick_oldest, .metadata_bytes = no_bytes,
};
static const struct ac_policy_ops siberia = {
    .name = "cold-reads", .summary = "test", .default_tier = "test", .tier_shapes = AC_CAP_SPILL,
    .fetch_on_read = false, .on_insert = no_op, .on_access = no_op, .on_remove = no_op,
    .pick_victims = pick_oldest, .metadata_bytes = no_bytes,
};

/* ---- an in-memory spilling tier --------------------------------------------- */

#define PER_BLOCK 4                    /* records per block */
#define MAX_RECS 256
static struct rec {
    uint64_t fp;
    struct ac_loc loc;
    char *bytes;
    bool live;
} recs[MAX_RECS];
static int nrecs;
static uint32_t cur_block, in_block, cur_off;
static uint64_t gen[64];               /* each block's space, named (read tokens) */
static int finds, peeks, reads, drops, merges_done, put_fail, read_fail, claim_below;

static int live_in(uint32_t block) {
    int n = 0;
    for (int i = 0; i < nrecs; i++)
        n += recs[i].live && recs[i].loc.block == block;
    return n;
}

static int t_put(uint64_t fp, const void *rec, size_t len, struct ac_loc *loc) {
    if (put_fail != 0)
        return put_fail;
    if (in_block == PER_BLOCK) {
        cur_block++;
        in_block = 0;
        cur_off = 0;
    }
    struct rec *r = &recs[nrecs++];
    r->fp = fp;
    r->loc = (struct ac_loc){ cur_block, cur_off, (uint32_t)len };
    r->bytes = malloc(len);
    memcpy(r->bytes, rec, len);
    r->live = true;
    in_block++;
    cur_off += (uint32_t)len;
    *loc = r->loc;
    return 0;
}

static int locs_of(uint64_t fp, struct ac_loc *out, int max) {
    int n = 0;
    for (int i = 0; i < nrecs; i++)
        if (recs[i].live && recs[i].fp == fp) {
            if (n < max)
                out[n] = recs[i].loc;
            n++;
        }
    return n;
}

static int t_find(uint64_t fp, struct ac_loc *out, int max) {
    finds++;
    return locs_of(fp, out, max);
}

static int t_peek(uint64_t fp, struct ac_loc *out, int max) {
    peeks++;
    return locs_of(fp, out, max);
}

static bool t_maybe(uint64_t fp) {
    struct ac_loc l;
    return locs_of(fp, &l, 1) > 0;
}

static struct rec *at(const struct ac_loc *loc) {
    for (int i = 0; i < nrecs; i++)
        if (ac_loc_same(&recs[i].loc, loc))
            return &recs[i];
    return NULL;
}

static int t_read(const struct ac_loc *loc, void *buf) {
    reads++;
    struct rec *r = at(loc);
    if (read_fail || r == NULL)
        return -EIO;
    memcpy(buf, r->bytes, loc->len);
    return 0;
}

static uint64_t t_token(const struct ac_loc *loc) {
    return gen[loc->block];
}

static int t_read_start(const struct ac_loc *loc, void *buf, struct ac_io_ring *ring, struct ac_io_req *req,
                        uint64_t token) {
    (void)ring;
    struct rec *r = at(loc);
    if (r == NULL || gen[loc->block] != token)
        return -ESTALE;
    memcpy(buf, r->bytes, loc->len);   /* there at once: no I/O */
    req->skip = 0;
    return 1;
}

static bool t_read_valid(const struct ac_loc *loc, uint64_t token) {
    return gen[loc->block] == token;
}

static int t_drop(uint64_t fp, const struct ac_loc *loc) {
    struct rec *r = at(loc);
    if (r == NULL || !r->live || r->fp != fp)
        return -1;
    r->live = false;
    drops++;
    return claim_below > 0 && live_in(loc->block) < claim_below ? 1 : 0;
}

static ssize_t t_read_block(uint32_t block, void **buf) {
    size_t len = 0;
    for (int i = 0; i < nrecs; i++)
        if (recs[i].loc.block == block)
            len += recs[i].loc.len;
    char *b = malloc(len);
    for (int i = 0; i < nrecs; i++)
        if (recs[i].loc.block == block)
            memcpy(b + recs[i].loc.offset, recs[i].bytes, recs[i].loc.len);
    *buf = b;
    return (ssize_t)len;
}

static bool t_begin_merge(uint32_t block, bool requested) {
    (void)block;
    return requested;
}

static void t_merge_done(uint32_t block) {
    (void)block;
    merges_done++;
}

static void t_stats(struct ac_tier_stats *out) {
    memset(out, 0, sizeof(*out));
}

static const struct ac_spill_ops spill_ops = {
    .put = t_put, .find = t_find, .peek = t_peek, .maybe = t_maybe, .read = t_read,
    .read_token = t_token, .read_start = t_read_start, .read_valid = t_read_valid, .drop = t_drop,
    .read_block = t_read_block, .begin_merge = t_begin_merge, .merge_done = t_merge_done,
};
static const char *const no_files[] = { NULL };
static const struct ac_tier tier = {
    .name = "test", .summary = "in memory", .caps = AC_CAP_SPILL | AC_CAP_BLOCKS | AC_CAP_READ_AHEAD,
    .files = no_files, .fixed_bytes = NULL, .charged_bytes = no_bytes, .get_stats = t_stats, .spill = &spill_ops,
};

/* ---- set-up ------------------------------------------------------------------ */

static void reset(const struct ac_policy_ops *p) {
    while (nresident > 0)
        do_item_unlink(resident[0], 0);
    for (int i = 0; i < nrecs; i++)
        free(recs[i].bytes);
    memset(recs, 0, sizeof(recs));
    memset(gen, 0, sizeof(gen));
    nrecs = 0;
    cur_block = in_block = cur_off = 0;
    finds = peeks = reads = drops = merges_done = put_fail = read_fail = claim_below = 0;
    merged_back = no_victims = borrow_asked = accessed = fetched = 0;
    memset(&ac_cnt, 0, sizeof(ac_cnt));
    ac.policy = p;
    ac.tier = &tier;
    ac.spill = &spill_ops;
    ac.page = NULL;
    ac_enabled = true;
    ac_opts.alloc_wait_ns = 0;
    free_chunks = 1000;
    struct ac_thread *th = ac_thread();
    th->error = NULL;
    th->fetched = NULL;
    th->lookup = NULL;
    th->park = AC_PARK_NONE;
    th->pf = NULL;
}

static char value_of(const char *key) {
    return (char)('a' + hash(key, strlen(key)) % 26);
}

/* A resident item of key, its value nbytes - 2 letters and "\r\n". */
static item *store(const char *key, int nbytes) {
    item *it = do_item_alloc(key, strlen(key), 7, 0, nbytes);
    memset(ITEM_data(it), value_of(key), (size_t)nbytes - 2);
    memcpy(ITEM_data(it) + nbytes - 2, "\r\n", 2);
    do_item_link(it, hash(key, strlen(key)));
    do_item_remove(it);
    return it;
}

static bool value_ok(item *it, const char *key, int nbytes) {
    if (it == NULL || it->nbytes != nbytes || it->nkey != strlen(key) || memcmp(ITEM_key(it), key, it->nkey) != 0)
        return false;
    for (int i = 0; i < nbytes - 2; i++)
        if (ITEM_data(it)[i] != value_of(key))
            return false;
    uint32_t flags;
    memcpy(&flags, ITEM_suffix(it), sizeof(flags));
    return flags == 7;
}

/* Every resident item spilled (one spill round per item: FIFO order). */
static void spill_all(void) {
    struct ac_scratch *s = &ac_thread()->scratch;
    int n = nresident;
    ac_spill_lock();
    struct ac_room room = ac_make_room_locked(s, 1);
    ac_spill_unlock();
    CHECK_EQ(room.outcome, AC_ROOM_MADE);
    CHECK_EQ(room.spilled, n);
    CHECK_EQ(nresident, 0);
}

/* The hook as memcached calls it (do_item_get: a reference taken on a hit). */
static item *lookup(const char *key, bool update) {
    uint32_t hv = hash(key, strlen(key));
    item_lock(hv);                             /* item_get holds the key's lock */
    item *it = ac_item_find(key, strlen(key), hv, update);
    if (it != NULL)
        refcount_incr(it);
    item_unlock(hv);
    return it;
}

static void done_with(item *it) {
    if (it != NULL)
        do_item_remove(it);
}

/* a and b are the same text (a may be NULL: not the same) */
static bool is(const char *a, const char *b) {
    return a != NULL && strcmp(a, b) == 0;
}

static uint64_t fp_of(const char *key) {
    return ac_key_fp(key, strlen(key));
}

/* ---- the steps ---------------------------------------------------------------- */

static void test_lookup(void) {
    reset(&hstore);
    item *a = store("alpha", 102);
    uint64_t mem0, disk0, mem, disk;
    ac_hit_totals(&mem0, &disk0);
    item *it = lookup("alpha", true);
    CHECK(it == a);
    CHECK_EQ(finds, 0);                        /* resident: the tier is not asked */
    ac_item_accessed(it);
    ac_hit_totals(&mem, &disk);
    CHECK_EQ(mem - mem0, 1);
    CHECK_EQ(disk - disk0, 0);
    done_with(it);
    CHECK(lookup("nobody", true) == NULL);     /* absent: asked once, no error */
    CHECK_EQ(finds, 1);
    CHECK(ac_lookup_error() == NULL);

    /* spilled: back into RAM, same CAS and age, its record dropped, a disk hit */
    store("beta", 202);
    item *b = assoc_find("beta", 4, 0);
    uint64_t cas = ITEM_get_cas(b);
    rel_time_t age = b->time;
    current_time += 50;
    spill_all();
    int peeks0 = peeks;
    uint64_t thread_disk0 = ac_thread_disk_hits();
    it = lookup("beta", true);
    CHECK(value_ok(it, "beta", 202));
    CHECK(it != NULL && (it->it_flags & ITEM_LINKED) && !AC_ITEM_TRANSIENT(it));
    CHECK_EQ(ITEM_get_cas(it), cas);
    CHECK_EQ(it->time, age);
    CHECK_EQ(locs_of(fp_of("beta"), NULL, 0), 0);
    CHECK_EQ(peeks, peeks0);                   /* its only copy: linking it looks nothing up */
    CHECK_EQ(AC_READ(fetched_items), 1);
    ac_item_accessed(it);
    ac_hit_totals(&mem, &disk);
    CHECK_EQ(disk - disk0, 1);
    CHECK_EQ(ac_thread_disk_hits() - thread_disk0, 1);
    done_with(it);
    CHECK_EQ(locks_held, 0);
}

/* Which hook the policy sees: a hit in RAM on_access; a read-back on_fetched,
 * or on_access for a policy without it. */
static void test_fetched_hook(void) {
    reset(&hstore_misses);
    store("alpha", 102);
    item *it = lookup("alpha", true);
    ac_item_accessed(it);
    CHECK_EQ(accessed, 1);
    CHECK_EQ(fetched, 0);
    done_with(it);
    spill_all();
    it = lookup("alpha", true);                /* read back: a disk hit */
    CHECK(it != NULL && (it->it_flags & ITEM_LINKED));
    ac_item_accessed(it);
    CHECK_EQ(accessed, 1);
    CHECK_EQ(fetched, 1);
    done_with(it);
    it = lookup("alpha", true);                /* resident now: a hit in RAM */
    ac_item_accessed(it);
    CHECK_EQ(accessed, 2);
    CHECK_EQ(fetched, 1);
    done_with(it);
    reset(&hstore);
    store("beta", 102);
    spill_all();
    it = lookup("beta", true);
    ac_item_accessed(it);
    CHECK_EQ(accessed, 1);                     /* no on_fetched: on_access */
    done_with(it);
    CHECK_EQ(locks_held, 0);
}

static void test_stale_copy_dropped(void) {
    reset(&hstore);
    store("gamma", 102);
    spill_all();
    /* a second, damaged record of the key (a fetch failed, a store linked a new value) */
    struct ac_loc l;
    char junk[64] = { 0 };
    t_put(fp_of("gamma"), junk, sizeof(junk), &l);
    int peeks0 = peeks;
    item *it = lookup("gamma", true);
    CHECK(value_ok(it, "gamma", 102));
    CHECK_EQ(peeks, peeks0 + 1);               /* two copies: linking looks, and drops the other */
    CHECK_EQ(locs_of(fp_of("gamma"), NULL, 0), 0);
    done_with(it);
}

static void test_other_key_same_fingerprint(void) {
    reset(&hstore);
    /* delta's record filed under epsilon's fingerprint, before epsilon's own */
    item *d = store("delta", 52);
    size_t len;
    char *rec = ac_item_record(&ac_thread()->scratch, d, &len);
    struct ac_loc l;
    t_put(fp_of("epsilon"), rec, len, &l);
    do_item_unlink(d, 0);
    store("epsilon", 62);
    spill_all();
    item *it = lookup("epsilon", true);
    CHECK(value_ok(it, "epsilon", 62));
    CHECK_EQ(locs_of(fp_of("epsilon"), NULL, 0), 1);   /* delta's stays */
    done_with(it);
}

static void test_errors(void) {
    reset(&hstore);
    store("zeta", 102);
    spill_all();
    read_fail = 1;
    CHECK(lookup("zeta", true) == NULL);
    CHECK(is(ac_lookup_error(), "SERVER_ERROR anti-caching: reading a spilled item failed"));
    CHECK_EQ(AC_READ(read_errors), 1);
    CHECK(is(ac_text_reply("NOT_FOUND"), "SERVER_ERROR anti-caching: reading a spilled item failed"));
    CHECK(ac_lookup_error() == NULL);          /* answered */
    read_fail = 0;
    recs[0].bytes[recs[0].loc.len - 1] ^= 1;   /* damaged */
    CHECK(lookup("zeta", true) == NULL);
    CHECK(is(ac_lookup_error(), "SERVER_ERROR anti-caching: a spilled item failed its checksum"));
    CHECK_EQ(AC_READ(checksum_errors), 1);
    CHECK(ac_reply_error(NULL) && is(answered, "SERVER_ERROR anti-caching: a spilled item failed its checksum"));
    CHECK_EQ(locs_of(fp_of("zeta"), NULL, 0), 1);      /* it stays: every request answers the error */
}

static void test_read_through(void) {
    reset(&siberia);
    store("eta", 102);
    spill_all();
    item *it = lookup("eta", true);            /* a read: from the record, stays cold */
    CHECK(value_ok(it, "eta", 102));
    CHECK(it != NULL && AC_ITEM_TRANSIENT(it));
    CHECK_EQ(locs_of(fp_of("eta"), NULL, 0), 1);
    CHECK_EQ(AC_READ(read_through_items), 1);
    CHECK_EQ(AC_READ(fetched_items), 0);
    uint64_t mem0, disk0, mem, disk;
    ac_hit_totals(&mem0, &disk0);
    if (it != NULL)
        ac_item_accessed(it);
    ac_hit_totals(&mem, &disk);
    CHECK_EQ(disk - disk0, 1);
    item_lock(hash("eta", 3));
    item *m = ac_item_for_update(it);          /* a modify (touch, under the key's lock): into RAM */
    item_unlock(hash("eta", 3));
    CHECK(m != NULL && !AC_ITEM_TRANSIENT(m) && (m->it_flags & ITEM_LINKED));
    CHECK_EQ(locs_of(fp_of("eta"), NULL, 0), 0);
    done_with(m);

    /* no memory: a read from the record, a modify answers the memory error */
    reset(&hstore);
    store("theta", 102);
    spill_all();
    free_chunks = 0;
    no_victims = 1;
    it = lookup("theta", true);
    CHECK(it != NULL && AC_ITEM_TRANSIENT(it) && value_ok(it, "theta", 102));
    CHECK(ac_lookup_error() == NULL);
    CHECK_EQ(borrow_asked, 1);
    done_with(it);
    CHECK(lookup("theta", false) == NULL);
    CHECK(is(ac_lookup_error(), "SERVER_ERROR out of memory fetching a spilled item"));
    CHECK_EQ(AC_READ(fetch_nomem), 1);
    CHECK_EQ(AC_READ(refused_timeout), 2);
    CHECK_EQ(locs_of(fp_of("theta"), NULL, 0), 1);
}

static void test_make_room(void) {
    struct ac_scratch *s = &ac_thread()->scratch;
    reset(&hstore);
    store("k1", 102);
    store("k2", 102);
    no_victims = 1;                            /* nothing to spill */
    struct ac_room room = ac_make_room_locked(s, 1);
    CHECK_EQ(room.outcome, AC_ROOM_NONE);
    CHECK_EQ(room.spilled, 0);
    no_victims = 0;
    const struct { int rc; enum ac_refusal why; } fails[] = {
        { AC_TIER_NO_ROOM, AC_REFUSED_TABLE_FULL }, { -ENOSPC, AC_REFUSED_DISK_FULL },
        { -EDQUOT, AC_REFUSED_DISK_FULL }, { -EIO, AC_REFUSED_IO_ERROR }, { -ETIMEDOUT, AC_REFUSED_TIMEOUT },
    };
    for (size_t i = 0; i < sizeof(fails) / sizeof(fails[0]); i++) {
        put_fail = fails[i].rc;
        room = ac_make_room_locked(s, 1);
        CHECK_EQ(room.outcome, AC_ROOM_REFUSED);
        CHECK_EQ(room.why, fails[i].why);
        CHECK_EQ(nresident, 2);                /* nothing left RAM */
    }
    /* a store's allocation refused: counted by reason, the store answers the error */
    put_fail = AC_TIER_NO_ROOM;
    free_chunks = 0;
    ac_thread()->error = NULL;
    CHECK(do_item_alloc("new", 3, 0, 0, 10) == NULL);
    CHECK_EQ(AC_READ(refused_items), 1);
    CHECK_EQ(AC_READ(refused_table_full), 1);
    CHECK(is(ac_lookup_error(), "SERVER_ERROR out of memory storing object"));
    ac_take_lookup_error();
    /* a migration's allocation only tries: no refusal counted, no error */
    struct ac_lookup mig = { .alloc = AC_ALLOC_TRY };
    ac_thread()->lookup = &mig;
    CHECK(ac_alloc(100, 1) == NULL);
    CHECK_EQ(AC_READ(refused_items), 1);
    CHECK(ac_lookup_error() == NULL);
    /* a block-mate's: a free chunk or nothing, no spill round */
    put_fail = 0;
    struct ac_lookup mate = { .alloc = AC_ALLOC_FREE_ONLY };
    ac_thread()->lookup = &mate;
    CHECK(ac_alloc(100, 1) == NULL);
    CHECK_EQ(nrecs, 0);
    ac_thread()->lookup = NULL;
    /* room made: the round's victims spilled (a tier that writes at once: one batch), the
     * allocation served */
    item *it = do_item_alloc("new", 3, 0, 0, 10);
    CHECK(it != NULL);
    CHECK_EQ(nrecs, 2);
    CHECK(assoc_find("k1", 2, 0) == NULL && assoc_find("k2", 2, 0) == NULL);
    done_with(it);
    /* a fetch that needs room spills the oldest resident item */
    store("k3", 102);
    free_chunks = 0;
    it = lookup("k1", true);
    CHECK(value_ok(it, "k1", 102) && !AC_ITEM_TRANSIENT(it));
    CHECK(assoc_find("k3", 2, 0) == NULL);
    CHECK_EQ(locs_of(fp_of("k3"), NULL, 0), 1);
    done_with(it);
}

static void test_park(void) {
    reset(&hstore);
    store("iota", 102);
    spill_all();
    struct ac_thread *th = ac_thread();
    th->park = AC_PARK_ALLOWED;                /* proto_text's permission (ac_park_allow) */
    CHECK(lookup("iota", true) == NULL);
    CHECK_EQ(th->park, AC_PARK_PARKED);
    CHECK(ac_lookup_error() == NULL);
    CHECK_EQ(finds + reads, 0);                /* nothing read: a fetcher will */
    th->park = AC_PARK_ALLOWED;
    CHECK(lookup("kappa", true) == NULL);      /* the tier cannot hold it: an ordinary miss */
    CHECK_EQ(th->park, AC_PARK_NONE);
    CHECK_EQ(finds, 1);
    item *it = lookup("iota", true);           /* no permission: read here */
    CHECK(value_ok(it, "iota", 102));
    done_with(it);
}

static void test_prefetch_tokens(void) {
    reset(&hstore);
    store("lambda", 102);
    store("mu", 102);
    spill_all();
    char why[200];
    struct ac_prefetcher *pf = ac_prefetcher_new(4, why, sizeof(why));
    CHECK(pf != NULL);
    if (pf == NULL)
        return;
    int slot = ac_prefetch_begin(pf, "lambda", 6);
    CHECK(slot >= 0);
    CHECK_EQ(ac_prefetch_begin(pf, "lambda", 6), slot);    /* asked twice: one read */
    int slot2 = ac_prefetch_begin(pf, "mu", 2);
    CHECK(slot2 >= 0 && slot2 != slot);
    ac_prefetcher_use(pf);
    ac_prefetch_wait(pf, slot);
    item *it = lookup("lambda", true);
    CHECK(value_ok(it, "lambda", 102));
    CHECK_EQ(reads, 0);                        /* the bytes read ahead served it */
    done_with(it);
    gen[recs[1].loc.block]++;                  /* mu's space taken again since its token */
    it = lookup("mu", true);
    CHECK(value_ok(it, "mu", 102));
    CHECK_EQ(reads, 1);                        /* read again */
    done_with(it);
    ac_prefetch_batch(pf);
    ac_prefetcher_use(NULL);
    ac_prefetcher_free(pf);
}

static void test_compaction_claims(void) {
    reset(&hstore);
    const char *keys[PER_BLOCK] = { "nu", "xi", "omicron", "pi" };
    for (int i = 0; i < PER_BLOCK; i++)
        store(keys[i], 102);
    spill_all();
    claim_below = PER_BLOCK;                   /* the first drop claims block 0 */
    item *it = lookup("nu", true);
    CHECK(value_ok(it, "nu", 102));
    CHECK_EQ(merged_back, PER_BLOCK - 1);      /* block-mates back, at the cold end */
    CHECK_EQ(AC_READ(merged_items), PER_BLOCK - 1);
    CHECK_EQ(AC_READ(merged_blocks), 1);
    CHECK_EQ(merges_done, 1);                  /* the claim released */
    CHECK_EQ(live_in(0), 0);
    done_with(it);
    for (int i = 1; i < PER_BLOCK; i++)
        CHECK(value_ok(assoc_find(keys[i], strlen(keys[i]), 0), keys[i], 102));

    /* no free chunk: the block-mates stay spilled (no spill round for them) */
    reset(&hstore);
    for (int i = 0; i < PER_BLOCK; i++)
        store(keys[i], 102);
    spill_all();
    claim_below = PER_BLOCK;
    free_chunks = 1;                           /* the fetched item's chunk only */
    it = lookup("nu", true);
    CHECK(value_ok(it, "nu", 102));
    CHECK_EQ(merged_back, 0);
    CHECK_EQ(live_in(0), PER_BLOCK - 1);
    CHECK_EQ(nrecs, PER_BLOCK);
    CHECK_EQ(borrow_asked, 0);                 /* no room sought for them: nothing borrowed, */
    CHECK_EQ(AC_READ(refused_items), 0);       /* waited for or refused */
    CHECK_EQ(merges_done, 1);
    done_with(it);

    /* an overwrite that claims the block releases the claim */
    merges_done = 0;
    claim_below = PER_BLOCK;
    item_lock(hash("xi", 2));
    ac_item_overwrite("xi", 2, hash("xi", 2));
    item_unlock(hash("xi", 2));
    CHECK_EQ(locs_of(fp_of("xi"), NULL, 0), 0);
    CHECK_EQ(AC_READ(overwritten_unread), 1);
    CHECK_EQ(merges_done, 1);
}

int main(void) {
    test_lookup();
    test_fetched_hook();
    test_stale_copy_dropped();
    test_other_key_same_fingerprint();
    test_errors();
    test_read_through();
    test_make_room();
    test_park();
    test_prefetch_tokens();
    test_compaction_claims();
    reset(&hstore);
    CHECK_EQ(locks_held, 0);
    return check_report("test_core");
}
