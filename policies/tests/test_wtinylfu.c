/* Unit test of policy "wtinylfu" (policy/wtinylfu.c) on scripted sequences
 * over the stand-in item lists of tests/fake/memcached.h (head = newest,
 * tail = oldest): new items enter the window; while the window holds more
 * than its share its LRU item is the candidate against main's victim, and
 * a one-hit candidate is refused against a frequent victim (a tie refuses
 * too), a more frequent one enters probation and the victim leaves; a hit
 * moves a window item to the window's MRU end, a probation item to
 * protected, a protected one to protected's MRU end, and protected beyond
 * 80 % of main sends its LRU item to probation; the sketch counts inserts
 * and hits and halves every counter after its sample; victims the core left
 * are offered again unless hit; a spilled item read back (a disk hit,
 * on_fetched) is counted once, by its insert, and enters the window as a
 * miss does (a transient copy, never inserted, is counted by on_fetched); a
 * merged block-mate is main's next victim
 * with its count taken back; an overwrite keeps the segment; the sketch
 * grows with the resident items; metadata is 22 bytes per item plus the
 * sketch and the classes. */
#include "memcached.h"
#include "../core/ac_policy.h"
#include "../core/ac_services.h"

extern const struct ac_policy_ops ac_policy_wtinylfu;   /* the policy under test (core/ac_components.def lists it) */
#include "../policy/lru_list.h"
#include "../policy/test_hooks.h"
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
#define P (&ac_policy_wtinylfu)
#define SEG_AT (offsetof(item, nkey) + 1)
enum { WINDOW = 1, PROBATION = 2, PROTECTED = 3 };
#define NITEMS 1200
static item items[NITEMS];

/* memcached's link at the head, then the hook; item i holds key "k<key>" */
static void insert_key(int i, int key) {
    memset(&items[i], 0, sizeof(items[i]));
    items[i].id = i;
    items[i].nkey = (uint8_t)snprintf((char *)items[i].data, sizeof(items[i].data), "k%04d", key);
    items[i].nbytes = 10;
    items[i].refcount = 1;
    items[i].slabs_clsid = L;
    memset((uint8_t *)&items[i] + SEG_AT, 0xff, 6);    /* a chunk's old bytes */
    ac_list_link(heads, tails, &items[i], false);
    items[i].it_flags |= ITEM_LINKED;
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

static void hits(int i, int n) {
    while (n-- > 0)
        hit(i);
}

static int seg(int i) {
    return ((uint8_t *)&items[i])[SEG_AT];
}

static unsigned est(int i) {
    return ac_wtinylfu_estimate((const char *)items[i].data, items[i].nkey);
}

static void reset_with(int n, unsigned sample) {
    memset(heads, 0, sizeof(heads));
    memset(tails, 0, sizeof(tails));
    set_option(P->options[0], "ac_wtlfu_window", 1);
    set_option(P->options[0], "ac_wtlfu_protected", 80);
    set_option(P->options[0], "ac_wtlfu_sample", sample);
    CHECK_EQ(P->init(), 0);
    for (int i = 0; i < n; i++)
        insert(i);
}

static void reset(int n) {
    reset_with(n, 10);
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

/* TinyLFU's admission: the window's LRU item against main's victim. */
static void test_admission(void) {
    reset(4);                             /* 0 oldest .. 3 newest, all in the window */
    CHECK(seg(0) == WINDOW && est(0) == 1);   /* the insert counted */
    P->on_merged(&items[0]);              /* 0 to probation, its insert's count taken back */
    CHECK_EQ(est(0), 0);
    hits(0, 4);                           /* to protected and back: 80 % of a main of one is none */
    CHECK_EQ(est(0), 4);
    CHECK_EQ(seg(0), PROBATION);
    CHECK_ORDER("1 2 3 0");
    CHECK_VICTIMS(2, "1 2");              /* 1, 2 (1 each) refused against 0 (4) */
    CHECK_EQ(stat("wtinylfu_admitted"), 0);
    CHECK_EQ(stat("wtinylfu_rejected"), 2);
    removed(1);
    removed(2);
    insert(4);
    insert(5);
    hits(4, 5);                           /* 4 to the window's MRU end, at 6 */
    CHECK_ORDER("3 0 5 4");
    CHECK_VICTIMS(2, "3 5");              /* the window's LRU order: 3, then 5; both refused */
    removed(3);
    removed(5);
    insert(6);                            /* the window {4, 6} over its share again */
    CHECK_VICTIMS(1, "0");                /* 4 (6) beats 0 (4): 4 to probation, 0 the victim */
    CHECK_EQ(seg(4), PROBATION);
    CHECK_ORDER("0 6 4");
    removed(0);
    CHECK_EQ(stat("wtinylfu_admitted"), 1);
    CHECK_EQ(stat("wtinylfu_rejected"), 4);
    CHECK_VICTIMS(1, "4");                /* the window within its share: main's victim */
    CHECK_EQ(stat("wtinylfu_victims"), 6);
}

/* Probation to protected on a hit; protected beyond 80 % of main sends its
 * LRU item to probation's MRU end; a protected hit moves it to its MRU end. */
static void test_segments(void) {
    reset(5);
    for (int i = 4; i >= 0; i--)
        P->on_merged(&items[i]);          /* each to probation's LRU end */
    CHECK_ORDER("0 1 2 3 4");
    for (int i = 0; i < 5; i++)
        CHECK_EQ(seg(i), PROBATION);
    CHECK_EQ(est(0), 0);                  /* the merges' counts taken back */
    for (int i = 0; i < 4; i++)
        hit(i);                           /* 4 of 5 protected: 80 % */
    CHECK_EQ(stat("wtinylfu_protected_items"), 4);
    CHECK_EQ(stat("wtinylfu_demoted"), 0);
    hit(4);                               /* 5 of 5: the protected LRU (0) back to probation */
    CHECK_ORDER("1 2 3 4 0");
    CHECK_EQ(seg(0), PROBATION);
    CHECK_EQ(stat("wtinylfu_promoted"), 5);
    CHECK_EQ(stat("wtinylfu_demoted"), 1);
    hit(2);
    CHECK_ORDER("1 3 4 0 2");
    CHECK_EQ(seg(2), PROTECTED);
    CHECK_VICTIMS(1, "0");                /* probation's LRU */
    CHECK_VICTIMS(2, "0 1");              /* 0 left by the core: again; probation empty: protected's LRU */
    removed(0);
    removed(1);
    insert(7);                            /* the window: its own LRU order */
    insert(8);
    hits(8, 2);
    hit(7);
    CHECK_ORDER("3 4 2 8 7");
    items[3].refcount = 2;                /* a request holds 3, protected's LRU: to its MRU end */
    CHECK_VICTIMS(1, "4");                /* candidate 8 (3) beats main's victim 4 (1): 4 leaves */
    CHECK_EQ(seg(8), PROBATION);
    CHECK_EQ(stat("wtinylfu_passed_in_use"), 1);
    items[3].refcount = 1;
    CHECK_ORDER("4 2 7 3 8");
}

/* TinyLFU's reset: after the sample (here 1 x 1024 accesses) every counter is halved. */
static void test_aging(void) {
    reset_with(2, 1);                     /* 2 accesses counted */
    hits(0, 13);
    CHECK_EQ(est(0), 14);
    hits(1, 1008);                        /* 1023 */
    CHECK_EQ(stat("wtinylfu_sketch_resets"), 0);
    CHECK_EQ(est(1), 15);                 /* 4-bit counters saturate */
    hit(1);                               /* 1024: halved */
    CHECK_EQ(stat("wtinylfu_sketch_resets"), 1);
    CHECK_EQ(est(0), 7);
    CHECK_EQ(est(1), 7);
    hits(1, 511);                         /* from 512 after the halving to 1023 */
    CHECK_EQ(stat("wtinylfu_sketch_resets"), 1);
    hit(1);
    CHECK_EQ(stat("wtinylfu_sketch_resets"), 2);
    CHECK_EQ(est(0), 3);
}

/* Victims the core left: offered again unless hit (then back at the
 * window's MRU end); an overwrite keeps the segment. */
static void test_left_and_overwrite(void) {
    reset(3);
    CHECK_VICTIMS(1, "1");                /* 0 admitted to probation; 1 refused (a tie) */
    hit(1);                               /* the core left 1, then it was read */
    CHECK_EQ(seg(1), WINDOW);
    CHECK_ORDER("2 0 1");
    CHECK_VICTIMS(1, "2");                /* 2 (1) against 0 (1): refused */
    CHECK_VICTIMS(2, "2 0");              /* 2 again; the window {1} within its share: 0 */
    CHECK_EQ(stat("wtinylfu_reoffered"), 1);
    removed(2);
    removed(0);
    hit(1);                               /* 1 at 3 */
    insert(3);
    insert(5);
    CHECK_VICTIMS(1, "3");                /* 1 admitted (main empty); 3 (1) refused against 1 (3) */
    CHECK_EQ(seg(1), PROBATION);
    removed(3);
    removed(1);                           /* an overwrite of key 1: unlink, then link */
    insert_key(6, 1);
    CHECK_EQ(seg(6), PROBATION);          /* a new key would enter the window */
    CHECK_EQ(est(6), 4);
    CHECK_EQ(stat("wtinylfu_overwrites"), 1);
    CHECK_ORDER("5 6");
}

/* A read-back is one request, TinyLFU's miss: one count in the sketch (its
 * insert's; as a hit as well it would count twice) and the window's MRU end,
 * no hit's move. A transient copy read from the tier (not linked: no insert
 * counted it) is counted by on_fetched and moves nothing. */
static void test_read_back(void) {
    reset(3);
    hits(0, 2);
    CHECK_EQ(est(0), 3);
    removed(0);                           /* spilled */
    read_back(3, 0);
    CHECK_EQ(est(3), 4);
    CHECK_EQ(seg(3), WINDOW);
    CHECK_ORDER("1 2 3");
    memset(&items[4], 0, sizeof(items[4]));
    items[4].id = 4;
    items[4].nkey = (uint8_t)snprintf((char *)items[4].data, sizeof(items[4].data), "k%04d", 1);
    items[4].refcount = 1;                /* slabs_clsid 0: AC_ITEM_TRANSIENT */
    P->on_fetched(&items[4]);
    CHECK_EQ(est(1), 2);
    CHECK_ORDER("1 2 3");
    hit(3);                               /* a hit in RAM counts as any hit */
    CHECK_EQ(est(3), 5);
    CHECK_EQ(stat("wtinylfu_promoted"), 0);
}

static void test_metadata_and_growth(void) {
    reset(0);
    stats_state.curr_items = 0;
    size_t fixed = P->metadata_bytes();
    CHECK_EQ(stat("wtinylfu_sketch_bytes"), 4 * 1024);
    CHECK(fixed > 4 * 1024 + MAX_NUMBER_OF_SLAB_CLASSES * sizeof(pthread_mutex_t));
    stats_state.curr_items = 1000;
    CHECK_EQ(P->metadata_bytes(), fixed + 1000 * 22);   /* 16 bytes of links + 6 header bytes */
    stats_state.curr_items = 0;
    for (int i = 0; i < 1100; i++)
        insert(i);                        /* more resident items than the sketch is wide */
    CHECK_EQ(stat("wtinylfu_sketch_bytes"), 4 * 2048);
    CHECK_EQ(est(0), 0);                  /* grown zeroed at the 1026th insert (as Caffeine) */
    CHECK_EQ(est(1099), 1);
    hit(1099);
    CHECK_EQ(est(1099), 2);
}

int main(void) {
    for (int i = 0; i < POWER_LARGEST; i++)
        pthread_mutex_init(&lru_locks[i], NULL);
    test_admission();
    test_segments();
    test_aging();
    test_left_and_overwrite();
    test_read_back();
    test_metadata_and_growth();
    return check_report("test_wtinylfu");
}
