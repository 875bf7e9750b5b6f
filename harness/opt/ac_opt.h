/* libacopt: offline reference hit counts for a request trace.
 *
 *  - Belady's OPT for unit-size objects, two variants: demand (every miss is
 *    fetched into the cache) and bypass (MIN may decline to admit);
 *  - exact LRU for every capacity at once (Mattson stack distances);
 *  - for variable sizes, where exact OPT is NP-hard: the PFOO-L lower bound on
 *    misses and a size-aware Belady heuristic (a feasible policy, so an upper
 *    bound on the optimal number of misses).
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

/* One backward pass: next[i] = index of the next request to the same key, or
 * AC_NONE. Also counts distinct keys (= cold misses). */
struct ac_nextuse *ac_nextuse_build(const struct ac_trace *t, uint64_t limit,
                                    char *err, size_t errlen);
void ac_nextuse_free(struct ac_nextuse *nu);
uint64_t ac_nextuse_distinct(const struct ac_nextuse *nu);
uint64_t ac_nextuse_requests(const struct ac_nextuse *nu);
const uint32_t *ac_nextuse_array(const struct ac_nextuse *nu);
/* Bytes held by a next-use array of n requests (for memory planning). */
uint64_t ac_nextuse_bytes(uint64_t n);

/* Belady's OPT, unit sizes: hits[k] for capacity caps[k] (objects, >= 1). */
int ac_opt_unit(const struct ac_nextuse *nu, const uint64_t *caps, size_t ncaps,
                int bypass, uint64_t limit, uint64_t *hits, char *err, size_t errlen);

/* LRU stack-distance histogram: hist[d] (d = 0 .. distinct-1) = number of
 * reuses with d distinct other keys since the previous access. LRU with
 * capacity c hits exactly sum_{d < c} hist[d]. */
int ac_lru_hist(const struct ac_nextuse *nu, uint64_t limit, uint64_t *hist,
                char *err, size_t errlen);

/* Variable sizes, capacities in bytes. PFOO-L: hits[k] is an upper bound on
 * the hits (so requests - hits a lower bound on the misses) of any policy. */
int ac_pfoo_l(const struct ac_trace *t, const struct ac_nextuse *nu, const uint64_t *caps,
              size_t ncaps, uint64_t limit, uint64_t *hits, char *err, size_t errlen);
/* Size-aware Belady (farthest next use first, with bypass): hits of a
 * feasible policy, a lower bound on the optimal hits. */
int ac_size_belady(const struct ac_trace *t, const struct ac_nextuse *nu, const uint64_t *caps,
                   size_t ncaps, uint64_t limit, uint64_t *hits, char *err, size_t errlen);

/* Many small traces in one call (tests, sweeps): keys[offsets[j] ..
 * offsets[j+1]) is trace j; hits[j * ncaps + k] is OPT's hit count for
 * caps[k]. No memory limit is applied. */
int ac_opt_batch(const uint64_t *keys, const uint64_t *offsets, size_t ntraces,
                 const uint64_t *caps, size_t ncaps, int bypass, uint64_t *hits,
                 char *err, size_t errlen);

/* MemAvailable from /proc/meminfo in bytes, 0 if unknown. */
uint64_t ac_mem_available(void);

#endif
