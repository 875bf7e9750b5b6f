/* The few memcached definitions policies/lru.c and alru.c use, for their unit tests: an item
 * with LRU links, per-class lists where a link goes to the head (MRU end) and
 * victims come from the tail, as in memcached's items.c. */
#ifndef FAKE_MEMCACHED_H
#define FAKE_MEMCACHED_H
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

typedef unsigned int rel_time_t;
/* The item header with memcached's layout (48 bytes, 6 spare bytes after nkey,
 * which alru uses); the test's item id sits where memcached has h_next. */
typedef struct _stritem {
    struct _stritem *next, *prev;
    int id;                       /* test-only: which item this is */
    int unused_;
    rel_time_t time;
    rel_time_t exptime;
    int nbytes;
    unsigned short refcount;
    uint16_t it_flags;
    uint8_t slabs_clsid;
    uint8_t nkey;
    union {
        uint64_t cas;
        char end;
    } data[4];                    /* the key, at most 31 bytes */
} item;
#define ITEM_key(it) ((char *)(it)->data)
#define ITEM_clsid(it) ((it)->slabs_clsid & ~(3 << 6))

typedef void (*ADD_STAT)(const char *key, const uint16_t klen, const char *val,
                         const uint32_t vlen, const void *cookie);
void append_stat(const char *name, ADD_STAT f, void *c, const char *fmt, ...);
#define APPEND_STAT(name, fmt, val) append_stat(name, add_stats, c, fmt, val);

/* a chunk of a chunked item, memcached's layout: it_flags at the item's offset */
typedef struct _strchunk {
    struct _strchunk *next, *prev;
    struct _stritem *head;        /* the chunked item's header */
    int size, used, nbytes;
    unsigned short refcount;
    uint16_t it_flags;
    uint8_t slabs_clsid, orig_clsid;
    char data[];
} item_chunk;

#define ITEM_LINKED 1
#define ITEM_SLABBED 4
#define ITEM_CHUNK 64
#define COLD_LRU 128
#define POWER_LARGEST 256
#define MAX_NUMBER_OF_SLAB_CLASSES (63 + 1)   /* as memcached.h: the policies size their per-class state by it */
extern pthread_mutex_t lru_locks[POWER_LARGEST];
extern volatile rel_time_t current_time;
struct stats_state { uint64_t curr_items; };
extern struct stats_state stats_state;
#define STATS_LOCK()
#define STATS_UNLOCK()

item **item_lru_ends(const bool tail);
/* provided by each test */
uint32_t hash(const void *key, size_t length);
void *slabs_chunk_sample(const unsigned int id, const uint64_t rnd);

#endif
