/* The -o ac_* settings of memcached-ac: each component declares its own
 * options and keeps their values (ac_opt.h); ac_options.c parses and
 * validates them all; these are the core's. */
#ifndef AC_OPTIONS_H
#define AC_OPTIONS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AC_DRIVER_SET_MAX 64

/* The core's settings; a policy's or a tier's are in its own file. */
struct ac_options {
    char policy[32];         /* ac_policy (a policy, or an approach name standing for a pair) */
    char tier[32];           /* ac_tier ("" = the policy's default tier) */
    char spill_dir[1024];    /* ac_spill_dir ("" = /var/tmp/memcached-ac.PID) */
    uint64_t alloc_wait_ns;  /* ac_alloc_wait: longest wait for room before a refusal */
    unsigned borrow_pages;   /* ac_borrow_pages: slab pages owed past -m at most */
    /* In-process YCSB driver (ycsb-driver/inproc.c): run a workload, print JSON, exit. */
    char driver[1024];       /* ac_driver: workload property file ("" = serve the network) */
    char driver_out[1024];   /* ac_driver_out: result file ("" = stdout) */
    char driver_gate[1024];  /* ac_driver_gate: phase handshake files' prefix ("" = none) */
    char *driver_set[AC_DRIVER_SET_MAX];   /* ac_driver_set=key=value, in order */
    int n_driver_set;
    uint64_t driver_depth;   /* ac_driver_depth: requests each driver thread keeps in flight */
    char driver_trace[1024]; /* ac_driver_trace: a request trace to replay ("" = the workload's requests) */
    char driver_trace_format[16];   /* ac_driver_format: auto, csv or oracleGeneral */
    uint64_t park_threads;   /* ac_park_threads: fetcher threads of parked gets (0: none) */
};

extern struct ac_options ac_opts;

/* Starts every field from its option's default (the first ac_parse_option
 * and ac_init call it; idempotent). */
void ac_options_init(void);
/* Back to the defaults, nothing given (frees ac_driver_set's strings). */
void ac_options_reset(void);
/* True for "ac_..." suboptions. */
bool ac_is_option(const char *kv);
/* Parses "ac_key=value" into ac_opts; prints an error naming what is accepted
 * and returns -1 on bad input. "ac_help" prints every option (its range, its
 * default, a line of help) and the policies and tiers to stdout, and exits 0
 * (memcached's -o loop has no other way to stop with success); "ac_list"
 * prints ac_list_json's and exits 0. */
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
/* -o ac_list: the policies (capabilities they need, default tier, the tiers
 * they work over, options), the tiers (shape, capabilities, files, options),
 * every pair that works and the approach names, as one JSON object on stdout
 * (policies/README.md, "-o ac_list"). */
void ac_list_json(void);
/* Calls fn for the name of every file any tier keeps in a spill directory. */
void ac_all_tier_files(void (*fn)(const char *name, void *arg), void *arg);
#endif
