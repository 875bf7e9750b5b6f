/* Policy "effpaging": Efficient OS paging (Stoica & Ailamaki, "Enabling
 * efficient OS paging for main-memory OLTP databases", DaMoN 2013; Zhang et
 * al., ICDE 2015, §III-C-1). As ospaging, memcached-ac never evicts: the slab
 * memory is one anonymous mapping, larger than the data, and the cgroup's
 * limit makes the kernel swap. Unlike ospaging, hot and cold items do not
 * share pages:
 *   - the mapping is cut in two regions (regions.c): a hot region at its start,
 *     mlocked, and a cold region of -m bytes (sized above the data, as for
 *     ospaging) that the kernel pages;
 *   - accesses are logged and classified by the same code as policy logging
 *     (hotcold.c: sampled access log, exponential smoothing, forward top-K
 *     whose sizes fit ac_log_hot_fill of the hot region);
 *   - after each round, items that became cold move out of the hot region and
 *     items that became hot move in, hottest first, one out and one in in turn
 *     (copy, relink, free: ac_relocate); optionally the cold region is then
 *     MADV_COLDed (ac_eff_madv_cold);
 *   - hot items stay ahead of cold ones in their hash chains (ac_eff_hot_first,
 *     regions.c ac_hot_first): a hot read never faults a cold item in on its
 *     way through the chain.
 * New and updated items go to the hot region while it has room.
 *
 * Sizing. ac_eff_memory is what the policy may lock: the hot region plus the
 * classifier's table and rings (an eighth of it for the table, as logging's
 * share of -m). Without it, it is what the cgroup allows: its limit minus its
 * usage at start minus a margin (the hash table, whose memory memcached has
 * allocated but not yet touched, plus 8 MiB for threads and connections),
 * times ac_eff_lock (0.7 by default: the rest of the limit is left to the
 * cold region's resident pages; Stoica & Ailamaki size the hot set, the
 * harness sweeps it: experiments/effpaging-lock.toml). Locking all of it (1,
 * the default until 2026-11-28) left the kernel ~8 MiB to page the cold region
 * with: at 1M records, θ 0.99, it held 12 pp fewer hits than 0.7 at M/D 1/2
 * and 1/4 (experiments/results/faithful-paper), and at small limits the
 * kernel OOM-killed it now and then (policies/README.md, effpaging).
 * Locking more than the cgroup allows ends in an OOM kill, not an error, so a
 * configuration that does not fit under the limit with that margin is refused
 * at start with the numbers. Reads are classified by the thread's major
 * faults, as for ospaging (core/ac_hooks.c). */
#include "memcached.h"
#include "ac_policy.h"
#include "ac_services.h"
#include "store/fp.h"
#include "regions.h"
#include "hotcold.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MARGIN_FIXED (8u << 20)

#define U(x) (unsigned long long)(x)

struct eff_options {
    size_t memory;                    /* ac_eff_memory (0: what the cgroup allows) */
    bool madv_cold;                   /* ac_eff_madv_cold */
    bool hot_first;                   /* ac_eff_hot_first */
    double lock_share;                /* ac_eff_lock: share of what the cgroup allows that it locks */
};
static struct eff_options opt;

static struct ac_hotcold hc;
static char *base;
static size_t map_bytes, hot_bytes, lock_budget, margin;
static uint64_t cg_limit, cg_usage;
static char cg_path[1200];

static struct {
    uint64_t promoted, demoted, promote_nospace, demote_nospace, skipped, madv_cold;
    uint64_t refs_dropped, last_candidates;
    uint64_t hot_first_moves;          /* hot items moved ahead of a cold one in a hash chain (atomic) */
} st;                                  /* written by the classifier thread */

static void eff_on_access(item *it) {
    ac_hc_access(&hc, it);
}

static void eff_on_insert(item *it) {
    ac_hc_insert(&hc, it);
    if (opt.hot_first && !ac_region_hot(it)) {   /* hot items first in its hash chain (regions.c) */
        int n = ac_hot_first(it);
        if (n > 0)
            __atomic_add_fetch(&st.hot_first_moves, (uint64_t)n, __ATOMIC_RELAXED);
    }
}

static void count_move(int rc, uint64_t *moved, uint64_t *nospace) {
    if (rc > 0)
        (*moved)++;
    else if (rc < 0)
        (*nospace)++;
    else
        st.skipped++;
}

/* A move candidate: est -1 for an item of the hot region that is not hot, the
 * estimate for a hot item of the cold region. */
struct cand {
    item *it;
    double est;
    unsigned int clsid;
};

static struct cand *cands;             /* classifier thread */
static size_t ncands, cands_cap;

/* Cold-region items logged since the last round: the promotion candidates,
 * as references (chunk offset / 8 + 1) in an open-addressing set. */
static uint32_t *refs;
static size_t ref_slots, nrefs;

static uint32_t eff_ref(const item *it) {
    return ac_region_hot(it) ? 0 : (uint32_t)(((const char *)it - base) / 8 + 1);
}

static void eff_on_ref(uint32_t ref) {
    size_t mask = ref_slots - 1;
    for (size_t i = (ref * 0x9E3779B1u) & mask;; i = (i + 1) & mask) {
        if (refs[i] == ref)
            return;
        if (refs[i] == 0) {
            if (nrefs >= ref_slots / 4 * 3) {
                st.refs_dropped++;      /* full until the next round */
                return;
            }
            refs[i] = ref;
            nrefs++;
            return;
        }
    }
}

static void add_cand(item *it, double est, unsigned int clsid) {
    if (ncands == cands_cap) {
        size_t ncap = cands_cap ? cands_cap * 2 : 4096;
        struct cand *nc = realloc(cands, ncap * sizeof(*nc));
        if (nc == NULL)
            return;                     /* the rest waits for the next round */
        cands = nc;
        cands_cap = ncap;
    }
    cands[ncands++] = (struct cand){ it, est, clsid };
}

/* it is a linked, unchunked item (read without its lock: a hint); its class in *clsid. */
static bool movable(const item *it, unsigned int *clsid) {
    if ((it->it_flags & (ITEM_LINKED | ITEM_SLABBED | ITEM_CHUNK | ITEM_CHUNKED)) != ITEM_LINKED || it->nkey == 0)
        return false;
    *clsid = ITEM_clsid(it);
    return *clsid > 0 && *clsid < MAX_NUMBER_OF_SLAB_CLASSES;
}

/* The hot region's items that are not hot: a walk over its slab pages, which
 * are locked, so it takes no fault. Every chunk of a page is of the page's
 * class, whose number the chunks carry, free or not. */
static void collect_demotions(void) {
    size_t hot_used, cold_used, page = (size_t)settings.slab_page_size;
    ac_regions_used(&hot_used, &cold_used);
    for (char *pg = base; pg + page <= base + hot_used; pg += page) {
        unsigned int id = ITEM_clsid((item *)pg);
        size_t size = id > 0 && id < MAX_NUMBER_OF_SLAB_CLASSES ? (size_t)slabs_size((int)id) : 0;
        for (size_t off = 0; size > 0 && off + size <= page; off += size) {
            item *it = (item *)(pg + off);
            unsigned int clsid;
            if (movable(it, &clsid) && !ac_cls_is_hot(&hc.cls, ac_key_fp(ITEM_key(it), it->nkey)))
                add_cand(it, -1.0, clsid);
        }
    }
}

/* The cold-region items logged since the last round that are now hot. Only
 * these are read (they were accessed lately, so most are resident); the
 * cold region is never walked. */
static void collect_promotions(void) {
    for (size_t i = 0, seen = 0; i < ref_slots; i++) {
        if (refs[i] == 0)
            continue;
        if (++seen % 64 == 0)
            ac_hc_drain(&hc);          /* a read may fault: keep the workers' rings flowing */
        item *it = (item *)(base + (size_t)(refs[i] - 1) * 8);
        refs[i] = 0;                   /* (draining may add refs meanwhile: counted exactly) */
        nrefs--;
        unsigned int clsid;
        if (ac_region_hot(it) || !movable(it, &clsid))
            continue;
        uint64_t fp = ac_key_fp(ITEM_key(it), it->nkey);
        if (ac_cls_is_hot(&hc.cls, fp))
            add_cand(it, ac_cls_estimate(&hc.cls, fp), clsid);
    }
}

static int by_class_est(const void *a, const void *b) {
    const struct cand *x = a, *y = b;
    if (x->clsid != y->clsid)
        return x->clsid < y->clsid ? -1 : 1;
    return x->est < y->est ? -1 : x->est > y->est;
}

/* The candidates of one class, demotions (est -1) first, then promotions by
 * ascending estimate. Demotions and promotions alternate, the hottest
 * promotion first, so each demotion frees the hot chunk the next promotion
 * takes and neither region needs room for a whole round's moves. A promotion
 * that finds no hot chunk waits for the next demotion; when no demotion is
 * left, the class is done. */
static void move_class(const struct cand *c, size_t n, size_t *moves) {
    size_t ndem = 0, i = 0, j = n;
    while (ndem < n && c[ndem].est < 0)
        ndem++;
    bool demote = ndem > 0, promote = ndem < n;
    while (demote || promote) {
        if (demote) {
            int rc = ac_relocate(c[i].it, c[i].clsid, false);
            count_move(rc, &st.demoted, &st.demote_nospace);
            demote = rc >= 0 && ++i < ndem;
        }
        if (promote) {
            int rc = ac_relocate(c[j - 1].it, c[j - 1].clsid, true);
            if (rc < 0 && demote)
                continue;              /* retry after the next demotion */
            count_move(rc, &st.promoted, &st.promote_nospace);
            promote = rc >= 0 && --j > ndem;
        }
        if (++*moves % 64 == 0)
            ac_hc_drain(&hc);
    }
}

/* After a classification (classifier thread). */
static void eff_round(void) {
    ncands = 0;
    collect_demotions();
    collect_promotions();
    qsort(cands, ncands, sizeof(*cands), by_class_est);
    size_t moves = 0;
    for (size_t a = 0, b; a < ncands; a = b) {
        for (b = a + 1; b < ncands && cands[b].clsid == cands[a].clsid; b++)
            ;
        move_class(&cands[a], b - a, &moves);
    }
    st.last_candidates = ncands;
    if (opt.madv_cold) {
        size_t hot_used, cold_used;
        ac_regions_used(&hot_used, &cold_used);
        if (cold_used > 0 && madvise(base + hot_bytes, cold_used, MADV_COLD) == 0)
            st.madv_cold++;
    }
}

static size_t hash_table_bytes(void) {
    unsigned hp = settings.hashpower_init != 0 ? (unsigned)settings.hashpower_init : 16;
    return (size_t)8 << hp;
}

/* The memory to lock and the hot region; -1 after printing why. */
static int size_regions(size_t *keys, size_t *book) {
    if (ac_cgroup_memory(&cg_limit, &cg_usage, cg_path, sizeof(cg_path)) != 0) {
        fprintf(stderr, "memcached-ac: effpaging: cannot read /proc/self/cgroup to check the memory limit\n");
        return -1;
    }
    margin = hash_table_bytes() + MARGIN_FIXED;
    bool limited = cg_limit != UINT64_MAX;
    uint64_t room = limited && cg_limit > cg_usage ? cg_limit - cg_usage : 0;
    lock_budget = opt.memory;
    if (lock_budget == 0) {
        if (!limited) {
            fprintf(stderr, "memcached-ac: effpaging: the cgroup %s has no memory limit; give the memory to lock"
                    " with ac_eff_memory=SIZE\n", cg_path);
            return -1;
        }
        lock_budget = room > margin ? (size_t)((double)(room - margin) * opt.lock_share) : 0;
    }
    *keys = ac_hc_keys(lock_budget);
    ref_slots = 4096;                           /* promotion candidates: one slot per 256 bytes */
    while (ref_slots < lock_budget / 256)
        ref_slots *= 2;
    *book = ac_hc_fixed_bytes(*keys) + ref_slots * sizeof(uint32_t);
    size_t page = (size_t)settings.slab_page_size;
    hot_bytes = lock_budget > *book ? (lock_budget - *book) / page * page : 0;
    if (hot_bytes < 2 * page) {
        fprintf(stderr, "memcached-ac: effpaging: %llu bytes to lock leave no hot region (at least %zu bytes"
                " after the classifier's %zu bytes)%s\n", U(lock_budget), 2 * page, *book,
                opt.memory == 0 ? "; the cgroup allows too little" : "; raise ac_eff_memory");
        return -1;
    }
    uint64_t need = (uint64_t)hot_bytes + *book + margin;
    if (limited && need > room) {
        fprintf(stderr, "memcached-ac: effpaging: locking a hot region of %zu bytes plus the classifier's %zu"
                " bytes, with a margin of %zu bytes (hash table, threads), needs %llu bytes, but the cgroup %s"
                " allows %llu more (limit %llu, in use %llu): it would end in an OOM kill; lower ac_eff_memory"
                " or raise the limit\n", hot_bytes, *book, margin, U(need), cg_path, U(room), U(cg_limit),
                U(cg_usage));
        return -1;
    }
    return 0;
}

static int eff_init(void) {
    if (ac_cls_opts.offline) {
        /* its promotion candidates are the cold-region items logged since the
         * last round, in a bounded set (refs): a warm-up without rounds would
         * overflow it, and the offline round would miss most of them */
        fprintf(stderr, "memcached-ac: effpaging: ac_log_offline=1 is not supported: its promotion candidates are"
                " the items logged since the last round, a bounded set that a warm-up without rounds would"
                " overflow; offline classification is policy logging's\n");
        return -1;
    }
    if (settings.slab_chunk_size_max == settings.slab_page_size) {
        fprintf(stderr, "memcached-ac: effpaging walks its hot region page by page and needs slab pages of"
                " slab_page_size bytes: slab_chunk_max must be smaller than the page size\n");
        return -1;
    }
    size_t keys, book;
    if (size_regions(&keys, &book) != 0)
        return -1;
    if ((ac_slab_limit() + hot_bytes) / 8 >= UINT32_MAX) {
        fprintf(stderr, "memcached-ac: effpaging: -m plus the hot region (%zu bytes) exceeds the 32 GiB its"
                " 32-bit item references reach\n", ac_slab_limit() + hot_bytes);
        return -1;
    }
    /* the cold region alone can hold all the data (-m, sized as for ospaging):
     * a demotion never waits for room; the hot region comes on top */
    map_bytes = ac_slab_limit() + hot_bytes;
    /* the tier's mapping (swap), without MADV_RANDOM, as effpaging always had:
     * with it its CI hit rates fell from 0.785/0.790 (baseline) to 0.758-0.768
     * (readonly, writeheavy; 10 runs), without it 0.782-0.789 (3 runs); why
     * the kernel pages an MADV_RANDOM anonymous mapping worse is not known
     * yet (this kernel has no multi-generational LRU) */
    base = ac_slab_memory(map_bytes, false);
    if (base == NULL)
        return -1;
    if (mlock(base, hot_bytes) != 0) {
        fprintf(stderr, "memcached-ac: effpaging: mlock of the %zu-byte hot region failed: %s%s\n", hot_bytes,
                strerror(errno), errno == EPERM || errno == ENOMEM || errno == EAGAIN
                ? " (RLIMIT_MEMLOCK: run as root or raise ulimit -l)" : "");
        munmap(base, map_bytes);
        ac_slab_memory_forget();
        return -1;
    }
    uint64_t budget = (uint64_t)((double)hot_bytes * ac_cls_opts.hot_fill);
    refs = calloc(ref_slots, sizeof(uint32_t));
    if (refs == NULL || ac_hc_init(&hc, keys, budget, eff_round, "effpaging") != 0) {
        if (refs == NULL)
            fprintf(stderr, "memcached-ac: effpaging: cannot allocate %zu candidate slots\n", ref_slots);
        free(refs);
        refs = NULL;
        munmap(base, map_bytes);
        ac_slab_memory_forget();
        return -1;
    }
    hc.ref = eff_ref;
    hc.on_ref = eff_on_ref;
    ac_regions_init(base, hot_bytes, map_bytes);
    ac_slab_limit_set(map_bytes);
    if (ac_hc_start(&hc, "effpaging") != 0) {
        ac_hc_destroy(&hc);
        return -1;
    }
    return 0;
}

static void eff_shutdown(void) {
    ac_hc_destroy(&hc);    /* the mapping is left to exit */
    free(refs);
    refs = NULL;
    free(cands);
    cands = NULL;
    ncands = cands_cap = 0;
}

static size_t eff_metadata_bytes(void) {
    return ac_hc_bytes(&hc) + ref_slots * sizeof(uint32_t);
}

static void eff_stats(ADD_STAT add_stats, void *c) {
    size_t hot_used, cold_used;
    ac_regions_used(&hot_used, &cold_used);
    APPEND_STAT("eff_memory", "%zu", lock_budget);
    APPEND_STAT("eff_hot_base", "%p", (void *)base);
    APPEND_STAT("eff_hot_bytes", "%zu", hot_bytes);
    APPEND_STAT("eff_cold_bytes", "%zu", map_bytes - hot_bytes);
    APPEND_STAT("eff_hot_used_bytes", "%zu", hot_used);
    APPEND_STAT("eff_cold_used_bytes", "%zu", cold_used);
    APPEND_STAT("eff_margin_bytes", "%zu", margin);
    APPEND_STAT("eff_cgroup", "%s", cg_path);
    APPEND_STAT("eff_cgroup_limit", "%llu", U(cg_limit == UINT64_MAX ? 0 : cg_limit));
    APPEND_STAT("eff_promoted", "%llu", U(st.promoted));
    APPEND_STAT("eff_demoted", "%llu", U(st.demoted));
    APPEND_STAT("eff_promote_nospace", "%llu", U(st.promote_nospace));
    APPEND_STAT("eff_demote_nospace", "%llu", U(st.demote_nospace));
    APPEND_STAT("eff_move_skipped", "%llu", U(st.skipped));
    APPEND_STAT("eff_madv_cold", "%llu", U(st.madv_cold));
    APPEND_STAT("eff_last_candidates", "%llu", U(st.last_candidates));
    APPEND_STAT("eff_candidate_slots", "%zu", ref_slots);
    APPEND_STAT("eff_candidates_dropped", "%llu", U(st.refs_dropped));
    APPEND_STAT("eff_hot_first_moves", "%llu", U(__atomic_load_n(&st.hot_first_moves, __ATOMIC_RELAXED)));
    ac_hc_stats(&hc, add_stats, c);
}

static const struct ac_word bool_words[] = {
    { "0", NULL, 0, NULL }, { "1", NULL, 1, NULL }, { NULL, NULL, 0, NULL },
};

static const struct ac_opt eff_opts[] = {
    { .key = "ac_eff_memory", .type = AC_T_SIZE, AC_FIELD(struct eff_options, memory), .min = 2 * AC_KIB * AC_KIB, .max = AC_NOMAX,
      .noun = "a size", .note = "(e.g. 512M), the memory effpaging may lock for its hot region and its classifier",
      .def = "what the cgroup allows",
      .help = "memory to lock, hot region + classifier" },
    { .key = "ac_eff_madv_cold", .type = AC_T_ENUM, AC_FIELD(struct eff_options, madv_cold), .words = bool_words,
      .def = "0", .def_is_value = true,
      .help = "1 = MADV_COLD the cold region after each round" },
    { .key = "ac_eff_lock", .type = AC_T_DOUBLE, AC_FIELD(struct eff_options, lock_share), .lo = 0.0, .hi = 1.0,
      .lo_open = true, .noun = "a fraction", .note = "of what the cgroup allows (without ac_eff_memory)",
      .def = "0.7", .def_is_value = true,
      .help = "share of what the cgroup allows that it locks; the rest is left to the kernel's paging" },
    { .key = "ac_eff_hot_first", .type = AC_T_ENUM, AC_FIELD(struct eff_options, hot_first), .words = bool_words,
      .def = "1", .def_is_value = true,
      .help = "1 = hot items ahead of cold ones in their hash chains (0: as memcached links them)" },
};
static const struct ac_opt_table eff_options = AC_OPT_TABLE("policy effpaging", eff_opts, &opt);

const struct ac_policy_ops ac_policy_effpaging = {
    .name = "effpaging",
    .summary = "efficient OS paging: hot items in an mlocked region, cold ones in a region the kernel pages",
    .default_tier = "swap",
    .tier_shapes = AC_CAP_PAGE,
    .tier_needs = AC_CAP_ANON,       /* its hot region is locked in its own anonymous mapping */
    .options = { &eff_options, &ac_classifier_options },
    .init = eff_init,
    .on_insert = eff_on_insert,
    .on_access = eff_on_access,
    .on_remove = ac_no_op,
    .pick_victims = ac_no_victims,            /* the kernel pages the cold region */
    .metadata_bytes = eff_metadata_bytes,
    .stats = eff_stats,
    .shutdown = eff_shutdown,
};
