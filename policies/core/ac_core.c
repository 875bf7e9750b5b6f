/* memcached-ac core: start-up, the hook entry points that are not about moving
 * data (ac_spill.c does that), hit counting and `stats anticache`. */
#include "memcached.h"
#include "ac_internal.h"
#include "ac_spilldir.h"
#include "store/record.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

bool ac_enabled = false;
void *ac_slab_base = NULL;
struct ac_state ac;
struct ac_counters ac_cnt;

/* Hit counters are bumped on every access: one cache line per worker thread,
 * so threads do not share a counter line (more threads than slots share slots,
 * hence the atomic add). Summed by `stats anticache`. */
#define HIT_SLOTS 64
struct hit_slot {
    uint64_t mem_hits, disk_hits;
    char pad[64 - 2 * sizeof(uint64_t)];
};
static struct hit_slot hit_slots[HIT_SLOTS];
static unsigned next_hit_slot;
static __thread struct hit_slot *my_hit_slot;
static __thread uint64_t my_disk_hits;      /* this thread's, for the in-process driver */

uint64_t ac_thread_disk_hits(void) {
    return my_disk_hits;
}

static struct hit_slot *hit_slot(void) {
    if (my_hit_slot == NULL)
        my_hit_slot = &hit_slots[__atomic_fetch_add(&next_hit_slot, 1, __ATOMIC_RELAXED) % HIT_SLOTS];
    return my_hit_slot;
}

/* Kernel-paged policies: major faults of this thread at the start of its
 * current lookup; external: the in-process driver opened the window itself
 * (ac_fault_window_begin) and counts the read when it closes it. */
static __thread long fault_start;
static __thread bool fault_external, fault_accessed;

static long thread_major_faults(void) {
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) != 0)
        return 0;
    return ru.ru_majflt;
}

bool ac_kernel_paged(void) {
    return ac_enabled && !ac_tier_spills();
}

void ac_fault_mark(void) {
    if (!fault_external)
        fault_start = thread_major_faults();
}

void ac_fault_window_begin(void) {
    fault_external = true;
    fault_accessed = false;
    fault_start = thread_major_faults();
}

/* Kernel-paged policies: major faults taken while serving reads (a read may
 * take more than one: an item straddling a page boundary, a hash bucket). */
static uint64_t read_faults;

static void count_faults(long delta) {
    if (delta > 0)
        __atomic_add_fetch(&read_faults, (uint64_t)delta, __ATOMIC_RELAXED);
}

static void count_hit(bool disk) {
    struct hit_slot *s = hit_slot();
    if (disk) {
        __atomic_add_fetch(&s->disk_hits, 1, __ATOMIC_RELAXED);
        my_disk_hits++;
    } else
        __atomic_add_fetch(&s->mem_hits, 1, __ATOMIC_RELAXED);
}

int ac_fault_window_end(void) {
    fault_external = false;
    if (!fault_accessed)
        return -1;
    fault_accessed = false;
    long delta = thread_major_faults() - fault_start;
    count_faults(delta);
    count_hit(delta != 0);
    return delta != 0;
}

/* Network reads: the reply is copied from the item after the hook returns,
 * so the hook reads one byte of every page the item occupies (header, key,
 * value, chunks) inside the measured window. */
static void touch_pages(const void *p, size_t n) {
    const volatile char *b = p;
    uintptr_t page = 4096;
    for (uintptr_t a = (uintptr_t)b; a < (uintptr_t)b + n; a = (a & ~(page - 1)) + page)
        (void)*(const volatile char *)a;
    if (n > 0)
        (void)b[n - 1];
}

static void touch_item(item *it) {
    if ((it->it_flags & ITEM_CHUNKED) == 0) {
        touch_pages(it, ITEM_ntotal(it));
        return;
    }
    touch_pages(it, ITEM_schunk(it) - (char *)it + sizeof(item_chunk));
    for (item_chunk *ch = (item_chunk *)ITEM_schunk(it); ch != NULL; ch = ch->next)
        touch_pages(ch, sizeof(*ch) + (size_t)ch->used);
}

static void hit_totals(uint64_t *mem, uint64_t *disk) {
    *mem = *disk = 0;
    for (int i = 0; i < HIT_SLOTS; i++) {
        *mem += __atomic_load_n(&hit_slots[i].mem_hits, __ATOMIC_RELAXED);
        *disk += __atomic_load_n(&hit_slots[i].disk_hits, __ATOMIC_RELAXED);
    }
}

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
    ac_room_shutdown();                  /* no page moves while the tier closes */
    if (ac.policy != NULL && ac.policy->shutdown != NULL)
        ac.policy->shutdown();
    ac.tier->close();                    /* removes its files */
    if (ac_tier_spills())
        ac_io_stop();
    if (has_dir())
        rmdir(ac.dir);
}

size_t ac_charged_bytes(void) {
    return ac.fixed_charge + ac.tier->charged_bytes();
}

void *ac_slab_memory(size_t len, bool random) {
    if (ac_slab_base == NULL)
        ac_slab_base = ac.tier->map(len, random);
    return ac_slab_base;
}

size_t ac_slab_limit(void) {
    return ac.item_limit;
}

bool ac_in_process(void) {
    return ac_opts.driver[0] != '\0';
}

int ac_init(size_t *item_limit) {
    ac_options_init();                   /* no -o ac_* at all: the defaults */
    if (ac_opts.driver[0] != '\0') {
        /* the in-process driver is the only client: no network listeners */
        settings.port = 0;
        settings.udpport = 0;
        settings.socketpath = NULL;
    }
    const struct ac_policy_ops *p;
    const struct ac_tier_ops *t;
    if (ac_resolve(&p, &t) != 0 || ac_options_check_used(p, t) != 0)
        return -1;
    if (t == &ac_tier_none)
        return 0;                        /* the stock cache */
    ac.policy = p;
    ac.tier = t;
    pthread_mutex_init(&ac.spill_lock, NULL);

    /* Anti-caching keeps its own order: memcached's segmented LRU
     * (HOT/WARM/COLD) is off, every item lives in the COLD list. */
    settings.lru_segmented = false;
    if (!ac_tier_spills()) {
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
     * the item memory (what grows later is charged as it grows, ac_room.c). */
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
    if (ac_tier_spills())
        ac_io_init();                    /* before the tier's threads and files */
    char err[512];
    if (t->open(ac.dir, settings.maxbytes, err, sizeof(err)) != 0) {
        if (ac_tier_spills())
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
    if (ac_page_source_set() && settings.memory_file != NULL) {
        fprintf(stderr, "memcached-ac: ac_policy=%s gives the slab pages from its own mapping and cannot be"
                " combined with -e (restartable memory preallocates them)\n", p->name);
        ac_shutdown();
        return -1;
    }
    /* kernel tiers: the slab memory, unless the policy mapped it (effpaging's
     * hot and cold regions), which may also have raised the item memory */
    if (!ac_tier_spills() && ac_slab_memory(ac.item_limit, true) == NULL) {
        ac_shutdown();
        return -1;
    }
    *item_limit = ac.item_limit;
    if (ac_room_init() != 0) {
        ac_shutdown();
        return -1;
    }
    atexit(ac_at_exit);
    ac_enabled = true;
    return 0;
}

void ac_item_linked(item *it, uint32_t hv) {
    (void)hv;
    if (ac_tier_spills())
        ac_drop_stale_copies(it);
    ac.policy->on_insert(it);
}

void ac_item_unlinked(item *it) {
    ac.policy->on_remove(it);
}

void ac_item_accessed(item *it) {
    it->it_flags |= ITEM_FETCHED;
    if (!ac_tier_spills()) {
        if (fault_external) {
            fault_accessed = true;      /* counted when the driver closes its window */
        } else {
            touch_item(it);
            long delta = thread_major_faults() - fault_start;
            count_faults(delta);
            count_hit(delta != 0);
        }
    } else
        count_hit(ac_take_fetched(it));
    ac.policy->on_access(it);
}

/* Collects memcached's own "evictions" counter: with an anti-caching policy
 * nothing may be evicted, so it is reported as lost_items. */
static void grab_evictions(const char *key, const uint16_t klen, const char *val,
                           const uint32_t vlen, const void *cookie) {
    if (klen == 9 && strncmp(key, "evictions", 9) == 0) {
        char tmp[32];
        size_t n = vlen < sizeof(tmp) - 1 ? vlen : sizeof(tmp) - 1;
        memcpy(tmp, val, n);
        tmp[n] = '\0';
        *(uint64_t *)cookie = strtoull(tmp, NULL, 10);
    }
}

void ac_stats(ADD_STAT add_stats, void *c) {
    struct thread_stats ts;
    threadlocal_stats_aggregate(&ts);
    uint64_t evictions = 0;
    item_stats_totals(grab_evictions, &evictions);
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
    /* With policy none every hit is a memory hit: memcached's own counters. */
    struct slab_stats sl;
    slab_stats_aggregate(&ts, &sl);
    uint64_t mem_hits, disk_hits;
    hit_totals(&mem_hits, &disk_hits);
    if (!ac_enabled)
        mem_hits = sl.get_hits + sl.touch_hits;
    APPEND_STAT("mem_hits", "%llu", (unsigned long long)mem_hits);
    APPEND_STAT("disk_hits", "%llu", (unsigned long long)disk_hits);
    APPEND_STAT("misses", "%llu", (unsigned long long)(ts.get_misses + ts.touch_misses));
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
    APPEND_STAT("compression", "%s", ac_enabled && ac_tier_spills() ? ac_compression() : "none");
    APPEND_STAT("compress_in_bytes", "%llu", (unsigned long long)AC_READ(compress_in_bytes));
    APPEND_STAT("compress_out_bytes", "%llu", (unsigned long long)AC_READ(compress_out_bytes));
    APPEND_STAT("compress_skipped", "%llu", (unsigned long long)AC_READ(compress_skipped));
    if (ac_enabled && ac_tier_spills()) {
        ac_io_stats(add_stats, c);
        ac_prefetch_stats(add_stats, c);
        if (ac.tier->begin_merge != NULL)
            ac_compact_stats(add_stats, c);
        ac_park_stats(add_stats, c);
    }
    /* allocations given up (ac_room.c), by reason, and the slow path's other events */
    APPEND_STAT("refused_items", "%llu", (unsigned long long)AC_READ(refused_items));
    APPEND_STAT("refused_disk_full", "%llu", (unsigned long long)AC_READ(refused_disk_full));
    APPEND_STAT("refused_io_error", "%llu", (unsigned long long)AC_READ(refused_io_error));
    APPEND_STAT("refused_table_full", "%llu", (unsigned long long)AC_READ(refused_table_full));
    APPEND_STAT("refused_timeout", "%llu", (unsigned long long)AC_READ(refused_timeout));
    APPEND_STAT("alloc_room_taken", "%llu", (unsigned long long)AC_READ(alloc_room_taken));
    APPEND_STAT("alloc_waits", "%llu", (unsigned long long)AC_READ(alloc_waits));
    APPEND_STAT("pages_borrowed", "%llu", (unsigned long long)AC_READ(pages_borrowed));
    APPEND_STAT("pages_repaid", "%llu", (unsigned long long)AC_READ(pages_repaid));
    APPEND_STAT("pages_owed", "%u", ac_pages_owed());
    APPEND_STAT("budget_settled", "%d", ac_enabled ? (int)ac_budget_settled() : 1);
    /* items dropped: 0 under anti-caching; for the stock cache (policy none) its evictions */
    APPEND_STAT("lost_items", "%llu", (unsigned long long)evictions);
    struct rusage ru;
    APPEND_STAT("read_major_faults", "%llu", (unsigned long long)__atomic_load_n(&read_faults, __ATOMIC_RELAXED));
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
