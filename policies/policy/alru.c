/* Policy "alru": Redis's approximated LRU (Redis evict.c, "LRU approximation
 * algorithm", 3.0+; Zhang et al., ICDE 2015, §III-A and Table I), behind the
 * same spill path as "lru", over any spilling tier (blocks by default).
 *
 * - Each item carries an access clock of ac_alru_bits bits (24 as Redis's
 *   LRU_BITS, down to the paper's 22) in the spare bytes of memcached's item
 *   header (the 6 padding bytes after nkey): no list links are used.
 * - The clock counts ac_alru_resolution units (Redis: LRU_CLOCK_RESOLUTION
 *   1000 ms; the paper: 1 us) modulo 2^bits. ac_alru_clock says where an
 *   access reads it: "timer", a value a timer thread advances every
 *   resolution (the paper's setting, §IV-B-2: a 1 us timer, so that no
 *   access pays for reading the time); "access", CLOCK_MONOTONIC read on
 *   every access; "auto" (default), as Redis's LRU_CLOCK(): the timer for a
 *   resolution of 1 ms or more, the clock per access below.
 * - An insert or an access stores the current clock in the item.
 * - Eviction (Redis evictionPoolPopulate / performEvictions): each victim
 *   takes ac_alru_samples random items of the slab class (Redis
 *   maxmemory-samples, default 5) into a pool of the 16 best candidates
 *   (EVPOOL_SIZE) kept across rounds, sorted by idle time (Redis
 *   estimateObjectIdleTime, wrap-around aware); the candidate with the largest
 *   idle time whose key still exists is the victim. Like Redis, a candidate is
 *   not re-aged: if it was accessed after it entered the pool it may still be
 *   chosen. Random items come from the class's slab pages
 *   (slabs_chunk_sample); free chunks and items of other classes are skipped;
 *   a chunk of a chunked item stands for that item (its header).
 *
 * Memcached still links items on its per-class list on insert and removal
 * (that code is not ours to remove); alru never reads or moves those links and
 * is charged for its clock bytes and pools only (README: fair comparison). */
#include "memcached.h"
#include "ac_policy.h"
#include "ac_services.h"
#include "test_hooks.h"
#include "victim_checks.h"
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define POOL_SIZE 16                  /* Redis EVPOOL_SIZE */
/* the clock lives in the header padding between nkey and data */
#define CLOCK_OFF (offsetof(item, nkey) + sizeof(uint8_t))
/* compile-time check (C99): memcached's item header has 3 spare bytes after nkey */
typedef char alru_clock_fits_in_header_padding[(offsetof(item, data) - CLOCK_OFF >= 3) ? 1 : -1];

struct pool_entry {
    item *it;
    uint32_t hv;        /* the key's hash when sampled: "the key still exists" */
    uint32_t idle;
};

struct pool {
    struct pool_entry e[POOL_SIZE];   /* e[0..n-1], idle ascending (best last) */
    int n;
    unsigned epoch;                   /* page epoch of the entries (ac_page_epoch) */
    uint64_t rng;                     /* xorshift64* state */
};

static struct pool pools[MAX_NUMBER_OF_SLAB_CLASSES];   /* used under the spill lock (ac_make_room_locked) */
static unsigned clock_bits = 24, samples = 5;
static uint32_t clock_max;                /* 2^bits - 1 */
static uint64_t resolution_ns = 1000000000ULL;
static volatile uint32_t cached_clock;
static uint32_t (*clock_source)(void);
static uint64_t stat_samples, stat_skipped, stat_victims, stat_stale, stat_ticks;

static uint32_t clock_direct(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
    return (uint32_t)((ns / resolution_ns) & clock_max);
}

static uint32_t clock_cached(void) {
    return cached_clock;
}

static void *timer_main(void *arg) {
    (void)arg;
    struct timespec step = { (time_t)(resolution_ns / 1000000000ULL), (long)(resolution_ns % 1000000000ULL) };
    /* the kernel's default timer slack (50 us) would stretch a 1 us tick */
    if (resolution_ns < 1000000ULL)
        prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    for (;;) {
        nanosleep(&step, NULL);
        cached_clock = clock_direct();
        __atomic_add_fetch(&stat_ticks, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

void ac_alru_set_clock(uint32_t (*now)(void)) {
    clock_source = now;
}

static inline uint32_t clock_of(const item *it) {
    const uint8_t *p = (const uint8_t *)it + CLOCK_OFF;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
}

static inline void clock_set(item *it, uint32_t c) {
    uint8_t *p = (uint8_t *)it + CLOCK_OFF;
    p[0] = (uint8_t)c;
    p[1] = (uint8_t)(c >> 8);
    p[2] = (uint8_t)(c >> 16);
}

/* Redis estimateObjectIdleTime, in clock units */
static uint32_t idle_of(uint32_t now, uint32_t c) {
    return now >= c ? now - c : (clock_max - c) + now;
}

enum { CLOCK_AUTO, CLOCK_TIMER, CLOCK_ACCESS };

struct alru_options {
    unsigned bits;                    /* ac_alru_bits */
    unsigned samples;                 /* ac_alru_samples */
    uint64_t resolution_ns;           /* ac_alru_resolution */
    unsigned clock;                   /* ac_alru_clock: CLOCK_* */
};
static struct alru_options opt;

static int alru_init(void) {
    clock_bits = opt.bits;
    samples = opt.samples;
    resolution_ns = opt.resolution_ns;
    clock_max = (uint32_t)((1ULL << clock_bits) - 1);
    for (int i = 0; i < MAX_NUMBER_OF_SLAB_CLASSES; i++) {
        pools[i].n = 0;
        pools[i].rng = 0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1);   /* deterministic per class */
    }
    if (clock_source == NULL) {
        cached_clock = clock_direct();
        if (opt.clock == CLOCK_TIMER || (opt.clock == CLOCK_AUTO && resolution_ns >= 1000000ULL)) {
            pthread_t timer;
            if (pthread_create(&timer, NULL, timer_main, NULL) != 0) {
                fprintf(stderr, "memcached-ac: alru: cannot start the clock thread\n");
                return -1;
            }
            pthread_detach(timer);
            clock_source = clock_cached;
        } else {
            clock_source = clock_direct;
        }
    }
    return 0;
}

static void alru_touch(item *it) {
    clock_set(it, clock_source() & clock_max);
}

/* A block-mate merged back unrequested: the largest idle time the clock can
 * show (the clock value just after now), so sampling finds it as cold. */
static void alru_on_merged(item *it) {
    clock_set(it, (clock_source() + 1) & clock_max);
}

static void alru_on_remove(item *it) {
    (void)it;     /* pool entries are re-validated when they are used */
}

static uint64_t next_rand(struct pool *p) {
    p->rng ^= p->rng >> 12;
    p->rng ^= p->rng << 25;
    p->rng ^= p->rng >> 27;
    return p->rng * 0x2545F4914F6CDD1DULL;
}

/* Redis evictionPoolPopulate: insert by idle time, dropping the best-kept
 * least idle entry when the pool is full; an item already pooled is not
 * added twice. */
static void pool_insert(struct pool *p, item *it, uint32_t hv, uint32_t idle) {
    for (int i = 0; i < p->n; i++)
        if (p->e[i].it == it && p->e[i].hv == hv)
            return;
    int k = 0;
    while (k < p->n && p->e[k].idle < idle)
        k++;
    if (k == 0 && p->n == POOL_SIZE)
        return;                                   /* worse than everything pooled */
    if (p->n < POOL_SIZE) {
        memmove(&p->e[k + 1], &p->e[k], (size_t)(p->n - k) * sizeof(p->e[0]));
        p->n++;
    } else {
        k--;                                      /* drop e[0], shift left */
        memmove(&p->e[0], &p->e[1], (size_t)k * sizeof(p->e[0]));
    }
    p->e[k] = (struct pool_entry){ it, hv, idle };
}

/* `samples` resident items of the class into the pool; free chunks, items of
 * other classes and the victims already chosen in this call (out[0..n)) are
 * skipped, up to 4 x samples draws. */
static void sample_into(struct pool *p, unsigned int clsid, uint32_t now, item **out, int n) {
    unsigned got = 0;
    for (unsigned tries = 0; got < samples && tries < 4 * samples; tries++) {
        item *it = slabs_chunk_sample(clsid, next_rand(p));
        if (it == NULL)
            return;
        __atomic_add_fetch(&stat_samples, 1, __ATOMIC_RELAXED);
        /* A chunk of a chunked item (a value above slab_chunk_max): the
         * candidate is its item, the header the chunk points to. memcached
         * gives that header the class of the item's full size (the one its
         * chunks fill) though it sits in a smaller class's page, so sampling
         * headers alone never offers a chunked item to this class, and an
         * allocation here could only wait. The pointer is a hint like any
         * sampled slot (pages are not freed under the spill lock; whatever it
         * points to is re-validated, here and by ac_grab_item). */
        if ((it->it_flags & (ITEM_CHUNK | ITEM_SLABBED)) == ITEM_CHUNK)
            it = ((item_chunk *)(void *)it)->head;
        if (it == NULL || !ac_is_resident(it, clsid) || ac_chosen(it, out, n)) {
            __atomic_add_fetch(&stat_skipped, 1, __ATOMIC_RELAXED);
            continue;
        }
        got++;
        pool_insert(p, it, hash(ITEM_key(it), it->nkey), idle_of(now, clock_of(it)));
    }
}

static int alru_pick_victims(unsigned int clsid, item **out, int max) {
    if (clsid >= MAX_NUMBER_OF_SLAB_CLASSES)
        return 0;
    struct pool *p = &pools[clsid];
    int n = 0;
    unsigned epoch = ac_page_epoch();
    if (p->epoch != epoch) {
        p->n = 0;          /* a slab page was freed since: the entries may point into it */
        p->epoch = epoch;
    }
    while (n < max) {
        sample_into(p, clsid, clock_source() & clock_max, out, n);
        /* the best (most idle) candidate whose key still exists */
        item *victim = NULL;
        while (p->n > 0 && victim == NULL) {
            struct pool_entry e = p->e[--p->n];
            if (ac_is_resident(e.it, clsid) && hash(ITEM_key(e.it), e.it->nkey) == e.hv && !ac_chosen(e.it, out, n))
                victim = e.it;
            else
                __atomic_add_fetch(&stat_stale, 1, __ATOMIC_RELAXED);
        }
        if (victim == NULL)
            break;          /* nothing resident left to offer */
        out[n++] = victim;
    }
    __atomic_add_fetch(&stat_victims, (uint64_t)n, __ATOMIC_RELAXED);
    return n;
}

static size_t alru_metadata_bytes(void) {
    /* the clock bits of every resident item (kept in header padding, but
     * charged as what alru needs) and the candidate pools */
    STATS_LOCK();
    size_t n = stats_state.curr_items;
    STATS_UNLOCK();
    return (n * clock_bits + 7) / 8 + sizeof(pools);
}

static void alru_stats(ADD_STAT add_stats, void *c) {
    APPEND_STAT("alru_bits", "%u", clock_bits);
    APPEND_STAT("alru_samples", "%u", samples);
    APPEND_STAT("alru_resolution_ns", "%llu", (unsigned long long)resolution_ns);
    APPEND_STAT("alru_clock", "%u", clock_source != NULL ? clock_source() & clock_max : 0);
    APPEND_STAT("alru_clock_source", "%s", clock_source == clock_cached ? "timer"
                : clock_source == clock_direct ? "access" : "other");
    APPEND_STAT("alru_timer_ticks", "%llu", (unsigned long long)__atomic_load_n(&stat_ticks, __ATOMIC_RELAXED));
    APPEND_STAT("alru_sampled", "%llu", (unsigned long long)__atomic_load_n(&stat_samples, __ATOMIC_RELAXED));
    APPEND_STAT("alru_sample_skipped", "%llu", (unsigned long long)__atomic_load_n(&stat_skipped, __ATOMIC_RELAXED));
    APPEND_STAT("alru_victims", "%llu", (unsigned long long)__atomic_load_n(&stat_victims, __ATOMIC_RELAXED));
    APPEND_STAT("alru_stale_candidates", "%llu", (unsigned long long)__atomic_load_n(&stat_stale, __ATOMIC_RELAXED));
}

static const struct ac_word clock_words[] = {
    { "auto", "a timer for a resolution of 1ms or more, else per access (Redis LRU_CLOCK)", CLOCK_AUTO, NULL },
    { "timer", "a thread advances it every resolution (the paper's 1us timer)", CLOCK_TIMER, NULL },
    { "access", "CLOCK_MONOTONIC read on every access", CLOCK_ACCESS, NULL },
    { NULL, NULL, 0, NULL },
};

static const struct ac_opt alru_opts[] = {
    { .key = "ac_alru_bits", .type = AC_T_COUNT, AC_FIELD(struct alru_options, bits), .min = 22, .max = 24,
      .note = "(bits of the access clock)",
      .def = "24", .def_is_value = true,                  /* Redis LRU_BITS */
      .help = "bits of the per-item access clock (24 as Redis, 22 as the paper)" },
    { .key = "ac_alru_samples", .type = AC_T_COUNT, AC_FIELD(struct alru_options, samples), .min = 1, .max = 64,
      .noun = "an integer",
      .def = "5", .def_is_value = true,                   /* Redis maxmemory-samples */
      .help = "items sampled per victim into the pool of 16 (5 as Redis)" },
    { .key = "ac_alru_resolution", .type = AC_T_DURATION, AC_FIELD(struct alru_options, resolution_ns), .min = 1,
      .max = 3600 * AC_SEC, .units = AC_U_S | AC_U_MS | AC_U_US | AC_U_NS,
      .note = "(e.g. 1s as Redis, 1us as the paper)",
      .def = "1s", .def_is_value = true,                  /* Redis LRU_CLOCK_RESOLUTION */
      .help = "clock tick (1s as Redis, 1us as the paper)" },
    { .key = "ac_alru_clock", .type = AC_T_ENUM, AC_FIELD(struct alru_options, clock),
      .words = clock_words, .def = "auto", .def_is_value = true,
      .help = "where an access reads the clock: auto, timer or access" },
};
static const struct ac_opt_table alru_options = AC_OPT_TABLE("policy alru", alru_opts, &opt);

const struct ac_policy_ops ac_policy_alru = {
    .name = "alru",
    .summary = "Redis approximated LRU: sampled clocks and a candidate pool",
    .default_tier = "blocks",
    .tier_shapes = AC_CAP_SPILL,
    .options = { &alru_options },
    .fetch_on_read = true,
    .init = alru_init,
    .on_insert = alru_touch,
    .on_access = alru_touch,
    .on_remove = alru_on_remove,
    .on_merged = alru_on_merged,
    .pick_victims = alru_pick_victims,
    .metadata_bytes = alru_metadata_bytes,
    .stats = alru_stats,
};
