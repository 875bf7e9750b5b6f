/* The store the driver talks to: an ops table, one per kind of backend.
 *
 * Backends in this directory: the network client (ycsb_net.h: memcached text
 * or meta protocol) and, in the tests, in-memory recorders.  The in-process
 * backend of memcached-ac (threads inside the server calling its item API)
 * implements this same table.
 *
 * Threading.  ycsb_run() starts `threads` driver threads.  Each calls
 * thread_init() once, then only its own operations with the `tctx` it got,
 * then thread_fini().  So per-thread state needs no locking; anything the
 * backend shares between threads (the `backend` pointer) is its own business.
 * server_stats() is called from the thread that called ycsb_run(): before each
 * phase (the driver threads wait at the phase's start gate; the snapshot is
 * the phase's "server_start") and once after every driver thread has finished.
 * phase_begin(), if set, is called from that thread too, before each phase's
 * server_stats(), while the driver threads wait at its gate.
 *
 * Keys are "user..." strings (ycsb_record.h), at most 47 bytes, NUL-terminated
 * (keylen excludes the NUL).  Values are the whole record (fieldcount *
 * fieldlength bytes, binary-safe: valuekind=zeros has NUL bytes); the buffer
 * is only valid during the call.  An update/insert replaces the whole value
 * (memcached `set`): memcached has no field-level update.
 *
 * Return codes of read/update/insert/execute:
 *   YCSB_OK          done (a read sets *hit: YCSB_HIT = the value was returned,
 *                    YCSB_HIT_DISK = returned after a read from the server's
 *                    spill store, only backends that can tell (in-process),
 *                    0 = the key is absent)
 *   YCSB_ERR_OP      this operation failed (e.g. SERVER_ERROR); it is counted
 *                    in the results' "errors" and the run goes on
 *   YCSB_ERR_FATAL   the backend cannot go on (connection lost, protocol
 *                    error); the run stops and error() says why
 *
 * Timing: the driver takes a CLOCK_MONOTONIC time before and after each call
 * (sync mode) -- the backend does not time anything, except in execute().
 *
 * Batched mode (optional, for pipelining).  If execute != NULL and the run's
 * batch size is > 1, the driver instead fills an array of requests and calls
 * execute() once per batch; the backend performs them in any overlapping way
 * it likes (the network backend spreads them over its connections, `depth`
 * in flight on each, keeping each request's order on its connection), sets
 * every request's status/hit and done_ns (CLOCK_MONOTONIC ns at completion).
 * A request's latency is done_ns minus the batch's start.  A READMODIFYWRITE
 * request is a read followed by an update of the same key on one connection.
 *
 * Pipelined batches (optional, with execute): if prepare != NULL, the driver
 * generates the next batch of a chunk before executing the current one and
 * hands it to prepare() first, so the backend can start its slow part (reads
 * of spilled records) while the current batch is served; execute() of the
 * prepared batch follows, with the same array.  A batch that was not prepared
 * (a chunk's first, lookaside refills) is executed as before. */
#ifndef YCSB_BACKEND_H
#define YCSB_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include "ycsb_json.h"

enum { YCSB_OK = 0, YCSB_ERR_OP = 1, YCSB_ERR_FATAL = 2 };

/* *hit of a read */
enum { YCSB_MISS = 0, YCSB_HIT = 1, YCSB_HIT_DISK = 2 };

/* operation types; the numbers 0-3 are the ACTRACE `op` codes. A scan is
 * never handed to a backend nor written to a trace: memcached has no range
 * scan, and the driver counts each one as not implemented, as YCSB's
 * memcached binding answers NOT_IMPLEMENTED (ycsb_run.h). */
enum ycsb_op_type {
    YCSB_OP_READ = 0,
    YCSB_OP_UPDATE = 1,
    YCSB_OP_INSERT = 2,
    YCSB_OP_RMW = 3,     /* read-modify-write */
    YCSB_OP_SCAN = 4,
    YCSB_OP_DELETE = 5,  /* only a replayed trace (ycsb_replay.h) deletes */
    YCSB_OP_TYPES = 6
};

struct ycsb_req {
    int op;                 /* enum ycsb_op_type */
    const char *key;
    size_t keylen;
    const char *value;      /* update/insert/rmw: the new value */
    size_t vlen;
    /* filled by execute(): */
    int status;             /* YCSB_OK / YCSB_ERR_OP */
    int hit;                /* read/rmw: YCSB_HIT, YCSB_HIT_DISK or YCSB_MISS */
    uint64_t done_ns;       /* CLOCK_MONOTONIC ns when the last response arrived */
};

struct ycsb_backend_ops {
    const char *name;      /* e.g. "memcached-text"; reported in the results */
    /* per driver thread; index is 0..threads-1.  Return 0, or -1 and write a
     * reason to err. */
    int (*thread_init)(void *backend, unsigned thread_index, void **tctx, char *err,
                       size_t errlen);
    void (*thread_fini)(void *tctx);
    int (*read)(void *tctx, const char *key, size_t keylen, int *hit);
    int (*update)(void *tctx, const char *key, size_t keylen, const char *value, size_t vlen);
    int (*insert)(void *tctx, const char *key, size_t keylen, const char *value, size_t vlen);
    /* optional (NULL): batched/pipelined execution, see above.  Returns
     * YCSB_OK (per-request status in reqs[i].status) or YCSB_ERR_FATAL. */
    int (*execute)(void *tctx, struct ycsb_req *reqs, size_t n);
    /* optional: the last fatal error of this thread, for the run's message */
    const char *(*error)(void *tctx);
    /* optional: add members describing the server's own counters to the open
     * JSON object `out` (the results' "server" object), e.g.
     *   ycsb_json_u64(out, "get_hits", n);
     *   ycsb_json_begin_object(out, "anticache"); ... ycsb_json_end_object(out);
     * Return 0, or -1 after writing a reason to err (the run still reports). */
    int (*server_stats)(void *backend, struct ycsb_json *out, char *err, size_t errlen);
    /* optional (NULL): pipelined batches, see above.  Returns nothing: a
     * backend that cannot start anything leaves the work to execute(). */
    void (*prepare)(void *tctx, struct ycsb_req *reqs, size_t n);
    /* optional (NULL): what the server holds in RAM now: items, and for a
     * paging server the bytes of its item memory resident (0 otherwise).
     * Called from the thread that called ycsb_run() while a phase runs, so
     * the phase reports time averages (ycsb_run.c).  0, or -1 if unknown. */
    int (*resident)(void *backend, double *items, double *bytes);
    /* optional (NULL): the phase "load", "warmup" or "run" is about to begin
     * (the driver threads wait at its gate, nothing is in flight); it begins
     * when this returns, after the phase's server_stats() snapshot.  The
     * in-process backend tells the server (memcached-ac's policy may prepare
     * for the measured run: ac_log_offline); the network client has no way
     * to and leaves it NULL. */
    void (*phase_begin)(void *backend, const char *phase);
    /* optional (NULL: a replayed trace with deletes is refused): remove the key;
     * *found = 1 if it was there */
    int (*del)(void *tctx, const char *key, size_t keylen, int *found);
    /* optional (NULL): the same, in each driver thread that started (its
     * thread_init succeeded), before it waits at the phase's gate; for what
     * is kept per thread (the in-process backend zeroes callgrind's counts,
     * which callgrind keeps per thread, when the measured run begins) */
    void (*thread_phase_begin)(void *tctx, const char *phase);
};

#endif
