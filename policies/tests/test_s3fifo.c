/* Unit test of policy "s3fifo" (policy/s3fifo.c) on scripted sequences over
 * the stand-in item lists of tests/fake/memcached.h (head = newest, tail =
 * oldest): an item hit while in the small FIFO moves to the main one (the
 * list's head) when the small FIFO's tail reaches it, one not hit is the
 * victim and its key enters the ghost when it leaves RAM; a key found in the
 * ghost is inserted into main; the ghost holds as many keys as main's share
 * of the resident items; main reinserts an item with a frequency above 0 at
 * its head with one count less; victims come from main while the small FIFO
 * holds less than 10 %; victims the core left are offered again unless hit
 * (then to main); items in use go to main; a merged block-mate is the next
 * victim; a spilled item read back (a disk hit, on_fetched) enters at
 * frequency 0, as S3-FIFO inserts a miss; an item linked before on_insert ran is passed and taken later in
 * its order; an overwrite keeps the queue; metadata is 22 bytes per item
 * plus the ghost and the classes; the ghost's tables agree with a model
 * FIFO through compactions and growth. */
#include "memcached.h"
#include "../core/ac_policy.h"
#include "../core/ac_services.h"

extern const struct ac_policy_ops ac_policy_s3fifo;   /* the policy under test (core/ac_components.def lists it) */
#include "../policy/lru_list.h"
#include "../policy/ghost.h"
#include "check.h"
#include "set_option.h"
#include "stats_capture.h"
#include "victims.h"
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

pthread_mutex_t lru_locks[POWER_LARGEST];
volatile rel_time_t current_time = 100;
struct stats_state stats_state;
static item *heads[POWER_LARGEST], *tails[POWER_LARGEST];

item **item_lru_ends(const bool tail) {
    return tail ? tails : heads;
}

#define L (1 | COLD_LRU)
#define P (&ac_policy_s3fifo)
#define FREQ_AT (offsetof(item, nkey) + 1)
#define QUEUE_AT (offsetof(item, nkey) + 2)
enum { SMALL = 1, MAIN = 2 };
static item items[24];

/* memcached's link at the head, without the hook */
static void link_only(int i, int key) {
    memset(&items[i], 0, sizeof(items[i]));
    items[i].id = i;
    items[i].nkey = (uint8_t)snprintf((char *)items[i].data, sizeof(items[i].data), "k%02d", key);
    items[i].nbytes = 10;
    items[i].refcount = 1;
    items[i].slabs_clsid = L;
    memset((uint8_t *)&items[i] + FREQ_AT, 0xff, 6);   /* a chunk's old bytes */
    ac_list_link(heads, tails, &items[i], false);
    items[i].it_flags |= ITEM_LINKED;
}

/* memcached's link, then the hook; item i holds key "k<key>" */
static void insert_key(int i, int key) {
    link_only(i, key);
    P->on_insert(&items[i]);
}

static void insert(int i) {
    insert_key(i, i);
}

/* memcached's unlink: the hook, then off the list (the core spilled it) */
static void removed(int i) {
    items[i].it_flags &= ~ITEM_LINKED;
    P->on_remove(&items[i]);
    ac_list_unlink(heads, tails, &items[i]);
}

static void hit(int i) {
    P->on_access(&items[i]);
}

/* a request read key back from the tier into item i: the lookup linked it
 * (on_insert), the access hook then counts a disk hit */
static void read_back(int i, int key) {
    insert_key(i, key);
    P->on_fetched(&items[i]);
}

static int freq(int i) {
    return ((uint8_t *)&items[i])[FREQ_AT];
}

static int queue(int i) {
    return ((uint8_t *)&items[i])[QUEUE_AT];
}

static void reset_with(int n, unsigned small, unsigned promote) {
    memset(heads, 0, sizeof(heads));
    memset(tails, 0, sizeof(tails));
    set_option(P->options[0], "ac_s3fifo_small", small);
    set_option(P->options[0], "ac_s3fifo_promote", promote);
    CHECK_EQ(P->init(), 0);
    for (int i = 0; i < n; i++)
        insert(i);
}

static void reset(int n) {
    reset_with(n, 10, 1);
}

/* The list from the tail to the head as test ids, checking every link both ways. */
static const char *order(void) {
    static char s[256];
    s[0] = '\0';
    item *prev = NULL;
    for (item *it = tails[L]; it != NULL; prev = it, it = it->prev) {
        if (it->next != prev) {
            strcat(s, " BROKEN");
            return s;
        }
        snprintf(s + strlen(s), sizeof(s) - strlen(s), s[0] ? " %d" : "%d", it->id);
    }
    if (heads[L] != prev)
        strcat(s, " BADHEAD");
    return s;
}

/* the value of stat name, or -1 */
static long long stat(const char *name) {
    last_stats[0] = '\0';
    P->stats(NULL, NULL);
    char key[64];
    snprintf(key, sizeof(key), "%s=", name);
    const char *p = strstr(last_stats, key);
    return p == NULL ? -1 : atoll(p + strlen(key));
}

#define CHECK_VICTIMS(max, want) CHECK_VICTIMS_OF(P, max, want)
#define CHECK_ORDER(want) do { const char *o_ = order(); \
    if (strcmp(o_, want) == 0) checks_passed++; \
    else { checks_failed++; fprintf(stderr, "%s:%d: list \"%s\", want \"%s\"\n", __FILE__, __LINE__, o_, want); } \
} while (0)

/* The small FIFO: a second access promotes to main at the tail; an item
 * accessed once is the victim, its key enters the ghost as it leaves; a
 * ghost hit inserts into main. */
static void test_small_and_ghost(void) {
    reset(10);                            /* 0 oldest .. 9 newest, all in S */
    CHECK(queue(0) == SMALL && freq(0) == 0);   /* on_insert set the chunk's old bytes */
    hit(0);
    hit(2);
    CHECK_EQ(freq(0), 1);
    CHECK_VICTIMS(1, "1");                /* 0 hit: to M's head; 1 the victim */
    CHECK_ORDER("1 2 3 4 5 6 7 8 9 0");
    CHECK(queue(0) == MAIN && freq(0) == 1);   /* the frequency is kept */
    CHECK_EQ(stat("s3fifo_ghost_items"), 0);   /* not in G before it leaves */
    removed(1);
    CHECK_EQ(stat("s3fifo_ghost_items"), 1);
    CHECK_EQ(stat("s3fifo_small_items"), 8);
    CHECK_EQ(stat("s3fifo_main_items"), 1);
    CHECK_VICTIMS(3, "3 4 5");            /* 2 promoted on the way */
    CHECK_ORDER("3 4 5 6 7 8 9 0 2");
    removed(3);
    removed(4);
    removed(5);
    CHECK_EQ(stat("s3fifo_ghost_items"), 4);
    insert_key(12, 1);                    /* key 1 read back: a ghost hit */
    CHECK_EQ(queue(12), MAIN);
    insert_key(13, 3);
    CHECK_EQ(queue(13), MAIN);
    insert_key(14, 20);                   /* never seen: S */
    CHECK_EQ(queue(14), SMALL);
    CHECK_EQ(stat("s3fifo_ghost_hits"), 2);
    CHECK_EQ(stat("s3fifo_ghost_items"), 2);
    CHECK_EQ(stat("s3fifo_promoted"), 2);
    /* the ghost is as large as M's share: 90 % of the resident items */
    reset(10);
    CHECK_VICTIMS(5, "0 1 2 3 4");
    for (int i = 0; i < 5; i++)
        removed(i);                       /* 5 left resident: G keeps 4 keys, the newest */
    CHECK_EQ(stat("s3fifo_ghost_items"), 4);
    insert_key(10, 0);
    CHECK_EQ(queue(10), SMALL);           /* k00 fell out of G */
    insert_key(11, 1);
    CHECK_EQ(queue(11), MAIN);
    /* ac_s3fifo_promote=2: one hit is not enough */
    reset_with(4, 10, 2);
    hit(0);
    hit(1);
    hit(1);
    CHECK_VICTIMS(2, "0 2");              /* 0 and 2 hit less than twice; 1 to M */
    CHECK_ORDER("0 2 3 1");
}

/* A read-back is S3-FIFO's miss: frequency 0, so S's tail scan takes it
 * where the items hit while in S move to main (as a hit it would be
 * promoted too and M's reinsertions would name 0). A ghost hit read back
 * enters M, at 0 as well; a later hit in RAM counts as any hit. */
static void test_read_back(void) {
    reset(9);
    for (int i = 0; i < 9; i++)
        hit(i);
    read_back(9, 9);
    CHECK(queue(9) == SMALL && freq(9) == 0);
    CHECK_VICTIMS(1, "9");
    CHECK_ORDER("9 0 1 2 3 4 5 6 7 8");
    removed(9);
    read_back(10, 9);                     /* its key was in G */
    CHECK(queue(10) == MAIN && freq(10) == 0);
    hit(10);
    CHECK_EQ(freq(10), 1);
    CHECK_EQ(stat("s3fifo_ghost_hits"), 1);
}

/* Main: an item with a frequency above 0 goes back to main's head with one
 * count less; victims come from main while S holds less than 10 %. */
static void test_main(void) {
    reset(10);
    for (int i = 0; i < 9; i++) {
        hit(i);
        hit(i);
    }
    CHECK_VICTIMS(1, "9");                /* 0..8 promoted in order, 9 the victim */
    removed(9);
    CHECK_ORDER("0 1 2 3 4 5 6 7 8");
    CHECK_EQ(stat("s3fifo_main_items"), 9);
    hit(3);                               /* 3 at frequency 3 */
    CHECK_EQ(freq(3), 3);
    CHECK_VICTIMS(1, "0");                /* two rounds of reinsertions, then 0 at 0 */
    CHECK_EQ(stat("s3fifo_reinserted"), 18);
    CHECK_EQ(freq(3), 1);
    CHECK_EQ(freq(4), 0);
    removed(0);
    CHECK_VICTIMS(4, "1 2 4 5");          /* 3 reinserted once more, to the head */
    CHECK_ORDER("1 2 4 5 6 7 8 3");
    CHECK_EQ(freq(3), 0);
    removed(1);
    removed(2);
    removed(4);
    removed(5);
    CHECK_EQ(stat("s3fifo_victims_main"), 5);
    /* with S at 10 % or more of the class, S gives the victim */
    for (int i = 10; i < 19; i++) {
        if (i < 13)
            hit(6 + i - 10);              /* M: 6 7 8 hit, 3 not */
        insert(i);                        /* S: 10..18 */
    }
    CHECK_EQ(stat("s3fifo_small_items"), 9);
    CHECK_VICTIMS(1, "10");
    removed(10);
    CHECK_VICTIMS(7, "11 12 13 14 15 16 17");
    for (int i = 11; i < 18; i++)
        removed(i);
    CHECK_EQ(stat("s3fifo_small_items"), 1);
    CHECK_EQ(stat("s3fifo_main_items"), 4);
    CHECK_VICTIMS(1, "18");               /* 1 of 5: S */
    removed(18);
    CHECK_VICTIMS(1, "3");                /* S empty: M; 6 7 8 hit, reinserted; 3 not */
    CHECK_ORDER("3 6 7 8");
}

/* Victims the core left are offered first again unless hit meanwhile (then
 * to main's head); an item in use goes to main's head. */
static void test_left_and_in_use(void) {
    reset(6);
    CHECK_VICTIMS(2, "0 1");
    hit(1);                               /* the core left both; 1 hit since */
    CHECK_VICTIMS(2, "0 2");
    CHECK_ORDER("0 2 3 4 5 1");
    CHECK_EQ(queue(1), MAIN);
    CHECK_EQ(stat("s3fifo_released"), 1);
    CHECK_EQ(stat("s3fifo_reoffered"), 1);
    removed(0);
    removed(2);
    items[3].refcount = 2;                /* a request holds 3 */
    CHECK_VICTIMS(1, "4");
    CHECK_EQ(queue(3), MAIN);
    CHECK_EQ(stat("s3fifo_passed_in_use"), 1);
    items[3].refcount = 1;
    CHECK_ORDER("4 5 1 3");
}

/* A merged block-mate is S's next victim; an item linked before on_insert
 * ran is passed over and taken in its turn once inserted; an overwrite keeps
 * the queue with one more count. */
static void test_merged_untagged_overwrite(void) {
    reset(5);
    hit(4);
    P->on_merged(&items[4]);              /* S's cursor at the tail: 4 becomes the tail */
    CHECK_ORDER("4 0 1 2 3");
    CHECK_EQ(freq(4), 0);
    CHECK_VICTIMS(1, "4");
    removed(4);
    CHECK_VICTIMS(1, "0");
    hit(3);
    P->on_merged(&items[3]);              /* at S's cursor (0, left by the core) */
    CHECK_ORDER("3 0 1 2");
    CHECK_VICTIMS(2, "0 3");
    removed(0);
    removed(3);
    reset(3);
    link_only(3, 3);                      /* linked, on_insert to come */
    CHECK_VICTIMS(16, "0 1 2");
    P->on_insert(&items[3]);
    CHECK_VICTIMS(16, "0 1 2 3");
    reset(3);
    hit(1);
    CHECK_VICTIMS(1, "0");
    removed(0);                           /* cursor on 0: moves to 1 */
    removed(1);                           /* an overwrite of key 1: unlink, then link */
    insert_key(5, 1);
    CHECK(queue(5) == SMALL && freq(5) == 2);
    CHECK_EQ(stat("s3fifo_overwrites"), 1);
    CHECK_EQ(stat("s3fifo_ghost_hits"), 0);
    CHECK_VICTIMS(16, "2 5");             /* 5 promoted, reinserted twice at M's head, taken */
    CHECK_ORDER("2 5");
}

/* The cursor on an item that leaves moves to its head-side neighbour, or
 * back to the tail when that one is leaving too. */
static void test_cursor_on_removed_items(void) {
    reset(5);
    hit(0);
    CHECK_VICTIMS(1, "1");                /* 0 to M; S's cursor on 1 */
    items[2].it_flags &= ~ITEM_LINKED;    /* 2 is being unlinked by another thread ... */
    P->on_remove(&items[2]);
    removed(1);                           /* ... when 1 leaves: the cursor goes to the tail */
    ac_list_unlink(heads, tails, &items[2]);
    CHECK_EQ(stat("s3fifo_restarts"), 1);
    CHECK_ORDER("3 4 0");
    CHECK_VICTIMS(1, "3");
    removed(3);
    CHECK_VICTIMS(4, "4 0");              /* S (1 of 2), then M: 0 reinserted once */
}

static void test_metadata(void) {
    reset(0);
    stats_state.curr_items = 0;
    size_t fixed = P->metadata_bytes();
    CHECK_EQ(stat("s3fifo_ghost_bytes"), 1024 * 8 + 2048 * 4);   /* the ring and its table */
    CHECK(fixed > (size_t)stat("s3fifo_ghost_bytes") + MAX_NUMBER_OF_SLAB_CLASSES * sizeof(pthread_mutex_t));
    stats_state.curr_items = 1000;
    CHECK_EQ(P->metadata_bytes(), fixed + 1000 * 22);   /* 16 bytes of links + 6 header bytes */
    /* the ghost grows by doubling and is charged as allocated */
    reset(0);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 24; i++)
            insert(i);
        for (int i = 0; i < 24; i++) {
            item *out[1];
            CHECK_EQ(P->pick_victims(1, out, 1), 1);
            removed(out[0]->id);
        }
    }
    CHECK(stat("s3fifo_ghost_items") <= 21);
    stats_state.curr_items = 0;
}

/* The ghost's tables against a model (a FIFO array without duplicates): a
 * scripted random mix of adds under a moving bound and takes, over a key
 * universe that makes the ring fill with dead entries, compact and grow. */
static void test_ghost_against_model(void) {
    enum { KEYS = 3000, OPS = 40000 };
    static uint64_t model[KEYS];
    int n = 0, mismatches = 0;
    uint64_t rnd = 12345;
    CHECK(ac_ghost_reset());
    for (int op = 0; op < OPS; op++) {
        rnd = rnd * 6364136223846793005ULL + 1442695040888963407ULL;
        uint64_t fp = ((rnd >> 33) % KEYS) * 0x9E3779B97F4A7C15ULL + 7;   /* fingerprints spread */
        int at = -1;
        for (int i = 0; i < n; i++)
            if (model[i] == fp)
                at = i;
        if ((rnd >> 20) % 3 == 0) {           /* a take */
            bool got = ac_ghost_take(fp);
            mismatches += got != (at >= 0);
            if (at >= 0) {
                memmove(&model[at], &model[at + 1], (size_t)(n - at - 1) * sizeof(model[0]));
                n--;
            }
        } else {                              /* an add under a bound moving from 200 to 2500 */
            uint64_t bound = 200 + (uint64_t)(op / 16) % 2300;
            if (at >= 0) {
                memmove(&model[at], &model[at + 1], (size_t)(n - at - 1) * sizeof(model[0]));
                n--;
            }
            model[n++] = fp;
            while ((uint64_t)n > bound) {
                memmove(&model[0], &model[1], (size_t)(n - 1) * sizeof(model[0]));
                n--;
            }
            ac_ghost_add(fp, bound);
        }
        mismatches += ac_ghost_live() != (uint32_t)n;
    }
    CHECK_EQ(mismatches, 0);
    CHECK(ac_ghost_bytes() >= 4096 * 16);     /* grown past 2048 live keys: a ring of 4096 at least */
    for (int i = 0; i < n; i++)               /* every key the model holds is there, then gone */
        CHECK(ac_ghost_take(model[i]));
    CHECK_EQ(ac_ghost_live(), 0);
}

int main(void) {
    for (int i = 0; i < POWER_LARGEST; i++)
        pthread_mutex_init(&lru_locks[i], NULL);
    test_small_and_ghost();
    test_main();
    test_read_back();
    test_left_and_in_use();
    test_merged_untagged_overwrite();
    test_cursor_on_removed_items();
    test_metadata();
    test_ghost_against_model();
    return check_report("test_s3fifo");
}
