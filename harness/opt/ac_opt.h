/* libacopt: offline reference hit counts for a request trace.
 *
 *  - Belady's OPT for unit-size objects, two variants: demand (every miss is
 *    fetched into the cache) and bypass (MIN may decline to admit);
 *  - exact LRU for every capacity at once (Mattson stack distances);
 *  - for variable sizes, where exact OPT is NP-hard: the PFOO-L lower bound on
 *    misses and a size-aware Belady heuristic (a feasible policy, so an upper
 *    bound on the optimal number of misses).
 * Writes are write-allocate and only reads from score_from on are scored (the
 * AC_OP_* comment below); every hit count is of those scored reads.
 *
 * All functions report failure by returning -1 (or NULL) and writing a
 * human-readable message into err[errlen]. Memory-hungry steps compare what
 * they need (including what is already held) against `limit` bytes before
 * allocating and fail with a message stating the size. */
#ifndef AC_OPT_H
#define AC_OPT_H
#include <stddef.h>
#include <stdint.h>

#define AC_FMT_AUTO 0
#define AC_FMT_ACTRACE 1
#define AC_FMT_ORACLE 2   /* libCacheSim oracleGeneral */

#define AC_NONE UINT32_MAX            /* "no next use" in next-use arrays */
#define AC_MAX_REQUESTS (UINT32_MAX - 2u)

/* ACTRACE operations (the op byte; oracleGeneral records are all reads).
 * What each one does to the cache (write-allocate; harness/README.md):
 *  READ    of key k at index i: scored when i >= score_from: a hit if k is
 *          cached, else a miss; a miss may bring k in (demand: must).
 *  UPDATE, INSERT: a write: k is in the cache afterwards (something else is
 *          evicted if k is absent and the cache is full); never scored.
 *  RMW     read-modify-write: a READ (scored as above) then a write of k.
 * Requests before score_from drive the cache (load, warm-up) but are not
 * scored. */
#define AC_OP_READ 0
#define AC_OP_UPDATE 1
#define AC_OP_INSERT 2
#define AC_OP_RMW 3

struct ac_trace;      /* a read-only view of requests (mmapped file or memory) */
struct ac_nextuse;    /* next-use array of a trace */

/* Opens and validates a trace file (mmapped read-only). */
struct ac_trace *ac_trace_open(const char *path, int format, char *err, size_t errlen);
/* A view of n records already in memory (layout of `format`, no header);
 * the memory must outlive the view. */
struct ac_trace *ac_trace_from_memory(const void *recs, uint64_t n, int format,
                                      char *err, size_t errlen);
void ac_trace_close(struct ac_trace *t);
uint64_t ac_trace_requests(const struct ac_trace *t);
int ac_trace_format(const struct ac_trace *t);
/* ACTRACE header fields (zero / empty for oracleGeneral). */
void ac_trace_header(const struct ac_trace *t, uint64_t *seed, uint64_t *recordcount,
                     char workload[65]);
uint64_t ac_trace_key(const struct ac_trace *t, uint64_t i);
uint32_t ac_trace_size(const struct ac_trace *t, uint64_t i);
unsigned ac_trace_op(const struct ac_trace *t, uint64_t i);   /* AC_OP_READ for oracleGeneral */

/* One backward pass: next[i] = index of the next request to the same key (any
 * operation), or AC_NONE; and the next *useful* request: next[i] if that is a
 * scored read (READ or RMW at index >= score_from), else AC_NONE. Checks every
 * op code (0..3). Counts distinct keys, scored reads and scored writes
 * (UPDATE and INSERT at index >= score_from; an RMW counts as a read), and
 * the reuses (scored reads of a key requested before: hits of an unbounded
 * cache). score_from <= requests. */
struct ac_nextuse *ac_nextuse_build(const struct ac_trace *t, uint64_t score_from, uint64_t limit,
                                    char *err, size_t errlen);
void ac_nextuse_free(struct ac_nextuse *nu);
uint64_t ac_nextuse_distinct(const struct ac_nextuse *nu);
uint64_t ac_nextuse_requests(const struct ac_nextuse *nu);
uint64_t ac_nextuse_score_from(const struct ac_nextuse *nu);
uint64_t ac_nextuse_scored_reads(const struct ac_nextuse *nu);
uint64_t ac_nextuse_scored_writes(const struct ac_nextuse *nu);
uint64_t ac_nextuse_reuses(const struct ac_nextuse *nu);   /* scored reads - cold misses */
const uint32_t *ac_nextuse_array(const struct ac_nextuse *nu);
const uint32_t *ac_nextuse_useful_array(const struct ac_nextuse *nu);
/* Bytes held by a next-use array of n requests (for memory planning). */
uint64_t ac_nextuse_bytes(uint64_t n);

/* Belady's OPT, unit sizes, write-allocate (belady.c): hits[k] = scored read
 * hits for capacity caps[k] (objects, >= 1). */
int ac_opt_unit(const struct ac_nextuse *nu, const uint64_t *caps, size_t ncaps,
                int bypass, uint64_t limit, uint64_t *hits, char *err, size_t errlen);

/* LRU stack-distance histogram over scored reads: every request (write or
 * read) is an access that moves its key to the top of the stack; hist[d]
 * (d = 0 .. distinct-1) = number of scored reads with d distinct other keys
 * accessed since the previous access to their key. A write-allocating LRU
 * cache of c objects hits exactly sum_{d < c} hist[d] scored reads. */
int ac_lru_hist(const struct ac_nextuse *nu, uint64_t limit, uint64_t *hist,
                char *err, size_t errlen);

/* Variable sizes, capacities in bytes; only scored reads count. PFOO-L:
 * hits[k] is an upper bound on the scored hits (so scored reads - hits a
 * lower bound on the misses) of any policy, write-allocating or not. */
int ac_pfoo_l(const struct ac_trace *t, const struct ac_nextuse *nu, const uint64_t *caps,
              size_t ncaps, uint64_t limit, uint64_t *hits, char *err, size_t errlen);
/* Size-aware Belady (farthest next use first, with bypass for reads, forced
 * placement for writes): hits of a feasible write-allocating policy (an
 * object larger than the whole cache cannot be held and is written around),
 * a lower bound on the optimal hits. */
int ac_size_belady(const struct ac_trace *t, const struct ac_nextuse *nu, const uint64_t *caps,
                   size_t ncaps, uint64_t limit, uint64_t *hits, char *err, size_t errlen);

/* Many small traces in one call (tests, sweeps): keys[offsets[j] ..
 * offsets[j+1]) is trace j, ops[...] the same slice of op codes (ops NULL:
 * all reads), score_from[j] its first scored index, relative to the trace
 * (score_from NULL: 0); hits[j * ncaps + k] is OPT's scored hit count for
 * caps[k]. No memory limit is applied. */
int ac_opt_batch(const uint64_t *keys, const uint8_t *ops, const uint64_t *offsets,
                 const uint64_t *score_from, size_t ntraces, const uint64_t *caps, size_t ncaps,
                 int bypass, uint64_t *hits, char *err, size_t errlen);

/* MemAvailable from /proc/meminfo in bytes, 0 if unknown. */
uint64_t ac_mem_available(void);

#endif
