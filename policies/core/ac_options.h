/* The -o ac_* settings of memcached-ac: declared in one table (ac_options.c),
 * parsed and validated there. */
#ifndef AC_OPTIONS_H
#define AC_OPTIONS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AC_DRIVER_SET_MAX 64

struct ac_options {
    char policy[32];         /* ac_policy (a policy, or an approach name standing for a pair) */
    char tier[32];           /* ac_tier ("" = the policy's default tier) */
    char spill_dir[1024];    /* ac_spill_dir ("" = /var/tmp/memcached-ac.PID) */
    size_t block_size;       /* ac_block_size (0 = default, fixed by ac_init) */
    bool merge_block;        /* ac_merge=block|tuple */
    double compact_fill;     /* ac_compact_fill */
    size_t evicted_max;      /* ac_evicted_max (0 = no cap) */
    uint64_t alloc_wait_ns;  /* ac_alloc_wait: longest wait for room before a refusal */
    unsigned borrow_pages;   /* ac_borrow_pages: slab pages owed past -m at most */
    unsigned lru_sample;     /* ac_lru_sample: update LRU order on 1 in N accesses */
    unsigned alru_bits;      /* ac_alru_bits: width of alru's access clock, 22..24 */
    unsigned alru_samples;   /* ac_alru_samples: items sampled per victim */
    uint64_t alru_resolution_ns;   /* ac_alru_resolution: one clock tick */
    double log_sample;       /* ac_log_sample: fraction of accesses logged (logging) */
    double log_alpha;        /* ac_log_alpha: smoothing constant */
    uint64_t log_round;      /* ac_log_round: logged accesses per classification (0: by time) */
    uint64_t log_round_ns;   /* ac_log_round=Ns: seconds per classification (0: by count) */
    uint64_t log_slice;      /* ac_log_slice: logged accesses per time slice */
    size_t log_keys;         /* ac_log_keys: keys the estimate table tracks (0 = from -m) */
    double log_hot_fill;     /* ac_log_hot_fill: hot-set budget as a fraction of item memory */
    size_t eff_memory;       /* ac_eff_memory: memory effpaging may lock (0 = what the cgroup allows) */
    bool eff_madv_cold;      /* ac_eff_madv_cold: MADV_COLD the cold region after each round */
    /* In-process YCSB driver (ycsb-driver/inproc.c): run a workload, print JSON, exit. */
    char driver[1024];       /* ac_driver: workload property file ("" = serve the network) */
    char driver_out[1024];   /* ac_driver_out: result file ("" = stdout) */
    char *driver_set[AC_DRIVER_SET_MAX];   /* ac_driver_set=key=value, in order */
    int n_driver_set;
};

extern struct ac_options ac_opts;

/* True for "ac_..." suboptions. */
bool ac_is_option(const char *kv);
/* Parses "ac_key=value" into ac_opts; prints an error naming what is accepted
 * and returns -1 on bad input. "ac_help" prints every option (its range, its
 * default, a line of help) and the policies and tiers to stdout, and exits 0
 * (memcached's -o loop has no other way to stop with success). */
int ac_parse_option(const char *kv);
/* Prints the ac_* suboptions for memcached -h: the same list as ac_help. */
void ac_usage(void);
/* ac_registry.c: the names of policies (approach names included) and tiers,
 * comma-separated, for messages; whether a name is one; the list with the
 * tiers each policy works over, for -h. */
const char *ac_policy_names(void);
const char *ac_tier_names(void);
bool ac_policy_known(const char *name);
bool ac_tier_known(const char *name);
void ac_list_components(void);
/* Calls fn for the name of every file any tier keeps in a spill directory. */
void ac_all_tier_files(void (*fn)(const char *name, void *arg), void *arg);
/* The default of ac_log_keys for bytes of memory: keys logging's estimate
 * table tracks in an eighth of it; also the tuple tier's filter size. */
size_t ac_default_keys(size_t bytes);

#endif
