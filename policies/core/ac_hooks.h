/* The calls the patched memcached (memcached/patches/) and the in-process
 * driver (ycsb-driver/inproc/) make into memcached-ac. Every call site in
 * memcached is guarded by ac_enabled (false for the stock cache: upstream code
 * runs), except ac_init, ac_usage and the -o parsing (ac_is_option,
 * ac_parse_option), which run before anything is enabled, ac_main_loop_starting
 * (the in-process driver runs with any policy) and the in-process driver's
 * calls. */
#ifndef AC_HOOKS_H
#define AC_HOOKS_H
#include "ac_options.h"
#include "ac_services.h"         /* also what the in-process driver uses of them */
#include "policy/regions.h"      /* effpaging's slab regions, which the patched slabs.c serves */

extern bool ac_enabled;          /* an anti-caching policy is active */
/* A paging tier that checks pages on the item path (uvmm's check mode): set by
 * ac_init; the hash walk (assoc_find, for a key of nkey bytes) then calls
 * ac_item_check on each item it visits before reading it. */
extern bool ac_check_items;
void ac_item_check(const void *it, size_t nkey);
/* Set by ac_init for a paging tier (ospaging, effpaging): the memory the slab
 * allocator carves its pages from (one mapping of -m bytes), else NULL. */
extern void *ac_slab_base;

/* Start-up, before slabs_init: opens the spill store and sizes the evicted
 * table; *item_limit (memory for the slab allocator, -m on entry) is lowered by
 * the book-keeping's memory. Returns -1 after printing why. */
int ac_init(size_t *item_limit);
/* `cache_memlimit`: -m becomes bytes, the budget for items and book-keeping;
 * the slab allocator gets what is left after the book-keeping (ac_budget.c).
 * false when the slab memory is preallocated (-L), as upstream's. */
bool ac_set_budget(size_t bytes);
/* An allocation of ntotal bytes in class id found no free chunk
 * (do_item_alloc_pull): spill, borrow a page or wait until it fits (ac_room.c).
 * NULL: refused, counted by reason (the spill store is full, or the wait ran out). */
void *ac_alloc(size_t ntotal, unsigned int id);
/* do_slabs_newslab, slabs_lock held: the memory limit stops a new page; true
 * when this allocation may borrow one (repaid by moving another class's page). */
bool ac_borrow_page(void);
/* slabs.c memory_release (slabs_lock held): a slab page leaves memcached. It
 * is freed once no policy's item-pointer hint can still lead into it. */
void ac_page_free(void *page);
/* slabs.c memory_allocate (malloc mode): a slab page of size bytes, from the
 * policy's own page source when it has one (vma: its protected mapping), else
 * malloc. NULL when there is none. */
void *ac_page_alloc(size_t size);
/* assoc_find, then the evicted table: a spilled item is read back, verified and
 * linked again (item lock for hv held). When no memory can be had for it, a
 * read (do_update) gets a transient copy instead: served from the record, never
 * linked, freed by ac_item_free when its last reference goes. */
item *ac_item_find(const char *key, size_t nkey, uint32_t hv, bool do_update);
/* A plain set (no CAS) of key is about to store (item lock for hv held): a
 * spilled old value is dropped without reading it, by the key's 64-bit
 * fingerprint (policies/README.md: "Overwrites"). */
void ac_item_overwrite(const char *key, size_t nkey, uint32_t hv);
/* AC_ITEM_TRANSIENT(it) (ac_services.h): the item is a transient copy. */
void ac_item_free(item *it);
/* A lookup that will modify the item (touch) cannot use a transient copy:
 * releases it and returns NULL with the error to answer set. */
item *ac_item_for_update(item *it);
/* The error text (checksum, I/O, memory) this thread's current request must
 * answer, or NULL. Set only by the hooks above that return a bare pointer to
 * memcached (ac_item_find, ac_item_for_update, ac_alloc): a NULL from them
 * reads as "absent" to upstream's callers, and widening item_get/item_alloc
 * would touch some forty call sites. Inside memcached-ac errors travel in the
 * lookup's context (struct ac_lookup, ac_internal.h). */
const char *ac_lookup_error(void);
/* The same, and forgets it: the error has been answered. */
const char *ac_take_lookup_error(void);
/* A command whose lookup failed must not answer as if the key were absent.
 * Text protocol: a NOT_FOUND / NOT_STORED reply becomes the lookup's error;
 * any reply consumes the error. */
const char *ac_text_reply(const char *reply);
/* Meta commands: if the lookup failed, answers its error and returns true. */
bool ac_reply_error(conn *c);
/* Parked gets (ac_park.c), a text get/gets over the network: begin, once per
 * command before its first key (touch: gat/gats, read in the worker); false:
 * nothing of this command is parked. allow, just before each key's lookup;
 * park, right after it: when the lookup left a spilled item's read to a
 * fetcher, queues the key with its response on the connection's IO queue,
 * answered when the read is back. */
bool ac_park_begin(conn *c, bool touch);
void ac_park_allow(conn *c);
void ac_park(conn *c, mc_resp *resp, const char *key, size_t nkey, bool cas);
void ac_item_linked(item *it, uint32_t hv);
void ac_item_unlinked(item *it);
void ac_item_accessed(item *it);     /* replaces do_item_bump */
/* memcached is about to drop a live item (slab mover, tail repair): spill it.
 * Returns true when it may be dropped (spilled, or expired). may_block: the
 * caller holds no lock that forbids writing a block. */
bool ac_rescue(item *it, bool may_block);
void ac_stats(ADD_STAT add_stats, void *c);
/* Before the main event loop (also with ac_policy=none): starts the
 * in-process driver when -o ac_driver=FILE was given (ycsb-driver/inproc). */
void ac_main_loop_starting(void);

/* For the in-process driver, which calls the item API as a worker would. */
/* Copies n value bytes into a freshly allocated (unlinked) item, chunked or not. */
int ac_item_fill(item *it, const char *src, size_t n);
/* Reads of this thread that were served after a spill-store read, so far. */
uint64_t ac_thread_disk_hits(void);
/* Paging tiers: a read is a disk hit when the pages this thread waited for
 * (the kernel tiers: its major faults) rose while it was served. The
 * in-process driver brackets the lookup and the value copy itself: begin
 * before item_get, end after the copy. end counts the read as a memory or
 * disk hit and returns 1 (disk hit), 0 (hit) or -1 (no item was accessed: a
 * miss). */
bool ac_kernel_paged(void);
/* paging tiers: bytes of the slab mapping resident in RAM now (mincore) */
size_t ac_slab_resident_bytes(void);
/* Reads of spilled records kept in flight by a driver thread (ac_prefetch.c,
 * -o ac_driver_depth). new: a prefetcher with a ring of depth requests (NULL
 * with why in err). begin: the read of key's spilled record goes out; its
 * slot, or -1 (in RAM, absent, or the tier cannot). wait: until a slot's read
 * completed. batch: waits for everything and starts a new batch. use: the
 * lookups (item_get) of this thread take the bytes p read when they are still
 * the record's (NULL: none; a thread with two serves one batch while the next
 * one's reads are in flight); a thread names NULL before it frees the one in
 * use. */
struct ac_prefetcher;
struct ac_prefetcher *ac_prefetcher_new(unsigned depth, char *err, size_t errlen);
void ac_prefetcher_use(struct ac_prefetcher *p);
int ac_prefetch_begin(struct ac_prefetcher *p, const char *key, size_t nkey);
void ac_prefetch_wait(struct ac_prefetcher *p, int slot);
void ac_prefetch_batch(struct ac_prefetcher *p);
void ac_fault_window_begin(void);
int ac_fault_window_end(void);
/* The driver is about to start a phase ("load", "warmup", "run") while its
 * threads wait at the phase's gate: the policy's phase_begin, if it has one. */
void ac_phase_begin(const char *phase);
void ac_write_window_begin(void);
void ac_write_window_end(void);

#endif
