/* What the core offers policies (policy/): the only core functions a policy
 * calls, besides reading the settings (ac_options.h). A policy includes this
 * and ac_policy.h; it never calls the request path itself.
 *
 *  - hints and the page epoch: a policy that keeps item pointers beyond the
 *    spill lock notes the epoch when it takes them and drops them unread once
 *    it has moved on (the slab page may have been freed); ac_grab_item locks
 *    and re-validates one; one that reads them under locks of its own instead
 *    has the core wait for those (ac_policy.h epoch_moved);
 *  - moving items: a policy's own thread may spill resident items it chose
 *    (ac_spill_items) and bring spilled ones back (ac_migrate_in), with reads
 *    kept in flight on a prefetcher of its own;
 *  - the memory: the slab limit, the slab memory a paging tier maps, the
 *    cgroup's limit;
 *  - the spill lock, under which the core reads a policy's victim hints. */
#ifndef AC_SERVICES_H
#define AC_SERVICES_H
/* memcached.h (no include guard) must be included first. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ac_budget.c: the page epoch (see above). */
unsigned ac_page_epoch(void);
/* ac_spill.c: locks a resident item of class clsid that was found without its
 * lock (a hint) and takes a reference, after re-validating it; returns the
 * lock (item_trylock_unlock) with *hvp its hash, or NULL: gone, moved, locked
 * or in use by a request. */
void *ac_grab_item(item *it, unsigned int clsid, uint32_t *hvp);
/* ac_spill.c: spills the given resident items of class clsid (hints taken at
 * page epoch `epoch`); returns how many left RAM. */
int ac_spill_items(unsigned int clsid, item **cand, int n, unsigned epoch);
/* ac_fetch.c: brings the spilled records under the n fingerprints fps (at
 * most AC_MIGRATE_BATCH) back into RAM (the caller holds no item lock). With
 * pf (the caller's prefetcher, from ac_prefetcher_new_migration, or NULL)
 * their reads are in flight together first. Returns how many came back;
 * *nomem is set when memory could not be had (the keys after that one were
 * left). */
#define AC_MIGRATE_BATCH 32
struct ac_prefetcher;
int ac_migrate_in(const uint64_t *fps, int n, struct ac_prefetcher *pf, bool *nomem);
/* ac_prefetch.c: a prefetcher for a policy's migration thread (its reads
 * counted as migrate_prefetch_*), NULL with why in err; and any prefetcher
 * freed (waits for its reads first). */
struct ac_prefetcher *ac_prefetcher_new_migration(unsigned depth, char *err, size_t errlen);
void ac_prefetcher_free(struct ac_prefetcher *p);
/* ac_fetch.c: fp may be spilled (the tier's answer from memory alone: no I/O,
 * not counted, never a false no). */
bool ac_maybe_spilled(uint64_t fp);
/* ac_fetch.c: the items the tier holds now (stub_items). */
uint64_t ac_spilled_now(void);
/* ac_state.c: the spill lock (the core reads victim hints under it). */
void ac_spill_lock(void);
void ac_spill_unlock(void);
/* ac_core.c: what the slab allocator gets of -m (after the book-keeping
 * charged at start); set: a policy whose mapping is the slab memory says
 * how large it is (effpaging, at init). */
size_t ac_slab_limit(void);
void ac_slab_limit_set(size_t bytes);
/* ac_budget.c: the slab memory now (every class's pages and the pool's): at
 * least the chunks of every resident item. */
size_t ac_slab_bytes(void);
/* ac_core.c: the in-process driver is the only client (no socket: every
 * access to item memory is the process's own). */
bool ac_in_process(void);
/* ac_core.c, paging tiers: the slab memory, len bytes, mapped by the tier
 * (once; later calls return the same); random: MADV_RANDOM on it. NULL
 * after printing why. forget: the policy unmapped it at a failed start. */
void *ac_slab_memory(size_t len, bool random);
void ac_slab_memory_forget(void);
/* cgmem.c: the memory limit of this process's cgroup (v1 memory controller:
 * the hierarchical limit; v2: the lowest memory.max on the path) and its
 * usage now. *limit is UINT64_MAX when there is none. path: the group's
 * directory, for messages. 0, or -1 when /proc/self/cgroup is unreadable. */
int ac_cgroup_memory(uint64_t *limit, uint64_t *usage, char *path, size_t n);
/* A transient copy of a spilled item (read-through: slab class 0, which
 * memcached never uses, never linked): a policy that sees it passes over it.
 * (The same test as ac_hooks.h's, for the patched items.c.) */
#define AC_ITEM_TRANSIENT(it) ((it)->slabs_clsid == 0)
/* policy/none.c: ops of a policy that tracks nothing and picks nothing. */
void ac_no_op(item *it);
int ac_no_victims(unsigned int clsid, item **out, int max);

#endif
