/* Tier "blocks": H-Store's anti-caching book-keeping and swapping (DeBrabant et
 * al., VLDB 2013 §3.1-3.4). Book-keeping: the evicted table (store/evicted.c),
 * one entry per spilled item (key fingerprint -> record location), in memory,
 * growing and shrinking with the spilled items (charged against -m as it
 * grows). Swapping: the block store (store/block_store.c) packs records into
 * an open block of ac_block_size bytes written with one sequential write.
 * A fetch reads one record (tuple merge) or, with ac_merge=block, merges the
 * whole block; under tuple merge a block whose live bytes fell below
 * ac_compact_fill is merged whole (lazy compaction). */
#include "memcached.h"
#include "ac_tier.h"
#include "store/block_store.h"
#include "store/evicted.h"
#include "store/record.h"
#include <stdio.h>
#include <string.h>

/* Its settings (the options below) */
struct blocks_options {
    size_t block_size;                  /* ac_block_size (0: the default for -m) */
    bool merge_block;                   /* ac_merge=block */
    double compact_fill;                /* ac_compact_fill */
    size_t evicted_max;                 /* ac_evicted_max (0: no cap) */
    size_t write_queue;                 /* ac_write_queue: closed blocks the writer thread may hold */
};
static struct blocks_options opt;

static struct ac_store *store;
static struct ac_evicted table;
static size_t block_size;               /* ac_block_size, or the default for -m */

/* Bits that hold every value up to v. */
static unsigned bits_for(size_t v) {
    unsigned n = 1;
    while (n < 64 && (v >> n) != 0)
        n++;
    return n;
}

/* The open block's buffer. H-Store's blocks are 1 MiB; a small server
 * (-m < 16M) gets -m/16, at least 4 KiB. */
static size_t blocks_fixed_bytes(size_t maxbytes) {
    block_size = opt.block_size;
    if (block_size == 0) {
        block_size = maxbytes / 16 < (1u << 20) ? maxbytes / 16 : (1u << 20);
        if (block_size < 4096)
            block_size = 4096;
    }
    /* the open block, and the closed ones waiting for the writer */
    return block_size * (1 + opt.write_queue);
}

static void blocks_close(void) {
    if (store != NULL) {
        ac_block_store_ops.close(store);   /* removes the file */
        store = NULL;
    }
    ac_evicted_destroy(&table);
}

static int blocks_open(const char *dir, size_t maxbytes, char *err, size_t errlen) {
    (void)maxbytes;
    if (opt.merge_block && ac_compact_copies()) {
        snprintf(err, errlen, "ac_compact=copy copies the live records of blocks lazy compaction claims under"
                 " tuple merge; with ac_merge=block every fetch merges its whole block back into RAM:"
                 " drop one of the two");
        return -1;
    }
    store = ac_block_store_ops.open(dir, block_size, opt.compact_fill, err, errlen);
    if (store == NULL)
        return -1;
    int wrc = ac_block_store_ops.set_writer(store, (unsigned)opt.write_queue, ac_opts.alloc_wait_ns);
    if (wrc != 0) {
        snprintf(err, errlen, "cannot start the block writer thread: %s", strerror(-wrc));
        blocks_close();
        return -1;
    }
    /* a location packs into 64 bits: an offset inside a block (records larger
     * than a block start at 0 in one of their own) and the record's length */
    unsigned off_bits = bits_for(block_size - 1);
    unsigned len_bits = bits_for(ac_record_size(KEY_MAX_LENGTH, (size_t)settings.item_size_max + 2));
    if (ac_evicted_init(&table, opt.evicted_max, off_bits, len_bits) != 0) {
        snprintf(err, errlen, "the evicted table cannot address blocks of %zu bytes holding items of up to %d"
                 " bytes (-I) in 64 bits with 2^16 blocks or more; lower ac_block_size or -I",
                 block_size, settings.item_size_max);
        blocks_close();
        return -1;
    }
    return 0;
}

static int blocks_put(uint64_t fp, const void *rec, size_t len, struct ac_loc *loc) {
    int rc = ac_block_store_ops.put(store, rec, len, loc);
    if (rc == AC_STORE_FULL)
        return AC_TIER_FULL;
    if (rc != AC_STORE_OK)
        return rc;
    if (ac_evicted_insert(&table, fp, loc) != 0) {
        ac_block_store_ops.invalidate(store, loc);
        return AC_TIER_NO_ROOM;
    }
    return 0;
}

static int blocks_move(uint64_t fp, const void *rec, size_t len, const struct ac_loc *from, struct ac_loc *to) {
    int rc = ac_block_store_ops.put(store, rec, len, to);
    if (rc == AC_STORE_FULL)
        return AC_TIER_FULL;
    if (rc != AC_STORE_OK)
        return rc;
    if (ac_evicted_move(&table, fp, from, to) != 0) {
        ac_block_store_ops.invalidate(store, to);
        return -1;
    }
    (void)ac_block_store_ops.invalidate(store, from);   /* its block is being compacted: no new claim */
    return 0;
}

static int blocks_flush(void) {
    return ac_block_store_ops.flush(store);
}

static int blocks_find(uint64_t fp, struct ac_loc *out, int max) {
    return ac_evicted_count(&table) == 0 ? 0 : ac_evicted_find(&table, fp, out, max);
}

static bool blocks_maybe(uint64_t fp) {
    return ac_evicted_count(&table) > 0 && ac_evicted_find(&table, fp, NULL, 0) > 0;
}

static int blocks_read(const struct ac_loc *loc, void *buf) {
    return ac_block_store_ops.get(store, loc, buf);
}

static uint64_t blocks_read_token(const struct ac_loc *loc) {
    return ac_block_store_ops.get_token(store, loc);
}

static int blocks_read_start(const struct ac_loc *loc, void *buf, struct ac_io_ring *r, struct ac_io_req *req,
                             uint64_t token) {
    return ac_block_store_ops.get_start(store, loc, buf, r, req, token);
}

static bool blocks_read_valid(const struct ac_loc *loc, uint64_t token) {
    return ac_block_store_ops.get_valid(store, loc, token);
}

/* With ac_merge=block no drop claims a block for lazy compaction: a claim is
 * given back at once, and the next fetch from the block merges it whole
 * (emptying it, ac_merge_block), where a lazy merge would leave the mates no
 * free chunk takes. */
static int blocks_drop(uint64_t fp, const struct ac_loc *loc) {
    if (!ac_evicted_remove(&table, fp, loc))
        return -1;
    if (ac_block_store_ops.invalidate(store, loc) != 1)
        return 0;
    if (opt.merge_block) {
        ac_block_store_ops.merge_done(store, loc->block);
        return 0;
    }
    return 1;
}

static ssize_t blocks_read_block(uint32_t block, void **buf) {
    return ac_block_store_ops.read_block(store, block, buf);
}

/* Tuple merge: only a block the fetch left below ac_compact_fill (the store
 * claimed it for the merge when it said so); ac_merge=block: every fetch
 * merges its block, if no one else is merging it. */
static bool blocks_begin_merge(uint32_t block, bool compact) {
    if (compact)
        return true;
    return opt.merge_block && ac_block_store_ops.begin_merge(store, block) == 1;
}

static void blocks_merge_done(uint32_t block) {
    ac_block_store_ops.merge_done(store, block);
}

static size_t blocks_charged_bytes(void) {
    return ac_evicted_bytes(&table);
}

static void blocks_get_stats(struct ac_tier_stats *out) {
    struct ac_store_stats ss;
    ac_block_store_ops.stats(store, &ss);
    *out = (struct ac_tier_stats){
        .spilled = ac_evicted_count(&table), .table_bytes = ac_evicted_bytes(&table),
        .table_max = table.max_entries, .bytes_on_disk = ss.bytes_on_disk, .live_bytes = ss.live_bytes,
        .open_bytes = ss.open_bytes, .blocks_written = ss.blocks_written, .bytes_written = ss.bytes_written,
        .record_reads = ss.record_reads, .block_reads = ss.block_reads, .io_errors = ss.io_errors,
    };
}

static void blocks_stats(ADD_STAT add_stats, void *c) {
    APPEND_STAT("block_size", "%zu", block_size);
    APPEND_STAT("merge", "%s", opt.merge_block ? "block" : "tuple");
    APPEND_STAT("compact_fill", "%.3f", opt.compact_fill);
    struct ac_store_stats ss;
    ac_block_store_ops.stats(store, &ss);
    APPEND_STAT("write_queue", "%zu", opt.write_queue);
    APPEND_STAT("write_queue_blocks", "%llu", (unsigned long long)ss.sealed_blocks);
    APPEND_STAT("write_waits", "%llu", (unsigned long long)ss.write_waits);
    APPEND_STAT("write_wait_us", "%llu", (unsigned long long)(ss.write_wait_ns / 1000));
    APPEND_STAT("write_timeouts", "%llu", (unsigned long long)ss.write_timeouts);
}

static const char *const blocks_files[] = { "blocks.dat", NULL };

static const struct ac_word merge_words[] = {
    { "tuple", NULL, 0, NULL }, { "block", NULL, 1, NULL }, { NULL, NULL, 0, NULL },
};

static const struct ac_opt blocks_opts[] = {
    { .key = "ac_block_size", .type = AC_T_SIZE, AC_FIELD(struct blocks_options, block_size), .min = 4 * AC_KIB, .max = 64 * AC_KIB * AC_KIB,
      .noun = "a size", .note = "(e.g. 1M)",
      .def = "1M, or -m/16 if smaller", .bookkeeping = true,
      .help = "bytes per spill block" },
    { .key = "ac_merge", .type = AC_T_ENUM, AC_FIELD(struct blocks_options, merge_block), .words = merge_words,
      .def = "tuple", .def_is_value = true,
      .help = "tuple: fetch one item; block: fetch its whole block" },
    { .key = "ac_compact_fill", .type = AC_T_DOUBLE, AC_FIELD(struct blocks_options, compact_fill), .lo = 0.0, .hi = 1.0,
      .noun = "a number",
      .def = "0.5", .def_is_value = true,
      .help = "tuple merge: merge a block whose live fraction falls below" },
    { .key = "ac_evicted_max", .type = AC_T_COUNT, AC_FIELD(struct blocks_options, evicted_max), .min = 1, .max = (1ULL << 32) - 2,
      .noun = "a count of items", .note = "(K/M/G/T units allowed)",
      .def = "no cap",
      .help = "spilled items at most (the evicted table grows with them, charged against -m)" },
    { .key = "ac_write_queue", .type = AC_T_COUNT, AC_FIELD(struct blocks_options, write_queue), .min = 0, .max = 16,
      .noun = "a count of blocks", .note = "(0: the thread that closes a block writes it)",
      .def = "0", .def_is_value = true, .bookkeeping = true,
      .help = "closed blocks a writer thread writes in the background (each held in memory until written,"
              " charged against -m; a full queue: wait ac_alloc_wait, then refuse)" },
};
static const struct ac_opt_table blocks_options = AC_OPT_TABLE("tier blocks", blocks_opts, &opt);

static const struct ac_spill_ops blocks_spill = {
    .put = blocks_put,
    .move = blocks_move,
    .flush = blocks_flush,
    .find = blocks_find,
    .peek = blocks_find,
    .maybe = blocks_maybe,
    .read = blocks_read,
    .read_token = blocks_read_token,
    .read_start = blocks_read_start,
    .read_valid = blocks_read_valid,
    .drop = blocks_drop,
    .read_block = blocks_read_block,
    .begin_merge = blocks_begin_merge,
    .merge_done = blocks_merge_done,
};

const struct ac_tier ac_tier_blocks = {
    .name = "blocks",
    .summary = "H-Store: evicted table in memory, records packed into blocks written sequentially",
    .caps = AC_CAP_SPILL | AC_CAP_BLOCKS | AC_CAP_READ_AHEAD | AC_CAP_MOVE | AC_CAP_FILES,
    .files = blocks_files,
    .options = { &blocks_options, &ac_record_options, &ac_io_options, &ac_compact_options },
    .fixed_bytes = blocks_fixed_bytes,
    .open = blocks_open,
    .close = blocks_close,
    .charged_bytes = blocks_charged_bytes,
    .get_stats = blocks_get_stats,
    .stats = blocks_stats,
    .spill = &blocks_spill,
};
