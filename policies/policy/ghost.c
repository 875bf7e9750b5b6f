/* S3-FIFO's ghost queue G (policy/s3fifo.c): keys only, as 64-bit
 * fingerprints, in a FIFO ring, with a hash set (linear probing) of the ring
 * positions of the live ones; a key taken out (a ghost hit) leaves its ring
 * position dead until the tail passes it. A full ring is compacted to its
 * live entries, or doubled when more than half are live; the tables are
 * mapped (grown_table.h) and only grow. One mutex, held for each call. */
#include "ghost.h"
#include "grown_table.h"
#include <pthread.h>
#include <stdbool.h>

static struct {
    pthread_mutex_t lock;             /* the innermost lock of its caller */
    uint64_t *ring;                   /* ring[pos & rmask], pos in [tail, head) */
    uint32_t rcap, rmask, head, tail;
    uint32_t *slot;                   /* linear probing: ring index + 1 of a live entry, 0 empty */
    uint32_t scap, smask;
    uint32_t live;
    size_t bytes;                     /* mapped (atomic: read without the lock) */
} ghost = { .lock = PTHREAD_MUTEX_INITIALIZER };

#define GHOST_MIN 1024u

static inline uint32_t ghost_home(uint64_t fp) {
    return (uint32_t)((fp * 0xD6E8FEB86659FD93ULL) >> 32) & ghost.smask;
}

/* the slot holding fp, or -1 */
static long ghost_find(uint64_t fp) {
    for (uint32_t i = ghost_home(fp);; i = (i + 1) & ghost.smask) {
        uint32_t v = ghost.slot[i];
        if (v == 0)
            return -1;
        if (ghost.ring[v - 1] == fp)
            return (long)i;
    }
}

/* empties slot i, shifting the run after it back (deletion under linear probing) */
static void ghost_delete(uint32_t i) {
    uint32_t j = i;
    for (;;) {
        j = (j + 1) & ghost.smask;
        uint32_t v = ghost.slot[j];
        if (v == 0)
            break;
        uint32_t k = ghost_home(ghost.ring[v - 1]);
        /* v stays if its home is in the cyclic range (i, j]; else it fills i */
        bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (!stays) {
            ghost.slot[i] = v;
            i = j;
        }
    }
    ghost.slot[i] = 0;
    ghost.live--;
}

static void ghost_insert_slot(uint32_t ring_index) {
    uint32_t i = ghost_home(ghost.ring[ring_index]);
    while (ghost.slot[i] != 0)
        i = (i + 1) & ghost.smask;
    ghost.slot[i] = ring_index + 1;
    ghost.live++;
}

/* A ring of rcap entries (a power of 2) holding the live entries in order. */
static bool ghost_rebuild(uint32_t rcap) {
    uint32_t scap = 2 * rcap;
    uint64_t *ring = ac_table_map((size_t)rcap * sizeof(*ring));
    uint32_t *slot = ac_table_map((size_t)scap * sizeof(*slot));
    if (ring == NULL || slot == NULL) {
        ac_table_unmap(ring, (size_t)rcap * sizeof(*ring));
        ac_table_unmap(slot, (size_t)scap * sizeof(*slot));
        return false;
    }
    uint32_t n = 0;
    for (uint32_t pos = ghost.tail; ghost.ring != NULL && pos != ghost.head; pos++) {
        uint64_t fp = ghost.ring[pos & ghost.rmask];
        long i = ghost_find(fp);
        if (i >= 0 && ghost.slot[i] - 1 == (pos & ghost.rmask))
            ring[n++] = fp;           /* live (a removed entry's slot is gone or newer) */
    }
    ac_table_unmap(ghost.ring, (size_t)ghost.rcap * sizeof(*ring));
    ac_table_unmap(ghost.slot, (size_t)ghost.scap * sizeof(*slot));
    ghost.ring = ring;
    ghost.slot = slot;
    ghost.rcap = rcap;
    ghost.rmask = rcap - 1;
    ghost.scap = scap;
    ghost.smask = scap - 1;
    ghost.tail = 0;
    ghost.head = n;
    ghost.live = 0;
    for (uint32_t k = 0; k < n; k++)
        ghost_insert_slot(k);
    __atomic_store_n(&ghost.bytes, (size_t)rcap * sizeof(*ring) + (size_t)scap * sizeof(*slot), __ATOMIC_RELAXED);
    return true;
}

/* the oldest entry leaves */
static void ghost_pop(void) {
    uint32_t r = ghost.tail & ghost.rmask;
    long i = ghost_find(ghost.ring[r]);
    if (i >= 0 && ghost.slot[i] - 1 == r)
        ghost_delete((uint32_t)i);
    ghost.tail++;
}

void ac_ghost_add(uint64_t fp, uint64_t bound) {
    pthread_mutex_lock(&ghost.lock);
    long i = ghost_find(fp);
    if (i >= 0)
        ghost_delete((uint32_t)i);    /* already there: it moves to the head */
    if (ghost.head - ghost.tail == ghost.rcap) {
        /* full of live and removed entries: compact, or grow when mostly live */
        if (!ghost_rebuild(ghost.live > ghost.rcap / 2 && ghost.rcap < (1u << 30) ? 2 * ghost.rcap : ghost.rcap))
            ghost_pop();
        if (ghost.head - ghost.tail == ghost.rcap)
            ghost_pop();
    }
    uint32_t r = ghost.head & ghost.rmask;
    ghost.ring[r] = fp;
    ghost.head++;
    ghost_insert_slot(r);
    while (ghost.live > bound && ghost.tail != ghost.head)
        ghost_pop();
    pthread_mutex_unlock(&ghost.lock);
}

bool ac_ghost_take(uint64_t fp) {
    pthread_mutex_lock(&ghost.lock);
    long i = ghost.ring != NULL ? ghost_find(fp) : -1;
    if (i >= 0)
        ghost_delete((uint32_t)i);
    pthread_mutex_unlock(&ghost.lock);
    return i >= 0;
}

bool ac_ghost_reset(void) {
    pthread_mutex_lock(&ghost.lock);
    ac_table_unmap(ghost.ring, (size_t)ghost.rcap * sizeof(*ghost.ring));
    ac_table_unmap(ghost.slot, (size_t)ghost.scap * sizeof(*ghost.slot));
    ghost.ring = NULL;
    ghost.slot = NULL;
    ghost.head = ghost.tail = ghost.live = 0;
    bool ok = ghost_rebuild(GHOST_MIN);
    pthread_mutex_unlock(&ghost.lock);
    return ok;
}

uint32_t ac_ghost_live(void) {
    pthread_mutex_lock(&ghost.lock);
    uint32_t live = ghost.live;
    pthread_mutex_unlock(&ghost.lock);
    return live;
}

size_t ac_ghost_bytes(void) {
    return __atomic_load_n(&ghost.bytes, __ATOMIC_RELAXED);
}
