/* The few memcached definitions the unit tests need, a stand-in of memcached.h:
 * for the policies (lru, alru, vma) an item with LRU links, per-class lists
 * where a link goes to the head (MRU end) and victims come from the tail, as
 * in memcached's items.c; with AC_FAKE_CORE defined, also what the core's
 * request path uses (tests/test_core.c provides the functions: a hash table,
 * item locks, an allocator with a settable number of free chunks). */
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
#define ITEM_CAS 2
#define ITEM_key(item) (((char *)&((item)->data)) + (((item)->it_flags & ITEM_CAS) ? sizeof(uint64_t) : 0))
#define ITEM_clsid(it) ((it)->slabs_clsid & ~(3 << 6))
#define ITEM_get_cas(i) (((i)->it_flags & ITEM_CAS) ? (i)->data->cas : (uint64_t)0)
#define ITEM_set_cas(i, v) { if ((i)->it_flags & ITEM_CAS) { (i)->data->cas = (v); } }

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

#ifdef AC_FAKE_CORE
/* the rest of an item's layout, as memcached.h has it */
#define KEY_MAX_LENGTH 250
#define ITEM_FETCHED 8
#define ITEM_CHUNKED 32
#define ITEM_CFLAGS 256
#define ITEM_suffix(item) ((char *)&((item)->data) + (item)->nkey + 1 \
        + (((item)->it_flags & ITEM_CAS) ? sizeof(uint64_t) : 0))
#define ITEM_data(item) ((char *)&((item)->data) + (item)->nkey + 1 \
        + (((item)->it_flags & ITEM_CFLAGS) ? sizeof(uint32_t) : 0) \
        + (((item)->it_flags & ITEM_CAS) ? sizeof(uint64_t) : 0))
#define ITEM_schunk(item) ITEM_data(item)
#define ITEM_ntotal(item) (sizeof(struct _stritem) + (item)->nkey + 1 + (item)->nbytes \
        + (((item)->it_flags & ITEM_CFLAGS) ? sizeof(uint32_t) : 0) \
        + (((item)->it_flags & ITEM_CAS) ? sizeof(uint64_t) : 0))
struct settings { bool use_cas; int item_size_max; int slab_page_size; };
extern struct settings settings;
typedef struct conn conn;
typedef struct _mc_resp mc_resp;
void out_errstring(conn *c, const char *str);
int item_is_flushed(item *it);
void item_lock(uint32_t hv);
void item_unlock(uint32_t hv);
void *item_trylock(uint32_t hv);
extern unsigned int item_lock_hashpower;   /* 32 in the tests: a lock per hash value */
void item_trylock_unlock(void *lock);
item *assoc_find(const char *key, const size_t nkey, const uint32_t hv);
item *do_item_alloc(const char *key, const size_t nkey, const unsigned int flags, const rel_time_t exptime,
                    const int nbytes);
item_chunk *do_item_alloc_chunk(item_chunk *ch, const size_t bytes_remain);
int do_item_link(item *it, const uint32_t hv);
void do_item_unlink(item *it, const uint32_t hv);
void do_item_remove(item *it);
void *slabs_alloc(const size_t size, unsigned int id, unsigned int flags);
unsigned short refcount_incr(item *it);
unsigned short refcount_decr(item *it);
#endif

#endif
