/* The classifier of hot and cold keys (Siberia: Levandoski, Larson, Stoica,
 * "Identifying hot and cold data in main-memory databases", ICDE 2013, §III
 * exponential smoothing, §IV-A forward algorithm). No memcached dependency:
 * keys are 64-bit fingerprints with a size in bytes, so policy "logging" and
 * later policies (effpaging) share it.
 *
 * Time is counted in slices of `slice_len` logged accesses. A key accessed in
 * slice t gets x_t = 1 (several accesses in one slice count once, as in the
 * paper), and its estimate is smoothed lazily:
 *   est_t = alpha * x_t + (1 - alpha)^(t - t_prev) * est_prev     (paper eq. 2)
 * A classification (forward algorithm) decays every estimate to the current
 * slice, sorts the keys by estimate (ties: smaller fingerprint first) and takes
 * the longest prefix whose sizes fit the byte budget: the hot set.
 *
 * The table is open addressing (linear probing) of 24-byte entries. Its
 * capacity (`nslots`, what the owner is charged for) bounds the keys tracked:
 * accesses to new keys beyond 90 % of it are dropped and counted. The table in
 * use grows with the keys (`nuse` slots, doubled at half load up to an eighth
 * of the capacity, then the whole capacity: old and new table together never
 * hold more than the capacity's bytes), so that the work of a round and the
 * cache lines an access touches follow the keys tracked, not the capacity.
 * Each classification drops keys whose estimate has decayed below
 * AC_CLS_FORGET (backward-shift deletion, in place). Not thread-safe: one
 * thread (the classifier thread) owns it. */
#ifndef AC_CLASSIFY_H
#define AC_CLASSIFY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AC_CLS_FORGET 1e-6

struct ac_est {
    uint64_t fp;          /* 0 = empty slot (fingerprint 0 is stored as 1) */
    double est;           /* estimate as of slice `slice` */
    uint32_t slice;       /* last slice it was updated in */
    uint32_t size;        /* bytes (< 2^30); bit 31: hot, bit 30: counted in `slice` */
};

#define AC_CLS_POWERS 512       /* (1 - alpha)^k kept for k below this */

struct ac_classifier {
    struct ac_est *tab;           /* nuse slots */
    uint64_t nslots;              /* the capacity: a power of two */
    uint64_t nuse;                /* slots of the table now: a power of two <= nslots */
    uint64_t count;
    double alpha;
    uint64_t slice_len;
    uint64_t accesses;            /* logged accesses seen */
    /* last classification */
    uint64_t hot_keys, hot_bytes, budget;
    uint64_t rounds, dropped, forgotten;
    uint32_t *order;              /* scratch for sorting, nuse entries */
    bool grow_failed;             /* no memory for a larger table: stay (keys beyond 90 % dropped) */
    double pw[AC_CLS_POWERS];     /* pow(1 - alpha, k) */
};

/* capacity: keys to track (the table gets the next power of two >= capacity / 0.9
 * slots). alpha in (0, 1], slice_len >= 1. 0, or -1 on bad arguments / no memory. */
int ac_cls_init(struct ac_classifier *c, size_t capacity, double alpha, uint64_t slice_len);
void ac_cls_destroy(struct ac_classifier *c);
/* Slots for capacity keys, and the bytes (table + sort scratch) of nslots:
 * what a classifier of that capacity holds at most. */
uint64_t ac_cls_slots_for(size_t capacity);
size_t ac_cls_bytes_for_slots(uint64_t nslots);
/* Memory of the table and the sort scratch now (at most ac_cls_bytes_for_slots(nslots)). */
size_t ac_cls_bytes(const struct ac_classifier *c);
static inline uint64_t ac_cls_slice(const struct ac_classifier *c) {
    return c->accesses / c->slice_len;
}
/* One logged access of key fp whose item takes size bytes. */
void ac_cls_record(struct ac_classifier *c, uint64_t fp, uint32_t size);
/* A hint that fp is recorded soon: its slot is fetched into the cache. */
void ac_cls_prefetch(const struct ac_classifier *c, uint64_t fp);
/* The estimate of fp decayed to the current slice (0 for an unknown key). */
double ac_cls_estimate(const struct ac_classifier *c, uint64_t fp);
/* fp is in the hot set of the last classification. */
bool ac_cls_is_hot(const struct ac_classifier *c, uint64_t fp);
/* Forward algorithm: the hot set for a budget of `budget` bytes. Returns the
 * number of hot keys; c->hot_bytes their bytes. When every key fits the budget
 * they are all hot, and no sort is needed. */
uint64_t ac_cls_classify(struct ac_classifier *c, uint64_t budget);
/* Calls fn for every key of the hot set. */
void ac_cls_foreach_hot(const struct ac_classifier *c, void (*fn)(uint64_t fp, void *arg), void *arg);

#endif
