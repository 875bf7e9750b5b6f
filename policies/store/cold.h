/* The cold side of policy "logging": the tuple store (store/tuple_store.h)
 * behind a Bloom filter (store/bloom.h), with no per-item memory for cold
 * items (Siberia, Levandoski et al. ICDE 2013 §VI-A: an access filter in front
 * of the cold store). A lookup whose filter answer is "absent" costs no I/O; a
 * "maybe" that the on-disk index then does not confirm is a false positive,
 * counted. Records removed from the store keep their filter bits until the
 * next rebuild (ac_cold_rebuild, each classification round), which fills a
 * second filter from a sequential scan of the index and swaps it in, so a
 * lookup never misses a key that is in the store. No memcached dependency. */
#ifndef AC_COLD_H
#define AC_COLD_H
#include <pthread.h>
#include "bloom.h"
#include "tuple_store.h"

struct ac_cold {
    struct ac_tuple_store *store;
    struct ac_bloom filters[2];
    int cur;                       /* filters[cur] is in use, under lock */
    pthread_mutex_t lock;          /* filter choice; a put and its filter add */
    uint64_t lookups, negatives, false_positives, rebuilds;
};

struct ac_cold_stats {
    struct ac_tuple_stats store;
    uint64_t lookups, negatives, false_positives, rebuilds;
    size_t bloom_bytes;            /* both filters */
    size_t bloom_capacity;
    unsigned bloom_k;
};

/* bloom_keys: keys each filter is sized for at 1 % false positives;
 * seg_bytes: the tuple store's segment size (ac_tuple_open). */
int ac_cold_open(struct ac_cold *c, const char *dir, size_t bloom_keys, size_t seg_bytes, char *err, size_t errlen);
/* Bytes of the two filters one would take, for charging before opening. */
size_t ac_cold_bloom_bytes_for(size_t bloom_keys);
int ac_cold_put(struct ac_cold *c, uint64_t fp, const void *rec, size_t len, struct ac_loc *loc);
/* Locations stored under fp (up to max copied), 0 when the filter rules it
 * out, or -errno. */
int ac_cold_find(struct ac_cold *c, uint64_t fp, struct ac_loc *out, int max);
/* Cheap pre-check: the filter alone (no I/O, no counting). */
bool ac_cold_maybe(struct ac_cold *c, uint64_t fp);
int ac_cold_get(struct ac_cold *c, const struct ac_loc *loc, void *buf);
/* 1 removed, 0 not there, -errno */
int ac_cold_remove(struct ac_cold *c, uint64_t fp, const struct ac_loc *loc);
/* Rebuilds the filter from the index; returns the keys added or -errno. */
long ac_cold_rebuild(struct ac_cold *c);
uint64_t ac_cold_records(struct ac_cold *c);
void ac_cold_stats(struct ac_cold *c, struct ac_cold_stats *out);
/* Closes the store (removing its files) and frees the filters. */
void ac_cold_close(struct ac_cold *c);

#endif
