/* Policy "logging": Siberia (Levandoski, Larson, Stoica, "Identifying hot and
 * cold data in main-memory databases", ICDE 2013; Stoica & Ailamaki, "Enabling
 * efficient OS paging for main-memory OLTP databases", DaMoN 2013, for the
 * tuple-level cold store; Zhang et al. ICDE 2015 §III-A, §IV as the baseline
 * "logging" of their anti-caching comparison).
 *
 * - Access logging (accesslog.c): every access (on_access) and every insert or
 *   update (on_insert) appends the key's fingerprint and the item's slab chunk
 *   size to the worker thread's lock-free ring, sampled at ac_log_sample; a
 *   full ring drops and counts the entry.
 * - Classification (classify.c), in a thread of its own: it drains the rings,
 *   keeps exponentially smoothed estimates per key (ac_log_alpha, slices of
 *   ac_log_slice logged accesses), and every ac_log_round logged accesses (or
 *   seconds) computes the hot set: the top keys by estimate whose sizes fit
 *   ac_log_hot_fill of the item memory (forward algorithm).
 * - Migration, after each classification: resident items outside the hot set
 *   go to the cold store; hot keys found in the cold store come back. The
 *   resident hot items, sorted by estimate (lowest first), become the victim
 *   list: if RAM fills before the next round (inserts and updates always go to
 *   RAM), pick_victims spills from it; when it runs dry, from memcached's list
 *   tail (oldest insert first), and an early classification is requested.
 * - Cold store (cold.c): one checksummed record per item in an append-only file
 *   with an on-disk hash index; a Bloom filter (10 bits per key, 1 %) in front,
 *   rebuilt every round. No in-memory entry per cold item; the evicted table is
 *   not used. A read of a cold item is served from its record without moving
 *   it into RAM (a transient copy, ac_spill.c); a modify brings it in.
 *
 * Memory charged against -m (fixed_bytes, at start): the estimate table and its
 * sort scratch (28 bytes per slot), the two Bloom filters, and one log ring per
 * worker thread plus two; metadata_bytes reports what is allocated, including
 * the victim lists (8 bytes per resident item) and rings of further threads. */
#include "memcached.h"
#include "ac_internal.h"
#include "accesslog.h"
#include "classify.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_CLASSES 64                 /* memcached's MAX_NUMBER_OF_SLAB_CLASSES */
#define RING_ENTRIES 4096
#define DRAIN_BATCH 65536

#define U(x) (unsigned long long)(x)

struct victims {
    item **it;
    size_t n, next;
};

static struct ac_classifier cls;       /* owned by the classifier thread */
static struct ac_access_log alog;
static struct ac_cold cold;
static struct victims victims[MAX_CLASSES];   /* under ac.spill_lock */
static size_t victim_bytes;                   /* under ac.spill_lock */
static pthread_t thread;
static bool thread_running;
static volatile bool stopping;
static bool early_round;                      /* atomic: a victim list ran dry */
static __thread bool migrating;               /* the classifier's own links are not accesses */

static struct {
    uint64_t rounds, last_round_ns, hot_keys, hot_bytes, budget;
    uint64_t migrated_out, migrated_in, migrate_in_nomem;
    uint64_t victims_listed, victims_fallback, early_rounds;
    uint64_t logged;
} st;                                          /* written by the classifier (victims_fallback: atomic) */

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static size_t table_keys(size_t maxbytes) {
    if (ac_opts.log_keys != 0)
        return ac_opts.log_keys;
    /* default: an eighth of -m for the table, as the evicted table of lru */
    uint64_t slots = 16;
    while (ac_cls_bytes_for_slots(slots * 2) <= maxbytes / 8)
        slots *= 2;
    size_t keys = (size_t)((double)slots * 0.9);
    return keys < 1024 ? 1024 : keys;
}

static size_t logging_fixed_bytes(size_t maxbytes) {
    size_t keys = table_keys(maxbytes);
    return ac_cls_bytes_for_slots(ac_cls_slots_for(keys)) + ac_cold_bloom_bytes_for(keys)
        + (size_t)(settings.num_threads + 2) * ac_log_ring_bytes(RING_ENTRIES);
}

/* bytes the item takes in its slab class */
static uint32_t item_size(item *it) {
    size_t n = ITEM_ntotal(it);
    unsigned int id = AC_ITEM_TRANSIENT(it) ? slabs_clsid(n) : ITEM_clsid(it);
    if (id != 0 && slabs_size((int)id) > n)
        n = slabs_size((int)id);
    return n > 0x3fffffff ? 0x3fffffff : (uint32_t)n;
}

/* hot path: the key's fingerprint and the chunk size only for sampled accesses */
static void log_access(item *it) {
    if (ac_log_sampled(&alog))
        ac_log_record(&alog, ac_key_fp(ITEM_key(it), it->nkey), item_size(it));
}

static void logging_on_insert(item *it) {
    if (!migrating)
        log_access(it);
}

static void logging_on_remove(item *it) {
    (void)it;          /* victim-list entries are re-validated when used */
}

static bool is_resident(const item *it, unsigned int clsid) {
    return (it->it_flags & (ITEM_LINKED | ITEM_SLABBED)) == ITEM_LINKED && ITEM_clsid(it) == clsid;
}

static bool chosen(item *it, item **out, int n) {
    for (int i = 0; i < n; i++)
        if (out[i] == it)
            return true;
    return false;
}

/* Called under ac.spill_lock (ac_make_room). */
static int logging_pick_victims(unsigned int clsid, item **out, int max) {
    if (clsid >= MAX_CLASSES)
        return 0;
    struct victims *v = &victims[clsid];
    int n = 0;
    while (n < max && v->next < v->n) {
        item *it = v->it[v->next++];
        if (is_resident(it, clsid))
            out[n++] = it;
    }
    if (n > 0)
        return n;
    /* the list ran dry before the next round: oldest inserts first */
    __atomic_store_n(&early_round, true, __ATOMIC_RELAXED);
    unsigned int id = clsid | COLD_LRU;
    pthread_mutex_lock(&lru_locks[id]);
    for (item *it = item_lru_tail(id); it != NULL && n < max; it = it->prev) {
        if (it->nbytes == 0 && it->nkey == 0 && it->it_flags == 1)
            continue;  /* an LRU crawler's placeholder */
        if (!chosen(it, out, n))
            out[n++] = it;
    }
    pthread_mutex_unlock(&lru_locks[id]);
    __atomic_add_fetch(&st.victims_fallback, (uint64_t)n, __ATOMIC_RELAXED);
    return n;
}

static void consume(const struct ac_log_entry *e, void *arg) {
    (void)arg;
    ac_cls_record(&cls, e->fp, e->size);
}

static uint64_t since_round;     /* logged accesses consumed since the last round */

/* Drains the rings; also called between migration batches, so a long round
 * does not make the workers' rings overflow. Recording an access never moves
 * or removes a table entry, so it is safe while the hot set is walked. */
static size_t drain(void) {
    size_t n = ac_log_drain(&alog, consume, NULL, DRAIN_BATCH);
    since_round += n;
    st.logged += n;
    return n;
}

struct resident { item *it; double est; };

static int by_est_asc(const void *a, const void *b) {
    const struct resident *x = a, *y = b;
    return x->est < y->est ? -1 : x->est > y->est;
}

/* The resident items of a class, split into cold (to move out) and hot (the
 * new victim list, sorted by estimate). Runs under the class's LRU lock. */
static size_t collect(unsigned int clsid, struct resident **res, size_t *cap, size_t *nhot) {
    size_t n = 0, hot = 0;
    unsigned int id = clsid | COLD_LRU;
    pthread_mutex_lock(&lru_locks[id]);
    for (item *it = item_lru_tail(id); it != NULL; it = it->prev) {
        if (it->nbytes == 0 && it->nkey == 0 && it->it_flags == 1)
            continue;
        if (n == *cap) {
            size_t ncap = *cap ? *cap * 2 : 1024;
            struct resident *nr = realloc(*res, ncap * sizeof(**res));
            if (nr == NULL)
                break;
            *res = nr;
            *cap = ncap;
        }
        uint64_t fp = ac_key_fp(ITEM_key(it), it->nkey);
        bool is_hot = ac_cls_is_hot(&cls, fp);
        (*res)[n].it = it;
        /* cold ones sort before every hot one */
        (*res)[n].est = is_hot ? ac_cls_estimate(&cls, fp) : -1.0;
        hot += is_hot;
        n++;
    }
    pthread_mutex_unlock(&lru_locks[id]);
    *nhot = hot;
    return n;
}

static void migrate_in_one(uint64_t fp, void *arg) {
    bool *stop = arg;
    if (*stop || !ac_cold_maybe(ac.cold, fp))
        return;
    int k = ac_migrate_in(fp);
    static unsigned calls;
    if (++calls % 32 == 0)
        drain();
    if (k < 0) {
        *stop = true;           /* no memory: the rest waits for the next round */
        st.migrate_in_nomem++;
    } else {
        st.migrated_in += (uint64_t)k;
    }
}

static void round_now(void) {
    uint64_t t0 = now_ns();
    uint64_t budget = (uint64_t)((double)ac.item_limit * ac_opts.log_hot_fill);
    ac_cls_classify(&cls, budget);

    struct resident *res = NULL;
    size_t cap = 0;
    for (unsigned int clsid = 1; clsid < MAX_CLASSES; clsid++) {
        size_t nhot, n = collect(clsid, &res, &cap, &nhot);
        if (n == 0) {
            pthread_mutex_lock(&ac.spill_lock);
            victim_bytes -= victims[clsid].n * sizeof(item *);
            free(victims[clsid].it);
            victims[clsid] = (struct victims){ NULL, 0, 0 };
            pthread_mutex_unlock(&ac.spill_lock);
            continue;
        }
        qsort(res, n, sizeof(*res), by_est_asc);
        /* the cold ones (est -1, first) leave RAM, 64 at a time */
        size_t ncold = n - nhot;
        item *batch[64];
        for (size_t i = 0; i < ncold; i += 64) {
            int k = 0;
            for (size_t j = i; j < ncold && k < 64; j++)
                batch[k++] = res[j].it;
            st.migrated_out += (uint64_t)ac_spill_items(clsid, batch, k);
            drain();
        }
        /* the hot residents, lowest estimate first, are the victims until the next round */
        item **list = nhot > 0 ? malloc(nhot * sizeof(item *)) : NULL;
        size_t m = 0;
        if (list != NULL)
            for (size_t j = ncold; j < n; j++)
                list[m++] = res[j].it;
        pthread_mutex_lock(&ac.spill_lock);
        victim_bytes -= victims[clsid].n * sizeof(item *);
        free(victims[clsid].it);
        victims[clsid] = (struct victims){ list, m, 0 };
        victim_bytes += m * sizeof(item *);
        pthread_mutex_unlock(&ac.spill_lock);
        st.victims_listed += m;
    }
    free(res);

    /* hot keys that are cold come back */
    bool stop = false;
    migrating = true;
    ac_cls_foreach_hot(&cls, migrate_in_one, &stop);
    migrating = false;
    ac_cold_rebuild(ac.cold);

    st.hot_keys = cls.hot_keys;
    st.hot_bytes = cls.hot_bytes;
    st.budget = budget;
    st.last_round_ns = now_ns() - t0;
    __atomic_add_fetch(&st.rounds, 1, __ATOMIC_RELAXED);
}

static void *classifier_main(void *arg) {
    (void)arg;
    uint64_t last = now_ns();
    while (!stopping) {
        size_t n = drain();
        bool due = ac_opts.log_round != 0 ? since_round >= ac_opts.log_round
            : now_ns() - last >= ac_opts.log_round_ns;
        if (!due && __atomic_load_n(&early_round, __ATOMIC_RELAXED)) {
            /* a victim list ran dry: classify early once there is something new */
            uint64_t min = ac_opts.log_round != 0 ? ac_opts.log_round / 4 : 1000;
            due = since_round >= min;
            st.early_rounds += due;
        }
        if (due) {
            __atomic_store_n(&early_round, false, __ATOMIC_RELAXED);
            since_round = 0;
            round_now();
            last = now_ns();
        }
        if (n == 0) {
            struct timespec ms = { 0, 1000000 };
            nanosleep(&ms, NULL);
        }
    }
    return NULL;
}

static int logging_init(const struct ac_options *o) {
    size_t keys = table_keys(settings.maxbytes);
    char err[512];
    if (ac_cls_init(&cls, keys, o->log_alpha, o->log_slice) != 0
            || ac_log_init(&alog, RING_ENTRIES, o->log_sample) != 0) {
        fprintf(stderr, "memcached-ac: logging: cannot allocate the estimate table for %zu keys\n", keys);
        ac_cls_destroy(&cls);
        return -1;
    }
    if (ac_cold_open(&cold, ac.dir, keys, err, sizeof(err)) != 0) {
        fprintf(stderr, "memcached-ac: logging: cold store: %s\n", err);
        ac_cls_destroy(&cls);
        ac_log_destroy(&alog);
        return -1;
    }
    ac.cold = &cold;
    if (pthread_create(&thread, NULL, classifier_main, NULL) != 0) {
        fprintf(stderr, "memcached-ac: logging: cannot start the classifier thread\n");
        ac.cold = NULL;
        ac_cold_close(&cold);
        ac_cls_destroy(&cls);
        ac_log_destroy(&alog);
        return -1;
    }
    thread_running = true;
    return 0;
}

static void logging_shutdown(void) {
    if (thread_running) {
        stopping = true;
        pthread_join(thread, NULL);
        thread_running = false;
    }
    ac_cold_close(&cold);
}

static size_t logging_metadata_bytes(void) {
    pthread_mutex_lock(&ac.spill_lock);
    size_t v = victim_bytes;
    pthread_mutex_unlock(&ac.spill_lock);
    return ac_cls_bytes(&cls) + ac_log_bytes(&alog) + ac_cold_bloom_bytes(&cold) + v;
}


static void logging_stats(ADD_STAT add_stats, void *c) {
    struct ac_cold_stats cs;
    ac_cold_stats(ac.cold, &cs);
    APPEND_STAT("log_sample", "%.3f", ac_opts.log_sample);
    APPEND_STAT("log_alpha", "%.4f", ac_opts.log_alpha);
    if (ac_opts.log_round != 0) {
        APPEND_STAT("log_round_accesses", "%llu", U(ac_opts.log_round));
    } else {
        APPEND_STAT("log_round_ms", "%llu", U(ac_opts.log_round_ns / 1000000));
    }
    APPEND_STAT("log_slice", "%llu", U(ac_opts.log_slice));
    APPEND_STAT("log_rounds", "%llu", U(__atomic_load_n(&st.rounds, __ATOMIC_RELAXED)));
    APPEND_STAT("log_early_rounds", "%llu", U(st.early_rounds));
    APPEND_STAT("log_last_round_us", "%llu", U(st.last_round_ns / 1000));
    APPEND_STAT("log_logged", "%llu", U(st.logged));
    APPEND_STAT("log_drops", "%llu", U(ac_log_drops(&alog)));
    APPEND_STAT("log_ring_bytes", "%zu", ac_log_bytes(&alog));
    APPEND_STAT("log_hot_keys", "%llu", U(st.hot_keys));
    APPEND_STAT("log_hot_bytes", "%llu", U(st.hot_bytes));
    APPEND_STAT("log_hot_budget", "%llu", U(st.budget));
    APPEND_STAT("log_estimate_keys", "%llu", U(cls.count));
    APPEND_STAT("log_estimate_capacity", "%llu", U((uint64_t)((double)cls.nslots * 0.9)));
    APPEND_STAT("log_estimate_bytes", "%zu", ac_cls_bytes(&cls));
    APPEND_STAT("log_estimate_dropped", "%llu", U(cls.dropped));
    APPEND_STAT("log_migrated_out", "%llu", U(st.migrated_out));
    APPEND_STAT("log_migrated_in", "%llu", U(st.migrated_in));
    APPEND_STAT("log_migrate_in_nomem", "%llu", U(st.migrate_in_nomem));
    APPEND_STAT("log_victims_listed", "%llu", U(st.victims_listed));
    APPEND_STAT("log_victims_fallback", "%llu", U(__atomic_load_n(&st.victims_fallback, __ATOMIC_RELAXED)));
    APPEND_STAT("bloom_bytes", "%zu", cs.bloom_bytes);
    APPEND_STAT("bloom_keys", "%zu", cs.bloom_capacity);
    APPEND_STAT("bloom_k", "%u", cs.bloom_k);
    APPEND_STAT("bloom_lookups", "%llu", U(cs.lookups));
    APPEND_STAT("bloom_negatives", "%llu", U(cs.negatives));
    APPEND_STAT("bloom_false_positives", "%llu", U(cs.false_positives));
    APPEND_STAT("bloom_rebuilds", "%llu", U(cs.rebuilds));
    APPEND_STAT("cold_records", "%llu", U(cs.store.records));
    APPEND_STAT("cold_bytes", "%llu", U(cs.store.live_bytes));
    APPEND_STAT("cold_file_bytes", "%llu", U(cs.store.file_bytes));
    APPEND_STAT("cold_index_slots", "%llu", U(cs.store.index_slots));
    APPEND_STAT("cold_index_grows", "%llu", U(cs.store.index_grows));
    APPEND_STAT("cold_record_reads", "%llu", U(cs.store.gets));
    APPEND_STAT("cold_index_reads", "%llu", U(cs.store.index_reads));
}

const struct ac_policy_ops ac_policy_logging = {
    .name = "logging",
    .summary = "Siberia: access logging, smoothed estimates, top-K hot set, tuple-level cold store",
    .init = logging_init,
    .on_insert = logging_on_insert,
    .on_access = log_access,
    .on_remove = logging_on_remove,
    .pick_victims = logging_pick_victims,
    .metadata_bytes = logging_metadata_bytes,
    .stats = logging_stats,
    .fixed_bytes = logging_fixed_bytes,
    .shutdown = logging_shutdown,
};
