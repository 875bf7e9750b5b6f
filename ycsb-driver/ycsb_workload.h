/* A YCSB CoreWorkload: the generators built from a configuration, and the
 * per-thread operation stream.
 *
 * How work is split (the determinism contract).  Each phase's operations are
 * numbered 0..N-1 and cut into chunks of YCSB_CHUNK_OPS.  Chunk c of phase p
 * draws from its own RNG stream ycsb_rng_seed(seed, p << 40 | c), whichever
 * thread runs it; threads take chunks from a shared counter.  Hence:
 *  - load: the set of inserted keys (insertstart + i) never depends on threads;
 *  - warm-up and run without inserts: the multiset of (op, key) requests is
 *    the same for any thread count (the order between threads is not);
 *  - with insertproportion > 0 the key of an insert is the next value of the
 *    shared insert counter and reads only choose keys whose insert was
 *    acknowledged, as in YCSB, so with threads > 1 the keys depend on timing.
 *    ycsb-trace is single-threaded and therefore always reproducible.
 * Window w of runwindows (w >= 1) draws each chunk from the run's stream of
 * seed + w, so it sends the requests of a run with that seed (op numbers
 * included).
 * Op numbers continue from warm-up into run (run op i is op warmup+i), which
 * is what requestdistribution=sequential and value versions use.
 *
 * Differences from YCSB kept on purpose (README): key numbers are 64-bit
 * (YCSB truncates to int); requestdistribution=exponential is not ported. */
#ifndef YCSB_WORKLOAD_H
#define YCSB_WORKLOAD_H

#include <stdint.h>
#include "ycsb_backend.h"
#include "ycsb_config.h"
#include "ycsb_gen.h"
#include "ycsb_replay.h"

#define YCSB_CHUNK_OPS 1024

enum ycsb_phase { YCSB_PHASE_LOAD = 0, YCSB_PHASE_WARMUP = 1, YCSB_PHASE_RUN = 2 };

struct ycsb_workload {
    struct ycsb_config cfg;          /* finished (ycsb_config_finish) */
    size_t value_size;
    struct ycsb_discrete opchooser;  /* READ, UPDATE, INSERT, RMW in YCSB's order */
    /* key chooser templates, copied into each ycsb_opgen */
    struct ycsb_scrambled scrambled;
    struct ycsb_latest latest;
    struct ycsb_uniform uniform;
    struct ycsb_hotspot hotspot;
    struct ycsb_truezipf truezipf;   /* read-only after init: shared, not copied */
    /* a scan's length: CoreWorkload's scanlength, UniformLongGenerator or
     * ZipfianGenerator (constant 0.99) over [minscanlength, maxscanlength] */
    struct ycsb_uniform scanlen_uniform;
    struct ycsb_zipfian scanlen_zipfian;
    /* shared: YCSB's transactioninsertkeysequence, starts at recordcount */
    struct ycsb_ackcounter inserts;
    /* a replayed trace (ycsb_replay.h), split already, or NULL: then the
     * warm-up is its first replay->warmup requests and the run the rest,
     * nothing is loaded, value_size is the trace's largest size */
    const struct ycsb_replay *replay;
};

struct ycsb_op {
    int type;           /* enum ycsb_op_type */
    int64_t keynum;
    uint64_t version;   /* value version: 0 = load, 1 + op number afterwards */
    uint32_t size;      /* a replayed request's size (else the workload's value_size) */
    uint32_t scanlen;   /* a scan: the keys it reads, keynum onwards in load order
                         * (drawn as YCSB does, then cut at the last inserted key) */
};

/* one thread's generator state */
struct ycsb_opgen {
    struct ycsb_workload *w;
    struct ycsb_rng rng;
    struct ycsb_scrambled scrambled;
    struct ycsb_latest latest;
    struct ycsb_zipfian scanlen;
    int phase;
    uint64_t next_index;  /* op number of the next op in this phase */
    unsigned part;        /* a trace split over threads: this thread's share */
    uint64_t window;      /* the run's window (runwindows): chunks draw with seed + window */
};

/* cfg must have passed ycsb_config_finish.  0, or -1 with err. */
int ycsb_workload_init(struct ycsb_workload *w, const struct ycsb_config *cfg, char *err,
                       size_t errlen);
void ycsb_workload_destroy(struct ycsb_workload *w);
/* number of operations of a phase */
uint64_t ycsb_workload_phase_ops(const struct ycsb_workload *w, int phase);

/* a replayed trace split over threads: the driver thread's own requests
 * (ycsb_replay.h), so each thread counts its own chunks */
int ycsb_workload_partitioned(const struct ycsb_workload *w);
/* operations of a phase for this generator (its share of a split trace) */
uint64_t ycsb_opgen_phase_ops(const struct ycsb_opgen *g, int phase);
/* the value length of a write or refill of op */
size_t ycsb_op_vlen(const struct ycsb_workload *w, const struct ycsb_op *op);

/* (the run loop sets g->part to the driver thread's index) */
void ycsb_opgen_init(struct ycsb_opgen *g, struct ycsb_workload *w);
/* position at the start of chunk `chunk` of `phase` (reseeds the stream) */
void ycsb_opgen_chunk(struct ycsb_opgen *g, int phase, uint64_t chunk);
/* the next operation of the current phase */
void ycsb_opgen_next(struct ycsb_opgen *g, struct ycsb_op *op);
/* after the store finished `op`: acknowledges a run-phase insert.
 * 0, or -1 when more than 2^20 inserts are unacknowledged. */
int ycsb_opgen_done(struct ycsb_opgen *g, const struct ycsb_op *op);

#endif
