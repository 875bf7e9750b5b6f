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
    return ac_enabled && ac.paged;
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

/* At exit (SIGTERM and SIGINT end memcached's main without stopping its
 * threads; so does the in-process driver's exit): only the files go. */
static void ac_at_exit(void) {
    if (ac.dir[0] != '\0' && (!ac.paged || ac_opts.os_file))
        ac_spilldir_remove(ac.dir);
}

/* A start-up that fails after opening stores: everything is closed (no
 * thread of ours or memcached's uses them yet). */
static void ac_shutdown(void) {
    ac_room_shutdown();                  /* no page moves while the stores close */
    if (ac.paged) {
        if (ac.policy->shutdown != NULL)
            ac.policy->shutdown();           /* removes a backing file */
        if (ac_opts.os_file)
            rmdir(ac.dir);
        ac.paged = false;
    }
    if (ac.policy != NULL && ac.policy->shutdown != NULL && ac.cold != NULL) {
        ac.policy->shutdown();           /* removes the cold store's files */
        ac.cold = NULL;
        rmdir(ac.dir);
    }
    if (ac.store != NULL) {
        ac.store_ops->close(ac.store);   /* removes the spill file */
        ac.store = NULL;
        rmdir(ac.dir);
    }
}

/* Bits that hold every value up to v. */
static unsigned bits_for(size_t v) {
    unsigned n = 1;
    while (n < 64 && (v >> n) != 0)
        n++;
    return n;
}

size_t ac_charged_bytes(void) {
    size_t n = ac.fixed_charge;
    if (ac.store != NULL)
        n += ac_evicted_bytes(&ac.evicted);
    return n;
}

int ac_init(size_t *item_limit) {
    if (ac_opts.driver[0] != '\0') {
        /* the in-process driver is the only client: no network listeners */
        settings.port = 0;
        settings.udpport = 0;
        settings.socketpath = NULL;
    }
    const struct ac_policy_ops *p = ac_policy_by_name(ac_opts.policy);
    if (p == NULL || p == &ac_policy_none)
        return 0;
    ac.policy = p;
    ac.store_ops = &ac_block_store_ops;
    pthread_mutex_init(&ac.spill_lock, NULL);

    /* Anti-caching policies keep their own order: memcached's segmented LRU
     * (HOT/WARM/COLD) is off, every item lives in the COLD list. */
    settings.lru_segmented = false;

    size_t overhead;
    if (p->kernel_paged) {
        if (settings.memory_file != NULL) {
            fprintf(stderr, "memcached-ac: ac_policy=%s cannot be combined with -e (restartable memory):"
                    " both provide the slab memory\n", p->name);
            return -1;
        }
        /* nothing to charge (effpaging charges its classifier to what it
         * locks); no slab mover: it must not drop items it cannot move, and
         * effpaging's pages never change region */
        overhead = 0;
        settings.slab_automove = 0;
        settings.slab_reassign = false;
    } else if (p->fixed_bytes != NULL) {
        /* a policy with its own cold store: no block store, no evicted table */
        overhead = p->fixed_bytes(settings.maxbytes);
        if (overhead > settings.maxbytes / 2) {
            fprintf(stderr, "memcached-ac: the book-keeping of ac_policy=%s (%zu bytes) exceeds half of -m"
                    " (%zu bytes); raise -m or lower ac_log_keys\n", p->name, overhead, settings.maxbytes);
            return -1;
        }
    } else {
        if (ac_opts.block_size == 0) {
            /* H-Store's 1 MiB blocks; a small server (-m < 16M) gets -m/16. */
            ac_opts.block_size = settings.maxbytes / 16 < (1u << 20) ? settings.maxbytes / 16 : (1u << 20);
            if (ac_opts.block_size < 4096)
                ac_opts.block_size = 4096;
        }
        /* the open block's buffer; the evicted table is charged as it grows
         * (ac_charged_bytes, ac_room.c) */
        overhead = ac_opts.block_size;
        if (overhead > settings.maxbytes / 2) {
            fprintf(stderr, "memcached-ac: one ac_block_size buffer (%zu bytes) exceeds half of -m"
                    " (%zu bytes); raise -m or lower ac_block_size\n", ac_opts.block_size, settings.maxbytes);
            return -1;
        }
    }
    ac.fixed_charge = overhead;
    /* Equal provisioning: the book-keeping comes out of the item memory. */
    *item_limit = settings.maxbytes - overhead;
    ac.item_limit = *item_limit;

    if (ac_opts.spill_dir[0] != '\0')
        snprintf(ac.dir, sizeof(ac.dir), "%s", ac_opts.spill_dir);
    else
        snprintf(ac.dir, sizeof(ac.dir), "/var/tmp/memcached-ac.%d", (int)getpid());
    if ((!p->kernel_paged || ac_opts.os_file) && ac_spilldir_prepare(ac.dir) != 0)
        return -1;
    ac.paged = p->kernel_paged;
    if (p->fixed_bytes == NULL && !p->kernel_paged) {
        char err[512];
        ac.store = ac.store_ops->open(ac.dir, ac_opts.block_size, ac_opts.compact_fill, err, sizeof(err));
        if (ac.store == NULL) {
            fprintf(stderr, "memcached-ac: spill store: %s\n", err);
            rmdir(ac.dir);
            return -1;
        }
        unsigned off_bits = bits_for(ac_opts.block_size - 1);
        unsigned len_bits = bits_for(ac_record_size(KEY_MAX_LENGTH, (size_t)settings.item_size_max + 2));
        if (ac_evicted_init(&ac.evicted, ac_opts.evicted_max, off_bits, len_bits) != 0) {
            fprintf(stderr, "memcached-ac: the evicted table cannot address blocks of %zu bytes holding items"
                    " of up to %d bytes (-I) in 64 bits with 2^16 blocks or more; lower ac_block_size or -I\n",
                    ac_opts.block_size, settings.item_size_max);
            ac_shutdown();
            return -1;
        }
    }
    if (p->init != NULL && p->init(&ac_opts) != 0) {
        ac_shutdown();
        if (!p->kernel_paged || ac_opts.os_file)
            rmdir(ac.dir);
        return -1;
    }
    *item_limit = ac.item_limit;         /* a policy may add memory (effpaging's hot region) */
    if (!p->kernel_paged && ac_room_init() != 0) {
        ac_shutdown();
        return -1;
    }
    atexit(ac_at_exit);
    ac_enabled = true;
    return 0;
}

void ac_item_linked(item *it, uint32_t hv) {
    (void)hv;
    if (!ac.paged)
        ac_drop_stale_copies(it);
    ac.policy->on_insert(it);
}

void ac_item_unlinked(item *it) {
    ac.policy->on_remove(it);
}

void ac_item_accessed(item *it) {
    it->it_flags |= ITEM_FETCHED;
    if (ac.paged) {
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
    const char *policy = ac_enabled ? ac.policy->name : "none";
    struct ac_store_stats ss;
    memset(&ss, 0, sizeof(ss));
    size_t meta = 0, stubs = 0, evicted_bytes = 0;
    if (ac_enabled && ac.cold != NULL) {
        /* cold-store policies: no stubs; the cold records are the spilled items */
        stubs = (size_t)ac_cold_records(ac.cold);
        meta = ac.policy->metadata_bytes();
    } else if (ac_enabled && ac.paged) {
        meta = ac.policy->metadata_bytes();
    } else if (ac_enabled) {
        ac.store_ops->stats(ac.store, &ss);
        stubs = ac_evicted_count(&ac.evicted);
        evicted_bytes = ac_evicted_bytes(&ac.evicted);
        meta = ac_charged_bytes() + ac.policy->metadata_bytes();
    }
    uint64_t cold_io_errors = 0;
    if (ac_enabled && ac.cold != NULL) {
        struct ac_cold_stats cs;
        ac_cold_stats(ac.cold, &cs);
        cold_io_errors = cs.store.io_errors;
        ss.live_bytes = cs.store.live_bytes;
        ss.bytes_on_disk = cs.store.file_bytes;
    }
    APPEND_STAT("policy", "%s", policy);
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
    APPEND_STAT("stub_items", "%zu", stubs);
    APPEND_STAT("evicted_max", "%zu", ac_enabled && ac.store != NULL ? ac.evicted.max_entries : (size_t)0);
    /* the evicted table as it is now (it grows and shrinks with the spilled items) */
    APPEND_STAT("evicted_table_bytes", "%zu", evicted_bytes);
    APPEND_STAT("evicted_bytes_per_item", "%.1f", stubs > 0 ? (double)evicted_bytes / (double)stubs : 0.0);
    APPEND_STAT("metadata_bytes", "%zu", meta);
    APPEND_STAT("item_memory_limit", "%zu", ac_enabled ? __atomic_load_n(&ac.item_limit, __ATOMIC_RELAXED)
                                                       : settings.maxbytes);
    APPEND_STAT("store_bytes_on_disk", "%llu", (unsigned long long)ss.bytes_on_disk);
    APPEND_STAT("store_live_bytes", "%llu", (unsigned long long)ss.live_bytes);
    APPEND_STAT("store_open_bytes", "%llu", (unsigned long long)ss.open_bytes);
    APPEND_STAT("blocks_written", "%llu", (unsigned long long)ss.blocks_written);
    APPEND_STAT("bytes_written", "%llu", (unsigned long long)ss.bytes_written);
    APPEND_STAT("record_reads", "%llu", (unsigned long long)ss.record_reads);
    APPEND_STAT("block_reads", "%llu", (unsigned long long)ss.block_reads);
    APPEND_STAT("merged_blocks", "%llu", (unsigned long long)AC_READ(merged_blocks));
    APPEND_STAT("merged_items", "%llu", (unsigned long long)AC_READ(merged_items));
    APPEND_STAT("io_errors", "%llu", (unsigned long long)(ss.io_errors + cold_io_errors + AC_READ(read_errors)));
    APPEND_STAT("checksum_errors", "%llu", (unsigned long long)AC_READ(checksum_errors));
    APPEND_STAT("fetch_nomem", "%llu", (unsigned long long)AC_READ(fetch_nomem));
    APPEND_STAT("read_through_items", "%llu", (unsigned long long)AC_READ(read_through_items));
    APPEND_STAT("spill_failures", "%llu", (unsigned long long)AC_READ(spill_failures));
    APPEND_STAT("overwritten_unread", "%llu", (unsigned long long)AC_READ(overwritten_unread));
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
    /* items dropped: 0 under anti-caching; for the stock cache (policy none) its evictions */
    APPEND_STAT("lost_items", "%llu", (unsigned long long)evictions);
    struct rusage ru;
    APPEND_STAT("read_major_faults", "%llu", (unsigned long long)__atomic_load_n(&read_faults, __ATOMIC_RELAXED));
    APPEND_STAT("major_faults", "%llu", getrusage(RUSAGE_SELF, &ru) == 0 ? (unsigned long long)ru.ru_majflt : 0ULL);
    if (ac_enabled) {
        if (ac.cold == NULL && !ac.paged) {
            APPEND_STAT("block_size", "%zu", ac_opts.block_size);
            APPEND_STAT("merge", "%s", ac_opts.merge_block ? "block" : "tuple");
            APPEND_STAT("compact_fill", "%.3f", ac_opts.compact_fill);
        }
        APPEND_STAT("spill_dir", "%s", ac.paged && !ac_opts.os_file ? "" : ac.dir);
        if (ac.policy->stats != NULL)
            ac.policy->stats(add_stats, c);
    }
    add_stats(NULL, 0, NULL, 0, c);   /* the terminating END */
}
