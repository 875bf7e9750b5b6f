/* Hot/cold classification in a thread of its own (see hotcold.h). */
#include "memcached.h"
#include "ac_policy.h"
#include "ac_services.h"
#include "store/fp.h"
#include "store/keys.h"
#include "hotcold.h"
#include "store/clock.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RING_ENTRIES 4096
#define DRAIN_BATCH 65536

#define U(x) (unsigned long long)(x)

static __thread bool on_classifier_thread;

size_t ac_hc_keys(size_t bytes) {
    return ac_cls_opts.keys != 0 ? ac_cls_opts.keys : ac_default_keys(bytes);
}

size_t ac_hc_ring_bytes(void) {
    /* a ring per thread that reads items: the workers, two more, and over the
     * network the fetchers of parked gets (core/ac_park.c) */
    size_t threads = (size_t)settings.num_threads + 2 + (ac_in_process() ? 0 : (size_t)ac_opts.park_threads);
    return threads * ac_log_ring_bytes(RING_ENTRIES);
}

size_t ac_hc_fixed_bytes(size_t keys) {
    return ac_cls_bytes_for_slots(ac_cls_slots_for(keys)) + ac_hc_ring_bytes();
}

int ac_hc_init(struct ac_hotcold *h, size_t keys, uint64_t budget, void (*round)(void), const char *who) {
    memset(h, 0, sizeof(*h));
    if (ac_cls_opts.offline && !ac_in_process()) {
        fprintf(stderr, "memcached-ac: %s: ac_log_offline=1 needs the in-process driver (-o ac_driver=FILE):"
                " it classifies the warm-up's history when the measured run begins, and network clients"
                " signal no phases\n", who);
        return -1;
    }
    if (ac_cls_init(&h->cls, keys, ac_cls_opts.alpha, ac_cls_opts.slice) != 0) {
        fprintf(stderr, "memcached-ac: %s: cannot allocate the estimate table for %zu keys\n", who, keys);
        return -1;
    }
    if (ac_log_init(&h->log, RING_ENTRIES, ac_cls_opts.sample) != 0) {
        fprintf(stderr, "memcached-ac: %s: cannot allocate the access-log rings\n", who);
        ac_cls_destroy(&h->cls);
        return -1;
    }
    h->budget = budget;
    h->round = round;
    return 0;
}

/* slabs_size of each class, as first asked (classes never change their chunk size) */
static unsigned int chunk_size[MAX_NUMBER_OF_SLAB_CLASSES];

uint32_t ac_hc_item_size(item *it) {
    size_t n = ITEM_ntotal(it);
    unsigned int id = AC_ITEM_TRANSIENT(it) ? slabs_clsid(n) : ITEM_clsid(it);
    if (id != 0 && id < MAX_NUMBER_OF_SLAB_CLASSES) {
        unsigned int c = __atomic_load_n(&chunk_size[id], __ATOMIC_RELAXED);
        if (c == 0)
            __atomic_store_n(&chunk_size[id], c = slabs_size((int)id), __ATOMIC_RELAXED);
        if (c > n)
            n = c;
    }
    return n > 0x3fffffff ? 0x3fffffff : (uint32_t)n;
}

/* hot path: the key's fingerprint and the chunk size only for sampled accesses */
void ac_hc_access(struct ac_hotcold *h, item *it) {
    if (ac_log_sampled(&h->log))
        ac_log_record_ref(&h->log, ac_key_fp(ITEM_key(it), it->nkey), ac_hc_item_size(it),
                          h->ref != NULL ? h->ref(it) : 0);
}

void ac_hc_insert(struct ac_hotcold *h, item *it) {
    if (!on_classifier_thread)
        ac_hc_access(h, it);
}

/* Drained entries go through a short queue (h->pipe): an entry's slot in the
 * estimate table is prefetched when it enters and recorded PIPE entries
 * later, so that the table's cache misses overlap instead of following one
 * another. Same order, and the queue is empty when ac_hc_drain returns. */
#define PIPE (sizeof(((struct ac_hotcold *)0)->pipe.e) / sizeof(struct ac_log_entry))

static void record(struct ac_hotcold *h, const struct ac_log_entry *e) {
    ac_cls_record(&h->cls, e->fp, e->size);
    if (e->ref != 0 && h->on_ref != NULL)
        h->on_ref(e->ref);
}

static void consume(const struct ac_log_entry *e, void *arg) {
    struct ac_hotcold *h = arg;
    ac_cls_prefetch(&h->cls, e->fp);
    if (h->pipe.n == PIPE) {
        record(h, &h->pipe.e[h->pipe.head]);
        h->pipe.e[h->pipe.head] = *e;
        h->pipe.head = (h->pipe.head + 1) % PIPE;
    } else {
        h->pipe.e[(h->pipe.head + h->pipe.n++) % PIPE] = *e;
    }
}

size_t ac_hc_drain(struct ac_hotcold *h) {
    size_t n = ac_log_drain(&h->log, consume, h, DRAIN_BATCH);
    for (; h->pipe.n > 0; h->pipe.n--, h->pipe.head = (h->pipe.head + 1) % PIPE)
        record(h, &h->pipe.e[h->pipe.head]);
    h->since_round += n;
    h->st.logged += n;
    return n;
}

void ac_hc_want_early(struct ac_hotcold *h) {
    __atomic_store_n(&h->early, true, __ATOMIC_RELAXED);
}

static int by_est_asc(const void *a, const void *b) {
    const struct ac_resident *x = a, *y = b;
    return x->est < y->est ? -1 : x->est > y->est;
}

size_t ac_hc_collect(struct ac_hotcold *h, unsigned int clsid, struct ac_resident **res, size_t *cap,
                     size_t *nhot, uint64_t *room) {
    size_t n = 0, hot = 0;
    unsigned int id = clsid | COLD_LRU;
    pthread_mutex_lock(&lru_locks[id]);
    for (item *it = item_lru_ends(true)[id]; it != NULL; it = it->prev) {
        if (it->nbytes == 0 && it->nkey == 0 && it->it_flags == 1)
            continue;  /* an LRU crawler's placeholder */
        if (n == *cap) {
            size_t ncap = *cap ? *cap * 2 : 1024;
            struct ac_resident *nr = realloc(*res, ncap * sizeof(**res));
            if (nr == NULL)
                break;
            *res = nr;
            *cap = ncap;
        }
        uint64_t fp = ac_key_fp(ITEM_key(it), it->nkey);
        bool is_hot = ac_cls_is_hot(&h->cls, fp);
        double est = is_hot ? ac_cls_estimate(&h->cls, fp) : -1.0;
        if (!is_hot && *room > 0) {
            uint32_t size = ac_hc_item_size(it);
            if (size <= *room) {
                *room -= size;
                is_hot = true;
                est = 0.0;
            }
        }
        (*res)[n].it = it;
        (*res)[n].cas = ITEM_get_cas(it);
        (*res)[n].est = est;
        hot += is_hot;
        n++;
    }
    pthread_mutex_unlock(&lru_locks[id]);
    qsort(*res, n, sizeof(**res), by_est_asc);
    *nhot = hot;
    return n;
}

static void round_now(struct ac_hotcold *h) {
    uint64_t t0 = ac_now_ns();
    ac_cls_classify(&h->cls, h->budget);
    h->round();
    h->st.hot_keys = h->cls.hot_keys;
    h->st.hot_bytes = h->cls.hot_bytes;
    h->st.last_round_ns = ac_now_ns() - t0;
    __atomic_add_fetch(&h->st.rounds, 1, __ATOMIC_RELAXED);
}

/* ac_log_offline's round as the measured phase begins: the driver's threads
 * wait at its gate, so draining until a drain comes back short empties every
 * ring: the history is complete, and the log is lossy again (an append from
 * now on, e.g. by a thread of memcached's that relinks an item, must not wait
 * for a classifier that may wait for its item lock). The history is then
 * classified once (Siberia's backward algorithm, Levandoski et al. ICDE 2013
 * §IV-B, returns the forward algorithm's top-K over the same log: the forward
 * one runs here over the whole history, whose estimates the drains built) and
 * the policy moves data. */
static void offline_round(struct ac_hotcold *h) {
    uint64_t t0 = ac_now_ns();
    while (ac_hc_drain(h) == DRAIN_BATCH)
        ;
    ac_log_set_lossless(&h->log, false);
    h->since_round = 0;
    __atomic_store_n(&h->early, false, __ATOMIC_RELAXED);
    round_now(h);
    h->st.offline_ns = ac_now_ns() - t0;
    __atomic_add_fetch(&h->st.offline_rounds, 1, __ATOMIC_RELAXED);
}

/* Into the mode a phase asked for (ac_hc_phase_begin): the history of the
 * warm-up is lossless, and leaving it classifies it. */
static void switch_mode(struct ac_hotcold *h, int want) {
    if (want == AC_HC_HISTORY)
        ac_log_set_lossless(&h->log, true);
    else if (h->mode == AC_HC_HISTORY)
        offline_round(h);
    __atomic_store_n(&h->mode, want, __ATOMIC_RELEASE);
}

static void *classifier_main(void *arg) {
    struct ac_hotcold *h = arg;
    on_classifier_thread = true;
    uint64_t last = ac_now_ns();
    while (!h->stopping) {
        int want = __atomic_load_n(&h->want, __ATOMIC_ACQUIRE);
        if (want != h->mode) {
            switch_mode(h, want);
            last = ac_now_ns();
        }
        size_t n = ac_hc_drain(h);
        bool due = false;
        if (h->mode == AC_HC_ONLINE) {       /* a history only accumulates */
            due = ac_cls_opts.round != 0 ? h->since_round >= ac_cls_opts.round
                : ac_now_ns() - last >= ac_cls_opts.round_ns;
            if (!due && __atomic_load_n(&h->early, __ATOMIC_RELAXED)) {
                /* classify early once there is something new */
                uint64_t min = ac_cls_opts.round != 0 ? ac_cls_opts.round / 4 : 1000;
                due = h->since_round >= min;
                h->st.early_rounds += due;
            }
        }
        if (due) {
            __atomic_store_n(&h->early, false, __ATOMIC_RELAXED);
            h->since_round = 0;
            round_now(h);
            last = ac_now_ns();
        }
        if (n == 0) {
            struct timespec ms = { 0, 1000000 };
            nanosleep(&ms, NULL);
        }
    }
    return NULL;
}

void ac_hc_phase_begin(struct ac_hotcold *h, const char *phase) {
    if (!ac_cls_opts.offline || !h->running)
        return;
    int want = strcmp(phase, "warmup") == 0 ? AC_HC_HISTORY : AC_HC_ONLINE;
    __atomic_store_n(&h->want, want, __ATOMIC_RELEASE);
    while (__atomic_load_n(&h->mode, __ATOMIC_ACQUIRE) != want) {
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
    }
}

int ac_hc_start(struct ac_hotcold *h, const char *who) {
    if (pthread_create(&h->thread, NULL, classifier_main, h) != 0) {
        fprintf(stderr, "memcached-ac: %s: cannot start the classifier thread\n", who);
        return -1;
    }
    h->running = true;
    return 0;
}

void ac_hc_destroy(struct ac_hotcold *h) {
    if (h->running) {
        ac_log_set_lossless(&h->log, false);   /* a producer waiting for room drops */
        h->stopping = true;
        pthread_join(h->thread, NULL);
        h->running = false;
    }
    ac_cls_destroy(&h->cls);
    ac_log_destroy(&h->log);
}

size_t ac_hc_bytes(const struct ac_hotcold *h) {
    return ac_cls_bytes(&h->cls) + ac_log_bytes(&h->log);
}

void ac_hc_stats(const struct ac_hotcold *h, ADD_STAT add_stats, void *c) {
    APPEND_STAT("log_sample", "%.3f", ac_cls_opts.sample);
    APPEND_STAT("log_alpha", "%.4f", ac_cls_opts.alpha);
    if (ac_cls_opts.round != 0) {
        APPEND_STAT("log_round_accesses", "%llu", U(ac_cls_opts.round));
    } else {
        APPEND_STAT("log_round_ms", "%llu", U(ac_cls_opts.round_ns / 1000000));
    }
    APPEND_STAT("log_slice", "%llu", U(ac_cls_opts.slice));
    APPEND_STAT("log_rounds", "%llu", U(__atomic_load_n(&h->st.rounds, __ATOMIC_RELAXED)));
    APPEND_STAT("log_early_rounds", "%llu", U(h->st.early_rounds));
    APPEND_STAT("log_last_round_us", "%llu", U(h->st.last_round_ns / 1000));
    APPEND_STAT("log_logged", "%llu", U(h->st.logged));
    APPEND_STAT("log_drops", "%llu", U(ac_log_drops(&h->log)));
    uint64_t wait_ns, waits = ac_log_waits(&h->log, &wait_ns);
    APPEND_STAT("log_offline", "%d", ac_cls_opts.offline ? 1 : 0);
    APPEND_STAT("log_waits", "%llu", U(waits));
    APPEND_STAT("log_wait_ns", "%llu", U(wait_ns));
    APPEND_STAT("log_offline_rounds", "%llu", U(__atomic_load_n(&h->st.offline_rounds, __ATOMIC_RELAXED)));
    APPEND_STAT("log_offline_ns", "%llu", U(h->st.offline_ns));
    APPEND_STAT("log_ring_bytes", "%zu", ac_log_bytes(&h->log));
    APPEND_STAT("log_hot_keys", "%llu", U(h->st.hot_keys));
    APPEND_STAT("log_hot_bytes", "%llu", U(h->st.hot_bytes));
    APPEND_STAT("log_hot_budget", "%llu", U(h->budget));
    APPEND_STAT("log_estimate_keys", "%llu", U(h->cls.count));
    APPEND_STAT("log_estimate_capacity", "%llu", U((uint64_t)((double)h->cls.nslots * 0.9)));
    APPEND_STAT("log_estimate_bytes", "%zu", ac_cls_bytes(&h->cls));
    APPEND_STAT("log_estimate_dropped", "%llu", U(h->cls.dropped));
}

/* ac_default_keys (store/keys.h) sizes by AC_KEY_SLOT_BYTES per estimate-table slot */
typedef char ac_default_keys_matches_the_table[(sizeof(struct ac_est) + sizeof(uint32_t) == AC_KEY_SLOT_BYTES) ? 1 : -1];

/* ac_log_round: a count of logged accesses ("100000": digits only, so that
 * "1m" is not read as 1048576 accesses) or a duration of s or ms ("2s") */
static int parse_log_round(void *values, const struct ac_opt *opt, const char *v) {
    struct ac_classifier_settings *o = values;
    uint64_t n;
    const char *end;
    if (ac_opt_digits(v, &n, &end) && *end == '\0' && n >= 1 && n <= 1000000000ULL) {
        o->round = n;
        o->round_ns = 0;
        return 0;
    }
    if (ac_opt_duration(v, AC_U_S | AC_U_MS, 10000000ULL, 3600 * AC_SEC, &n)) {
        o->round = 0;
        o->round_ns = n;
        return 0;
    }
    return ac_opt_refuse(opt, v);
}

static const struct ac_word offline_words[] = {
    { "0", NULL, 0, NULL }, { "1", NULL, 1, NULL }, { NULL, NULL, 0, NULL },
};

static const struct ac_opt classifier_opts[] = {
    { .key = "ac_log_sample", .type = AC_T_DOUBLE, AC_FIELD(struct ac_classifier_settings, sample), .lo = 0.0, .hi = 1.0, .lo_open = true,
      .noun = "a fraction", .note = "(1 logs every access)",
      .def = "1", .def_is_value = true,
      .help = "fraction of accesses logged" },
    { .key = "ac_log_alpha", .type = AC_T_DOUBLE, AC_FIELD(struct ac_classifier_settings, alpha), .lo = 0.0, .hi = 1.0, .lo_open = true,
      .noun = "a number", .note = "(e.g. 0.05)",
      .def = "0.05", .def_is_value = true,             /* Levandoski et al. ICDE 2013 */
      .help = "exponential-smoothing constant (0.05 as Siberia)" },
    { .key = "ac_log_round", .type = AC_T_CUSTOM, AC_FIELD(struct ac_classifier_settings, round), .parse = parse_log_round,
      .what = "a count of logged accesses from 1 to 1000000000 (e.g. 100000)"
              " or a duration from 10ms to 3600s (e.g. 2s, 500ms)",
      .def = "100000", .def_is_value = true,
      .help = "classify every N logged accesses or every Ns/Nms" },
    { .key = "ac_log_slice", .type = AC_T_COUNT, AC_FIELD(struct ac_classifier_settings, slice), .min = 1, .max = 1000000000,
      .noun = "a count of logged accesses per time slice",
      .def = "20000", .def_is_value = true,
      .help = "logged accesses per time slice" },
    { .key = "ac_log_keys", .type = AC_T_COUNT, AC_FIELD(struct ac_classifier_settings, keys), .min = 1024, .max = AC_KIB * AC_KIB * AC_KIB,
      .noun = "a count of keys", .note = "(K/M/G/T units allowed)",
      .def = "an eighth of -m / ac_eff_memory (emt: the region's pages)", .bookkeeping = true,
      .help = "keys the estimate table tracks, 28 B per slot" },
    { .key = "ac_log_hot_fill", .type = AC_T_DOUBLE, AC_FIELD(struct ac_classifier_settings, hot_fill), .lo = 0.0, .hi = 1.0, .lo_open = true,
      .noun = "a fraction", .note = "of the item memory",
      .def = "0.9", .def_is_value = true,
      .help = "hot-set budget, fraction of item memory (logging) / of the hot region (effpaging)"
              " / of the page cache beyond its watermarks (emt's pinned pages)" },
    { .key = "ac_log_offline", .type = AC_T_ENUM, AC_FIELD(struct ac_classifier_settings, offline), .words = offline_words,
      .def = "0", .def_is_value = true,
      .help = "1 = classify offline over the warm-up's history before the measured run (logging, in-process driver)" },
};
struct ac_classifier_settings ac_cls_opts;
const struct ac_opt_table ac_classifier_options = AC_OPT_TABLE("the classifier of logging, effpaging and emt's colours",
                                                               classifier_opts, &ac_cls_opts);
