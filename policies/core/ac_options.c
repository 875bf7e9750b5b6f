/* The -o ac_* settings: one table declares every option (key, type and range,
 * the ac_opts field it sets, its default as text, a line of help); one parser
 * per type reads a value into its field, and the messages, -h and -o ac_help
 * are written from the same table. A value is only ever the one given: no
 * option writes a value derived from another back into ac_opts (a 0 in
 * block_size, evicted_max, log_keys, eff_memory means "derived at start", by
 * the component that uses it). */
#include "memcached.h"
#include "ac_policy.h"
#include "ac_options.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The initial values; the table's default texts must parse to them (checked
 * by ac_help and -h). */
#define AC_OPTS_DEFAULTS {                                                  \
    .policy = "none",                                                       \
    .block_size = 0,          /* 1 MiB, or -m/16 when that is smaller */    \
    .merge_block = false,                                                   \
    .compact_fill = 0.5,                                                    \
    .alloc_wait_ns = 5000000000ULL,                                         \
    .borrow_pages = 2,                                                      \
    .lru_sample = 1,                                                        \
    .alru_bits = 24,                      /* Redis LRU_BITS */              \
    .alru_samples = 5,                    /* Redis maxmemory-samples */     \
    .alru_resolution_ns = 1000000000ULL,  /* Redis LRU_CLOCK_RESOLUTION */  \
    .log_sample = 1.0,                                                      \
    .log_alpha = 0.05,                    /* Levandoski et al. ICDE 2013 */ \
    .log_round = 100000,                                                    \
    .log_slice = 20000,                                                     \
    .log_hot_fill = 0.9,                                                    \
    .eff_madv_cold = false,                                                 \
}

struct ac_options ac_opts = AC_OPTS_DEFAULTS;
static const struct ac_options initial = AC_OPTS_DEFAULTS;

size_t ac_default_keys(size_t bytes) {
    /* an eighth of the memory for a table of 28 bytes per slot (logging's
     * estimate table, policy/classify.c) at 90 % load, slots a power of two */
    uint64_t slots = 16;
    while ((slots * 2) * 28 <= bytes / 8)
        slots *= 2;
    size_t keys = (size_t)((double)slots * 0.9);
    return keys < 1024 ? 1024 : keys;
}

/* ---- the table ------------------------------------------------------------ */

enum ac_type {
    T_NAME,      /* a component name: known() decides, names() lists them */
    T_PATH,      /* text shorter than max bytes; absolute: must start with '/' */
    T_SIZE,      /* bytes: digits with an optional K/M/G suffix, min..max */
    T_COUNT,     /* a count, the same grammar as T_SIZE, min..max */
    T_DOUBLE,    /* a number in [lo, hi] or (lo, hi] (lo_open) */
    T_DURATION,  /* digits + one of the allowed units, min..max ns; bare 0 when min is 0 */
    T_ENUM,      /* one of words: stores its value, or its text into a char field */
    T_CUSTOM,    /* parse() does it, what says what it accepts */
};

/* duration units */
enum { U_S = 1, U_MS = 2, U_US = 4, U_NS = 8 };
static const struct { const char *name; uint64_t ns; unsigned bit; } units[] = {
    { "s", 1000000000ULL, U_S }, { "ms", 1000000ULL, U_MS }, { "us", 1000ULL, U_US }, { "ns", 1ULL, U_NS },
};
#define N_UNITS (sizeof(units) / sizeof(units[0]))

struct ac_word {
    const char *word;
    const char *desc;    /* said after the word in messages, or NULL */
    uint64_t value;      /* stored in an integer field ... */
    const char *text;    /* ... or, if set, this text into a char field */
};

struct ac_opt;
typedef int (*ac_parse_fn)(struct ac_options *o, const struct ac_opt *opt, const char *v);

struct ac_opt {
    const char *key;
    enum ac_type type;
    size_t off, size;                /* the field in struct ac_options */
    uint64_t min, max;               /* SIZE, COUNT, DURATION (ns); PATH: max = length bound */
    double lo, hi;                   /* DOUBLE */
    bool lo_open;                    /* DOUBLE: lo itself refused */
    bool absolute;                   /* PATH */
    unsigned units;                  /* DURATION: U_* allowed */
    const struct ac_word *words;     /* ENUM, ends with a NULL word */
    bool (*known)(const char *name); /* NAME */
    const char *(*names)(void);      /* NAME: comma-separated, for messages */
    ac_parse_fn parse;               /* CUSTOM */
    /* messages: "KEY must be NOUN RANGE NOTE, got "VALUE"" (RANGE from the
     * type); NAME: the plural; CUSTOM: what = the whole accepted text */
    const char *noun, *note, *what;
    const char *def;                 /* the default, as text */
    bool def_is_value;               /* def parses to the initial value */
    const char *help;
};

#define FIELD(f) .off = offsetof(struct ac_options, f), .size = sizeof(((struct ac_options *)0)->f)
#define NOMAX UINT64_MAX
#define KIB 1024ULL
#define SEC 1000000000ULL

static int parse_log_round(struct ac_options *o, const struct ac_opt *opt, const char *v);
static int parse_driver_set(struct ac_options *o, const struct ac_opt *opt, const char *v);

static const struct ac_word merge_words[] = {
    { "tuple", NULL, 0, NULL }, { "block", NULL, 1, NULL }, { NULL, NULL, 0, NULL },
};
static const struct ac_word os_backing_words[] = {
    { "anon", "anonymous memory, paged to swap", 0, "swap" },
    { "file", "a shared file mapping in ac_spill_dir", 0, "mmapfile" },
    { NULL, NULL, 0, NULL },
};
static const struct ac_word bool_words[] = {
    { "0", NULL, 0, NULL }, { "1", NULL, 1, NULL }, { NULL, NULL, 0, NULL },
};

static const struct ac_opt table[] = {
    { .key = "ac_policy", .type = T_NAME, FIELD(policy),
      .known = ac_policy_known, .names = ac_policy_names, .noun = "policies",
      .def = "none", .def_is_value = true,
      .help = "access tracking + eviction, or an approach name (none: evict as memcached does)" },
    { .key = "ac_tier", .type = T_NAME, FIELD(tier),
      .known = ac_tier_known, .names = ac_tier_names, .noun = "tiers",
      .def = "the policy's first",
      .help = "book-keeping + swapping of spilled items" },
    { .key = "ac_spill_dir", .type = T_PATH, FIELD(spill_dir), .absolute = true,
      .max = sizeof(ac_opts.spill_dir) - 32,     /* room for the file names */
      .def = "/var/tmp/memcached-ac.PID",
      .help = "private directory for spilled items" },
    { .key = "ac_block_size", .type = T_SIZE, FIELD(block_size), .min = 4 * KIB, .max = 64 * KIB * KIB,
      .noun = "a size", .note = "(e.g. 1M)",
      .def = "1M, or -m/16 if smaller",
      .help = "bytes per spill block" },
    { .key = "ac_merge", .type = T_ENUM, FIELD(merge_block), .words = merge_words,
      .def = "tuple", .def_is_value = true,
      .help = "tuple: fetch one item; block: fetch its whole block" },
    { .key = "ac_compact_fill", .type = T_DOUBLE, FIELD(compact_fill), .lo = 0.0, .hi = 1.0,
      .noun = "a number",
      .def = "0.5", .def_is_value = true,
      .help = "tuple-merge: merge a block whose live fraction falls below" },
    { .key = "ac_evicted_max", .type = T_COUNT, FIELD(evicted_max), .min = 1, .max = (1ULL << 32) - 2,
      .noun = "a count of items", .note = "(K/M/G suffixes allowed)",
      .def = "no cap",
      .help = "spilled items at most (the evicted table grows with them, charged against -m)" },
    { .key = "ac_alloc_wait", .type = T_DURATION, FIELD(alloc_wait_ns), .min = 0, .max = 600 * SEC,
      .units = U_S | U_MS | U_US, .note = "(e.g. 5s)",
      .def = "5s", .def_is_value = true,
      .help = "spilling policies: longest wait for room before a store is refused" },
    { .key = "ac_borrow_pages", .type = T_COUNT, FIELD(borrow_pages), .min = 0, .max = 64,
      .noun = "a number of slab pages", .note = "(0: never borrow, only wait)",
      .def = "2", .def_is_value = true,
      .help = "spilling policies: slab pages a starved class may borrow past -m until repaid" },
    { .key = "ac_lru_sample", .type = T_COUNT, FIELD(lru_sample), .min = 1, .max = 1000000,
      .noun = "an integer N", .note = "(order updated on 1 in N accesses)",
      .def = "1", .def_is_value = true,
      .help = "lru: update the order on 1 in N accesses" },
    { .key = "ac_alru_bits", .type = T_COUNT, FIELD(alru_bits), .min = 22, .max = 24,
      .note = "(bits of the access clock)",
      .def = "24", .def_is_value = true,
      .help = "alru: bits of the per-item access clock (24 as Redis, 22 as the paper)" },
    { .key = "ac_alru_samples", .type = T_COUNT, FIELD(alru_samples), .min = 1, .max = 64,
      .noun = "an integer",
      .def = "5", .def_is_value = true,
      .help = "alru: items sampled per victim into the pool of 16 (5 as Redis)" },
    { .key = "ac_alru_resolution", .type = T_DURATION, FIELD(alru_resolution_ns), .min = 1, .max = 3600 * SEC,
      .units = U_S | U_MS | U_US | U_NS, .note = "(e.g. 1s as Redis, 1us as the paper)",
      .def = "1s", .def_is_value = true,
      .help = "alru: clock tick (1s as Redis, 1us as the paper)" },
    { .key = "ac_log_sample", .type = T_DOUBLE, FIELD(log_sample), .lo = 0.0, .hi = 1.0, .lo_open = true,
      .noun = "a fraction", .note = "(1 logs every access)",
      .def = "1", .def_is_value = true,
      .help = "logging, effpaging: fraction of accesses logged" },
    { .key = "ac_log_alpha", .type = T_DOUBLE, FIELD(log_alpha), .lo = 0.0, .hi = 1.0, .lo_open = true,
      .noun = "a number", .note = "(e.g. 0.05)",
      .def = "0.05", .def_is_value = true,
      .help = "logging, effpaging: exponential-smoothing constant (0.05 as Siberia)" },
    { .key = "ac_log_round", .type = T_CUSTOM, FIELD(log_round), .parse = parse_log_round,
      .what = "a count of logged accesses from 1 to 1000000000 (e.g. 100000)"
              " or a duration from 10ms to 3600s (e.g. 2s, 500ms)",
      .def = "100000", .def_is_value = true,
      .help = "logging, effpaging: classify every N logged accesses or every Ns/Nms" },
    { .key = "ac_log_slice", .type = T_COUNT, FIELD(log_slice), .min = 1, .max = 1000000000,
      .noun = "a count of logged accesses per time slice",
      .def = "20000", .def_is_value = true,
      .help = "logging, effpaging: logged accesses per time slice" },
    { .key = "ac_log_keys", .type = T_COUNT, FIELD(log_keys), .min = 1024, .max = KIB * KIB * KIB,
      .noun = "a count of keys", .note = "(K/M/G suffixes allowed)",
      .def = "an eighth of -m / ac_eff_memory",
      .help = "logging, effpaging: keys the estimate table tracks, 28 B per slot" },
    { .key = "ac_log_hot_fill", .type = T_DOUBLE, FIELD(log_hot_fill), .lo = 0.0, .hi = 1.0, .lo_open = true,
      .noun = "a fraction", .note = "of the item memory",
      .def = "0.9", .def_is_value = true,
      .help = "logging, effpaging: hot-set budget, fraction of item memory / hot region" },
    /* another name for ac_tier: the one given last wins */
    { .key = "ac_os_backing", .type = T_ENUM, FIELD(tier), .words = os_backing_words,
      .def = "none (ac_tier decides)",
      .help = "anon = ac_tier=swap, file = ac_tier=mmapfile (the ospaging approaches' names)" },
    { .key = "ac_eff_memory", .type = T_SIZE, FIELD(eff_memory), .min = 2 * KIB * KIB, .max = NOMAX,
      .noun = "a size", .note = "(e.g. 512M), the memory effpaging may lock for its hot region and its classifier",
      .def = "what the cgroup allows",
      .help = "effpaging: memory to lock, hot region + classifier" },
    { .key = "ac_eff_madv_cold", .type = T_ENUM, FIELD(eff_madv_cold), .words = bool_words,
      .def = "0", .def_is_value = true,
      .help = "effpaging: 1 = MADV_COLD the cold region after each round" },
    { .key = "ac_driver", .type = T_PATH, FIELD(driver), .max = sizeof(ac_opts.driver),
      .def = "none: serve the network",
      .help = "run this YCSB workload file in-process, print JSON and exit (no network)" },
    { .key = "ac_driver_out", .type = T_PATH, FIELD(driver_out), .max = sizeof(ac_opts.driver_out),
      .def = "stdout",
      .help = "ac_driver: write the JSON result to this file" },
    { .key = "ac_driver_set", .type = T_CUSTOM, FIELD(driver_set), .parse = parse_driver_set,
      .what = "one workload property as key=value (e.g. ac_driver_set=recordcount=1000),"
              " at most 64 times",
      .def = "none",
      .help = "ac_driver: override one workload property, key=value (repeatable)" },
};
#define N_OPTS (sizeof(table) / sizeof(table[0]))

/* ---- formatting ------------------------------------------------------------ */

static void append(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t n, const char *fmt, ...) {
    size_t used = strlen(buf);
    if (used + 1 >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, n - used, fmt, ap);
    va_end(ap);
}

/* bytes: 4096 -> "4K", 2097152 -> "2M" */
static void append_size(char *buf, size_t n, uint64_t v) {
    static const char suffix[] = "GMK";
    for (int i = 0; i < 3; i++) {
        uint64_t unit = 1ULL << (10 * (3 - i));
        if (v != 0 && v % unit == 0) {
            append(buf, n, "%llu%c", (unsigned long long)(v / unit), suffix[i]);
            return;
        }
    }
    append(buf, n, "%llu", (unsigned long long)v);
}

/* counts: in decimal, a whole number of M or G with its suffix (1G, not 1073741824) */
static void append_count(char *buf, size_t n, uint64_t v) {
    if (v != 0 && v % (KIB * KIB) == 0)
        append_size(buf, n, v);
    else
        append(buf, n, "%llu", (unsigned long long)v);
}

/* ns in the largest unit that divides them: 3600000000000 -> "3600s" */
static void append_duration(char *buf, size_t n, uint64_t ns) {
    for (size_t i = 0; i < N_UNITS; i++)
        if (ns % units[i].ns == 0 || i == N_UNITS - 1) {
            append(buf, n, "%llu%s", (unsigned long long)(ns / units[i].ns), units[i].name);
            return;
        }
}

/* "a, b or c" (the i-th of count) */
static const char *list_sep(size_t i, size_t count) {
    return i == 0 ? "" : i + 1 == count ? " or " : ", ";
}

static bool all_digits(const char *s) {
    for (; *s != '\0'; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

/* What opt accepts, as messages say it after "must be ". */
static void accepted(const struct ac_opt *opt, char *buf, size_t n) {
    buf[0] = '\0';
    if (opt->noun != NULL && opt->type != T_NAME)
        append(buf, n, "%s ", opt->noun);
    switch (opt->type) {
    case T_NAME:
        append(buf, n, "one of %s (listed below)", opt->names());
        break;
    case T_PATH:
        append(buf, n, "%s path shorter than %llu bytes", opt->absolute ? "an absolute" : "a",
               (unsigned long long)opt->max);
        break;
    case T_SIZE:
        if (opt->max == NOMAX) {
            append(buf, n, "of at least ");
            append_size(buf, n, opt->min);
        } else {
            append(buf, n, "from ");
            append_size(buf, n, opt->min);
            append(buf, n, " to ");
            append_size(buf, n, opt->max);
        }
        break;
    case T_COUNT:
        if (opt->max - opt->min <= 2) {       /* few enough to name: "22, 23 or 24" */
            for (uint64_t v = opt->min; v <= opt->max; v++)
                append(buf, n, "%s%llu", list_sep((size_t)(v - opt->min), (size_t)(opt->max - opt->min + 1)), (unsigned long long)v);
        } else {
            append(buf, n, "from ");
            append_count(buf, n, opt->min);
            append(buf, n, " to ");
            append_count(buf, n, opt->max);
        }
        break;
    case T_DOUBLE:
        append(buf, n, opt->lo_open ? "in (%g, %g]" : "from %g to %g", opt->lo, opt->hi);
        break;
    case T_DURATION: {
        if (opt->min == 0) {
            append(buf, n, "0 or a duration up to ");
        } else {
            append(buf, n, "a duration from ");
            append_duration(buf, n, opt->min);
            append(buf, n, " to ");
        }
        append_duration(buf, n, opt->max);
        append(buf, n, " with a unit ");
        size_t count = 0, i = 0;
        for (size_t u = 0; u < N_UNITS; u++)
            count += (opt->units & units[u].bit) != 0;
        for (size_t u = 0; u < N_UNITS; u++)
            if (opt->units & units[u].bit)
                append(buf, n, "%s%s", list_sep(i++, count), units[u].name);
        break;
    }
    case T_ENUM: {
        size_t count = 0;
        while (opt->words[count].word != NULL)
            count++;
        for (size_t i = 0; i < count; i++) {
            const struct ac_word *w = &opt->words[i];
            append(buf, n, all_digits(w->word) ? "%s%s" : "%s\"%s\"", list_sep(i, count), w->word);
            if (w->desc != NULL)
                append(buf, n, " (%s)", w->desc);
        }
        break;
    }
    case T_CUSTOM:
        append(buf, n, "%s", opt->what);
        break;
    }
    if (opt->note != NULL)
        append(buf, n, " %s", opt->note);
}

/* The message for a value opt does not accept. */
static int refuse(const struct ac_opt *opt, const char *v) {
    char what[512];
    switch (opt->type) {
    case T_NAME:
        fprintf(stderr, "memcached-ac: unknown %s \"%s\"; valid %s: %s\n", opt->key, v, opt->noun, opt->names());
        break;
    case T_PATH:
        accepted(opt, what, sizeof(what));
        if (opt->absolute)
            fprintf(stderr, "memcached-ac: %s must be %s, got \"%s\"\n", opt->key, what, v);
        else                    /* refused only for its length: not repeated */
            fprintf(stderr, "memcached-ac: %s must be %s\n", opt->key, what);
        break;
    default:
        accepted(opt, what, sizeof(what));
        fprintf(stderr, "memcached-ac: %s must be %s, got \"%s\"\n", opt->key, what, v);
        break;
    }
    return -1;
}

/* ---- parsing ------------------------------------------------------------- */

/* Digits only (no sign, no blanks); false when empty or too large. *end: the
 * first byte after them. */
static bool parse_digits(const char *v, uint64_t *out, const char **end) {
    if (*v < '0' || *v > '9')
        return false;
    char *e;
    errno = 0;
    unsigned long long n = strtoull(v, &e, 10);
    if (errno != 0)
        return false;
    *out = n;
    *end = e;
    return true;
}

/* The one size grammar (sizes and counts): "123", "64K", "1M", "2G" (any case). */
static bool parse_size(const char *v, uint64_t *out) {
    uint64_t n;
    const char *end;
    if (!parse_digits(v, &n, &end))
        return false;
    uint64_t mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = 1ULL << 10; end++; break;
    case 'm': case 'M': mul = 1ULL << 20; end++; break;
    case 'g': case 'G': mul = 1ULL << 30; end++; break;
    default: break;
    }
    if (*end != '\0' || n > UINT64_MAX / mul)
        return false;
    *out = n * mul;
    return true;
}

/* digits + one of the units allowed, within [min_ns, max_ns] */
static bool parse_duration(const char *v, unsigned allowed, uint64_t min_ns, uint64_t max_ns, uint64_t *ns) {
    uint64_t n;
    const char *end;
    if (!parse_digits(v, &n, &end))
        return false;
    for (size_t u = 0; u < N_UNITS; u++)
        if ((allowed & units[u].bit) && strcmp(end, units[u].name) == 0) {
            /* bounded before the multiplication: 18446744074s used to wrap to 0.29 s */
            if (n > max_ns / units[u].ns || n * units[u].ns < min_ns)
                return false;
            *ns = n * units[u].ns;
            return true;
        }
    return false;
}

static uint64_t field_max(size_t size) {
    return size >= sizeof(uint64_t) ? UINT64_MAX : (1ULL << (8 * size)) - 1;
}

/* an unsigned integer of the field's width (bool, unsigned, size_t, uint64_t) */
static void store_uint(char *field, size_t size, uint64_t v) {
    switch (size) {
    case 1: { uint8_t x = (uint8_t)v; memcpy(field, &x, 1); break; }
    case 2: { uint16_t x = (uint16_t)v; memcpy(field, &x, 2); break; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(field, &x, 4); break; }
    default: memcpy(field, &v, sizeof(v)); break;
    }
}

static void store_text(char *field, size_t size, const char *v) {
    snprintf(field, size, "%s", v);
}

/* Reads v into opt's field of o; prints the message and returns -1 if refused. */
static int parse_value(struct ac_options *o, const struct ac_opt *opt, const char *v) {
    char *field = (char *)o + opt->off;
    switch (opt->type) {
    case T_NAME:
        if (!opt->known(v) || strlen(v) >= opt->size)
            return refuse(opt, v);
        store_text(field, opt->size, v);
        return 0;
    case T_PATH:
        if (strlen(v) >= opt->max || (opt->absolute && v[0] != '/'))
            return refuse(opt, v);
        store_text(field, opt->size, v);
        return 0;
    case T_SIZE:
    case T_COUNT: {
        uint64_t n;
        if (!parse_size(v, &n) || n < opt->min || n > opt->max || n > field_max(opt->size))
            return refuse(opt, v);
        store_uint(field, opt->size, n);
        return 0;
    }
    case T_DOUBLE: {
        char *end;
        errno = 0;
        double d = strtod(v, &end);
        if (errno != 0 || end == v || *end != '\0' || !(d <= opt->hi) || !(opt->lo_open ? d > opt->lo : d >= opt->lo))
            return refuse(opt, v);
        memcpy(field, &d, sizeof(d));
        return 0;
    }
    case T_DURATION: {
        uint64_t ns;
        if (opt->min == 0 && strcmp(v, "0") == 0)
            ns = 0;
        else if (!parse_duration(v, opt->units, opt->min, opt->max, &ns))
            return refuse(opt, v);
        store_uint(field, opt->size, ns);
        return 0;
    }
    case T_ENUM:
        for (const struct ac_word *w = opt->words; w->word != NULL; w++)
            if (strcmp(v, w->word) == 0) {
                if (w->text != NULL)
                    store_text(field, opt->size, w->text);
                else
                    store_uint(field, opt->size, w->value);
                return 0;
            }
        return refuse(opt, v);
    case T_CUSTOM:
        return opt->parse(o, opt, v);
    }
    return refuse(opt, v);
}

/* ac_log_round: a count of logged accesses ("100000": digits only, so that
 * "1m" is not read as 1048576 accesses) or a duration of s or ms ("2s") */
static int parse_log_round(struct ac_options *o, const struct ac_opt *opt, const char *v) {
    uint64_t n;
    const char *end;
    if (parse_digits(v, &n, &end) && *end == '\0' && n >= 1 && n <= 1000000000ULL) {
        o->log_round = n;
        o->log_round_ns = 0;
        return 0;
    }
    if (parse_duration(v, U_S | U_MS, 10000000ULL, 3600 * SEC, &n)) {
        o->log_round = 0;
        o->log_round_ns = n;
        return 0;
    }
    return refuse(opt, v);
}

static int parse_driver_set(struct ac_options *o, const struct ac_opt *opt, const char *v) {
    const char *eq = strchr(v, '=');
    if (eq == NULL || eq == v) {
        fprintf(stderr, "memcached-ac: %s takes one workload property as key=value"
                " (e.g. ac_driver_set=recordcount=1000), got \"%s\"\n", opt->key, v);
        return -1;
    }
    if (o->n_driver_set >= AC_DRIVER_SET_MAX) {
        fprintf(stderr, "memcached-ac: at most %d %s options\n", AC_DRIVER_SET_MAX, opt->key);
        return -1;
    }
    char *copy = strdup(v);
    if (copy == NULL) {
        fprintf(stderr, "memcached-ac: out of memory\n");
        return -1;
    }
    o->driver_set[o->n_driver_set++] = copy;
    return 0;
}

/* ---- help ------------------------------------------------------------------ */

/* Every default that is a value parses to the initial value of its field
 * (the help says what the server starts with). */
static bool defaults_hold(void) {
    bool ok = true;
    for (size_t i = 0; i < N_OPTS; i++) {
        if (!table[i].def_is_value)
            continue;
        struct ac_options o;
        memcpy(&o, &initial, sizeof(o));
        if (parse_value(&o, &table[i], table[i].def) != 0 || memcmp(&o, &initial, sizeof(o)) != 0) {
            fprintf(stderr, "memcached-ac: internal error: the default of %s, \"%s\", is not its initial value\n",
                    table[i].key, table[i].def);
            ok = false;
        }
    }
    return ok;
}

static void print_options(void) {
    char what[512];
    for (size_t i = 0; i < N_OPTS; i++) {
        accepted(&table[i], what, sizeof(what));
        printf("   - %-20s%s\n", table[i].key, table[i].help);
        printf("     %-20sdefault: %s; accepted: %s\n", "", table[i].def, what);
    }
    printf("   - %-20sprint these options and the policies and tiers, then exit\n", "ac_help");
    ac_list_components();
}

void ac_usage(void) {
    printf("\n   - Anti-caching (ac_*) options: spill cold items to disk instead of evicting\n");
    (void)defaults_hold();
    print_options();
}

static void ac_help(void) __attribute__((noreturn));
static void ac_help(void) {
    bool ok = defaults_hold();
    printf("memcached-ac anti-caching options (-o ac_KEY=VALUE,...): spill cold items to disk instead of evicting\n");
    print_options();
    exit(ok ? EXIT_SUCCESS : EXIT_FAILURE);
}

/* ---- the -o entry point ---------------------------------------------------- */

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
    if (klen == strlen("ac_help") && strncmp(kv, "ac_help", klen) == 0) {
        if (eq != NULL) {
            fprintf(stderr, "memcached-ac: ac_help takes no value (-o ac_help)\n");
            return -1;
        }
        ac_help();
    }
    for (size_t i = 0; i < N_OPTS; i++) {
        if (strlen(table[i].key) == klen && strncmp(table[i].key, kv, klen) == 0) {
            if (eq == NULL || eq[1] == '\0') {
                fprintf(stderr, "memcached-ac: %s needs a value (%s=VALUE)\n", table[i].key, table[i].key);
                return -1;
            }
            return parse_value(&ac_opts, &table[i], eq + 1);
        }
    }
    fprintf(stderr, "memcached-ac: unknown option \"%.*s\"; valid anti-caching options:", (int)klen, kv);
    for (size_t i = 0; i < N_OPTS; i++)
        fprintf(stderr, "%s %s", i ? "," : "", table[i].key);
    fprintf(stderr, "\n");
    return -1;
}
