/* Tier "emt": an application-steered page cache after Meyer et al.'s EMT
 * (seed paper 001: "a facility to pre-allocate one or more system-wide
 * fixed-size page caches", FIFO or LRU eviction, "a low water level and an
 * eviction size", "dynamic read ahead", direct I/O that bypasses the VFS).
 * It is our pager (uvmm.c and its files) configured as EMT describes: the
 * slab memory in one region whose pages userfaultfd brings in, a page cache
 * of fixed size (ac_emt_cache, or what the cgroup allows), eviction by FIFO
 * or (sampled) LRU (uvmm_evict.c), the evictor started when fewer than the
 * low water level of pages are free and writing out the eviction size beyond
 * it, read-ahead that starts at ac_emt_readahead_min pages, doubles on each
 * sequential fault up to ac_emt_readahead_max and resets on an out-of-order
 * one (uvmm_readahead.c; ac_emt_readahead_streams > 1 keeps several windows,
 * readahead_window.h says why), pages read and written with O_DIRECT where the file
 * system has it, uncompressed (EMT writes pages as they are).
 *
 * Page colours and pinned pages (ac_emt_colours=1, emt_colours.c): the
 * shared hot/cold classifier, fed with the pages the item path touches,
 * colours them hot or not each round, and the hot ones (ac_log_hot_fill of
 * the cache beyond its watermarks) are pinned: the evictor passes over them.
 * Off by default, as EMT runs without application hints. The defaults: EMT's TPC-C run kept a low water level of ~10 % of its
 * cache and evicted ~0.5 % at a time (260 MB and 13 MB of 2.5 GB); here 64
 * pages each, what uvmm's rounds write, so a small cell's cache is not mostly
 * kept free; read-ahead 1 to 32 pages (128 KiB, the kernel's default window
 * on EMT's machine). */
#include "memcached.h"
#include "ac_tier.h"
#include "ac_services.h"
#include "uvmm.h"
#include "readahead_window.h"
#include "emt_colours.h"
#include "policy/hotcold.h"
#include "store/compress.h"
#include <stdio.h>

struct emt_options {
    uint64_t cache, low_water, evict_size, ra_min, ra_max, ra_streams;
    unsigned evict, colours;
};
static struct emt_options emt;

static const struct ac_word emt_evict_words[] = {
    { "lru", "the least recently accessed of 32 resident pages after the hand (sampled LRU)", UVMM_LRU, NULL },
    { "fifo", "the page resident longest", UVMM_FIFO, NULL },
    { NULL, NULL, 0, NULL },
};

static const struct ac_word colour_words[] = {
    { "0", "no colours: eviction by FIFO/LRU alone", 0, NULL },
    { "1", "pages coloured by the classifier (ac_log_*), the hot set pinned", 1, NULL },
    { NULL, NULL, 0, NULL },
};

static const struct ac_opt emt_opts[] = {
    { .key = "ac_emt_cache", .type = AC_T_SIZE, AC_FIELD(struct emt_options, cache), .min = 64 * AC_KIB,
      .max = AC_NOMAX, .def = "what the cgroup allows",
      .help = "the page cache's size (default: the cgroup's limit less what else the process holds)" },
    { .key = "ac_emt_evict", .type = AC_T_ENUM, AC_FIELD(struct emt_options, evict), .words = emt_evict_words,
      .def = "lru", .def_is_value = true, .help = "which cached page is written out first" },
    { .key = "ac_emt_low_water", .type = AC_T_COUNT, AC_FIELD(struct emt_options, low_water), .min = 1,
      .max = 1u << 20, .noun = "a count of pages", .def = "64", .def_is_value = true,
      .help = "free pages below which the evictor starts" },
    { .key = "ac_emt_evict_size", .type = AC_T_COUNT, AC_FIELD(struct emt_options, evict_size), .min = 2,
      .max = 4096, .noun = "a count of pages", .def = "64", .def_is_value = true,
      .help = "pages written out each time the low water level is reached" },
    { .key = "ac_emt_readahead_min", .type = AC_T_COUNT, AC_FIELD(struct emt_options, ra_min), .min = 1,
      .max = 1024, .noun = "a count of pages", .def = "1", .def_is_value = true,
      .help = "the read-ahead window after an out-of-order fault (1: the faulting page only)" },
    { .key = "ac_emt_readahead_max", .type = AC_T_COUNT, AC_FIELD(struct emt_options, ra_max), .min = 1,
      .max = 1024, .noun = "a count of pages", .def = "32", .def_is_value = true,
      .help = "the largest read-ahead window; each sequential fault doubles it up to this (1: no read-ahead)" },
    { .key = "ac_emt_readahead_streams", .type = AC_T_COUNT, AC_FIELD(struct emt_options, ra_streams), .min = 1,
      .max = RA_STREAMS_MAX, .noun = "a count of windows", .def = "1", .def_is_value = true,
      .help = "read-ahead windows kept at once (1: EMT's, which any fault elsewhere resets)" },
    { .key = "ac_emt_colours", .type = AC_T_ENUM, AC_FIELD(struct emt_options, colours), .words = colour_words,
      .def = "0", .def_is_value = true,
      .help = "1 = page colours from the hot/cold classifier; hot pages (ac_log_hot_fill of the cache) pinned" },
};
static const struct ac_opt_table emt_options = AC_OPT_TABLE("tier emt", emt_opts, &emt);

static int emt_open(const char *dir, size_t maxbytes, char *err, size_t errlen) {
    if (emt.ra_min > emt.ra_max) {
        snprintf(err, errlen, "ac_emt_readahead_min (%llu) exceeds ac_emt_readahead_max (%llu); accepted:"
                 " 1 <= ac_emt_readahead_min <= ac_emt_readahead_max <= 1024 pages",
                 (unsigned long long)emt.ra_min, (unsigned long long)emt.ra_max);
        return -1;
    }
    if (emt.colours && emt_colours_check(err, errlen) != 0)
        return -1;
    uv.opt = (struct uvmm_options){
        .memory = emt.cache, .evict = emt.evict, .compress = AC_CODEC_NONE, .batch = emt.evict_size,
        .clean = 0, .mode = UVMM_MODE_UFFD, .low_water = emt.low_water,
        .ra_min = emt.ra_min, .ra_max = emt.ra_max > 1 ? emt.ra_max : 0, .ra_streams = emt.ra_streams,
        .pins = emt.colours,
    };
    return uvmm_open(dir, maxbytes, err, errlen);
}

static void emt_close(void) {
    emt_colours_stop();
    uvmm_close();
}

/* The pager's region, then (colours on) the classifier over its pages. */
static void *emt_map(size_t len, bool random) {
    void *p = uvmm_page.map(len, random);
    if (p != NULL && emt.colours && emt_colours_start() != 0)
        return NULL;
    return p;
}

static void emt_stats(ADD_STAT add_stats, void *c) {
    uvmm_stats(add_stats, c);
    emt_colours_stats(add_stats, c);
}

/* uvmm's page operations with the colours started at map; no check mode (emt faults) */
static const struct ac_page_ops emt_page = {
    .map = emt_map, .thread_page_ins = uvmm_thread_page_ins, .touched = uvmm_touched,
};

const struct ac_tier ac_tier_emt = {
    .name = "emt",
    .summary = "an EMT-style page cache (Meyer et al.): our pager with a fixed cache, FIFO/LRU, low water level,"
               " eviction size, dynamic read-ahead and direct I/O",
    .caps = AC_CAP_PAGE | AC_CAP_FILES,
    .files = uvmm_files,
    .options = { &emt_options, &ac_classifier_options, &ac_io_options },
    .page = &emt_page,
    .fixed_bytes = uvmm_fixed_bytes,
    .open = emt_open,
    .close = emt_close,
    .charged_bytes = uvmm_charged_bytes,
    .get_stats = uvmm_get_stats,
    .stats = emt_stats,
};
