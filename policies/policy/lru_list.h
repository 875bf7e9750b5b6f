/* Moving an item along memcached's per-class LRU list (heads[id] = MRU end,
 * tails[id] = LRU end, item_lru_ends) as do_item_unlink_q / do_item_link_q
 * relink it, without their size accounting (a move does not change it).
 * The caller holds lru_locks[id]. Used by policies lru, sieve and s3fifo and their unit tests. */
#ifndef AC_LRU_LIST_H
#define AC_LRU_LIST_H
/* memcached.h (or the test's stand-in) must be included first. */
#include <stdbool.h>

static inline void ac_list_unlink(item **heads, item **tails, item *it) {
    unsigned int id = it->slabs_clsid;
    if (heads[id] == it)
        heads[id] = it->next;
    if (tails[id] == it)
        tails[id] = it->prev;
    if (it->next)
        it->next->prev = it->prev;
    if (it->prev)
        it->prev->next = it->next;
}

static inline void ac_list_link(item **heads, item **tails, item *it, bool at_tail) {
    unsigned int id = it->slabs_clsid;
    if (at_tail) {
        it->next = NULL;
        it->prev = tails[id];
        if (it->prev)
            it->prev->next = it;
        tails[id] = it;
        if (heads[id] == NULL)
            heads[id] = it;
    } else {
        it->prev = NULL;
        it->next = heads[id];
        if (it->next)
            it->next->prev = it;
        heads[id] = it;
        if (tails[id] == NULL)
            tails[id] = it;
    }
}

#endif
