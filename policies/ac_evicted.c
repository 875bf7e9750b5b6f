#include "ac_evicted.h"
#include <stdlib.h>
#include <string.h>

struct ac_evicted_entry {
    uint64_t fp;
    uint32_t next;     /* chain or free-list link: entry index + 1, 0 = end */
    struct ac_loc loc;
};

uint64_t ac_key_fp(const char *key, size_t nkey) {
    uint64_t h = 0xcbf29ce484222325ULL;            /* FNV-1a 64 offset basis */
    for (size_t i = 0; i < nkey; i++) {
        h ^= (unsigned char)key[i];
        h *= 0x100000001b3ULL;                     /* FNV 64 prime */
    }
    return h;
}

static size_t buckets_for(size_t capacity) {
    size_t n = 1024;
    while (n < capacity)
        n <<= 1;
    return n;
}

size_t ac_evicted_bytes_for(size_t capacity) {
    return capacity * sizeof(struct ac_evicted_entry) + buckets_for(capacity) * sizeof(uint32_t);
}

int ac_evicted_init(struct ac_evicted *t, size_t capacity) {
    memset(t, 0, sizeof(*t));
    if (capacity == 0 || capacity >= UINT32_MAX)
        return -1;
    size_t nb = buckets_for(capacity);
    t->entries = calloc(capacity, sizeof(struct ac_evicted_entry));
    t->buckets = calloc(nb, sizeof(uint32_t));
    if (t->entries == NULL || t->buckets == NULL) {
        free(t->entries);
        free(t->buckets);
        return -1;
    }
    t->mask = nb - 1;
    t->capacity = capacity;
    for (size_t i = 0; i < capacity; i++)
        t->entries[i].next = i + 1 < capacity ? (uint32_t)(i + 2) : 0;
    t->free_head = 1;
    pthread_mutex_init(&t->free_lock, NULL);
    for (int i = 0; i < AC_EVICTED_STRIPES; i++)
        pthread_mutex_init(&t->stripes[i], NULL);
    return 0;
}

void ac_evicted_destroy(struct ac_evicted *t) {
    free(t->entries);
    free(t->buckets);
    t->entries = NULL;
    t->buckets = NULL;
}

static pthread_mutex_t *stripe(struct ac_evicted *t, uint64_t b) {
    return &t->stripes[b & (AC_EVICTED_STRIPES - 1)];
}

int ac_evicted_insert(struct ac_evicted *t, uint64_t fp, const struct ac_loc *loc) {
    pthread_mutex_lock(&t->free_lock);
    uint32_t e = t->free_head;
    if (e == 0) {
        pthread_mutex_unlock(&t->free_lock);
        return -1;
    }
    t->free_head = t->entries[e - 1].next;
    __atomic_add_fetch(&t->count, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&t->free_lock);

    struct ac_evicted_entry *en = &t->entries[e - 1];
    en->fp = fp;
    en->loc = *loc;
    uint64_t b = fp & t->mask;
    pthread_mutex_lock(stripe(t, b));
    en->next = t->buckets[b];
    t->buckets[b] = e;
    pthread_mutex_unlock(stripe(t, b));
    return 0;
}

int ac_evicted_find(struct ac_evicted *t, uint64_t fp, struct ac_loc *out, int max) {
    int n = 0;
    uint64_t b = fp & t->mask;
    pthread_mutex_lock(stripe(t, b));
    for (uint32_t e = t->buckets[b]; e != 0; e = t->entries[e - 1].next) {
        if (t->entries[e - 1].fp == fp) {
            if (n < max)
                out[n] = t->entries[e - 1].loc;
            n++;
        }
    }
    pthread_mutex_unlock(stripe(t, b));
    return n;
}

bool ac_evicted_remove(struct ac_evicted *t, uint64_t fp, const struct ac_loc *loc) {
    uint64_t b = fp & t->mask;
    uint32_t found = 0;
    pthread_mutex_lock(stripe(t, b));
    for (uint32_t *link = &t->buckets[b]; *link != 0; link = &t->entries[*link - 1].next) {
        struct ac_evicted_entry *en = &t->entries[*link - 1];
        if (en->fp == fp && en->loc.block == loc->block && en->loc.offset == loc->offset) {
            found = *link;
            *link = en->next;
            break;
        }
    }
    pthread_mutex_unlock(stripe(t, b));
    if (found == 0)
        return false;
    pthread_mutex_lock(&t->free_lock);
    t->entries[found - 1].next = t->free_head;
    t->free_head = found;
    __atomic_sub_fetch(&t->count, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&t->free_lock);
    return true;
}

size_t ac_evicted_count(struct ac_evicted *t) {
    return __atomic_load_n(&t->count, __ATOMIC_RELAXED);
}
