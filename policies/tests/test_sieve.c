/* Unit test of policy "sieve" (policy/sieve.c) on scripted sequences over the
 * stand-in item lists of tests/fake/memcached.h (head = newest, tail =
 * oldest): the hand moves from the tail towards the head, clears the visited
 * bits it passes and takes the first unvisited item; it stays where it
 * stopped (the next pick goes on from there, not from the tail) and wraps at
 * the head; with every item visited a full pass clears them and the next
 * takes them; victims the core left are offered again first unless hit
 * meanwhile; items in use and LRU-crawler placeholders are passed over; a
 * merged block-mate is the next victim; a spilled item read back (a disk hit,
 * on_fetched) enters unvisited, as SIEVE inserts a miss; the victims of a pick are gathered
 * where the hand stands (the list stays well formed); the hand on an item
 * that leaves moves to the next one, or back to the tail when that one is
 * leaving too; metadata is 17 bytes per item plus the hands. */
#include "memcached.h"
#include "../core/ac_policy.h"
#include "../core/ac_services.h"

extern const struct ac_policy_ops ac_policy_sieve;   /* the policy under test (core/ac_components.def lists it) */
#include "../policy/lru_list.h"
#include "check.h"
#include "stats_capture.h"
#include "victims.h"
#include <stddef.h>
#include <string.h>

pthread_mutex_t lru_locks[POWER_LARGEST];
volatile rel_time_t current_time = 100;
struct stats_state stats_state;
static item *heads[POWER_LARGEST], *tails[POWER_LARGEST];

item **item_lru_ends(const bool tail) {
    return tail ? tails : heads;
}

#define L (1 | COLD_LRU)
#define P (&ac_policy_sieve)
static item items[16];

/* memcached's link: at the head, then the hook */
static void insert(int i) {
    memset(&items[i], 0, sizeof(items[i]));
    items[i].id = i;
    items[i].nkey = 2;
    items[i].nbytes = 10;
    items[i].refcount = 1;
    items[i].slabs_clsid = L;
    ((uint8_t *)&items[i])[offsetof(item, nkey) + 1] = 0xff;   /* a chunk's old bytes */
    ac_list_link(heads, tails, &items[i], false);
    items[i].it_flags |= ITEM_LINKED;
    P->on_insert(&items[i]);
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

/* a request read i back from the tier: the lookup linked it (on_insert), the
 * access hook then counts a disk hit */
static void read_back(int i) {
    insert(i);
    P->on_fetched(&items[i]);
}

static bool visited(int i) {
    return ((uint8_t *)&items[i])[offsetof(item, nkey) + 1] != 0;
}

static void reset(int n) {
    memset(heads, 0, sizeof(heads));
    memset(tails, 0, sizeof(tails));
    CHECK_EQ(P->init(), 0);
    for (int i = 0; i < n; i++)
        insert(i);
}

/* The list from the tail to the head as test ids ("h" for a crawler's placeholder),
 * checking every link both ways. */
static const char *order(void) {
    static char s[256];
    s[0] = '\0';
    item *prev = NULL;
    for (item *it = tails[L]; it != NULL; prev = it, it = it->prev) {
        if (it->next != prev) {
            strcat(s, " BROKEN");
            return s;
        }
        bool ph = it->nkey == 0 && it->nbytes == 0 && it->it_flags == 1;
        if (ph)
            snprintf(s + strlen(s), sizeof(s) - strlen(s), s[0] ? " h" : "h");
        else
            snprintf(s + strlen(s), sizeof(s) - strlen(s), s[0] ? " %d" : "%d", it->id);
    }
    if (heads[L] != prev)
        strcat(s, " BADHEAD");
    return s;
}

#define CHECK_VICTIMS(max, want) CHECK_VICTIMS_OF(P, max, want)
#define CHECK_ORDER(want) do { const char *o_ = order(); \
    if (strcmp(o_, want) == 0) checks_passed++; \
    else { checks_failed++; fprintf(stderr, "%s:%d: list \"%s\", want \"%s\"\n", __FILE__, __LINE__, o_, want); } \
} while (0)

/* The hand: from the tail, clearing what it passes, resting after its
 * victim; the next pick goes on from there; it wraps at the head. */
static void test_hand(void) {
    reset(6);                             /* 0 oldest .. 5 newest */
    CHECK(!visited(0));                   /* on_insert cleared the chunk's old byte */
    hit(0);
    hit(2);
    hit(3);
    CHECK(visited(0) && visited(2) && visited(3) && !visited(1));
    CHECK_VICTIMS(1, "1");                /* 0 visited: cleared, passed; 1 taken */
    CHECK(!visited(0));
    CHECK_ORDER("0 1 2 3 4 5");           /* nothing moved: the hand is on its victim */
    removed(1);                           /* the core spilled it */
    CHECK_ORDER("0 2 3 4 5");
    hit(0);                               /* behind the hand now: not seen before a wrap */
    CHECK_VICTIMS(1, "4");                /* from the hand: 2, 3 cleared, 4 taken */
    CHECK(!visited(2) && !visited(3) && visited(0));
    removed(4);
    insert(6);                            /* new items at the head */
    CHECK_ORDER("0 2 3 5 6");
    CHECK_VICTIMS(1, "5");
    removed(5);
    CHECK_VICTIMS(1, "6");
    removed(6);
    /* past the head: wraps to the tail; 0 visited again, 2 cleared before */
    CHECK_VICTIMS(1, "2");
    CHECK(!visited(0));
    removed(2);
    CHECK_VICTIMS(1, "3");
    removed(3);
    CHECK_VICTIMS(1, "0");
    removed(0);
    CHECK_ORDER("");
    CHECK_VICTIMS(4, "");                 /* an empty class: none, no loop */
    item *out[4];
    CHECK_EQ(P->pick_victims(2, out, 4), 0);   /* another class: its own list */
    last_stats[0] = '\0';
    P->stats(NULL, NULL);
    CHECK(strstr(last_stats, "sieve_victims=7 ") != NULL);
    CHECK(strstr(last_stats, "sieve_cleared=4 ") != NULL);
}

/* Every item visited: one pass clears them all, the next takes them in
 * FIFO order; more victims asked than items: each once. */
static void test_all_visited(void) {
    reset(4);
    for (int i = 0; i < 4; i++)
        hit(i);
    CHECK_VICTIMS(2, "0 1");
    for (int i = 0; i < 4; i++)
        CHECK(!visited(i));
    CHECK_ORDER("0 1 2 3");
    CHECK_VICTIMS(16, "0 1 2 3");         /* left by the core: offered again, then the rest */
    reset(3);
    CHECK_VICTIMS(16, "0 1 2");
    reset(3);
    for (int i = 0; i < 3; i++)
        hit(i);
    CHECK_VICTIMS(16, "0 1 2");           /* cleared on the first lap, taken on the second */
}

/* Victims the core left are offered first again, unless hit meanwhile (then
 * passed, its bit cleared); an item in use is passed over with its bit. */
static void test_left_and_in_use(void) {
    reset(6);
    CHECK_VICTIMS(3, "0 1 2");
    removed(0);                           /* the core spilled 0 only (a packed block) */
    hit(2);
    CHECK_VICTIMS(2, "1 3");              /* 1 again; 2 hit: cleared, passed; then 3 */
    CHECK(!visited(2));
    removed(1);
    removed(3);
    CHECK_ORDER("2 4 5");
    items[4].refcount = 2;                /* a request holds 4 */
    hit(4);
    CHECK_VICTIMS(1, "5");
    CHECK(visited(4));                    /* passed with its bit */
    items[4].refcount = 1;
    removed(5);
    CHECK_VICTIMS(2, "2 4");              /* wrapped: 2 unvisited; 4 cleared on this lap, taken on the next */
}

/* A block-mate merged back unrequested is the next victim; with the hand not
 * placed yet it goes to the tail. LRU-crawler placeholders are passed. */
static void test_merged_and_placeholders(void) {
    reset(5);
    P->on_merged(&items[4]);              /* the hand starts at the tail: 4 becomes the tail */
    CHECK_ORDER("4 0 1 2 3");
    CHECK_VICTIMS(1, "4");
    removed(4);
    hit(1);
    CHECK_VICTIMS(1, "0");
    removed(0);
    CHECK_ORDER("1 2 3");
    insert(7);
    hit(7);
    P->on_merged(&items[7]);              /* at the hand, unvisited */
    CHECK(!visited(7));
    CHECK_ORDER("7 1 2 3");
    CHECK_VICTIMS(2, "7 2");              /* 1 cleared */
    removed(7);
    removed(2);
    /* a crawler's placeholder anywhere is passed over */
    item crawler = { .it_flags = 1, .nkey = 0, .nbytes = 0, .slabs_clsid = L, .id = 99 };
    ac_list_link(heads, tails, &crawler, true);
    CHECK_ORDER("h 1 3");                 /* h: the crawler's */
    CHECK_VICTIMS(16, "3 1");
    ac_list_unlink(heads, tails, &crawler);
}

/* A read-back is SIEVE's miss: unvisited, so the hand takes it before the
 * visited items it passes (as a hit, the hand would clear all four, wrap and
 * take 0). A later hit in RAM sets its bit as any hit does. */
static void test_read_back(void) {
    reset(3);
    for (int i = 0; i < 3; i++)
        hit(i);
    read_back(3);
    CHECK(!visited(3));
    CHECK_VICTIMS(1, "3");
    CHECK(!visited(0) && !visited(1) && !visited(2));
    reset(2);
    read_back(2);
    hit(2);
    CHECK(visited(2));
    CHECK_VICTIMS(1, "0");
}

/* The hand on an item that leaves moves to its head-side neighbour, unless
 * that one is leaving too (its on_remove done, not unlinked yet): then back
 * to the tail. A pick never leaves the hand on an item that is leaving. */
static void test_hand_on_removed_items(void) {
    reset(5);
    hit(0);
    CHECK_VICTIMS(1, "1");                /* 0 cleared; the hand on 1 */
    items[2].it_flags &= ~ITEM_LINKED;    /* 2 is being unlinked by another thread ... */
    P->on_remove(&items[2]);
    removed(1);                           /* ... when 1 leaves: 2 is no place for the hand */
    ac_list_unlink(heads, tails, &items[2]);
    CHECK_ORDER("0 3 4");
    CHECK_VICTIMS(1, "0");                /* from the tail again (the hand was to be on 3) */
    removed(0);
    last_stats[0] = '\0';
    P->stats(NULL, NULL);
    CHECK(strstr(last_stats, "sieve_restarts=1") != NULL);
    reset(4);
    CHECK_VICTIMS(1, "0");
    removed(0);                           /* the hand on 1 */
    items[2].it_flags &= ~ITEM_LINKED;    /* 2 leaving, still in the list */
    P->on_remove(&items[2]);
    CHECK_VICTIMS(1, "1");                /* the hand is not left on 2: it goes past it, to 3 */
    ac_list_unlink(heads, tails, &items[2]);
    removed(1);
    CHECK_ORDER("3");
    CHECK_VICTIMS(1, "3");
}

static void test_metadata(void) {
    reset(0);
    stats_state.curr_items = 0;
    size_t fixed = P->metadata_bytes();
    CHECK_EQ(fixed, MAX_NUMBER_OF_SLAB_CLASSES * (sizeof(pthread_mutex_t) + sizeof(item *)));   /* the hands */
    stats_state.curr_items = 1000;
    CHECK_EQ(P->metadata_bytes(), fixed + 1000 * 17);   /* 16 bytes of links + the visited byte */
}

int main(void) {
    for (int i = 0; i < POWER_LARGEST; i++)
        pthread_mutex_init(&lru_locks[i], NULL);
    test_hand();
    test_all_visited();
    test_left_and_in_use();
    test_merged_and_placeholders();
    test_read_back();
    test_hand_on_removed_items();
    test_metadata();
    return check_report("test_sieve");
}
