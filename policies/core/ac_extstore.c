/* memcached's own extstore (-o ext_path, with ac_policy=none) seen through
 * `stats anticache`: its reads and drops in the names every approach reports,
 * from extstore's own counters (memcached 1.6.18 storage.c, extstore.c).
 *
 * A get that finds an item header (ITEM_HDR: the value is on disk) counts as a
 * get_hit in memcached's slab stats and as get_extstore once the read is
 * queued; the read then ends as a value, a miss (miss_from_extstore: its page
 * was reclaimed, or its checksum failed) or aborted (get_aborted_extstore).
 * A read that could not get a buffer (get_oom_extstore) answers the client
 * with an error. So:
 *   mem_hits  = get_hits + touch_hits - get_extstore
 *   disk_hits = get_extstore - miss_from_extstore - get_aborted_extstore
 *   misses   += miss_from_extstore + get_aborted_extstore + get_oom_extstore
 * Items dropped, the three ways extstore drops them:
 *   evictions                 items and headers evicted from RAM (an item the
 *                             flusher had not written yet, or the header of
 *                             one on disk: its value is unreachable after it)
 *   extstore_objects_evicted  live objects in a disk page reclaimed for reuse
 *   extstore_compact_lost     objects compaction could not move (item locked)
 * lost_items is their sum: drop events. An item whose disk copy was dropped
 * and whose header is evicted later is counted twice, so the distinct items
 * lost lie between the largest of the three and the sum; a read-only run over
 * loaded keys counts the losses that mattered exactly, as its misses.
 * Uses: nothing of the core (beside the chain: stats anticache calls it). */
#include "memcached.h"
#include "ac_internal.h"
#include <string.h>
#ifdef EXTSTORE
#include "extstore.h"
#endif

#ifdef EXTSTORE
/* extstore's own counters now, and the objects compaction lost (memcached's global stats) */
static uint64_t ext_snapshot(struct extstore_stats *st) {
    memset(st, 0, sizeof(*st));
    extstore_get_stats(ext_storage, st);
    STATS_LOCK();
    uint64_t compact_lost = stats.extstore_compact_lost;
    STATS_UNLOCK();
    return compact_lost;
}
#endif

void ac_extstore_adjust(const struct thread_stats *ts, uint64_t *mem_hits, uint64_t *disk_hits,
                        uint64_t *misses, uint64_t *lost) {
#ifdef EXTSTORE
    if (ext_storage == NULL)
        return;
    uint64_t read = ts->get_extstore, gone = ts->miss_from_extstore + ts->get_aborted_extstore;
    *mem_hits = *mem_hits > read ? *mem_hits - read : 0;
    *disk_hits = read > gone ? read - gone : 0;
    *misses += gone + ts->get_oom_extstore;
    struct extstore_stats st;
    uint64_t compact_lost = ext_snapshot(&st);
    *lost += st.objects_evicted + compact_lost;
#else
    (void)ts; (void)mem_hits; (void)disk_hits; (void)misses; (void)lost;
#endif
}

void ac_extstore_stats(ADD_STAT add_stats, void *c, const struct thread_stats *ts, uint64_t ram_evictions) {
#ifdef EXTSTORE
    if (ext_storage == NULL)
        return;
    struct extstore_stats st;
    uint64_t compact_lost = ext_snapshot(&st);
    /* the drops apart (lost_items is their sum), and what extstore moved */
    APPEND_STAT("ext_lost_ram", "%llu", (unsigned long long)ram_evictions);
    APPEND_STAT("ext_lost_disk", "%llu", (unsigned long long)st.objects_evicted);
    APPEND_STAT("ext_lost_compact", "%llu", (unsigned long long)compact_lost);
    APPEND_STAT("ext_reads", "%llu", (unsigned long long)ts->get_extstore);
    APPEND_STAT("ext_read_misses", "%llu", (unsigned long long)ts->miss_from_extstore);
    APPEND_STAT("ext_read_aborts", "%llu", (unsigned long long)ts->get_aborted_extstore);
    APPEND_STAT("ext_read_oom", "%llu", (unsigned long long)ts->get_oom_extstore);
    APPEND_STAT("ext_recached", "%llu", (unsigned long long)ts->recache_from_extstore);
    APPEND_STAT("ext_objects_written", "%llu", (unsigned long long)st.objects_written);
    APPEND_STAT("ext_bytes_written", "%llu", (unsigned long long)st.bytes_written);
    APPEND_STAT("ext_bytes_read", "%llu", (unsigned long long)st.bytes_read);
    APPEND_STAT("ext_bytes_used", "%llu", (unsigned long long)st.bytes_used);
    APPEND_STAT("ext_bytes_fragmented", "%llu", (unsigned long long)st.bytes_fragmented);
    APPEND_STAT("ext_page_evictions", "%llu", (unsigned long long)st.page_evictions);
    APPEND_STAT("ext_pages", "%llu", (unsigned long long)st.page_count);
#else
    (void)add_stats; (void)c; (void)ts; (void)ram_evictions;
#endif
}
