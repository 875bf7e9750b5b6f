/* Tier "nvm": the anti-cache in non-volatile memory instead of on disk
 * (Arulraj, DeBrabant, Pavlo, Stonebraker, Zdonik, Dulloor: H-Store's
 * anti-caching with its cold data "in an NVM-optimized hash table rather than
 * disk", NVM at 2x and 8x DRAM latency, DRAM ~90 ns). A region that stands
 * for the NVM device (store/nvm_store.h: the index and the records, nothing
 * per item in DRAM) is mapped from -o ac_nvm_file, a file allocated in full
 * by whoever runs the server (the harness: on /dev/shm, outside the cell's
 * cgroup, so the device's bytes are not charged to the cell, as an NVM DIMM's
 * would not be), or else a memfd of ac_nvm_size bytes of the server's own.
 * Every access to it (a run of contiguous cache lines: a record, a probe
 * sequence, a free-list link) costs the emulated extra latency once, as on an
 * emulator that stalls on last-level cache misses while the prefetcher streams
 * the rest of a run (ac_nvm_charge=line: every line, a pessimistic bound);
 * paid by the thread after the operation (store/nvm_delay.h). No blocks, no
 * files in the spill directory, no cleaning thread: a record's chunk is freed
 * when the record is dropped. */
#include "memcached.h"
#include "ac_tier.h"
#include "ac_options.h"
#include "store/nvm_delay.h"
#include "store/nvm_store.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define U(x) (unsigned long long)(x)
#define DRAM_NS_ASSUMED 90.0     /* the paper's base DRAM latency, for a region too small to measure in */

struct nvm_options {
    char file[256];              /* ac_nvm_file ("" : a memfd) */
    size_t size;                 /* ac_nvm_size (0: 16 x -m, at least 64 MiB) */
    size_t slots;                /* ac_nvm_slots (0: the store's default) */
    double factor;               /* ac_nvm_latency Nx: N (0: given in ns) */
    uint64_t latency_ns;         /* ac_nvm_latency in ns (with factor 0) */
    uint64_t dram_ns;            /* ac_nvm_dram_ns (0: measure) */
    uint64_t per_line;           /* ac_nvm_charge: 1 every line, 0 every access */
};
static struct nvm_options opt = { .factor = 2.0 };

static struct ac_nvm_store *store;
static double dram_ns;           /* DRAM's latency: measured or given */
static const char *dram_source = "";
static uint64_t extra_ns;        /* added per access (ac_nvm_charge=line: per line) */
static uint64_t delay_ns;        /* waited in all (atomic) */

static size_t nvm_fixed_bytes(size_t maxbytes) {
    if (opt.size == 0)
        opt.size = maxbytes * 16 > (64u << 20) ? maxbytes * 16 : (64u << 20);
    return 0;                    /* nothing in DRAM: the index lives in the region */
}

static void pay(const struct ac_nvm_cost *cost) {
    uint64_t ns = (opt.per_line ? cost->lines : cost->accesses) * extra_ns;
    if (ns == 0)
        return;
    __atomic_add_fetch(&delay_ns, ns, __ATOMIC_RELAXED);
    ac_nvm_spin_ns(ns);
}

static int nvm_open(const char *dir, size_t maxbytes, char *err, size_t errlen) {
    (void)dir;
    (void)maxbytes;
    store = ac_nvm_open(opt.file[0] != '\0' ? opt.file : NULL, opt.size, opt.slots, err, errlen);
    if (store == NULL)
        return -1;
    size_t len;
    void *area = ac_nvm_area(store, &len);      /* no record in it yet */
    if (opt.dram_ns != 0) {
        dram_ns = (double)opt.dram_ns;
        dram_source = "given";
    } else if ((dram_ns = ac_nvm_dram_ns(area, len)) > 0) {
        dram_source = "measured";
    } else {
        dram_ns = DRAM_NS_ASSUMED;
        dram_source = "assumed (region below 16 MiB)";
    }
    double line = opt.factor > 0 ? opt.factor * dram_ns : (double)opt.latency_ns;
    extra_ns = line > dram_ns ? (uint64_t)(line - dram_ns + 0.5) : 0;
    return 0;
}

static void nvm_close(void) {
    ac_nvm_close(store);
    store = NULL;
}

static int nvm_put(uint64_t fp, const void *rec, size_t len, struct ac_loc *loc) {
    struct ac_nvm_cost cost = { 0, 0 };
    int rc = ac_nvm_put(store, fp, rec, len, loc, &cost);
    pay(&cost);
    /* the region full is the device full; the index full is book-keeping out of room */
    return rc == -ENOBUFS ? AC_TIER_NO_ROOM : rc;
}

static int nvm_find(uint64_t fp, struct ac_loc *out, int max) {
    struct ac_nvm_cost cost = { 0, 0 };
    int n = ac_nvm_find(store, fp, out, max, &cost);
    pay(&cost);
    return n;
}

static bool nvm_maybe(uint64_t fp) {
    struct ac_loc l[AC_LOCS];
    return nvm_find(fp, l, AC_LOCS) > 0;
}

static int nvm_read(const struct ac_loc *loc, void *buf) {
    struct ac_nvm_cost cost = { 0, 0 };
    int rc = ac_nvm_get(store, loc, buf, &cost);
    pay(&cost);
    return rc;
}

static int nvm_drop(uint64_t fp, const struct ac_loc *loc) {
    struct ac_nvm_cost cost = { 0, 0 };
    int rc = ac_nvm_remove(store, fp, loc, &cost);
    pay(&cost);
    return rc == 1 ? 0 : -1;
}

static size_t nvm_charged_bytes(void) {
    return 0;
}

static void nvm_get_stats(struct ac_tier_stats *out) {
    struct ac_nvm_stats ns;
    ac_nvm_stats(store, &ns);
    *out = (struct ac_tier_stats){
        .spilled = ns.records, .live_bytes = ns.live_bytes, .record_reads = ns.gets,
        .bytes_written = ns.put_bytes,
    };
}

static void nvm_stats(ADD_STAT add_stats, void *c) {
    struct ac_nvm_stats ns;
    ac_nvm_stats(store, &ns);
    APPEND_STAT("nvm_backing", "%s", ac_nvm_backing(store));
    APPEND_STAT("nvm_region_bytes", "%llu", U(ns.region_bytes));
    APPEND_STAT("nvm_index_slots", "%llu", U(ns.index_slots));
    APPEND_STAT("nvm_index_bytes", "%llu", U(ns.index_bytes));
    APPEND_STAT("nvm_area_bytes", "%llu", U(ns.area_bytes));
    APPEND_STAT("nvm_carved_bytes", "%llu", U(ns.carved_bytes));
    APPEND_STAT("nvm_chunk_bytes", "%llu", U(ns.chunk_bytes));
    APPEND_STAT("nvm_free_chunk_bytes", "%llu", U(ns.free_chunk_bytes));
    APPEND_STAT("nvm_records", "%llu", U(ns.records));
    APPEND_STAT("nvm_live_bytes", "%llu", U(ns.live_bytes));
    APPEND_STAT("nvm_puts", "%llu", U(ns.puts));
    APPEND_STAT("nvm_put_bytes", "%llu", U(ns.put_bytes));
    APPEND_STAT("nvm_gets", "%llu", U(ns.gets));
    APPEND_STAT("nvm_drops", "%llu", U(ns.drops));
    APPEND_STAT("nvm_full", "%llu", U(ns.full));
    APPEND_STAT("nvm_lines_read", "%llu", U(ns.lines_read));
    APPEND_STAT("nvm_lines_written", "%llu", U(ns.lines_written));
    APPEND_STAT("nvm_accesses", "%llu", U(ns.accesses));
    APPEND_STAT("nvm_charge", "%s", opt.per_line ? "line" : "access");
    APPEND_STAT("nvm_dram_ns", "%.1f", dram_ns);
    APPEND_STAT("nvm_dram_ns_source", "%s", dram_source);
    APPEND_STAT("nvm_extra_ns", "%llu", U(extra_ns));
    APPEND_STAT("nvm_delay_ns", "%llu", U(__atomic_load_n(&delay_ns, __ATOMIC_RELAXED)));
}

/* ac_nvm_latency: "Nx" (N times DRAM's latency per line, N from 1 to 100), "Nns"
 * (that many ns per line in all), or 0 / "dram" (no emulation). */
static int parse_latency(void *values, const struct ac_opt *o, const char *v) {
    struct nvm_options *p = values;
    if (strcmp(v, "0") == 0 || strcmp(v, "dram") == 0) {
        p->factor = 0;
        p->latency_ns = 0;
        return 0;
    }
    char *end;
    double x = strtod(v, &end);
    if (end != v && strcmp(end, "x") == 0 && x >= 1.0 && x <= 100.0) {
        p->factor = x;
        return 0;
    }
    uint64_t ns;
    if (ac_opt_duration(v, AC_U_NS | AC_U_US, 1, 100000, &ns)) {
        p->factor = 0;
        p->latency_ns = ns;
        return 0;
    }
    return ac_opt_refuse(o, v);
}

static const struct ac_word charge_words[] = {
    { "access", "the first line of each run of contiguous lines (the prefetcher streams the rest)", 0, NULL },
    { "line", "every line (no prefetch: a pessimistic bound)", 1, NULL },
    { NULL, NULL, 0, NULL },
};

static const struct ac_opt nvm_opts[] = {
    { .key = "ac_nvm_file", .type = AC_T_PATH, AC_FIELD(struct nvm_options, file), .absolute = true,
      .max = sizeof(opt.file),
      .def = "none: a memfd of ac_nvm_size bytes, charged to the server",
      .help = "the NVM region: an existing file allocated in full (e.g. on /dev/shm, made outside the"
              " server's cgroup so its pages are charged to whoever made it)" },
    { .key = "ac_nvm_size", .type = AC_T_SIZE, AC_FIELD(struct nvm_options, size), .min = 1u << 20, .max = AC_NOMAX,
      .noun = "a size", .note = "(K/M/G/T units allowed)",
      .def = "16 x -m, at least 64M",
      .help = "without ac_nvm_file: the memfd region's size (index and records)" },
    { .key = "ac_nvm_slots", .type = AC_T_COUNT, AC_FIELD(struct nvm_options, slots), .min = 1024, .max = 1ULL << 36,
      .noun = "a power of two", .note = "(at most a quarter of the region in 24-byte slots)",
      .def = "a power of two >= region / 512",
      .help = "index slots in the region (puts refused at 3/4 full)" },
    { .key = "ac_nvm_latency", .type = AC_T_CUSTOM, AC_FIELD(struct nvm_options, factor), .parse = parse_latency,
      .what = "Nx (N times DRAM's latency per cache line, N from 1 to 100, e.g. 2x, 8x), a latency per line"
              " from 1ns to 100us (e.g. 720ns), or 0 (none)",
      .def = "2x", .def_is_value = true,
      .help = "NVM latency per access (or line: ac_nvm_charge), emulated by a busy wait of the difference to DRAM" },
    { .key = "ac_nvm_dram_ns", .type = AC_T_COUNT, AC_FIELD(struct nvm_options, dram_ns), .min = 1, .max = 100000,
      .noun = "a latency in ns",
      .def = "measured at start by a pointer chase over the region (90 when it is below 16 MiB)",
      .help = "DRAM's latency per cache line that ac_nvm_latency Nx multiplies" },
    { .key = "ac_nvm_charge", .type = AC_T_ENUM, AC_FIELD(struct nvm_options, per_line), .words = charge_words,
      .def = "access", .def_is_value = true,
      .help = "what pays the extra latency: each access (a run of contiguous lines), or each line" },
};
static const struct ac_opt_table nvm_options = AC_OPT_TABLE("tier nvm", nvm_opts, &opt);

static const char *const nvm_files[] = { NULL };

static const struct ac_spill_ops nvm_spill = {
    .put = nvm_put,
    .find = nvm_find,
    .peek = nvm_find,
    .maybe = nvm_maybe,
    .read = nvm_read,
    .drop = nvm_drop,
};

const struct ac_tier ac_tier_nvm = {
    .name = "nvm",
    .summary = "NVM anti-cache: a hash table of records in a byte-addressable region off the cgroup,"
               " latency emulated per cache line",
    .caps = AC_CAP_SPILL,
    .files = nvm_files,
    .options = { &nvm_options, &ac_record_options },
    .fixed_bytes = nvm_fixed_bytes,
    .open = nvm_open,
    .close = nvm_close,
    .charged_bytes = nvm_charged_bytes,
    .get_stats = nvm_get_stats,
    .stats = nvm_stats,
    .spill = &nvm_spill,
};
