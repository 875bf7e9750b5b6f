/* The cold store of cold.h: the tuple store behind a Bloom filter, with the
 * filter's answers counted (lookups, negatives, false positives) and its
 * rebuild from the on-disk index. */
#include "cold.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define BLOOM_FP 0.01

size_t ac_cold_bloom_bytes_for(size_t bloom_keys) {
    return 2 * ac_bloom_bytes_for(bloom_keys, BLOOM_FP);
}

int ac_cold_open(struct ac_cold *c, const char *dir, size_t bloom_keys, size_t seg_bytes, char *err, size_t errlen) {
    memset(c, 0, sizeof(*c));
    if (ac_bloom_init(&c->filters[0], bloom_keys, BLOOM_FP) != 0
            || ac_bloom_init(&c->filters[1], bloom_keys, BLOOM_FP) != 0) {
        snprintf(err, errlen, "cannot allocate two Bloom filters for %zu keys", bloom_keys);
        ac_bloom_destroy(&c->filters[0]);
        return -1;
    }
    c->store = ac_tuple_open(dir, seg_bytes, err, errlen);
    if (c->store == NULL) {
        ac_bloom_destroy(&c->filters[0]);
        ac_bloom_destroy(&c->filters[1]);
        return -1;
    }
    pthread_mutex_init(&c->lock, NULL);
    return 0;
}

int ac_cold_put(struct ac_cold *c, uint64_t fp, const void *rec, size_t len, struct ac_loc *loc) {
    pthread_mutex_lock(&c->lock);
    int rc = ac_tuple_put(c->store, fp, rec, len, loc);
    if (rc == 0)
        ac_bloom_add(&c->filters[c->cur], fp);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

bool ac_cold_maybe(struct ac_cold *c, uint64_t fp) {
    pthread_mutex_lock(&c->lock);
    bool m = ac_bloom_may_contain(&c->filters[c->cur], fp);
    pthread_mutex_unlock(&c->lock);
    return m;
}

int ac_cold_find(struct ac_cold *c, uint64_t fp, struct ac_loc *out, int max) {
    pthread_mutex_lock(&c->lock);
    bool m = ac_bloom_may_contain(&c->filters[c->cur], fp);
    c->lookups++;
    if (!m)
        c->negatives++;
    pthread_mutex_unlock(&c->lock);
    if (!m)
        return 0;
    int n = ac_tuple_find(c->store, fp, out, max);
    if (n == 0)
        __atomic_add_fetch(&c->false_positives, 1, __ATOMIC_RELAXED);
    return n;
}

int ac_cold_get(struct ac_cold *c, const struct ac_loc *loc, void *buf) {
    return ac_tuple_get(c->store, loc, buf);
}

int ac_cold_remove(struct ac_cold *c, uint64_t fp, const struct ac_loc *loc) {
    return ac_tuple_remove(c->store, fp, loc);
}

static void add_fp(uint64_t fp, void *arg) {
    ac_bloom_add(arg, fp);
}

long ac_cold_rebuild(struct ac_cold *c) {
    pthread_mutex_lock(&c->lock);      /* no put runs meanwhile */
    struct ac_bloom *next = &c->filters[1 - c->cur];
    ac_bloom_clear(next);
    long n = ac_tuple_foreach(c->store, add_fp, next);
    if (n >= 0) {
        c->cur = 1 - c->cur;
        c->rebuilds++;
    }
    pthread_mutex_unlock(&c->lock);
    return n;
}

uint64_t ac_cold_records(struct ac_cold *c) {
    struct ac_tuple_stats st;
    ac_tuple_stats(c->store, &st);
    return st.records;
}

void ac_cold_stats(struct ac_cold *c, struct ac_cold_stats *out) {
    ac_tuple_stats(c->store, &out->store);
    pthread_mutex_lock(&c->lock);
    out->lookups = c->lookups;
    out->negatives = c->negatives;
    out->rebuilds = c->rebuilds;
    out->bloom_capacity = c->filters[0].capacity;
    out->bloom_k = c->filters[0].k;
    out->bloom_bytes = ac_bloom_bytes(&c->filters[0]) + ac_bloom_bytes(&c->filters[1]);
    pthread_mutex_unlock(&c->lock);
    out->false_positives = __atomic_load_n(&c->false_positives, __ATOMIC_RELAXED);
}

void ac_cold_close(struct ac_cold *c) {
    if (c->store == NULL)
        return;
    ac_tuple_close(c->store);
    c->store = NULL;
    ac_bloom_destroy(&c->filters[0]);
    ac_bloom_destroy(&c->filters[1]);
    pthread_mutex_destroy(&c->lock);
}
