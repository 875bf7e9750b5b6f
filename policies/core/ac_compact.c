/* Lazy compaction off the request path (-o ac_compact_thread=on, tier blocks).
 *
 * A fetch, or a migration, that leaves its block's live bytes below
 * ac_compact_fill claims the block for a whole-block merge (tier->begin_merge;
 * H-Store's lazy compaction, DeBrabant et al., VLDB 2013). By default the merge
 * runs right there, inside the lookup and under the fetched key's lock: the
 * block's read (1 MiB by default) and the materialization of its live records
 * on the request path. With the thread on, the claim is queued for one
 * compactor thread, which merges with no key lock held (block-mates are taken
 * with trylock, as always, and come back into free chunks only); the request
 * goes on at once. A claim that finds the queue full is merged in place, as
 * without the thread. So nothing is skipped, only moved.
 *
 * When a merge runs then depends on the thread's timing, not on the requests
 * alone, so two runs of one seed may differ by a few hits (the harness's
 * lru-compact-thread is not "deterministic"). Off by default.
 *
 * `stats anticache`: compact_thread (on/off), compact_queued (claims the
 * thread merged or holds), compact_in_place (claims merged in the lookup:
 * thread off, or its queue full); merged_blocks counts every merge. */
#include "memcached.h"
#include "ac_internal.h"
#include "ac_opt.h"
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define COMPACT_QUEUE 64            /* claims waiting for the thread at most */

struct compact_options {
    unsigned on;                    /* ac_compact_thread: 1 on, 0 off */
};
static struct compact_options opts;

static const struct ac_word on_off[] = {
    { "off", NULL, 0, NULL }, { "on", NULL, 1, NULL }, { NULL, NULL, 0, NULL },
};

static const struct ac_opt compact_opts[] = {
    { .key = "ac_compact_thread", .type = AC_T_ENUM, AC_FIELD(struct compact_options, on), .words = on_off,
      .def = "off", .def_is_value = true,
      .help = "merge the blocks lazy compaction claims in a thread of their own, not in the lookup"
              " (runs are then not repeatable to the hit)" },
};
const struct ac_opt_table ac_compact_options = AC_OPT_TABLE("lazy compaction (tier blocks)", compact_opts, &opts);

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint32_t q[COMPACT_QUEUE];
    unsigned head, n;
    bool started;
    uint64_t queued, in_place;
} cq = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void *compact_main(void *arg) {
    (void)arg;
    pthread_mutex_lock(&cq.mu);
    for (;;) {
        while (cq.n == 0)
            pthread_cond_wait(&cq.cv, &cq.mu);
        uint32_t block = cq.q[cq.head];
        cq.head = (cq.head + 1) % COMPACT_QUEUE;
        cq.n--;
        pthread_mutex_unlock(&cq.mu);
        ac_merge_block(block);
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

void ac_compact(uint32_t block) {
    if (cq.started) {
        pthread_mutex_lock(&cq.mu);
        bool queued = cq.n < COMPACT_QUEUE;
        if (queued) {
            cq.q[(cq.head + cq.n) % COMPACT_QUEUE] = block;
            cq.n++;
            cq.queued++;
            pthread_cond_signal(&cq.cv);
        }
        pthread_mutex_unlock(&cq.mu);
        if (queued)
            return;
    }
    __atomic_add_fetch(&cq.in_place, 1, __ATOMIC_RELAXED);
    ac_merge_block(block);
}

void ac_compact_stats(ADD_STAT add_stats, void *c) {
    pthread_mutex_lock(&cq.mu);
    uint64_t queued = cq.queued;
    pthread_mutex_unlock(&cq.mu);
    APPEND_STAT("compact_thread", "%s", cq.started ? "on" : "off");
    APPEND_STAT("compact_queued", "%llu", (unsigned long long)queued);
    APPEND_STAT("compact_in_place", "%llu", (unsigned long long)__atomic_load_n(&cq.in_place, __ATOMIC_RELAXED));
}
