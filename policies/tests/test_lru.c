/* Unit test of policy "lru" (policies/lru.c) on scripted access sequences:
 * victims come coldest first and follow every access exactly; with
 * ac_lru_sample=N only every Nth access reorders; LRU-crawler placeholders and
 * items a request holds are never offered; block-mates merged back unrequested
 * go to the LRU end; metadata is 16 bytes per resident item. The item lists are the
 * small stand-in of tests/fake/memcached.h (head = MRU, tail = LRU). */
#include "memcached.h"
#include "../core/ac_policy.h"
#include "../policy/test_hooks.h"
#include "../core/ac_services.h"

extern const struct ac_policy_ops ac_policy_lru;   /* the policy under test (core/ac_components.def lists it) */
#include "../policy/lru_list.h"
#include "check.h"
#include "set_option.h"
#include "victims.h"
#include <stdarg.h>
#include <string.h>

pthread_mutex_t lru_locks[POWER_LARGEST];
volatile rel_time_t current_time = 100;
static unsigned page_epoch;
unsigned ac_page_epoch(void) {
    return page_epoch;
}
struct stats_state stats_state;
static item *heads[POWER_LARGEST], *tails[POWER_LARGEST];

static void link_q(item *it) {
    ac_list_link(heads, tails, it, false);
    it->it_flags |= ITEM_LINKED;
}

static void unlink_q(item *it) {
    ac_list_unlink(heads, tails, it);
    it->it_flags &= ~ITEM_LINKED;
}

item **item_lru_ends(const bool tail) {
    return tail ? tails : heads;
}

static char last_stat[64];
void append_stat(const char *name, ADD_STAT f, void *c, const char *fmt, ...) {
    (void)f;
    (void)c;
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(last_stat, sizeof(last_stat), "%s=", name);
    vsnprintf(last_stat + n, sizeof(last_stat) - n, fmt, ap);
    va_end(ap);
}

static item items[16];

static void reset(int n) {
    memset(heads, 0, sizeof(heads));
    memset(tails, 0, sizeof(tails));
    for (int i = 0; i < n; i++) {
        memset(&items[i], 0, sizeof(items[i]));
        items[i].id = i;
        items[i].nkey = 2;
        items[i].nbytes = 10;
        items[i].slabs_clsid = 1 | COLD_LRU;
        link_q(&items[i]);
        ac_policy_lru.on_insert(&items[i]);
    }
}

#define CHECK_VICTIMS(max, want) CHECK_VICTIMS_OF(&ac_policy_lru, max, want)

static void test_exact(void) {
    set_option(ac_policy_lru.options[0], "ac_lru_batch", 0);
    set_option(ac_policy_lru.options[0], "ac_lru_sample", 1);
    CHECK_EQ(ac_policy_lru.init(), 0);
    reset(6);                                 /* inserted 0..5: 0 is the coldest */
    CHECK_VICTIMS(3, "0 1 2");
    CHECK_VICTIMS(16, "0 1 2 3 4 5");
    ac_policy_lru.on_access(&items[2]);
    ac_policy_lru.on_access(&items[0]);
    CHECK_VICTIMS(16, "1 3 4 5 2 0");
    current_time = 150;
    ac_policy_lru.on_access(&items[1]);
    CHECK_EQ(items[1].time, 150);             /* no 60-second rule: every access counts */
    ac_policy_lru.on_access(&items[1]);       /* already MRU: stays */
    CHECK_VICTIMS(16, "3 4 5 2 0 1");
    for (int round = 0; round < 3; round++)   /* a loop over all: order = loop order */
        for (int i = 5; i >= 0; i--)
            ac_policy_lru.on_access(&items[i]);
    CHECK_VICTIMS(16, "5 4 3 2 1 0");
    /* a removed item is no candidate any more */
    unlink_q(&items[4]);
    ac_policy_lru.on_remove(&items[4]);
    CHECK_VICTIMS(3, "5 3 2");
    /* an LRU crawler's placeholder in the list is skipped */
    item crawler = { .it_flags = 1, .nkey = 0, .nbytes = 0, .slabs_clsid = 1 | COLD_LRU, .id = 99 };
    crawler.prev = tails[1 | COLD_LRU];
    tails[1 | COLD_LRU]->next = &crawler;
    tails[1 | COLD_LRU] = &crawler;
    CHECK_VICTIMS(2, "5 3");
    /* items a request holds (a second reference) are passed over: the ones
     * above them are offered instead */
    items[5].refcount = 2;
    items[3].refcount = 2;
    CHECK_VICTIMS(2, "2 1");
    items[5].refcount = items[3].refcount = 1;
    CHECK_VICTIMS(2, "5 3");
    /* other classes are separate lists */
    item *out[4];
    CHECK_EQ(ac_policy_lru.pick_victims(2, out, 4), 0);
    stats_state.curr_items = 1000;
    CHECK_EQ(ac_policy_lru.metadata_bytes(), 16000);
    ac_policy_lru.stats(NULL, NULL);
    CHECK(strcmp(last_stat, "lru_batch_skipped=0") == 0);
}

static void test_sampled(void) {
    set_option(ac_policy_lru.options[0], "ac_lru_batch", 0);
    set_option(ac_policy_lru.options[0], "ac_lru_sample", 3);
    CHECK_EQ(ac_policy_lru.init(), 0);
    reset(6);
    /* accesses to 0,1,2,3,4,5: the 3rd and the 6th reorder (H-Store aLRU, 1/3) */
    for (int i = 0; i < 6; i++)
        ac_policy_lru.on_access(&items[i]);
    CHECK_VICTIMS(16, "0 1 3 4 2 5");
    ac_policy_lru.on_access(&items[0]);       /* 7th, 8th: no change */
    ac_policy_lru.on_access(&items[1]);
    CHECK_VICTIMS(16, "0 1 3 4 2 5");
    ac_policy_lru.on_access(&items[3]);       /* 9th */
    CHECK_VICTIMS(16, "0 1 4 2 5 3");
    ac_policy_lru.stats(NULL, NULL);
    CHECK(strcmp(last_stat, "lru_batch_skipped=0") == 0);
}

/* Block-mates a block merge brought back without a request go to the LRU
 * end (H-Store, DeBrabant et al. VLDB 2013 §3.4): they are the next victims, in the order they
 * were merged (the last merged is the coldest), ahead of every item inserted
 * or accessed before; an access afterwards makes one MRU as usual. */
static void test_merged_cold_end(void) {
    set_option(ac_policy_lru.options[0], "ac_lru_batch", 0);
    set_option(ac_policy_lru.options[0], "ac_lru_sample", 1);
    CHECK_EQ(ac_policy_lru.init(), 0);
    reset(8);                                 /* 0 coldest .. 7 */
    /* a fetch linked 5 (requested: MRU) and merged 6 and 7 from its block */
    ac_policy_lru.on_access(&items[5]);
    ac_policy_lru.on_merged(&items[6]);
    ac_policy_lru.on_merged(&items[7]);
    CHECK_VICTIMS(16, "7 6 0 1 2 3 4 5");
    CHECK_VICTIMS(2, "7 6");
    /* already the tail: stays; the only item of a list: stays */
    ac_policy_lru.on_merged(&items[7]);
    CHECK_VICTIMS(3, "7 6 0");
    ac_policy_lru.on_access(&items[6]);       /* asked for later: MRU */
    CHECK_VICTIMS(16, "7 0 1 2 3 4 5 6");
    /* head and tail pointers stay consistent when the head is merged */
    ac_policy_lru.on_merged(&items[6]);
    CHECK_VICTIMS(16, "6 7 0 1 2 3 4 5");
    CHECK(heads[1 | COLD_LRU] == &items[5] && items[5].prev == NULL);
    CHECK(tails[1 | COLD_LRU] == &items[6] && items[6].next == NULL);
    reset(1);
    ac_policy_lru.on_merged(&items[0]);
    CHECK(heads[1 | COLD_LRU] == &items[0] && tails[1 | COLD_LRU] == &items[0]);
    CHECK(items[0].prev == NULL && items[0].next == NULL);
}

/* Batched moves (ac_lru_batch=B): the order changes only when the buffer
 * fills, or before the thread links, merges or picks victims, and then it is
 * the order strict LRU has after the same events; stale entries (unlinked, a
 * chunk used by another item, an old page epoch) are skipped. */
static void test_batched(void) {
    set_option(ac_policy_lru.options[0], "ac_lru_sample", 1);
    set_option(ac_policy_lru.options[0], "ac_lru_batch", 4);
    CHECK_EQ(ac_policy_lru.init(), 0);
    reset(8);                                 /* 0 coldest .. 7 */
    ac_policy_lru.on_access(&items[2]);
    ac_policy_lru.on_access(&items[0]);
    ac_policy_lru.on_access(&items[5]);
    CHECK(tails[1 | COLD_LRU] == &items[0]);  /* three buffered: the list is as inserted */
    ac_policy_lru.on_access(&items[2]);       /* the fourth: applied in access order */
    CHECK(tails[1 | COLD_LRU] == &items[1] && heads[1 | COLD_LRU] == &items[2]);
    CHECK_VICTIMS(16, "1 3 4 6 7 0 5 2");     /* strict LRU after 2 0 5 2 */
    /* a pick applies the thread's buffered accesses first */
    ac_policy_lru.on_access(&items[1]);
    ac_policy_lru.on_access(&items[3]);
    CHECK_VICTIMS(3, "4 6 7");
    /* a link after buffered accesses stays the newest */
    ac_policy_lru.on_access(&items[4]);
    unlink_q(&items[6]);
    ac_policy_lru.on_remove(&items[6]);
    link_q(&items[6]);                        /* memcached links at the MRU end ... */
    ac_policy_lru.on_insert(&items[6]);       /* ... and the buffered 4 goes before it */
    CHECK_VICTIMS(16, "7 0 5 2 1 3 4 6");
    /* a merge applies them too, then goes to the LRU end */
    ac_policy_lru.on_access(&items[7]);
    ac_policy_lru.on_merged(&items[3]);
    CHECK_VICTIMS(16, "3 0 5 2 1 4 6 7");
    /* skipped: an item unlinked since; a chunk now holding another item (its
     * CAS differs); everything taken before the page epoch moved */
    for (int i = 0; i < 8; i++)
        items[i].it_flags |= ITEM_CAS;        /* CAS 0 each: as accessed */
    ac_policy_lru.on_access(&items[0]);
    ac_policy_lru.on_access(&items[5]);
    unlink_q(&items[0]);
    ac_policy_lru.on_remove(&items[0]);
    items[5].data->cas = 77;                  /* freed and linked again as another item */
    CHECK_VICTIMS(16, "3 5 2 1 4 6 7");       /* neither moved */
    ac_policy_lru.on_access(&items[3]);
    page_epoch++;
    CHECK_VICTIMS(16, "3 5 2 1 4 6 7");       /* dropped unread */
    ac_policy_lru.on_access(&items[3]);
    CHECK_VICTIMS(16, "5 2 1 4 6 7 3");       /* a new epoch's entry applies */
    /* a chunk allocated but not linked into the list yet (prev NULL, no head) */
    item fresh = { .it_flags = ITEM_LINKED, .slabs_clsid = 1 | COLD_LRU, .id = 98 };
    ac_policy_lru.on_access(&fresh);
    CHECK_VICTIMS(16, "5 2 1 4 6 7 3");
    ac_policy_lru.stats(NULL, NULL);
    CHECK(strcmp(last_stat, "lru_batch_skipped=4") == 0);
}

int main(void) {
    for (int i = 0; i < POWER_LARGEST; i++)
        pthread_mutex_init(&lru_locks[i], NULL);
    test_exact();
    test_sampled();
    test_merged_cold_end();
    test_batched();
    return check_report("test_lru");
}
