/* The driver's run loop, shared by every mode that talks to a store.
 *
 *   load    insert keys insertstart .. insertstart+loadcount-1 (loadcount
 *           defaults to insertcount)
 *   warm-up warmupoperations ops (results kept apart, not in "run")
 *   run     operationcount ops, runwindows times in a row (window w draws
 *           its requests as a run with seed + w would, so window w of a run
 *           is the run of a process with that seed, but for the state the
 *           earlier windows left: ycsb_config.h)
 * in `threads` threads, each phase starting and ending together (barrier).
 * target > 0 throttles every phase to that many ops/s in total: the k-th op
 * started in a phase (counted over all threads) waits until phase start +
 * k / target s.
 *
 * lookaside=true (a cache filled by its users): a read, or the read half of a
 * read-modify-write, that misses is followed by a store of the key's load
 * value (version 0, as the load phase writes it) through the backend's
 * insert, counted as a refill; the read itself stays a miss.  A read's
 * latency excludes its refill, a read-modify-write's includes it (the refill
 * comes between its read and its write).  Batched mode: the batch goes out
 * with read-modify-writes as reads, then one batch of the refills, then one
 * of the read-modify-writes' writes, so the order per key is the same.
 *
 * scanproportion > 0: memcached has no range scan, so a scan (YCSB workload
 * E's start key and length) is the reads of `length` consecutive keys in load
 * order from its start key, one after another on the thread; they count as
 * reads (scan_keys says how many of them) and the scan as one operation.
 *
 * The main thread snapshots the process's and the machine's resource
 * counters (ycsb_resources.h) where it takes a phase's start and end times;
 * the difference is the phase's "resources".
 *
 * Results: ycsb_result_json() writes one JSON object (see README for the
 * field list).  The library keeps no global mutable state: everything lives
 * in the workload, the run options and the result. */
#ifndef YCSB_RUN_H
#define YCSB_RUN_H

#include <stdint.h>
#include "ycsb_backend.h"
#include "ycsb_hist.h"
#include "ycsb_json.h"
#include "ycsb_resources.h"
#include "ycsb_workload.h"

struct ycsb_run_opts {
    const struct ycsb_backend_ops *ops;
    void *backend;
    unsigned threads;    /* 0: the workload's `threads` */
    unsigned batch;      /* > 1 and ops->execute: requests per execute() */
    int do_load;         /* run the load phase */
    int do_run;          /* run warm-up and run phases */
};

struct ycsb_phase_result {
    int ran;
    uint64_t ops[YCSB_OP_TYPES];
    uint64_t errors[YCSB_OP_TYPES];
    /* reads and the read half of read-modify-writes: hit (from RAM, or the
     * backend cannot tell), disk_hit (after a spill-store read), miss */
    uint64_t read_hit, read_disk_hit, read_miss;
    /* lookaside: refill stores issued after misses, and those that failed */
    uint64_t refills, refill_errors;
    uint64_t scan_keys;                     /* reads of scans (also in read_*) */
    double duration_s;
    int have_resources;
    struct ycsb_resources resources;        /* the phase's window */
    /* the backend's server_stats() taken just before the phase started (JSON
     * object text, malloc'd; NULL without server_stats): with the final
     * "server" object it brackets the phase, e.g. items resident at its start */
    char *server_start;
    /* with runwindows > 1, a run window's server_stats() taken as it ended
     * (else NULL: the results' final "server" object is the run's end) */
    char *server_end;
    /* the backend's resident() sampled through the phase: samples, and the
     * integrals over time (s) of items and bytes, so mean = integral / time */
    uint64_t resident_samples;
    double resident_time_s, resident_items_s, resident_bytes_s;
    struct ycsb_hist hist[YCSB_OP_TYPES];   /* latency in ns */
};

struct ycsb_result {
    /* run is the first measured window; windows[k] the window k + 1 of
     * runwindows (ycsb_config.h): the same run again, drawn as with seed +
     * k + 1, the store as the previous window left it */
    struct ycsb_phase_result load, warmup, run;
    /* runwindows - 1 of them, allocated by ycsb_run (NULL with one window: a phase result holds
     * latency histograms of ~100 KiB, which a run must not carry, and touch, for nothing) */
    struct ycsb_phase_result *windows;
    unsigned windows_alloc;   /* how many windows holds */
    unsigned windows_run;     /* run windows completed (the JSON's run_windows) */
    unsigned threads, batch;
    char error[512];          /* why the run stopped ("" when it did not): the JSON's "error" */
};

/* CLOCK_MONOTONIC in ns */
uint64_t ycsb_now_ns(void);
struct ycsb_result *ycsb_result_new(void);
void ycsb_result_free(struct ycsb_result *r);
/* 0, or -1 with err (a backend's fatal error, or thread start failure); the
 * phases that completed are in res either way. */
int ycsb_run(struct ycsb_workload *w, const struct ycsb_run_opts *o, struct ycsb_result *res,
             char *err, size_t errlen);
/* the complete results object; calls o->ops->server_stats if present */
void ycsb_result_json(const struct ycsb_workload *w, const struct ycsb_run_opts *o,
                      const struct ycsb_result *res, const char *mode, struct ycsb_json *j);
/* one phase's members (used by ycsb_result_json; exposed for other modes) */
void ycsb_phase_json(const struct ycsb_phase_result *p, struct ycsb_json *j, const char *key);

#endif
