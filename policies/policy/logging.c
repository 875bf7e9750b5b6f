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
 * - Classification (classify.c), in a thread of its own (hotcold.c, shared
 *   with effpaging): it drains the rings,
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
 * - Offline classification (ac_log_offline=1, in-process driver): during the
 *   warm-up the log is lossless and no round runs; as the measured run begins
 *   (phase_begin) one round classifies the whole history and migrates, as
 *   Siberia classifies offline (hotcold.h).
 * - Cold tier: any that spills; by default "tuples" (Siberia's cold store,
 *   tier/tuples.c). A read of a cold item is served from its record without
 *   moving it into RAM (fetch_on_read false: a transient copy, core/ac_fetch.c); a
 *   modify brings it in; hot keys come back by migration.
 *
 * Memory charged against -m (fixed_bytes, at start), ac_log_charge: "all"
 * (default; equal provisioning: every byte the approach holds comes out of
 * the same -m) charges the estimate table and its sort scratch (28 bytes per
 * slot) and one log ring per worker thread plus two; "buffer" charges the
 * rings only, as the paper's Table II does (Siberia classifies offline, so
 * its table is not counted): the table then lives beside -m, and the process
 * holds that much more than the budget. metadata_bytes reports what is
 * allocated either way, including the victim lists (16 bytes per resident
 * item: a pointer and the item's CAS, victim_checks.h) and rings of further
 * threads. */
#include "memcached.h"
#include "ac_policy.h"
#include "ac_services.h"
#include "store/fp.h"
#include "hotcold.h"
#include "victim_checks.h"
#include <stdio.h>
#include <stdlib.h>

#define U(x) (unsigned long long)(x)

struct victims {
    struct ac_listed *it;
    size_t n, next;
    unsigned epoch;          /* page epoch when the residents were collected */
};

static struct ac_hotcold hc;
static struct victims victims[MAX_NUMBER_OF_SLAB_CLASSES];   /* under the spill lock */
static size_t victim_bytes;                                  /* under the spill lock */

static struct {
    uint64_t migrated_out, migrated_in, migrate_in_nomem;
    uint64_t victims_listed, victims_fallback;
    uint64_t light_rounds;            /* rounds with room for all of the slab memory: no walk */
} st;                                          /* written by the classifier (victims_fallback: atomic) */

struct logging_options {
    bool charge_all;                  /* ac_log_charge=all (else buffer) */
};
static struct logging_options opt;

static size_t logging_fixed_bytes(size_t maxbytes) {
    return opt.charge_all ? ac_hc_fixed_bytes(ac_hc_keys(maxbytes)) : ac_hc_ring_bytes();
}

static void logging_on_access(item *it) {
    ac_hc_access(&hc, it);
}

static void logging_on_insert(item *it) {
    ac_hc_insert(&hc, it);
}

static void logging_on_remove(item *it) {
    (void)it;          /* victim-list entries are re-validated when used (CAS included) */
}

/* Called under the spill lock (a spill round, ac_make_room_locked). */
static int logging_pick_victims(unsigned int clsid, item **out, int max) {
    if (clsid >= MAX_NUMBER_OF_SLAB_CLASSES)
        return 0;
    struct victims *v = &victims[clsid];
    int n = 0;
    if (v->epoch != ac_page_epoch())
        v->next = v->n;      /* a slab page was freed since: the list may point into it */
    while (n < max && v->next < v->n) {
        struct ac_listed e = v->it[v->next++];
        if (ac_still_listed(e, clsid))
            out[n++] = e.it;
    }
    if (n > 0)
        return n;
    /* the list ran dry before the next round: oldest inserts first */
    ac_hc_want_early(&hc);
    unsigned int id = clsid | COLD_LRU;
    pthread_mutex_lock(&lru_locks[id]);
    for (item *it = item_lru_ends(true)[id]; it != NULL && n < max; it = it->prev) {
        if (it->nbytes == 0 && it->nkey == 0 && it->it_flags == 1)
            continue;  /* an LRU crawler's placeholder */
        if (!ac_chosen(it, out, n))
            out[n++] = it;
    }
    pthread_mutex_unlock(&lru_locks[id]);
    __atomic_add_fetch(&st.victims_fallback, (uint64_t)n, __ATOMIC_RELAXED);
    return n;
}

/* Hot keys that are cold come back, AC_MIGRATE_BATCH at a time with their
 * reads in flight together (mig_pf, the classifier thread's prefetcher: a
 * read at a time would let the migration fall behind the requests' reads). */
static struct {
    uint64_t fp[AC_MIGRATE_BATCH];
    int n;
    bool stop;                /* no memory: the rest waits for the next round */
    unsigned calls;
} mig;                        /* the classifier thread's */
static struct ac_prefetcher *mig_pf;

static void migrate_flush(void) {
    if (mig.n > 0 && !mig.stop) {
        bool nomem = false;
        st.migrated_in += (uint64_t)ac_migrate_in(mig.fp, mig.n, mig_pf, &nomem);
        if (nomem) {
            mig.stop = true;
            st.migrate_in_nomem++;
        }
    }
    mig.n = 0;
}

/* For each hot key: if the tier may hold it (its uncounted check from memory:
 * most hot keys are resident), it joins the batch. The access rings are
 * drained every 32 hot keys, whether or not one came back, so a walk over a
 * large hot set does not let them overflow. */
static void migrate_in_one(uint64_t fp, void *arg) {
    (void)arg;
    if (!mig.stop && ac_maybe_spilled(fp)) {
        mig.fp[mig.n++] = fp;
        if (mig.n == AC_MIGRATE_BATCH)
            migrate_flush();
    }
    if (++mig.calls % 32 == 0)
        ac_hc_drain(&hc);
}

/* The classifier thread's prefetcher, made on its first round (on that
 * thread: a prefetcher is its thread's); without one, a read at a time. */
static void migrate_prepare(void) {
    static bool tried;
    if (tried)
        return;
    tried = true;
    char why[160];
    if ((mig_pf = ac_prefetcher_new_migration(AC_MIGRATE_BATCH, why, sizeof(why))) == NULL)
        fprintf(stderr, "memcached-ac: logging: migration reads one record at a time (%s)\n", why);
}

/* Hot keys that are cold come back; none to look for when the tier holds nothing. */
static void migrate_in_hot(void) {
    if (ac_spilled_now() == 0)
        return;
    migrate_prepare();
    mig.n = 0;
    mig.stop = false;
    ac_cls_foreach_hot(&hc.cls, migrate_in_one, NULL);
    migrate_flush();
}

static void set_victims(unsigned int clsid, struct ac_listed *list, size_t m, unsigned epoch) {
    ac_spill_lock();
    victim_bytes -= victims[clsid].n * sizeof(struct ac_listed);
    free(victims[clsid].it);
    victims[clsid] = (struct victims){ list, m, 0, epoch };
    victim_bytes += m * sizeof(struct ac_listed);
    ac_spill_unlock();
}

/* After a classification (classifier thread). */
static void logging_round(void) {
    /* The forward algorithm ranks the keys the table does not know (estimate
     * 0) after every key it knows: they take what the hot set left of the
     * budget, when it holds every known key. */
    uint64_t room = hc.cls.hot_keys == hc.cls.count && hc.cls.hot_bytes < hc.budget
        ? hc.budget - hc.cls.hot_bytes : 0;
    if (room >= ac_slab_bytes()) {
        /* Room for all of the slab memory: every resident item is hot, none
         * leaves RAM, and none is walked. Victim lists wait for a round
         * without that much room: were RAM to fill before it, pick_victims
         * takes the oldest inserts and asks for that round early. */
        for (unsigned int clsid = 1; clsid < MAX_NUMBER_OF_SLAB_CLASSES; clsid++)
            if (victims[clsid].n > 0)
                set_victims(clsid, NULL, 0, ac_page_epoch());
        st.light_rounds++;
        migrate_in_hot();
        return;
    }
    struct ac_resident *res = NULL;
    size_t cap = 0;
    for (unsigned int clsid = 1; clsid < MAX_NUMBER_OF_SLAB_CLASSES; clsid++) {
        unsigned epoch = ac_page_epoch();      /* before the pointers are collected */
        size_t nhot, n = ac_hc_collect(&hc, clsid, &res, &cap, &nhot, &room);
        if (n == 0) {
            set_victims(clsid, NULL, 0, epoch);
            continue;
        }
        /* the cold ones (est -1, first) leave RAM, 64 at a time */
        size_t ncold = n - nhot;
        item *batch[64];
        for (size_t i = 0; i < ncold; i += 64) {
            int k = 0;
            for (size_t j = i; j < ncold && k < 64; j++)
                batch[k++] = res[j].it;
            st.migrated_out += (uint64_t)ac_spill_items(clsid, batch, k, epoch);
            ac_hc_drain(&hc);
        }
        /* the hot residents, lowest estimate first, are the victims until the next round, each
         * with the CAS it had when collected (under the class's LRU lock: nothing here reads an
         * item, which the spill above may have freed, or its page) */
        struct ac_listed *list = nhot > 0 ? malloc(nhot * sizeof(struct ac_listed)) : NULL;
        size_t m = 0;
        if (list != NULL)
            for (size_t j = ncold; j < n; j++)
                list[m++] = (struct ac_listed){ res[j].it, res[j].cas };
        set_victims(clsid, list, m, epoch);
        st.victims_listed += m;
    }
    free(res);
    migrate_in_hot();
}

static int logging_init(void) {
    size_t keys = ac_hc_keys(settings.maxbytes);
    uint64_t budget = (uint64_t)((double)ac_slab_limit() * ac_cls_opts.hot_fill);
    if (ac_hc_init(&hc, keys, budget, logging_round, "logging") != 0)
        return -1;
    if (ac_hc_start(&hc, "logging") != 0) {
        ac_hc_destroy(&hc);
        return -1;
    }
    return 0;
}

static void logging_phase_begin(const char *phase) {
    ac_hc_phase_begin(&hc, phase);
}

static void logging_shutdown(void) {
    ac_hc_destroy(&hc);               /* the classifier thread is gone: its prefetcher can go */
    ac_prefetcher_free(mig_pf);
    mig_pf = NULL;
}

static size_t logging_metadata_bytes(void) {
    ac_spill_lock();
    size_t v = victim_bytes;
    ac_spill_unlock();
    return ac_hc_bytes(&hc) + v;
}

static void logging_stats(ADD_STAT add_stats, void *c) {
    ac_hc_stats(&hc, add_stats, c);
    APPEND_STAT("log_charge", "%s", opt.charge_all ? "all" : "buffer");
    APPEND_STAT("log_charged_bytes", "%zu", logging_fixed_bytes(settings.maxbytes));
    APPEND_STAT("log_migrated_out", "%llu", U(st.migrated_out));
    APPEND_STAT("log_migrated_in", "%llu", U(st.migrated_in));
    APPEND_STAT("log_migrate_in_nomem", "%llu", U(st.migrate_in_nomem));
    APPEND_STAT("log_victims_listed", "%llu", U(st.victims_listed));
    APPEND_STAT("log_victims_fallback", "%llu", U(__atomic_load_n(&st.victims_fallback, __ATOMIC_RELAXED)));
    APPEND_STAT("log_light_rounds", "%llu", U(st.light_rounds));
}

static const struct ac_word charge_words[] = {
    { "all", "the estimate table and the log rings", 1, NULL },
    { "buffer", "the log rings only, as the paper's Table II; the table lives beside -m", 0, NULL },
    { NULL, NULL, 0, NULL },
};

static const struct ac_opt logging_opts[] = {
    { .key = "ac_log_charge", .type = AC_T_ENUM, AC_FIELD(struct logging_options, charge_all),
      .words = charge_words, .def = "all", .def_is_value = true,
      .help = "the classifier's memory charged against -m" },
};
static const struct ac_opt_table logging_options = AC_OPT_TABLE("policy logging", logging_opts, &opt);

const struct ac_policy_ops ac_policy_logging = {
    .name = "logging",
    .summary = "Siberia: access logging, smoothed estimates, top-K hot set; reads of cold items stay cold",
    .default_tier = "tuples",
    .tier_shapes = AC_CAP_SPILL,
    .options = { &logging_options, &ac_classifier_options },
    .init = logging_init,
    .on_insert = logging_on_insert,
    .on_access = logging_on_access,
    .on_remove = logging_on_remove,
    .pick_victims = logging_pick_victims,
    .metadata_bytes = logging_metadata_bytes,
    .stats = logging_stats,
    .fixed_bytes = logging_fixed_bytes,
    .shutdown = logging_shutdown,
    .phase_begin = logging_phase_begin,
};
