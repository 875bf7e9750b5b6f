/* The spill files' I/O engine (store/io_engine.h) as the spilling tiers see
 * it: its options (ac_io, ac_io_threads, ac_fault), its start with the
 * fallback said on stderr, and its lines of `stats anticache`.
 * Uses: ac_options (its parsers' helpers). */
#include "memcached.h"
#include "ac_internal.h"
#include "store/io_engine.h"
#include <stdio.h>
#include <string.h>

struct ac_io_settings ac_io_opts;

static const struct ac_word engine_words[] = {
    { "sync", "pread/pwrite in the thread that asks", AC_IO_SYNC, NULL },
    { "threads", "a pool of ac_io_threads threads", AC_IO_THREADS, NULL },
    { "aio", "Linux AIO through libaio", AC_IO_AIO, NULL },
    { "uring", "io_uring through liburing", AC_IO_URING, NULL },
    { NULL, NULL, 0, NULL },
};

static const struct ac_word direct_words[] = {
    { "on", "O_DIRECT reads, widened to the file system's unit", 1, NULL },
    { "off", "reads through the page cache, without readahead", 0, NULL },
    { NULL, NULL, 0, NULL },
};

static const struct { const char *word; enum ac_io_fault kind; } fault_words[] = {
    { "read_eio", AC_FAULT_READ_EIO }, { "write_eio", AC_FAULT_WRITE_EIO },
    { "write_enospc", AC_FAULT_WRITE_ENOSPC }, { "short", AC_FAULT_SHORT }, { "slow_read", AC_FAULT_SLOW_READ },
    { "slow_write", AC_FAULT_SLOW_WRITE },
};

/* KIND:N, or none. */
static int parse_fault(void *values, const struct ac_opt *o, const char *v) {
    struct ac_io_settings *io = values;
    if (strcmp(v, "none") == 0) {
        io->fault = AC_FAULT_NONE;
        io->fault_count = 0;
        return 0;
    }
    const char *colon = strchr(v, ':');
    uint64_t n;
    const char *end;
    if (colon == NULL || !ac_opt_digits(colon + 1, &n, &end) || *end != '\0' || n == 0)
        return ac_opt_refuse(o, v);
    for (size_t i = 0; i < sizeof(fault_words) / sizeof(fault_words[0]); i++) {
        if (strlen(fault_words[i].word) == (size_t)(colon - v) &&
            strncmp(v, fault_words[i].word, (size_t)(colon - v)) == 0) {
            io->fault = fault_words[i].kind;
            io->fault_count = n;
            return 0;
        }
    }
    return ac_opt_refuse(o, v);
}

static const struct ac_opt io_opts[] = {
    { .key = "ac_io", .type = AC_T_ENUM, AC_FIELD(struct ac_io_settings, engine), .words = engine_words,
      .def = "uring", .def_is_value = true,
      .help = "the engine of spill-file reads and writes (uring falls back to aio, aio to threads)" },
    { .key = "ac_io_threads", .type = AC_T_COUNT, AC_FIELD(struct ac_io_settings, threads), .min = 1, .max = 64,
      .noun = "a count of threads",
      .def = "4", .def_is_value = true,
      .help = "ac_io=threads: the pool's threads" },
    { .key = "ac_io_direct", .type = AC_T_ENUM, AC_FIELD(struct ac_io_settings, direct), .words = direct_words,
      .def = "off", .def_is_value = true,
      .help = "read spilled records and blocks with direct I/O (a file system without it, e.g. tmpfs: through the page cache)" },
    { .key = "ac_fault", .type = AC_T_CUSTOM, AC_FIELD(struct ac_io_settings, fault), .parse = parse_fault,
      .what = "none or KIND:N with KIND read_eio, write_eio, write_enospc, short (half the bytes, whole sectors),"
              " slow_read or slow_write (1 s late) and N from 1 (e.g. read_eio:1)",
      .def = "none", .def_is_value = true,
      .help = "for tests: the next N spill-file reads or writes fail, or come back short" },
};
const struct ac_opt_table ac_io_options = AC_OPT_TABLE("spill-file I/O (tiers blocks, tuples, uvmm and emt)", io_opts, &ac_io_opts);

void ac_io_init(void) {
    char why[600];
    enum ac_io_kind requested = (enum ac_io_kind)ac_io_opts.engine;
    enum ac_io_kind got = ac_io_start(requested, (unsigned)ac_io_opts.threads, why, sizeof(why));
    if (got != requested)
        fprintf(stderr, "memcached-ac: ac_io=%s is not available here (%s); using ac_io=%s\n",
                ac_io_name(requested), why, ac_io_name(got));
    ac_io_set_fault((enum ac_io_fault)ac_io_opts.fault, ac_io_opts.fault_count);
    ac_io_set_direct(ac_io_opts.direct == 1);
}

void ac_io_stats(ADD_STAT add_stats, void *c) {
    struct ac_io_stats s;
    ac_io_get_stats(&s);
    APPEND_STAT("io_engine", "%s", ac_io_name(ac_io_kind()));
    APPEND_STAT("io_engine_requested", "%s", ac_io_name((enum ac_io_kind)ac_io_opts.engine));
    APPEND_STAT("io_direct", "%s", ac_io_opts.direct == 1 ? "on" : "off");
    APPEND_STAT("io_direct_files", "%llu", (unsigned long long)s.direct_files);
    APPEND_STAT("io_reads", "%llu", (unsigned long long)s.reads);
    APPEND_STAT("io_writes", "%llu", (unsigned long long)s.writes);
    APPEND_STAT("io_read_bytes", "%llu", (unsigned long long)s.read_bytes);
    APPEND_STAT("io_write_bytes", "%llu", (unsigned long long)s.write_bytes);
    APPEND_STAT("io_short_transfers", "%llu", (unsigned long long)s.short_transfers);
    APPEND_STAT("io_failed_transfers", "%llu", (unsigned long long)s.errors);
    APPEND_STAT("io_faults_injected", "%llu", (unsigned long long)s.faults_injected);
    /* every completed read's latency: quantiles of the whole life, and the nonzero buckets (by their
     * lower bound in ns) for quantiles of a window (two snapshots subtracted) */
    const struct ac_lathist *h = ac_io_read_latency();
    APPEND_STAT("io_read_ns_p50", "%llu", (unsigned long long)ac_lathist_quantile(h, 0.50));
    APPEND_STAT("io_read_ns_p99", "%llu", (unsigned long long)ac_lathist_quantile(h, 0.99));
    for (unsigned b = 0; b < AC_LATHIST_N; b++) {
        uint64_t n = __atomic_load_n(&h->n[b], __ATOMIC_RELAXED);
        if (n > 0) {
            char name[48];
            snprintf(name, sizeof(name), "io_read_ns_hist_%llu", (unsigned long long)ac_lathist_value(b));
            APPEND_STAT(name, "%llu", (unsigned long long)n);
        }
    }
    APPEND_STAT("io_ring_fallbacks", "%llu", (unsigned long long)s.ring_fallbacks);
}
