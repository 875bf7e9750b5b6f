#include "memcached.h"
#include "ac_policy.h"
#include "ac_options.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ac_options ac_opts = {
    .policy = "none",
    .block_size = 0,          /* default: 1 MiB, or -m/16 when that is smaller */
    .compact_fill = 0.5,
    .alloc_wait_ns = 5000000000ULL,
    .borrow_pages = 2,
    .lru_sample = 1,
    .alru_bits = 24,                      /* Redis LRU_BITS */
    .alru_samples = 5,                    /* Redis maxmemory-samples */
    .alru_resolution_ns = 1000000000ULL,  /* Redis LRU_CLOCK_RESOLUTION: 1000 ms */
    .log_sample = 1.0,
    .log_alpha = 0.05,                    /* Levandoski et al. ICDE 2013 §III */
    .log_round = 100000,
    .log_slice = 20000,
    .log_hot_fill = 0.9,
};

size_t ac_default_keys(size_t bytes) {
    /* an eighth of the memory for a table of 28 bytes per slot (logging's
     * estimate table, policy/classify.c) at 90 % load, slots a power of two */
    uint64_t slots = 16;
    while ((slots * 2) * 28 <= bytes / 8)
        slots *= 2;
    size_t keys = (size_t)((double)slots * 0.9);
    return keys < 1024 ? 1024 : keys;
}

/* "123", "64K", "1M", "2G" -> bytes */
static int parse_size(const char *v, size_t *out) {
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno != 0 || end == v || v[0] == '-')
        return -1;
    unsigned long long mul = 1;
    if (*end == 'k' || *end == 'K') mul = 1ULL << 10, end++;
    else if (*end == 'm' || *end == 'M') mul = 1ULL << 20, end++;
    else if (*end == 'g' || *end == 'G') mul = 1ULL << 30, end++;
    if (*end != '\0' || n > (~0ULL) / mul)
        return -1;
    *out = (size_t)(n * mul);
    return 0;
}

static int set_policy(const char *v) {
    if (!ac_policy_known(v)) {
        fprintf(stderr, "memcached-ac: unknown ac_policy \"%s\"; valid policies: %s\n", v, ac_policy_names());
        return -1;
    }
    snprintf(ac_opts.policy, sizeof(ac_opts.policy), "%s", v);
    return 0;
}

static int set_tier(const char *v) {
    if (!ac_tier_known(v)) {
        fprintf(stderr, "memcached-ac: unknown ac_tier \"%s\"; valid tiers: %s\n", v, ac_tier_names());
        return -1;
    }
    snprintf(ac_opts.tier, sizeof(ac_opts.tier), "%s", v);
    return 0;
}

static int set_spill_dir(const char *v) {
    if (v[0] != '/' || strlen(v) >= sizeof(ac_opts.spill_dir) - 32) {
        fprintf(stderr, "memcached-ac: ac_spill_dir must be an absolute path shorter than %zu bytes, got \"%s\"\n",
                sizeof(ac_opts.spill_dir) - 32, v);
        return -1;
    }
    snprintf(ac_opts.spill_dir, sizeof(ac_opts.spill_dir), "%s", v);
    return 0;
}

static int set_block_size(const char *v) {
    size_t n;
    if (parse_size(v, &n) != 0 || n < 4096 || n > (64u << 20)) {
        fprintf(stderr, "memcached-ac: ac_block_size must be a size from 4K to 64M (e.g. 1M), got \"%s\"\n", v);
        return -1;
    }
    ac_opts.block_size = n;
    return 0;
}

static int set_merge(const char *v) {
    if (strcmp(v, "tuple") == 0) ac_opts.merge_block = false;
    else if (strcmp(v, "block") == 0) ac_opts.merge_block = true;
    else {
        fprintf(stderr, "memcached-ac: ac_merge must be \"tuple\" or \"block\", got \"%s\"\n", v);
        return -1;
    }
    return 0;
}

static int set_compact_fill(const char *v) {
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (errno != 0 || end == v || *end != '\0' || !(d >= 0.0 && d <= 1.0)) {
        fprintf(stderr, "memcached-ac: ac_compact_fill must be a number from 0 to 1, got \"%s\"\n", v);
        return -1;
    }
    ac_opts.compact_fill = d;
    return 0;
}

static int set_evicted_max(const char *v) {
    size_t n;
    if (parse_size(v, &n) != 0 || n < 1 || n >= (1ULL << 32) - 1) {
        fprintf(stderr, "memcached-ac: ac_evicted_max must be a count of items from 1 to 4294967294"
                " (K/M/G suffixes allowed), got \"%s\"\n", v);
        return -1;
    }
    ac_opts.evicted_max = n;
    return 0;
}

static int set_lru_sample(const char *v) {
    size_t n;
    if (parse_size(v, &n) != 0 || n < 1 || n > 1000000) {
        fprintf(stderr, "memcached-ac: ac_lru_sample must be an integer N from 1 to 1000000"
                " (order updated on 1 in N accesses), got \"%s\"\n", v);
        return -1;
    }
    ac_opts.lru_sample = (unsigned)n;
    return 0;
}

static int set_alru_bits(const char *v) {
    size_t n;
    if (parse_size(v, &n) != 0 || n < 22 || n > 24) {
        fprintf(stderr, "memcached-ac: ac_alru_bits must be 22, 23 or 24 (bits of the access clock), got \"%s\"\n", v);
        return -1;
    }
    ac_opts.alru_bits = (unsigned)n;
    return 0;
}

static int set_alru_samples(const char *v) {
    size_t n;
    if (parse_size(v, &n) != 0 || n < 1 || n > 64) {
        fprintf(stderr, "memcached-ac: ac_alru_samples must be an integer from 1 to 64, got \"%s\"\n", v);
        return -1;
    }
    ac_opts.alru_samples = (unsigned)n;
    return 0;
}

/* "1s", "100ms", "1us", "500ns" (a unit is required) -> ns, at most max_s seconds */
static int parse_duration(const char *v, uint64_t max_s, uint64_t *ns) {
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    unsigned long long mul = 0;
    if (strcmp(end, "s") == 0) mul = 1000000000ULL;
    else if (strcmp(end, "ms") == 0) mul = 1000000ULL;
    else if (strcmp(end, "us") == 0) mul = 1000ULL;
    else if (strcmp(end, "ns") == 0) mul = 1ULL;
    if (errno != 0 || end == v || v[0] == '-' || mul == 0 || n > max_s * 1000000000ULL / mul)
        return -1;
    *ns = n * mul;
    return 0;
}

static int set_alru_resolution(const char *v) {
    uint64_t ns;
    if (parse_duration(v, 3600, &ns) != 0 || ns == 0) {
        fprintf(stderr, "memcached-ac: ac_alru_resolution must be a duration from 1ns to 3600s with a unit"
                " s, ms, us or ns (e.g. 1s as Redis, 1us as the paper), got \"%s\"\n", v);
        return -1;
    }
    ac_opts.alru_resolution_ns = ns;
    return 0;
}

static int set_alloc_wait(const char *v) {
    uint64_t ns;
    if (strcmp(v, "0") == 0)
        ns = 0;
    else if (parse_duration(v, 600, &ns) != 0) {
        fprintf(stderr, "memcached-ac: ac_alloc_wait must be 0 or a duration up to 600s with a unit"
                " s, ms or us (e.g. 5s), got \"%s\"\n", v);
        return -1;
    }
    ac_opts.alloc_wait_ns = ns;
    return 0;
}

static int set_borrow_pages(const char *v) {
    char *end;
    errno = 0;
    unsigned long n = strtoul(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || v[0] == '-' || n > 64) {
        fprintf(stderr, "memcached-ac: ac_borrow_pages must be a number of slab pages from 0 to 64"
                " (0: never borrow, only wait), got \"%s\"\n", v);
        return -1;
    }
    ac_opts.borrow_pages = (unsigned)n;
    return 0;
}

/* a number in (lo, hi] (lo_open) or [lo, hi] */
static int parse_fraction(const char *v, double lo, double hi, bool lo_open, double *out) {
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (errno != 0 || end == v || *end != '\0' || !(d <= hi) || !(lo_open ? d > lo : d >= lo))
        return -1;
    *out = d;
    return 0;
}

static int set_log_sample(const char *v) {
    if (parse_fraction(v, 0.0, 1.0, true, &ac_opts.log_sample) != 0) {
        fprintf(stderr, "memcached-ac: ac_log_sample must be a fraction in (0, 1] (1 logs every access), got \"%s\"\n", v);
        return -1;
    }
    return 0;
}

static int set_log_alpha(const char *v) {
    if (parse_fraction(v, 0.0, 1.0, true, &ac_opts.log_alpha) != 0) {
        fprintf(stderr, "memcached-ac: ac_log_alpha must be a number in (0, 1] (e.g. 0.05), got \"%s\"\n", v);
        return -1;
    }
    return 0;
}

/* "100000" accesses, or "2s" / "500ms" */
static int set_log_round(const char *v) {
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    bool ok = errno == 0 && end != v && v[0] != '-' && n > 0;
    if (ok && *end == '\0' && n <= 1000000000ULL) {
        ac_opts.log_round = n;
        ac_opts.log_round_ns = 0;
        return 0;
    }
    unsigned long long mul = strcmp(end, "s") == 0 ? 1000000000ULL : strcmp(end, "ms") == 0 ? 1000000ULL : 0;
    /* n is bounded before the multiplication: 18446744074s used to wrap to 0.29 s */
    if (ok && mul != 0 && n <= 3600ULL * 1000000000ULL / mul && n * mul >= 10000000ULL) {
        ac_opts.log_round = 0;
        ac_opts.log_round_ns = n * mul;
        return 0;
    }
    fprintf(stderr, "memcached-ac: ac_log_round must be a count of logged accesses from 1 to 1000000000"
            " (e.g. 100000) or a duration from 10ms to 3600s (e.g. 2s, 500ms), got \"%s\"\n", v);
    return -1;
}

static int set_log_slice(const char *v) {
    size_t n;
    if (parse_size(v, &n) != 0 || n < 1 || n > 1000000000) {
        fprintf(stderr, "memcached-ac: ac_log_slice must be a count of logged accesses per time slice"
                " from 1 to 1000000000, got \"%s\"\n", v);
        return -1;
    }
    ac_opts.log_slice = n;
    return 0;
}

static int set_log_keys(const char *v) {
    size_t n;
    if (parse_size(v, &n) != 0 || n < 1024 || n > (1ULL << 30)) {
        fprintf(stderr, "memcached-ac: ac_log_keys must be a count of keys from 1024 to 1G"
                " (K/M/G suffixes allowed), got \"%s\"\n", v);
        return -1;
    }
    ac_opts.log_keys = n;
    return 0;
}

static int set_log_hot_fill(const char *v) {
    if (parse_fraction(v, 0.0, 1.0, true, &ac_opts.log_hot_fill) != 0) {
        fprintf(stderr, "memcached-ac: ac_log_hot_fill must be a fraction in (0, 1] of the item memory, got \"%s\"\n", v);
        return -1;
    }
    return 0;
}

static int set_path(const char *key, const char *v, char *dst, size_t size) {
    if (strlen(v) >= size) {
        fprintf(stderr, "memcached-ac: %s must be a path shorter than %zu bytes\n", key, size);
        return -1;
    }
    snprintf(dst, size, "%s", v);
    return 0;
}

static int set_driver(const char *v) {
    return set_path("ac_driver", v, ac_opts.driver, sizeof(ac_opts.driver));
}

static int set_driver_out(const char *v) {
    return set_path("ac_driver_out", v, ac_opts.driver_out, sizeof(ac_opts.driver_out));
}

static int set_driver_set(const char *v) {
    const char *eq = strchr(v, '=');
    if (eq == NULL || eq == v) {
        fprintf(stderr, "memcached-ac: ac_driver_set takes one workload property as key=value"
                " (e.g. ac_driver_set=recordcount=1000), got \"%s\"\n", v);
        return -1;
    }
    if (ac_opts.n_driver_set >= AC_DRIVER_SET_MAX) {
        fprintf(stderr, "memcached-ac: at most %d ac_driver_set options\n", AC_DRIVER_SET_MAX);
        return -1;
    }
    char *copy = strdup(v);
    if (copy == NULL) {
        fprintf(stderr, "memcached-ac: out of memory\n");
        return -1;
    }
    ac_opts.driver_set[ac_opts.n_driver_set++] = copy;
    return 0;
}

static int set_os_backing(const char *v) {
    if (strcmp(v, "anon") == 0) snprintf(ac_opts.tier, sizeof(ac_opts.tier), "swap");
    else if (strcmp(v, "file") == 0) snprintf(ac_opts.tier, sizeof(ac_opts.tier), "mmapfile");
    else {
        fprintf(stderr, "memcached-ac: ac_os_backing must be \"anon\" (anonymous memory, paged to swap)"
                " or \"file\" (a shared file mapping in ac_spill_dir), got \"%s\"\n", v);
        return -1;
    }
    return 0;
}

static int set_eff_memory(const char *v) {
    size_t n;
    if (parse_size(v, &n) != 0 || n < (2u << 20)) {
        fprintf(stderr, "memcached-ac: ac_eff_memory must be a size of at least 2M (e.g. 512M), the memory"
                " effpaging may lock for its hot region and its classifier, got \"%s\"\n", v);
        return -1;
    }
    ac_opts.eff_memory = n;
    return 0;
}

static int set_eff_madv_cold(const char *v) {
    if (strcmp(v, "0") == 0) ac_opts.eff_madv_cold = false;
    else if (strcmp(v, "1") == 0) ac_opts.eff_madv_cold = true;
    else {
        fprintf(stderr, "memcached-ac: ac_eff_madv_cold must be 0 or 1, got \"%s\"\n", v);
        return -1;
    }
    return 0;
}

static const struct {
    const char *key;
    int (*set)(const char *value);
    const char *help;
} table[] = {
    { "ac_policy", set_policy, "access tracking + eviction, or an approach name (default: none = evict as memcached does)" },
    { "ac_tier", set_tier, "book-keeping + swapping of spilled items (default: the policy's first, see below)" },
    { "ac_spill_dir", set_spill_dir, "private directory for spilled items (default: /var/tmp/memcached-ac.PID)" },
    { "ac_block_size", set_block_size, "bytes per spill block, 4K..64M (default: 1M, or -m/16 if smaller)" },
    { "ac_merge", set_merge, "tuple: fetch one item; block: fetch its whole block (default: tuple)" },
    { "ac_compact_fill", set_compact_fill, "tuple-merge: merge a block whose live fraction falls below (default: 0.5)" },
    { "ac_evicted_max", set_evicted_max, "spilled items at most (default: no cap; the evicted table grows with them, charged against -m)" },
    { "ac_alloc_wait", set_alloc_wait, "spilling policies: longest wait for room before a store is refused (default: 5s)" },
    { "ac_borrow_pages", set_borrow_pages, "spilling policies: slab pages a starved class may borrow past -m until repaid (default: 2)" },
    { "ac_lru_sample", set_lru_sample, "lru: update the order on 1 in N accesses (default: 1)" },
    { "ac_alru_bits", set_alru_bits, "alru: bits of the per-item access clock, 22..24 (default: 24, as Redis)" },
    { "ac_alru_samples", set_alru_samples, "alru: items sampled per victim into the pool of 16 (default: 5, as Redis)" },
    { "ac_alru_resolution", set_alru_resolution, "alru: clock tick, e.g. 1s (Redis, default), 1ms, 1us (the paper)" },
    { "ac_log_sample", set_log_sample, "logging, effpaging: fraction of accesses logged (default: 1)" },
    { "ac_log_alpha", set_log_alpha, "logging, effpaging: exponential-smoothing constant (default: 0.05, as Siberia)" },
    { "ac_log_round", set_log_round, "logging, effpaging: classify every N logged accesses or every Ns/Nms (default: 100000)" },
    { "ac_log_slice", set_log_slice, "logging, effpaging: logged accesses per time slice (default: 20000)" },
    { "ac_log_keys", set_log_keys, "logging, effpaging: keys the estimate table tracks, 28 B per slot (default: an eighth of -m / ac_eff_memory)" },
    { "ac_log_hot_fill", set_log_hot_fill, "logging, effpaging: hot-set budget, fraction of item memory / hot region (default: 0.9)" },
    { "ac_os_backing", set_os_backing, "anon = ac_tier=swap, file = ac_tier=mmapfile (the ospaging approaches' names)" },
    { "ac_eff_memory", set_eff_memory, "effpaging: memory to lock, hot region + classifier (default: what the cgroup allows)" },
    { "ac_eff_madv_cold", set_eff_madv_cold, "effpaging: 1 = MADV_COLD the cold region after each round (default: 0)" },
    { "ac_driver", set_driver, "run this YCSB workload file in-process, print JSON and exit (no network)" },
    { "ac_driver_out", set_driver_out, "ac_driver: write the JSON result to this file (default: stdout)" },
    { "ac_driver_set", set_driver_set, "ac_driver: override one workload property, key=value (repeatable)" },
};

void ac_usage(void) {
    printf("\n   - Anti-caching (ac_*) options: spill cold items to disk instead of evicting\n");
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        printf("   - %-20s%s\n", table[i].key, table[i].help);
    ac_list_components();
}

bool ac_is_option(const char *kv) {
    return strncmp(kv, "ac_", 3) == 0;
}

int ac_parse_option(const char *arg) {
    /* memcached hands over the rest of the -o list: take one "key=value" */
    char kv[1200];
    size_t n = strcspn(arg, ",");
    if (n >= sizeof(kv)) {
        fprintf(stderr, "memcached-ac: suboption too long: %.40s...\n", arg);
        return -1;
    }
    memcpy(kv, arg, n);
    kv[n] = '\0';
    const char *eq = strchr(kv, '=');
    size_t klen = eq ? (size_t)(eq - kv) : strlen(kv);
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        if (strlen(table[i].key) == klen && strncmp(table[i].key, kv, klen) == 0) {
            if (eq == NULL || eq[1] == '\0') {
                fprintf(stderr, "memcached-ac: %s needs a value (%s=VALUE)\n", table[i].key, table[i].key);
                return -1;
            }
            return table[i].set(eq + 1);
        }
    }
    fprintf(stderr, "memcached-ac: unknown option \"%.*s\"; valid anti-caching options:", (int)klen, kv);
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        fprintf(stderr, "%s %s", i ? "," : "", table[i].key);
    fprintf(stderr, "\n");
    return -1;
}
