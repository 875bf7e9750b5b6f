/* Tier "tuples": Siberia's cold store (Levandoski, Larson, Stoica, ICDE 2013
 * §VI-A; Stoica & Ailamaki, DaMoN 2013): no per-item memory for cold items.
 * Book-keeping: a Bloom filter in memory (10 bits per key for ac_log_keys
 * keys, 1 % false positives) in front of an on-disk open-addressing index.
 * Swapping: one checksummed record per item appended to a segmented log,
 * written at once (store/cold.c over store/tuple_store.c). A thread of the
 * tier (cold_gc.c) cleans the log's emptiest segments and rebuilds the filter
 * from the index once a quarter of its design size has been removed since
 * the last rebuild (removed keys keep their bits until then). */
#include "memcached.h"
#include "ac_tier.h"
#include "ac_options.h"
#include "store/keys.h"
#include "cold_gc.h"
#include "store/cold.h"
#include <stdio.h>

#define U(x) (unsigned long long)(x)

struct tuples_options {
    size_t bloom_keys;                  /* ac_bloom_keys (0: as ac_log_keys's default) */
};
static struct tuples_options opt;

static struct ac_cold cold;
static size_t keys;                     /* the filters' design size */
static uint64_t removed_since_rebuild;  /* atomic */

static size_t tuples_fixed_bytes(size_t maxbytes) {
    keys = opt.bloom_keys != 0 ? opt.bloom_keys : ac_default_keys(maxbytes);
    return ac_cold_bloom_bytes_for(keys);
}

/* The cleaning thread, every 20 ms. */
static void tuples_tick(void) {
    if (__atomic_load_n(&removed_since_rebuild, __ATOMIC_RELAXED) * 4 < keys)
        return;
    __atomic_store_n(&removed_since_rebuild, 0, __ATOMIC_RELAXED);
    ac_cold_rebuild(&cold);
}

static void tuples_close(void) {
    ac_cold_gc_stop();
    ac_cold_close(&cold);
}

static int tuples_open(const char *dir, size_t maxbytes, char *err, size_t errlen) {
    size_t seg = ac_cold_gc_segment_bytes(maxbytes, (size_t)settings.item_size_max);
    if (ac_cold_open(&cold, dir, keys, seg, err, errlen) != 0)
        return -1;
    if (ac_cold_gc_start(cold.store, tuples_tick) != 0) {
        snprintf(err, errlen, "cannot start the cold store's cleaning thread");
        ac_cold_close(&cold);
        return -1;
    }
    return 0;
}

static int tuples_put(uint64_t fp, const void *rec, size_t len, struct ac_loc *loc) {
    return ac_cold_put(&cold, fp, rec, len, loc);
}

static int tuples_find(uint64_t fp, struct ac_loc *out, int max) {
    return ac_cold_find(&cold, fp, out, max);
}

static int tuples_peek(uint64_t fp, struct ac_loc *out, int max) {
    return ac_cold_maybe(&cold, fp) ? ac_tuple_find(cold.store, fp, out, max) : 0;
}

static bool tuples_maybe(uint64_t fp) {
    return ac_cold_maybe(&cold, fp);
}

static int tuples_read(const struct ac_loc *loc, void *buf) {
    return ac_cold_get(&cold, loc, buf);
}

static uint64_t tuples_read_token(const struct ac_loc *loc) {
    return ac_tuple_token(cold.store, loc);
}

static int tuples_read_start(const struct ac_loc *loc, void *buf, struct ac_io_ring *r, struct ac_io_req *req,
                             uint64_t token) {
    return ac_tuple_get_start(cold.store, loc, buf, r, req, token);
}

static bool tuples_read_valid(const struct ac_loc *loc, uint64_t token) {
    return ac_tuple_get_valid(cold.store, loc, token);
}

static int tuples_drop(uint64_t fp, const struct ac_loc *loc) {
    if (ac_cold_remove(&cold, fp, loc) != 1)
        return -1;
    __atomic_add_fetch(&removed_since_rebuild, 1, __ATOMIC_RELAXED);
    return 0;
}

static size_t tuples_charged_bytes(void) {
    return 0;                            /* the filters are fixed; the index is on disk */
}

static void tuples_get_stats(struct ac_tier_stats *out) {
    struct ac_cold_stats cs;
    ac_cold_stats(&cold, &cs);
    *out = (struct ac_tier_stats){
        .spilled = cs.store.records, .bytes_on_disk = cs.store.file_bytes, .live_bytes = cs.store.live_bytes,
        .record_reads = cs.store.gets, .io_errors = cs.store.io_errors,
        /* records written: spills and the cleaner's moves (the index's slot writes apart: cold_index_writes) */
        .bytes_written = cs.store.put_bytes + cs.store.gc_moved_bytes,
    };
}

static void tuples_stats(ADD_STAT add_stats, void *c) {
    struct ac_cold_stats cs;
    ac_cold_stats(&cold, &cs);
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
    APPEND_STAT("cold_segment_bytes", "%llu", U(cs.store.seg_bytes));
    APPEND_STAT("cold_segments", "%llu", U(cs.store.segments));
    APPEND_STAT("cold_gc_segments", "%llu", U(cs.store.gc_segments));
    APPEND_STAT("cold_gc_moved_records", "%llu", U(cs.store.gc_moved_records));
    APPEND_STAT("cold_gc_moved_bytes", "%llu", U(cs.store.gc_moved_bytes));
    APPEND_STAT("cold_index_slots", "%llu", U(cs.store.index_slots));
    APPEND_STAT("cold_index_grows", "%llu", U(cs.store.index_grows));
    APPEND_STAT("cold_record_reads", "%llu", U(cs.store.gets));
    APPEND_STAT("cold_index_reads", "%llu", U(cs.store.index_reads));
    APPEND_STAT("cold_index_writes", "%llu", U(cs.store.index_writes));
}

static const char *const tuples_files[] = { "cold.dat", "cold.idx", "cold.idx.new", NULL };

static const struct ac_opt tuples_opts[] = {
    { .key = "ac_bloom_keys", .type = AC_T_COUNT, AC_FIELD(struct tuples_options, bloom_keys), .min = 1024, .max = AC_KIB * AC_KIB * AC_KIB,
      .noun = "a count of keys", .note = "(K/M/G/T units allowed)",
      .def = "as ac_log_keys's default", .bookkeeping = true,
      .help = "keys each of the two Bloom filters is designed for (1 % false positives); "
              "rebuilt after a quarter of that many removals" },
};
static const struct ac_opt_table tuples_options = AC_OPT_TABLE("tier tuples", tuples_opts, &opt);

static const struct ac_spill_ops tuples_spill = {
    .put = tuples_put,
    .find = tuples_find,
    .peek = tuples_peek,
    .maybe = tuples_maybe,
    .read = tuples_read,
    .read_token = tuples_read_token,
    .read_start = tuples_read_start,
    .read_valid = tuples_read_valid,
    .drop = tuples_drop,
};

const struct ac_tier ac_tier_tuples = {
    .name = "tuples",
    .summary = "Siberia: Bloom filter in memory, on-disk index, one record per item in a cleaned log",
    .caps = AC_CAP_SPILL | AC_CAP_READ_AHEAD | AC_CAP_FILES,
    .files = tuples_files,
    .options = { &tuples_options, &ac_record_options, &ac_io_options },
    .fixed_bytes = tuples_fixed_bytes,
    .open = tuples_open,
    .close = tuples_close,
    .charged_bytes = tuples_charged_bytes,
    .get_stats = tuples_get_stats,
    .stats = tuples_stats,
    .spill = &tuples_spill,
};
