/* Unit test of policy "alru" (policies/alru.c) under a scripted clock and a
 * scripted sampler: the clock bits live in the item header's spare bytes; each
 * victim is the most idle candidate of the pool, which keeps its candidates
 * across rounds; removed or reused chunks and free chunks are never offered;
 * a chunk of a chunked item offers its header; idle time wraps around the
 * clock; a block-mate merged back unrequested is the most idle; a freed
 * slab page (the page epoch moved on)
 * empties the pools unread; metadata is the clock bits plus the pools. */
#include "memcached.h"
#include "../core/ac_policy.h"
#include "../core/ac_services.h"
#include "../policy/test_hooks.h"

extern const struct ac_policy_ops ac_policy_alru;   /* the policy under test (core/ac_components.def lists it) */
#include "check.h"
#include "set_option.h"
#include "stats_capture.h"
#include "victims.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

pthread_mutex_t lru_locks[POWER_LARGEST];
volatile rel_time_t current_time;
struct stats_state stats_state;

item **item_lru_ends(const bool tail) { (void)tail; return NULL; }


uint32_t hash(const void *key, size_t length) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < length; i++)
        h = (h ^ ((const unsigned char *)key)[i]) * 16777619u;
    return h;
}

/* the page epoch (ac_budget.c): moves on when a slab page is freed */
static unsigned epoch;
unsigned ac_page_epoch(void) { return epoch; }

/* the scripted clock */
static uint32_t now;
static uint32_t scripted_clock(void) { return now; }

/* the scripted sampler: class 1's chunks, handed out in the order of `order` */
#define NITEMS 16
static item items[NITEMS];
static int order[256], norder, next_sample;
/* chunks of chunked items in class 1's pages: `order` entries 100 + j */
static unsigned char chunk_mem[4][64] __attribute__((aligned(8)));
static item_chunk *chunk(int j) {
    return (item_chunk *)(void *)chunk_mem[j];
}

void *slabs_chunk_sample(const unsigned int id, const uint64_t rnd) {
    (void)rnd;
    if (id != 1 || norder == 0)
        return NULL;
    int k = order[next_sample++ % norder];
    return k >= 100 ? (void *)chunk(k - 100) : (void *)&items[k];
}

static void script(const char *ids) {      /* e.g. "0 1 2" */
    norder = next_sample = 0;
    for (const char *p = ids; *p; ) {
        char *end;
        order[norder++] = (int)strtol(p, &end, 10);
        p = end;
        while (*p == ' ')
            p++;
    }
}

static void make_item(int i, uint32_t at) {
    memset(&items[i], 0, sizeof(items[i]));
    items[i].id = i;
    items[i].nkey = (uint8_t)snprintf(ITEM_key(&items[i]), 16, "key%d", i);
    items[i].slabs_clsid = 1;
    items[i].it_flags = ITEM_LINKED;
    now = at;
    ac_policy_alru.on_insert(&items[i]);
}

#define CHECK_VICTIMS(max, want) CHECK_VICTIMS_OF(&ac_policy_alru, max, want)

static void init(unsigned bits, unsigned samples) {
    set_option(ac_policy_alru.options[0], "ac_alru_bits", bits);
    set_option(ac_policy_alru.options[0], "ac_alru_samples", samples);
    set_option(ac_policy_alru.options[0], "ac_alru_resolution", 1000);
    ac_alru_set_clock(scripted_clock);
    CHECK_EQ(ac_policy_alru.init(), 0);
}

static void test_oldest_sampled_and_pool_kept(void) {
    init(24, 3);
    /* clocks: item i inserted at time 10 * (i + 1) */
    for (int i = 0; i < 8; i++)
        make_item(i, 10 * (uint32_t)(i + 1));
    now = 1000;
    /* round 1 samples 5, 1, 6: the oldest of them is 1 */
    script("5 1 6");
    CHECK_VICTIMS(1, "1");
    /* round 2 samples 7, 4, 3; the pool still holds 5 and 6 from round 1: 3 is the oldest */
    script("7 4 3");
    CHECK_VICTIMS(1, "3");
    /* round 3 samples only young items 7 7 7 (7 is pooled once): 4 from round 2 is older */
    script("7");
    CHECK_VICTIMS(1, "4");
    /* the access clock: item 0 (oldest) is read now, so it becomes the youngest */
    now = 2000;
    ac_policy_alru.on_access(&items[0]);
    /* pool: 5, 6, 7 (old) + 0 (idle 0) + 2 (idle 1970): 2 first, then 5, 6, 7, 0 */
    script("0 2 2");
    CHECK_VICTIMS(5, "2 5 6 7 0");
}

static void test_stale_candidates_skipped(void) {
    init(24, 2);
    for (int i = 0; i < 8; i++)
        make_item(i, 10 * (uint32_t)(i + 1));
    now = 500;
    script("0 1");
    CHECK_VICTIMS(1, "0");                    /* the pool keeps 1 */
    /* 1's chunk is freed and allocated again, for another key */
    make_item(1, 20);
    items[1].nkey = (uint8_t)snprintf(ITEM_key(&items[1]), 16, "other");
    now = 500;
    script("4 5");
    CHECK_VICTIMS(2, "4 5");                  /* the pooled "key1" no longer exists */
    /* a pooled item removed before its turn */
    script("2 3");
    CHECK_VICTIMS(1, "2");                    /* the pool keeps 3 */
    items[3].it_flags = ITEM_SLABBED;
    ac_policy_alru.on_remove(&items[3]);
    script("6 7");
    CHECK_VICTIMS(1, "6");
    /* free chunks, items of other classes and unlinked items are no candidates */
    init(24, 2);
    for (int i = 0; i < 6; i++)
        make_item(i, 1);
    now = 500;
    items[0].it_flags = ITEM_SLABBED;
    items[2].slabs_clsid = 2;
    items[3].it_flags = 0;                    /* allocated, not linked yet */
    script("0 2 3");
    CHECK_VICTIMS(4, "");
    script("0 2 3 4");
    CHECK_VICTIMS(4, "4");                    /* offered once per call */
}

/* A chunked item's header sits in a small class's page but is linked under
 * the class its chunks fill (memcached's do_item_alloc): sampling that class
 * finds chunks, and a chunk in use stands for its header. */
static void test_chunked_item_offered_through_its_chunks(void) {
    init(24, 2);
    for (int i = 0; i < 4; i++)
        make_item(i, 10 * (uint32_t)(i + 1));
    now = 500;
    memset(chunk_mem, 0, sizeof(chunk_mem));
    for (int j = 0; j < 4; j++)
        chunk(j)->it_flags = ITEM_CHUNK;
    chunk(0)->head = &items[2];             /* two chunks of item 2 */
    chunk(1)->head = &items[2];
    chunk(2)->head = &items[3];
    chunk(2)->it_flags = ITEM_CHUNK | ITEM_SLABBED;     /* freed: not followed */
    chunk(3)->head = NULL;                  /* not filled in yet */
    script("100 101");
    CHECK_VICTIMS(2, "2");                  /* item 2 once, not twice */
    script("102 103");
    CHECK_VICTIMS(2, "");
    /* a header that is not linked under this class is no candidate */
    items[3].slabs_clsid = 2;
    chunk(2)->it_flags = ITEM_CHUNK;
    script("102");
    CHECK_VICTIMS(1, "");
}

static void test_pool_dropped_when_a_page_is_freed(void) {
    init(24, 2);
    for (int i = 0; i < 8; i++)
        make_item(i, 10 * (uint32_t)(i + 1));
    now = 500;
    script("0 1");
    CHECK_VICTIMS(1, "0");                    /* the pool keeps 1 */
    script("5");
    CHECK_VICTIMS(2, "1 5");                  /* pooled 1 (idle 480) before 5 (idle 440) */
    make_item(1, 20);
    script("0 1");
    CHECK_VICTIMS(1, "0");                    /* the pool keeps 1 again */
    /* a slab page was freed: pooled pointers are dropped without being read */
    epoch++;
    script("5");
    CHECK_VICTIMS(2, "5");
}

static void test_clock_wraps(void) {
    init(22, 2);
    const uint32_t max = (1u << 22) - 1;
    make_item(0, max - 5);                    /* accessed just before the wrap */
    make_item(1, 3);                          /* after it */
    now = 10;
    script("1 0");
    CHECK_VICTIMS(1, "0");                    /* idle 15 beats idle 7 */
    /* the clock is kept in 22 bits: a larger clock value is masked */
    now = max + 1 + 7;
    ac_policy_alru.on_access(&items[1]);
    now = 9;
    script("1");
    item *out[1];
    CHECK_EQ(ac_policy_alru.pick_victims(1, out, 1), 1);
    /* bytes 42..44 of the header hold the clock, little-endian: 7 */
    const uint8_t *pad = (const uint8_t *)&items[1] + offsetof(item, nkey) + 1;
    CHECK_EQ(pad[0] | pad[1] << 8 | pad[2] << 16, 7);
    CHECK_EQ(items[1].nkey, 4);               /* the key length next to it is intact */
}

/* A block-mate merged back unrequested gets the clock value just after now:
 * the largest idle time the clock can show, so it beats an item inserted
 * long ago; an access afterwards makes it the freshest. */
static void test_merged_item_is_the_most_idle(void) {
    init(22, 3);
    const uint32_t max = (1u << 22) - 1;
    make_item(0, 1);                          /* idle 999 at 1000 */
    make_item(1, 990);                        /* idle 10 */
    make_item(2, 1000);
    now = 1000;
    ac_policy_alru.on_merged(&items[2]);
    script("0 1 2");
    CHECK_VICTIMS(1, "2");
    const uint8_t *pad = (const uint8_t *)&items[2] + offsetof(item, nkey) + 1;
    CHECK_EQ(pad[0] | pad[1] << 8 | pad[2] << 16, 1001);
    /* at the wrap: now = max gives clock 0 */
    init(22, 3);
    make_item(0, 5);                          /* idle max - 5 at max */
    make_item(2, max);
    now = max;
    ac_policy_alru.on_merged(&items[2]);      /* idle max */
    script("0 2");
    CHECK_VICTIMS(1, "2");
    CHECK_EQ(pad[0] | pad[1] << 8 | pad[2] << 16, 0);
    /* asked for later: the freshest */
    init(22, 3);
    make_item(0, 1);
    make_item(2, 50);
    now = 50;
    ac_policy_alru.on_merged(&items[2]);
    ac_policy_alru.on_access(&items[2]);
    script("0 2");
    CHECK_VICTIMS(1, "0");
}

static void test_metadata_and_stats(void) {
    init(22, 5);
    stats_state.curr_items = 1000;
    size_t pools = ac_policy_alru.metadata_bytes() - (1000 * 22 + 7) / 8;
    CHECK(pools > 0 && pools <= MAX_NUMBER_OF_SLAB_CLASSES * (16 * 16 + 16));
    last_stats[0] = '\0';
    ac_policy_alru.stats(NULL, NULL);
    CHECK(strstr(last_stats, "alru_bits=22 ") != NULL);
    CHECK(strstr(last_stats, "alru_samples=5 ") != NULL);
    CHECK(strstr(last_stats, "alru_resolution_ns=1000 ") != NULL);
}

int main(void) {
    test_oldest_sampled_and_pool_kept();
    test_stale_candidates_skipped();
    test_chunked_item_offered_through_its_chunks();
    test_pool_dropped_when_a_page_is_freed();
    test_clock_wraps();
    test_merged_item_is_the_most_idle();
    test_metadata_and_stats();
    return check_report("test_alru");
}
