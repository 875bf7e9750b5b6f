/* What policies sieve, s3fifo and wtinylfu know of an item on memcached's per-class
 * list (s3fifo and wtinylfu keep several queues on it, one byte per item says which): the
 * tests a scan makes (an LRU crawler's placeholder, an item a request holds,
 * one leaving), the next real item towards the head, and a 4-byte tag in the
 * header's spare bytes that on_insert sets and on_remove clears, so that a
 * scan counts only items the policy has seen inserted (memcached links an
 * item before it calls on_insert; a fresh chunk holds old bytes; the slab
 * mover's copy holds the tag of the original's address). */
#ifndef AC_QUEUE_ITEMS_H
#define AC_QUEUE_ITEMS_H
/* memcached.h (or the test's stand-in) must be included first. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static inline bool qi_placeholder(item *it) {
    return __atomic_load_n(&it->nbytes, __ATOMIC_RELAXED) == 0 && __atomic_load_n(&it->nkey, __ATOMIC_RELAXED) == 0
           && __atomic_load_n(&it->it_flags, __ATOMIC_RELAXED) == 1;   /* an LRU crawler's */
}

static inline bool qi_in_use(item *it) {
    return __atomic_load_n(&it->refcount, __ATOMIC_RELAXED) > 1;
}

static inline bool qi_linked(item *it) {
    return (__atomic_load_n(&it->it_flags, __ATOMIC_RELAXED) & ITEM_LINKED) != 0;
}

/* The first real item from it towards the head (it included), or NULL. */
static inline item *qi_real_from(item *it) {
    while (it != NULL && qi_placeholder(it))
        it = __atomic_load_n(&it->prev, __ATOMIC_RELAXED);
    return it;
}

/* Under lru_locks[id]: it is linked in list id (lru.c's test: a chunk free
 * or allocated but not linked yet has prev NULL and is no head). */
static inline bool qi_listed(item *it, unsigned int id) {
    item **heads = item_lru_ends(false);
    return qi_linked(it) && it->slabs_clsid == id && (it->prev != NULL || heads[id] == it);
}

static inline uint32_t qi_tag_for(const item *it) {
    uint64_t a = (uint64_t)(uintptr_t)it * 0x9E3779B97F4A7C15ULL;
    return (uint32_t)(a >> 32) | 1u;  /* never 0: cleared bytes never match */
}

/* the tag at byte offset off of the header */
static inline bool qi_tagged(const item *it, size_t off) {
    uint32_t t;
    memcpy(&t, (const uint8_t *)it + off, sizeof(t));
    return t == qi_tag_for(it);
}

static inline void qi_tag_set(item *it, size_t off, bool on) {
    uint32_t t = on ? qi_tag_for(it) : 0;
    memcpy((uint8_t *)it + off, &t, sizeof(t));
}

/* Under lru_locks[id]: it goes on the tail side of at (at NULL: at the tail). */
static inline void qi_link_before(item **heads, item **tails, unsigned int id, item *at, item *it) {
    if (at == NULL) {
        it->next = NULL;
        it->prev = tails[id];
        if (it->prev)
            it->prev->next = it;
        tails[id] = it;
    } else {
        it->prev = at;
        it->next = at->next;
        if (at->next)
            at->next->prev = it;
        else
            tails[id] = it;
        at->next = it;
    }
    if (heads[id] == NULL)
        heads[id] = it;
}

/* The victims of a class's last pick the core left resident: the next pick
 * offers them again first (or releases them to a queue), a hit or a removal
 * takes one out. Guarded by the class's lock. */
#define QI_CHOSEN_MAX 64
struct qi_chosen {
    item *it[QI_CHOSEN_MAX];
    int n;
};

/* it out of the set, if it is there */
static inline void qi_chosen_drop(struct qi_chosen *ch, item *it) {
    for (int i = 0; i < ch->n; i++) {
        if (ch->it[i] == it) {
            ch->it[i] = ch->it[--ch->n];
            return;
        }
    }
}

/* The set moved to prev (QI_CHOSEN_MAX entries) and emptied; returns how many. */
static inline int qi_chosen_take(struct qi_chosen *ch, item **prev) {
    int n = ch->n;
    memcpy(prev, ch->it, (size_t)n * sizeof(item *));
    ch->n = 0;
    return n;
}

/* This pick's n victims (n <= QI_CHOSEN_MAX) become the set. */
static inline void qi_chosen_keep(struct qi_chosen *ch, item **out, int n) {
    memcpy(ch->it, out, (size_t)n * sizeof(item *));
    ch->n = n;
}

#endif
