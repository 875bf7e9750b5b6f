/* Lazy compaction (tier blocks): what happens to a block whose live bytes fell
 * below ac_compact_fill, and where.
 *
 * A fetch, or a migration, that leaves its block below the threshold claims
 * it (spill->begin_merge). How (-o ac_compact):
 *  - merge (default): H-Store's lazy compaction (DeBrabant et al., VLDB 2013
 *    §3.4): the block is read whole and its live records come back into RAM,
 *    at the cold end, into free chunks only (ac_merge_block, ac_materialize.c);
 *  - copy: the background compaction that paper proposes as future work
 *    (§6.2: "compacts blocks without un-evicting the tuples ... updating the
 *    appropriate Evicted Table entries"): the block is read whole and each
 *    live record is appended, as it is (CRC, codec), to the open block, its
 *    evicted-table entry moved there; nothing enters RAM, so no item is
 *    allocated, linked, evicted or encoded again (the hit counts stay near,
 *    not equal to, a run's that never compacts: the copies fill the open
 *    block, and a spill round spills up to what that block still takes).
 * Either way a record whose key another request has locked stays where it
 * is (the block is claimed again by a later drop; the key lock the claiming
 * fetch holds itself is no obstacle, ac_walk_lock), and a failed write leaves
 * the rest in place: nothing is skipped or lost, only left for later. copy is
 * refused with ac_merge=block (tier blocks says so), where every fetch merges
 * its whole block, and there a mate that finds no free chunk is moved to the
 * open block as copy moves it (ac_move_spilled), so that the block empties:
 * H-Store's merge takes every tuple out of the block (DeBrabant et al. VLDB
 * 2013 §3.4), and a block that kept a few cold ones would keep its extent.
 *
 * Where (-o ac_compact_thread): by default right there, inside the lookup and
 * under the fetched key's lock: the block's read (1 MiB by default) and the
 * records' moves on the request path. With the thread on, the claim is queued
 * for one compactor thread, which works with no key lock held; the request
 * goes on at once. A claim that finds the queue full is done in place, as
 * without the thread.
 *
 * With merge, when a merge runs then depends on the thread's timing, not on
 * the requests alone, so two runs of one seed may differ by a few hits (the
 * harness's lru-compact-thread is not "deterministic"). Off by default.
 *
 * `stats anticache`: compact (merge/copy), compact_thread (on/off),
 * compact_queued (claims the thread took), compact_in_place (claims done in
 * the lookup: thread off, or its queue full); merged_blocks / merged_items
 * (merges), copied_blocks (blocks whose every live record was copied or
 * left to a later claim; not those a failed write stopped), copied_items,
 * copied_bytes (records moved to the open block: copies, and whole merges'
 * mates that found no free chunk), copy_skipped (records left where they
 * were: key locked, write failed).
 * Uses: ac_materialize, ac_state. */
#include "memcached.h"
#include "ac_internal.h"
#include "ac_opt.h"
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define COMPACT_QUEUE 64            /* claims waiting for the thread at most */

struct compact_options {
    unsigned copy;                  /* ac_compact: 0 merge, 1 copy */
    unsigned on;                    /* ac_compact_thread: 1 on, 0 off */
};
static struct compact_options opts;

static const struct ac_word on_off[] = {
    { "off", NULL, 0, NULL }, { "on", NULL, 1, NULL }, { NULL, NULL, 0, NULL },
};

static const struct ac_word how_words[] = {
    { "merge", NULL, 0, NULL }, { "copy", NULL, 1, NULL }, { NULL, NULL, 0, NULL },
};

static const struct ac_opt compact_opts[] = {
    { .key = "ac_compact", .type = AC_T_ENUM, AC_FIELD(struct compact_options, copy), .words = how_words,
      .def = "merge", .def_is_value = true,
      .help = "a block below ac_compact_fill: merge its live records back into RAM (H-Store),"
              " or copy them to the open block on disk, never into RAM (H-Store's future work)" },
    { .key = "ac_compact_thread", .type = AC_T_ENUM, AC_FIELD(struct compact_options, on), .words = on_off,
      .def = "off", .def_is_value = true,
      .help = "compact the blocks lazy compaction claims in a thread of their own, not in the lookup"
              " (runs are then not repeatable to the hit)" },
};
const struct ac_opt_table ac_compact_options = AC_OPT_TABLE("lazy compaction (tier blocks)", compact_opts, &opts);

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct claim { uint32_t block; bool lazy; } q[COMPACT_QUEUE];
    unsigned head, n;
    bool started;
    uint64_t queued, in_place;
} cq = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

/* One record of a block being copied (lazy compaction by copy): appended to
 * the open block and its entry moved there under its key's lock (spill->move:
 * the entry points at the new place at once, no second entry, so a full
 * evicted table does not stop it). False: the open block could not be
 * written, the rest of the block stays. */
static bool copy_record(const struct ac_walk *w, void *arg) {
    const uint32_t *const *held = arg;
    void *lk = ac_walk_lock(hash(w->r.key, w->r.nkey), *held);
    if (lk == NULL) {
        AC_COUNT(copy_skipped, 1);         /* a request has it: it stays, for a later claim */
        return true;
    }
    int rc = ac_move_spilled(w);
    ac_walk_unlock(lk);
    return rc >= 0;
}

static void copy_block(uint32_t block, const uint32_t *held) {
    if (ac_walk_block(block, copy_record, &held) == 1)
        AC_COUNT(copied_blocks, 1);
}

bool ac_compact_copies(void) {
    return opts.copy != 0;
}

static void run_claim(struct ac_scratch *s, uint32_t block, bool lazy, const uint32_t *held) {
    if (lazy && opts.copy)
        copy_block(block, held);
    else
        ac_merge_block(s, block, !lazy, held);
}

static void *compact_main(void *arg) {
    (void)arg;
    struct ac_scratch *s = &ac_thread()->scratch;
    pthread_mutex_lock(&cq.mu);
    for (;;) {
        while (cq.n == 0)
            pthread_cond_wait(&cq.cv, &cq.mu);
        struct claim c = cq.q[cq.head];
        cq.head = (cq.head + 1) % COMPACT_QUEUE;
        cq.n--;
        pthread_mutex_unlock(&cq.mu);
        run_claim(s, c.block, c.lazy, NULL);     /* no key lock held here */
        pthread_mutex_lock(&cq.mu);
    }
    return NULL;
}

int ac_compact_start(void) {
    if (!opts.on)
        return 0;
    pthread_t tid;
    int rc = pthread_create(&tid, NULL, compact_main, NULL);
    if (rc != 0) {
        fprintf(stderr, "memcached-ac: ac_compact_thread=on: the compactor thread cannot start (%s)\n", strerror(rc));
        return -1;
    }
    pthread_detach(tid);            /* it lives as long as the process, as memcached's own threads */
    cq.started = true;
    return 0;
}

void ac_compact(struct ac_scratch *s, uint32_t block, bool lazy, const uint32_t *held) {
    if (cq.started) {
        pthread_mutex_lock(&cq.mu);
        bool queued = cq.n < COMPACT_QUEUE;
        if (queued) {
            cq.q[(cq.head + cq.n) % COMPACT_QUEUE] = (struct claim){ block, lazy };
            cq.n++;
            cq.queued++;
            pthread_cond_signal(&cq.cv);
        }
        pthread_mutex_unlock(&cq.mu);
        if (queued)
            return;
    }
    __atomic_add_fetch(&cq.in_place, 1, __ATOMIC_RELAXED);
    run_claim(s, block, lazy, held);
}

void ac_compact_stats(ADD_STAT add_stats, void *c) {
    pthread_mutex_lock(&cq.mu);
    uint64_t queued = cq.queued;
    pthread_mutex_unlock(&cq.mu);
    APPEND_STAT("compact", "%s", opts.copy ? "copy" : "merge");
    APPEND_STAT("compact_thread", "%s", cq.started ? "on" : "off");
    APPEND_STAT("compact_queued", "%llu", (unsigned long long)queued);
    APPEND_STAT("compact_in_place", "%llu", (unsigned long long)__atomic_load_n(&cq.in_place, __ATOMIC_RELAXED));
}
