/* memcached-ac core: start-up (the policy and the tier chosen, the tier's
 * shape taken once, the book-keeping charged, the threads started), shutdown
 * at a failed start, and `stats anticache`; the services of ac_services.h
 * about the slab memory.
 * Uses: ac_hooks, ac_park, ac_compact, ac_budget, ac_record, ac_prefetch, ac_state
 * (and beside the chain: ac_options, ac_registry, ac_io, ac_spilldir, ac_extstore). */
#include "memcached.h"
#include "ac_internal.h"
#include "ac_spilldir.h"
#include "store/record.h"
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* The spill directory is ours when the tier keeps files there. */
static bool has_dir(void) {
    return ac.tier != NULL && ac.tier->files[0] != NULL;
}

/* At exit (SIGTERM and SIGINT end memcached's main without stopping its
 * threads; so does the in-process driver's exit): only the files go. */
static void ac_at_exit(void) {
    if (ac.dir[0] != '\0' && has_dir())
        ac_spilldir_remove(ac.dir);
}

/* A start-up that fails after the tier opened: everything is closed (no
 * thread of memcached's uses it yet). */
static void ac_shutdown(void) {
    ac_park_stop();                      /* no fetcher reads while the tier closes */
    ac_budget_shutdown();                /* no page moves while the tier closes */
    if (ac.policy != NULL && ac.policy->shutdown != NULL)
        ac.policy->shutdown();
    ac.tier->close();                    /* removes its files */
    if (ac.io)
        ac_io_stop();
    if (has_dir())
        rmdir(ac.dir);
}

static size_t slab_len;                  /* bytes of the paging tier's mapping */

void *ac_slab_memory(size_t len, bool random) {
    if (ac_slab_base == NULL && ac.page != NULL) {
        ac_slab_base = ac.page->map(len, random);
        slab_len = ac_slab_base != NULL ? len : 0;
    }
    return ac_slab_base;
}

void ac_slab_memory_forget(void) {
    ac_slab_base = NULL;
    slab_len = 0;
}

/* Paging tiers: bytes of the slab mapping resident in RAM now (mincore, one
 * vector of 64 MiB of pages at a time); 0 without a mapping. What the
 * harness divides by the item footprint for R, the items a paging approach
 * held in RAM (its loss decomposition, harness/acbench/decompose.py). */
size_t ac_slab_resident_bytes(void) {
    enum { STEP_PAGES = 16384 };
    static unsigned char vec[STEP_PAGES];
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), resident = 0;
    char *base = ac_slab_base;
    if (base == NULL || slab_len == 0)
        return 0;
    pthread_mutex_lock(&lock);
    for (size_t off = 0; off < slab_len; off += (size_t)STEP_PAGES * page) {
        size_t len = slab_len - off < (size_t)STEP_PAGES * page ? slab_len - off : (size_t)STEP_PAGES * page;
        if (mincore(base + off, len, vec) != 0)
            break;
        for (size_t i = 0; i < (len + page - 1) / page; i++)
            resident += vec[i] & 1;
    }
    pthread_mutex_unlock(&lock);
    return resident * page;
}

size_t ac_slab_limit(void) {
    return ac.item_limit;
}

void ac_slab_limit_set(size_t bytes) {
    ac.item_limit = bytes;
}

bool ac_in_process(void) {
    return ac_opts.driver[0] != '\0' || ac_opts.driver_trace[0] != '\0';
}

void ac_phase_begin(const char *phase) {
    if (ac_enabled && ac.policy->phase_begin != NULL)
        ac.policy->phase_begin(phase);
}

int ac_init(size_t *item_limit) {
    /* memcached reads -m with atoi and multiplies by 1 MiB: a negative value wraps to a limit of
     * nearly 2^64 bytes, which it accepts. No positive -m comes near it. */
    if (settings.maxbytes > (size_t)INT_MAX << 20) {
        fprintf(stderr, "memcached-ac: -m %lld: the memory limit must be a positive number of megabytes\n",
                (long long)((ssize_t)settings.maxbytes / (1 << 20)));
        return -1;
    }
    ac_options_init();                   /* no -o ac_* at all: the defaults */
    if (ac_in_process()) {
        /* the in-process driver is the only client: no network listeners */
        settings.port = 0;
        settings.udpport = 0;
        settings.socketpath = NULL;
    }
    const struct ac_policy_ops *p;
    const struct ac_tier *t;
    if (ac_resolve(ac_opts.policy, ac_opts.tier, &p, &t) != 0 || ac_options_check_used(p, t) != 0)
        return -1;
    if (t->caps & AC_CAP_EVICT)
        return 0;                        /* the stock cache */
    /* glibc raises its mmap threshold to the size of each large block freed (up
     * to 32 MiB), after which 1 MiB buffers (blocks read for compaction, tier
     * buffers) come from the freeing thread's arena and stay resident there
     * once freed: measured at 200k records (lru over blocks, -m 110), the two
     * arenas of a 2-thread run held 5.4 MB where one thread's held 3.8 MB, more
     * than the calibration's shorter probe saw, and the cell was OOM-killed
     * (experiments/scaling.toml). A fixed threshold (glibc's default value)
     * returns every large block to the kernel when it is freed, so resident
     * memory follows what is live, whatever the run's length or threads. */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    ac.policy = p;
    ac.tier = t;
    ac.spill = t->spill;                 /* the tier's shape: taken here, once */
    ac.page = t->page;
    for (int i = 0; i < AC_MAX_OPT_TABLES; i++)
        ac.io = ac.io || t->options[i] == &ac_io_options;
    pthread_mutex_init(&ac.spill_lock, NULL);

    /* Anti-caching keeps its own order: memcached's segmented LRU
     * (HOT/WARM/COLD) is off, every item lives in the COLD list. */
    settings.lru_segmented = false;
    if (ac.page != NULL) {
        if (settings.memory_file != NULL) {
            fprintf(stderr, "memcached-ac: ac_tier=%s cannot be combined with -e (restartable memory):"
                    " both provide the slab memory\n", t->name);
            return -1;
        }
        /* no slab mover: it must not drop items it cannot move, and
         * effpaging's pages never change region */
        settings.slab_automove = 0;
        settings.slab_reassign = false;
    }
    /* Equal provisioning: the book-keeping allocated at start comes out of
     * the item memory (what grows later is charged as it grows, ac_budget.c). */
    size_t tier_bytes = ac.tier_fixed = t->fixed_bytes(settings.maxbytes);
    size_t policy_bytes = p->fixed_bytes != NULL ? p->fixed_bytes(settings.maxbytes) : 0;
    ac.fixed_charge = tier_bytes + policy_bytes;
    if (ac.fixed_charge > settings.maxbytes / 2) {
        char opts[160];
        ac_options_bookkeeping(p, t, opts, sizeof(opts));
        fprintf(stderr, "memcached-ac: the book-keeping of ac_policy=%s (%zu bytes) and ac_tier=%s (%zu bytes)"
                " exceeds half of -m (%zu bytes); raise -m%s%s\n", p->name, policy_bytes, t->name, tier_bytes,
                settings.maxbytes, opts[0] != '\0' ? " or lower " : "", opts);
        return -1;
    }
    ac.item_limit = settings.maxbytes - ac.fixed_charge;

    if (ac_opts.spill_dir[0] != '\0')
        snprintf(ac.dir, sizeof(ac.dir), "%s", ac_opts.spill_dir);
    else
        snprintf(ac.dir, sizeof(ac.dir), "/var/tmp/memcached-ac.%d", (int)getpid());
    if (has_dir() && ac_spilldir_prepare(ac.dir) != 0)
        return -1;
    if (ac.io)
        ac_io_init();                    /* before the tier's threads and files */
    char err[512];
    if (t->open(ac.dir, settings.maxbytes, err, sizeof(err)) != 0) {
        if (ac.io)
            ac_io_stop();
        fprintf(stderr, "memcached-ac: ac_tier=%s: %s\n", t->name, err);
        if (has_dir())
            rmdir(ac.dir);
        return -1;
    }
    if (p->init != NULL && p->init() != 0) {
        ac_shutdown();
        return -1;
    }
    if (ac_compact_start() != 0) {
        ac_shutdown();
        return -1;
    }
    if (p->page_alloc != NULL && settings.memory_file != NULL) {
        fprintf(stderr, "memcached-ac: ac_policy=%s gives the slab pages from its own mapping and cannot be"
                " combined with -e (restartable memory preallocates them)\n", p->name);
        ac_shutdown();
        return -1;
    }
    /* paging tiers: the slab memory, unless the policy mapped it (effpaging's
     * hot and cold regions), which may also have raised the item memory */
    if (ac.page != NULL && ac_slab_memory(ac.item_limit, true) == NULL) {
        ac_shutdown();
        return -1;
    }
    ac_check_items = ac.page != NULL && ac.page->checking != NULL && ac.page->checking();
    *item_limit = ac.item_limit;
    if (ac_budget_init() != 0) {
        ac_shutdown();
        return -1;
    }
    atexit(ac_at_exit);
    ac_enabled = true;
    return 0;
}

/* memcached's own item counters that stats anticache repeats: "evictions"
 * (with an anti-caching policy nothing may be evicted, so it is reported as
 * lost_items) and "crawler_items_checked" (items its LRU crawler walked: under
 * kernel paging, each may fault a page in for no request). */
struct item_totals {
    uint64_t evictions;
    uint64_t crawler_items_checked;
};

static void grab_totals(const char *key, const uint16_t klen, const char *val,
                        const uint32_t vlen, const void *cookie) {
    struct item_totals *t = (struct item_totals *)cookie;
    uint64_t *dst = NULL;
    if (klen == 9 && strncmp(key, "evictions", 9) == 0)
        dst = &t->evictions;
    else if (klen == 21 && strncmp(key, "crawler_items_checked", 21) == 0)
        dst = &t->crawler_items_checked;
    if (dst != NULL) {
        char tmp[32];
        size_t n = vlen < sizeof(tmp) - 1 ? vlen : sizeof(tmp) - 1;
        memcpy(tmp, val, n);
        tmp[n] = '\0';
        *dst = strtoull(tmp, NULL, 10);
    }
}

void ac_stats(ADD_STAT add_stats, void *c) {
    struct thread_stats ts;
    threadlocal_stats_aggregate(&ts);
    struct item_totals totals = { 0, 0 };
    item_stats_totals(grab_totals, &totals);
    struct ac_tier_stats ts_;
    memset(&ts_, 0, sizeof(ts_));
    size_t meta = 0;
    if (ac_enabled) {
        ac.tier->get_stats(&ts_);
        /* the tier's book-keeping as charged, and what the policy holds */
        meta = ac.tier_fixed + ac.tier->charged_bytes() + ac.policy->metadata_bytes();
    }
    APPEND_STAT("policy", "%s", ac_enabled ? ac.policy->name : "none");
    APPEND_STAT("tier", "%s", ac_enabled ? ac.tier->name : "none");
    /* With policy none every hit is a memory hit (memcached's own counters), but extstore's. */
    struct slab_stats sl;
    slab_stats_aggregate(&ts, &sl);
    uint64_t mem_hits, disk_hits;
    ac_hit_totals(&mem_hits, &disk_hits);
    uint64_t misses = ts.get_misses + ts.touch_misses, lost = totals.evictions;
    if (!ac_enabled)
        mem_hits = sl.get_hits + sl.touch_hits;
    if (!ac_enabled)                     /* memcached's extstore: its disk reads and drops */
        ac_extstore_adjust(&ts, &mem_hits, &disk_hits, &misses, &lost);
    APPEND_STAT("mem_hits", "%llu", (unsigned long long)mem_hits);
    APPEND_STAT("disk_hits", "%llu", (unsigned long long)disk_hits);
    APPEND_STAT("misses", "%llu", (unsigned long long)misses);
    APPEND_STAT("spilled_items", "%llu", (unsigned long long)AC_READ(spilled_items));
    APPEND_STAT("spilled_bytes", "%llu", (unsigned long long)AC_READ(spilled_bytes));
    APPEND_STAT("fetched_items", "%llu", (unsigned long long)AC_READ(fetched_items));
    APPEND_STAT("fetched_bytes", "%llu", (unsigned long long)AC_READ(fetched_bytes));
    APPEND_STAT("rescued_items", "%llu", (unsigned long long)AC_READ(rescued_items));
    STATS_LOCK();
    APPEND_STAT("resident_items", "%llu", (unsigned long long)stats_state.curr_items);
    STATS_UNLOCK();
    APPEND_STAT("stub_items", "%llu", (unsigned long long)ts_.spilled);
    APPEND_STAT("evicted_max", "%llu", (unsigned long long)ts_.table_max);
    /* per-item book-keeping in memory as it is now (it grows and shrinks with the spilled items) */
    APPEND_STAT("evicted_table_bytes", "%llu", (unsigned long long)ts_.table_bytes);
    APPEND_STAT("evicted_bytes_per_item", "%.1f", ts_.spilled > 0 ? (double)ts_.table_bytes / (double)ts_.spilled : 0.0);
    APPEND_STAT("metadata_bytes", "%zu", meta);
    APPEND_STAT("item_memory_limit", "%zu", ac_enabled ? __atomic_load_n(&ac.item_limit, __ATOMIC_RELAXED)
                                                       : settings.maxbytes);
    APPEND_STAT("store_bytes_on_disk", "%llu", (unsigned long long)ts_.bytes_on_disk);
    APPEND_STAT("store_live_bytes", "%llu", (unsigned long long)ts_.live_bytes);
    APPEND_STAT("store_open_bytes", "%llu", (unsigned long long)ts_.open_bytes);
    APPEND_STAT("blocks_written", "%llu", (unsigned long long)ts_.blocks_written);
    APPEND_STAT("bytes_written", "%llu", (unsigned long long)ts_.bytes_written);
    APPEND_STAT("record_reads", "%llu", (unsigned long long)ts_.record_reads);
    APPEND_STAT("block_reads", "%llu", (unsigned long long)ts_.block_reads);
    APPEND_STAT("record_read_bytes", "%llu", (unsigned long long)AC_READ(record_read_bytes));
    APPEND_STAT("block_read_bytes", "%llu", (unsigned long long)AC_READ(block_read_bytes));
    APPEND_STAT("merged_blocks", "%llu", (unsigned long long)AC_READ(merged_blocks));
    APPEND_STAT("merged_items", "%llu", (unsigned long long)AC_READ(merged_items));
    APPEND_STAT("copied_blocks", "%llu", (unsigned long long)AC_READ(copied_blocks));
    APPEND_STAT("copied_items", "%llu", (unsigned long long)AC_READ(copied_items));
    APPEND_STAT("copied_bytes", "%llu", (unsigned long long)AC_READ(copied_bytes));
    APPEND_STAT("copy_skipped", "%llu", (unsigned long long)AC_READ(copy_skipped));
    APPEND_STAT("io_errors", "%llu", (unsigned long long)(ts_.io_errors + AC_READ(read_errors)));
    APPEND_STAT("checksum_errors", "%llu", (unsigned long long)AC_READ(checksum_errors));
    APPEND_STAT("fetch_nomem", "%llu", (unsigned long long)AC_READ(fetch_nomem));
    APPEND_STAT("read_through_items", "%llu", (unsigned long long)AC_READ(read_through_items));
    APPEND_STAT("migrate_reads_saved", "%llu", (unsigned long long)AC_READ(migrate_reads_saved));
    APPEND_STAT("spill_failures", "%llu", (unsigned long long)AC_READ(spill_failures));
    APPEND_STAT("overwritten_unread", "%llu", (unsigned long long)AC_READ(overwritten_unread));
    APPEND_STAT("compression", "%s", ac_enabled && ac.spill != NULL ? ac_compression() : "none");
    APPEND_STAT("compress_in_bytes", "%llu", (unsigned long long)AC_READ(compress_in_bytes));
    APPEND_STAT("compress_out_bytes", "%llu", (unsigned long long)AC_READ(compress_out_bytes));
    APPEND_STAT("compress_skipped", "%llu", (unsigned long long)AC_READ(compress_skipped));
    if (ac_enabled && ac.io)
        ac_io_stats(add_stats, c);
    if (ac_enabled && ac.spill != NULL) {
        APPEND_STAT("driver_depth", "%llu", (unsigned long long)(ac_in_process() ? ac_opts.driver_depth : 0));
        ac_prefetch_stats(add_stats, c);
        if (ac.spill->begin_merge != NULL)
            ac_compact_stats(add_stats, c);
        ac_park_stats(add_stats, c);
    }
    /* allocations given up (ac_room.c), by reason, and the slow path's other events */
    APPEND_STAT("refused_items", "%llu", (unsigned long long)AC_READ(refused_items));
    APPEND_STAT("refused_disk_full", "%llu", (unsigned long long)AC_READ(refused_disk_full));
    APPEND_STAT("refused_io_error", "%llu", (unsigned long long)AC_READ(refused_io_error));
    APPEND_STAT("refused_table_full", "%llu", (unsigned long long)AC_READ(refused_table_full));
    APPEND_STAT("refused_timeout", "%llu", (unsigned long long)AC_READ(refused_timeout));
    APPEND_STAT("refused_nomem", "%llu", (unsigned long long)AC_READ(refused_nomem));
    APPEND_STAT("alloc_room_taken", "%llu", (unsigned long long)AC_READ(alloc_room_taken));
    APPEND_STAT("alloc_waits", "%llu", (unsigned long long)AC_READ(alloc_waits));
    APPEND_STAT("pages_borrowed", "%llu", (unsigned long long)AC_READ(pages_borrowed));
    APPEND_STAT("spill_lock_waits", "%llu", (unsigned long long)AC_READ(spill_lock_waits));
    APPEND_STAT("spill_lock_wait_ns", "%llu", (unsigned long long)AC_READ(spill_lock_wait_ns));
    APPEND_STAT("pages_repaid", "%llu", (unsigned long long)AC_READ(pages_repaid));
    APPEND_STAT("pages_owed", "%u", ac_pages_owed());
    APPEND_STAT("budget_settled", "%d", ac_enabled ? (int)ac_budget_settled() : 1);
    /* items dropped: 0 under anti-caching; for the stock cache (policy none) its evictions, with
     * extstore also the objects it dropped from disk (ac_extstore.c) */
    APPEND_STAT("lost_items", "%llu", (unsigned long long)lost);
    ac_extstore_stats(add_stats, c, &ts, totals.evictions);
    /* memcached's background walkers (-o no_lru_crawler, no_lru_maintainer turn them off) */
    STATS_LOCK();
    uint64_t crawler_starts = stats.lru_crawler_starts, juggles = stats.lru_maintainer_juggles;
    unsigned hash_power = stats_state.hash_power_level;
    STATS_UNLOCK();
    /* the hash table's size (2^N buckets; the in-process driver fixes it: inproc.c) */
    APPEND_STAT("hash_power_level", "%u", hash_power);
    APPEND_STAT("lru_crawler", "%s", settings.lru_crawler ? "on" : "off");
    APPEND_STAT("lru_maintainer", "%s", settings.lru_maintainer_thread ? "on" : "off");
    APPEND_STAT("lru_crawler_starts", "%llu", (unsigned long long)crawler_starts);
    APPEND_STAT("lru_crawler_items_checked", "%llu", (unsigned long long)totals.crawler_items_checked);
    APPEND_STAT("lru_maintainer_juggles", "%llu", (unsigned long long)juggles);
    struct rusage ru;
    APPEND_STAT("read_major_faults", "%llu", (unsigned long long)ac_read_page_ins());
    APPEND_STAT("write_major_faults", "%llu", (unsigned long long)ac_write_page_ins());
    if (ac_kernel_paged())
        APPEND_STAT("slab_resident_bytes", "%zu", ac_slab_resident_bytes());
    APPEND_STAT("major_faults", "%llu", getrusage(RUSAGE_SELF, &ru) == 0 ? (unsigned long long)ru.ru_majflt : 0ULL);
    if (ac_enabled) {
        APPEND_STAT("spill_dir", "%s", has_dir() ? ac.dir : "");
        if (ac.tier->stats != NULL)
            ac.tier->stats(add_stats, c);
        if (ac.policy->stats != NULL)
            ac.policy->stats(add_stats, c);
    }
    add_stats(NULL, 0, NULL, 0, c);   /* the terminating END */
}
