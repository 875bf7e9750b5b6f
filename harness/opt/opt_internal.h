/* Definitions shared by the libacopt sources (not part of the public API). */
#ifndef AC_OPT_INTERNAL_H
#define AC_OPT_INTERNAL_H
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include "ac_opt.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "trace records are little-endian; this code reads them in place"
#endif

struct ac_trace {
    const unsigned char *recs;   /* first record */
    size_t stride;               /* bytes per record */
    size_t key_off, size_off;    /* field offsets inside a record */
    size_t op_off;               /* offset of the op byte (has_ops only) */
    int has_ops;                 /* ACTRACE: records carry an op; oracleGeneral: all reads */
    uint64_t n;
    int format;
    uint64_t seed, recordcount;
    char workload[65];
    void *map;                   /* whole file mapping, NULL for memory views */
    size_t map_len;
};

struct ac_nextuse {
    uint32_t *next;      /* next request of the same key, any op (LRU) */
    uint32_t *useful;    /* next[i] if that is a scored read, else AC_NONE (OPT, PFOO-L);
                          * the same array as next when plain */
    uint64_t *scored;    /* bit i: request i is a scored read; NULL: every request is */
    uint64_t *writes;    /* bit i: request i writes (UPDATE, INSERT, RMW); NULL: none does */
    uint64_t n, distinct, score_from, scored_reads, scored_writes, reuses;
};

/* What an op does (valid ops 0..3). */
static inline int ac_op_reads(unsigned op) { return op == AC_OP_READ || op == AC_OP_RMW; }
static inline int ac_op_writes(unsigned op) { return op != AC_OP_READ; }
#define AC_OP_ERROR "ACTRACE ops are 0 read, 1 update, 2 insert, 3 read-modify-write"

static inline uint64_t ac_load64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline uint32_t ac_load32(const unsigned char *p) {
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* printf into err[errlen]; always returns -1 so callers can `return ac_fail(...)`. */
int ac_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* 0 if need <= limit, else -1 with "WHAT needs N bytes (...) but the memory
 * limit is L bytes". */
int ac_mem_check(uint64_t need, uint64_t limit, const char *what, char *err, size_t errlen);
/* Capacities must be >= 1. */
int ac_check_caps(const uint64_t *caps, size_t ncaps, const char *unit, char *err, size_t errlen);

/* Bitmap over request positions. */
static inline int ac_bit_get(const uint64_t *b, uint64_t i) { return (int)((b[i >> 6] >> (i & 63)) & 1u); }
static inline void ac_bit_set(uint64_t *b, uint64_t i) { b[i >> 6] |= (uint64_t)1 << (i & 63); }
static inline void ac_bit_clear(uint64_t *b, uint64_t i) { b[i >> 6] &= ~((uint64_t)1 << (i & 63)); }
static inline uint64_t ac_bitmap_bytes(uint64_t n) { return ((n >> 6) + 1) * 8; }

/* Bytes a next-use structure holds (arrays and bitmaps), for memory checks. */
uint64_t ac_nextuse_held(const struct ac_nextuse *nu);
/* useful[i] = next[i] if request next[i] is a scored read (bit set in
 * `scored`), else AC_NONE; returns the number of finite entries (reuses). */
uint64_t ac_useful_from_next(const uint32_t *next, uint64_t n, const uint64_t *scored,
                             uint32_t *useful);

struct ac_heap;
/* One Belady replay of useful[0..n) with `cap` slots (1 <= cap < distinct);
 * writes: bitmap of the requests that force their key in (NULL: none);
 * bits holds ac_bitmap_bytes(n) bytes, heap has room for 2 * cap entries.
 * Returns the scored read hits. */
uint64_t ac_belady_replay(const uint32_t *useful, const uint64_t *writes, uint64_t n, uint64_t cap,
                          int bypass, uint64_t *bits, struct ac_heap *heap);

/* Bytes the LRU pass allocates for n requests. */
uint64_t ac_lru_bytes(uint64_t n);
/* Sorts a[0..n) ascending (LSD radix sort, 8 bits per pass, skipping passes
 * where every key has the same byte); tmp has room for n keys. */
void ac_radix_sort_u64(uint64_t *a, uint64_t *tmp, uint64_t n);
/* a + b, saturating at UINT64_MAX. */
static inline uint64_t ac_sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
static inline uint64_t ac_sat_mul(uint64_t a, uint64_t b) {
    return (a != 0 && b > UINT64_MAX / a) ? UINT64_MAX : a * b;
}

#endif
