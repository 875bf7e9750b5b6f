/* The -o ac_* settings. Each component declares its options in a table
 * (ac_opt.h: key, type and range, the ac_opts field it sets, its default as
 * text, a line of help); the core's is here, a policy's or a tier's is in its
 * file and reached through its ops. This file parses a value by its type,
 * writes the messages, -h and -o ac_help from the tables, starts every field
 * from its default text, and at start refuses an option given for a
 * component that is not in use. A value is only ever the one given: no
 * option writes a value derived from another back into ac_opts (a 0 in
 * block_size, evicted_max, log_keys, bloom_keys, eff_memory means "derived at
 * start", by the component that uses it).
 * Uses: ac_registry, ac_size (beside the chain of the request path). */
#include "memcached.h"
#include "ac_internal.h"
#include "ac_size.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ac_options ac_opts;

/* Adds each of a component's tables unless it is there already (shared). */
static void add_tables(const struct ac_opt_table *const *list, const struct ac_opt_table **out, size_t *n,
                       size_t max) {
    for (size_t k = 0; k < AC_MAX_OPT_TABLES && list[k] != NULL; k++) {
        bool seen = false;
        for (size_t j = 0; j < *n; j++)
            seen |= out[j] == list[k];
        if (!seen && *n < max)
            out[(*n)++] = list[k];
    }
}

size_t ac_option_tables(const struct ac_opt_table **out, size_t max) {
    size_t n = 0;
    if (max > 0)
        out[n++] = &ac_core_options;
    const struct ac_policy_ops *p;
    for (size_t i = 0; (p = ac_policy_at(i)) != NULL; i++)
        add_tables(p->options, out, &n, max);
    const struct ac_tier *t;
    for (size_t i = 0; (t = ac_tier_at(i)) != NULL; i++)
        add_tables(t->options, out, &n, max);
    return n;
}

/* ---- the core's table -------------------------------------------------------- */

static const struct { const char *name; uint64_t ns; unsigned bit; } units[] = {
    { "s", 1000000000ULL, AC_U_S }, { "ms", 1000000ULL, AC_U_MS }, { "us", 1000ULL, AC_U_US },
    { "ns", 1ULL, AC_U_NS },
};
#define N_UNITS (sizeof(units) / sizeof(units[0]))

static int parse_driver_set(void *values, const struct ac_opt *opt, const char *v);

static const struct ac_word trace_format_words[] = {
    { "auto", "from the name: .csv, or .og/.oracleGeneral/.bin", 0, "auto" },
    { "csv", "time,key,size[,op] lines", 0, "csv" },
    { "oracleGeneral", "libCacheSim's 24-byte records", 0, "oracleGeneral" },
    { NULL, NULL, 0, NULL },
};

static const struct ac_word os_backing_words[] = {
    { "anon", "anonymous memory, paged to swap", 0, "swap" },
    { "file", "a shared file mapping in ac_spill_dir", 0, "mmapfile" },
    { NULL, NULL, 0, NULL },
};

static const struct ac_opt core_opts[] = {
    { .key = "ac_policy", .type = AC_T_NAME, AC_FIELD(struct ac_options, policy),
      .known = ac_policy_known, .names = ac_policy_names, .noun = "policies",
      .def = "none", .def_is_value = true,
      .help = "access tracking + eviction, or an approach name (none: evict as memcached does)" },
    { .key = "ac_tier", .type = AC_T_NAME, AC_FIELD(struct ac_options, tier),
      .known = ac_tier_known, .names = ac_tier_names, .noun = "tiers",
      .def = "the policy's first",
      .help = "book-keeping + swapping of spilled items" },
    /* another name for ac_tier: the one given last wins */
    { .key = "ac_os_backing", .type = AC_T_ENUM, AC_FIELD(struct ac_options, tier), .words = os_backing_words,
      .def = "none (ac_tier decides)",
      .help = "anon = ac_tier=swap, file = ac_tier=mmapfile (the ospaging approaches' names)" },
    { .key = "ac_spill_dir", .type = AC_T_PATH, AC_FIELD(struct ac_options, spill_dir), .absolute = true,
      .max = sizeof(ac_opts.spill_dir) - 32,     /* room for the file names */
      .def = "/var/tmp/memcached-ac.PID",
      .help = "private directory for spilled items" },
    { .key = "ac_alloc_wait", .type = AC_T_DURATION, AC_FIELD(struct ac_options, alloc_wait_ns), .min = 0, .max = 600 * AC_SEC,
      .units = AC_U_S | AC_U_MS | AC_U_US, .note = "(e.g. 5s)",
      .def = "5s", .def_is_value = true,
      .help = "spilling tiers: longest wait for room before a store is refused" },
    { .key = "ac_borrow_pages", .type = AC_T_COUNT, AC_FIELD(struct ac_options, borrow_pages), .min = 0, .max = 64,
      .noun = "a number of slab pages", .note = "(0: never borrow, only wait)",
      .def = "2", .def_is_value = true,
      .help = "spilling tiers: slab pages a starved class may borrow past -m until repaid" },
    { .key = "ac_driver", .type = AC_T_PATH, AC_FIELD(struct ac_options, driver), .max = sizeof(ac_opts.driver),
      .def = "none: serve the network",
      .help = "run this YCSB workload file in-process, print JSON and exit (no network)" },
    { .key = "ac_driver_out", .type = AC_T_PATH, AC_FIELD(struct ac_options, driver_out), .max = sizeof(ac_opts.driver_out),
      .def = "stdout",
      .help = "ac_driver: write the JSON result to this file" },
    { .key = "ac_driver_gate", .type = AC_T_PATH, AC_FIELD(struct ac_options, driver_gate), .max = sizeof(ac_opts.driver_gate) - 8,
      .def = "none",
      .help = "ac_driver: before each phase write its name to PATH.phase and wait for PATH.go to name it" },
    { .key = "ac_driver_set", .type = AC_T_CUSTOM, AC_FIELD(struct ac_options, driver_set), .parse = parse_driver_set,
      .what = "one workload property as key=value (e.g. ac_driver_set=recordcount=1000),"
              " at most 64 times",
      .def = "none",
      .help = "ac_driver: override one workload property, key=value (repeatable)" },
    { .key = "ac_driver_depth", .type = AC_T_COUNT, AC_FIELD(struct ac_options, driver_depth), .min = 1, .max = 256,
      .noun = "a count of requests", .note = "(1: one at a time)",
      .def = "1", .def_is_value = true,
      .help = "ac_driver: requests each driver thread keeps in flight (reads of spilled items overlap)" },
    { .key = "ac_driver_trace", .type = AC_T_PATH, AC_FIELD(struct ac_options, driver_trace), .max = sizeof(ac_opts.driver_trace),
      .def = "none: the workload's generated requests",
      .help = "replay this request trace in-process (a get each, a miss refilled; ac_driver optional), print JSON and exit" },
    { .key = "ac_driver_format", .type = AC_T_ENUM, AC_FIELD(struct ac_options, driver_trace_format),
      .words = trace_format_words, .def = "auto", .def_is_value = true,
      .help = "ac_driver_trace: the trace's format" },
    { .key = "ac_park_threads", .type = AC_T_COUNT, AC_FIELD(struct ac_options, park_threads), .min = 0, .max = 64,
      .noun = "a count of threads", .note = "(0: read in the worker thread)",
      .def = "4", .def_is_value = true,
      .help = "network gets of spilled items: the connection waits, its worker serves others, these threads read" },
};
const struct ac_opt_table ac_core_options = AC_OPT_TABLE("the core", core_opts, &ac_opts);

/* Every table once (ac_registry.c); keys are looked up in them. */
#define MAX_TABLES 32
static const struct ac_opt_table *tables[MAX_TABLES];
static size_t n_tables;

static void load_tables(void) {
    if (n_tables == 0)
        n_tables = ac_option_tables(tables, MAX_TABLES);
}

static const struct ac_opt *option_named(const char *key, size_t klen, const struct ac_opt_table **owner) {
    load_tables();
    for (size_t t = 0; t < n_tables; t++)
        for (size_t i = 0; i < tables[t]->n; i++) {
            const struct ac_opt *o = &tables[t]->opts[i];
            if (strlen(o->key) == klen && strncmp(o->key, key, klen) == 0) {
                if (owner != NULL)
                    *owner = tables[t];
                return o;
            }
        }
    return NULL;
}

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
    if (v != 0 && v % (AC_KIB * AC_KIB) == 0)
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
    if (opt->noun != NULL && opt->type != AC_T_NAME)
        append(buf, n, "%s ", opt->noun);
    switch (opt->type) {
    case AC_T_NAME:
        append(buf, n, "one of %s (listed below)", opt->names());
        break;
    case AC_T_PATH:
        append(buf, n, "%s path shorter than %llu bytes", opt->absolute ? "an absolute" : "a",
               (unsigned long long)opt->max);
        break;
    case AC_T_SIZE:
        if (opt->max == AC_NOMAX) {
            append(buf, n, "of at least ");
            append_size(buf, n, opt->min);
        } else {
            append(buf, n, "from ");
            append_size(buf, n, opt->min);
            append(buf, n, " to ");
            append_size(buf, n, opt->max);
        }
        break;
    case AC_T_COUNT:
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
    case AC_T_DOUBLE:
        append(buf, n, opt->lo_open ? "in (%g, %g]" : "from %g to %g", opt->lo, opt->hi);
        break;
    case AC_T_DURATION: {
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
    case AC_T_ENUM: {
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
    case AC_T_CUSTOM:
        append(buf, n, "%s", opt->what);
        break;
    }
    if (opt->note != NULL)
        append(buf, n, " %s", opt->note);
}

/* The message for a value opt does not accept. */
/* The message for a value opt does not accept; why: the size grammar's
 * reason (docs/sizes.txt), or NULL. */
static int refuse_because(const struct ac_opt *opt, const char *v, const char *why) {
    char what[512];
    switch (opt->type) {
    case AC_T_NAME:
        fprintf(stderr, "memcached-ac: unknown %s \"%s\"; valid %s: %s\n", opt->key, v, opt->noun, opt->names());
        break;
    case AC_T_PATH:
        accepted(opt, what, sizeof(what));
        if (opt->absolute)
            fprintf(stderr, "memcached-ac: %s must be %s, got \"%s\"\n", opt->key, what, v);
        else                    /* refused only for its length: not repeated */
            fprintf(stderr, "memcached-ac: %s must be %s\n", opt->key, what);
        break;
    default:
        accepted(opt, what, sizeof(what));
        fprintf(stderr, "memcached-ac: %s must be %s, got \"%s\"%s%s%s\n", opt->key, what, v,
                why != NULL ? " (" : "", why != NULL ? why : "", why != NULL ? ")" : "");
        break;
    }
    return -1;
}

int ac_opt_refuse(const struct ac_opt *opt, const char *v) {
    return refuse_because(opt, v, NULL);
}

/* ---- parsing ------------------------------------------------------------- */

bool ac_opt_digits(const char *v, uint64_t *out, const char **end) {
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

/* digits + one of the units allowed, within [min_ns, max_ns] */
bool ac_opt_duration(const char *v, unsigned allowed, uint64_t min_ns, uint64_t max_ns, uint64_t *ns) {
    uint64_t n;
    const char *end;
    if (!ac_opt_digits(v, &n, &end))
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

/* Reads v into opt's field of values; prints the message and returns -1 if refused. */
static int parse_value(void *values, const struct ac_opt *opt, const char *v) {
    char *field = (char *)values + opt->off;
    switch (opt->type) {
    case AC_T_NAME:
        if (!opt->known(v) || strlen(v) >= opt->size)
            return ac_opt_refuse(opt, v);
        store_text(field, opt->size, v);
        return 0;
    case AC_T_PATH:
        if (strlen(v) >= opt->max || (opt->absolute && v[0] != '/'))
            return ac_opt_refuse(opt, v);
        store_text(field, opt->size, v);
        return 0;
    case AC_T_SIZE:
    case AC_T_COUNT: {
        uint64_t n;
        const char *why;
        if (!ac_parse_size(v, &n, &why))
            return refuse_because(opt, v, why);
        if (n < opt->min || n > opt->max || n > field_max(opt->size))
            return ac_opt_refuse(opt, v);
        store_uint(field, opt->size, n);
        return 0;
    }
    case AC_T_DOUBLE: {
        char *end;
        errno = 0;
        double d = strtod(v, &end);
        if (errno != 0 || end == v || *end != '\0' || !(d <= opt->hi) || !(opt->lo_open ? d > opt->lo : d >= opt->lo))
            return ac_opt_refuse(opt, v);
        memcpy(field, &d, sizeof(d));
        return 0;
    }
    case AC_T_DURATION: {
        uint64_t ns;
        if (opt->min == 0 && strcmp(v, "0") == 0)
            ns = 0;
        else if (!ac_opt_duration(v, opt->units, opt->min, opt->max, &ns))
            return ac_opt_refuse(opt, v);
        store_uint(field, opt->size, ns);
        return 0;
    }
    case AC_T_ENUM:
        for (const struct ac_word *w = opt->words; w->word != NULL; w++)
            if (strcmp(v, w->word) == 0) {
                if (w->text != NULL)
                    store_text(field, opt->size, w->text);
                else
                    store_uint(field, opt->size, w->value);
                return 0;
            }
        return ac_opt_refuse(opt, v);
    case AC_T_CUSTOM:
        return opt->parse(values, opt, v);
    }
    return ac_opt_refuse(opt, v);
}

static int parse_driver_set(void *values, const struct ac_opt *opt, const char *v) {
    struct ac_options *o = values;
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

/* ---- defaults, what was given ------------------------------------------------ */

#define MAX_GIVEN 256
static const struct ac_opt *given[MAX_GIVEN];
static const struct ac_opt_table *given_owner[MAX_GIVEN];
static size_t n_given;
static bool defaults_applied;

/* Every field starts from its option's default text (def_is_value), the
 * others at 0; a default that does not parse is a bug of its table. */
void ac_options_init(void) {
    if (defaults_applied)
        return;
    defaults_applied = true;
    load_tables();
    for (size_t t = 0; t < n_tables; t++)
        for (size_t i = 0; i < tables[t]->n; i++) {
            const struct ac_opt *o = &tables[t]->opts[i];
            const struct ac_opt_table *first;
            if (option_named(o->key, strlen(o->key), &first) != o) {
                fprintf(stderr, "memcached-ac: internal error: %s is declared by %s and by %s\n",
                        o->key, first->owner, tables[t]->owner);
                abort();
            }
            memset((char *)tables[t]->values + o->off, 0, o->size);
            if (o->def_is_value && parse_value(tables[t]->values, o, o->def) != 0) {
                fprintf(stderr, "memcached-ac: internal error: the default of %s (%s), \"%s\", does not parse\n",
                        o->key, tables[t]->owner, o->def);
                abort();
            }
        }
}

void ac_options_reset(void) {
    for (int i = 0; i < ac_opts.n_driver_set; i++)
        free(ac_opts.driver_set[i]);
    ac_opts.n_driver_set = 0;
    defaults_applied = false;
    n_given = 0;
    ac_options_init();
}

/* True when one of the component's tables is t. */
static bool has_table(const struct ac_opt_table *const *list, const struct ac_opt_table *t) {
    for (size_t i = 0; i < AC_MAX_OPT_TABLES && list[i] != NULL; i++)
        if (list[i] == t)
            return true;
    return false;
}

int ac_options_check_used(const struct ac_policy_ops *p, const struct ac_tier *t) {
    for (size_t i = 0; i < n_given; i++) {
        const struct ac_opt_table *owner = given_owner[i];
        if (owner == &ac_core_options || has_table(p->options, owner) || has_table(t->options, owner))
            continue;
        fprintf(stderr, "memcached-ac: %s is an option of %s; it has no effect with ac_policy=%s,ac_tier=%s"
                " (-o ac_help lists every option by component)\n", given[i]->key, owner->owner, p->name, t->name);
        return -1;
    }
    return 0;
}

void ac_options_bookkeeping(const struct ac_policy_ops *p, const struct ac_tier *t, char *buf, size_t n) {
    buf[0] = '\0';
    const struct ac_opt_table *const *lists[2] = { p->options, t->options };
    for (size_t l = 0; l < 2; l++)
        for (size_t k = 0; k < AC_MAX_OPT_TABLES && lists[l][k] != NULL; k++)
            for (size_t i = 0; i < lists[l][k]->n; i++)
                if (lists[l][k]->opts[i].bookkeeping)
                    append(buf, n, "%s%s", buf[0] != '\0' ? " or " : "", lists[l][k]->opts[i].key);
}

/* ---- help ------------------------------------------------------------------ */

#define KEY_COLUMN 22                    /* where an option's help starts after its key */

static void print_options(void) {
    char what[512];
    load_tables();
    for (size_t t = 0; t < n_tables; t++) {
        printf("     options of %s:\n", tables[t]->owner);
        for (size_t i = 0; i < tables[t]->n; i++) {
            const struct ac_opt *o = &tables[t]->opts[i];
            accepted(o, what, sizeof(what));
            int pad = KEY_COLUMN - (int)strlen(o->key);      /* at least one space after a long key */
            printf("   - %s%*s%s\n", o->key, pad > 1 ? pad : 1, "", o->help);
            printf("     %-*sdefault: %s; accepted: %s\n", KEY_COLUMN, "", o->def, what);
        }
    }
    printf("   - %-*sprint these options and the policies and tiers, then exit\n", KEY_COLUMN, "ac_help");
    printf("   - %-*sprint the policies, tiers, their capabilities and the pairs that work as JSON, then exit\n",
           KEY_COLUMN, "ac_list");
    ac_list_components();
}

void ac_usage(void) {
    printf("\n   - Anti-caching (ac_*) options: spill cold items to disk instead of evicting\n");
    print_options();
}

static void ac_help(void) __attribute__((noreturn));
static void ac_help(void) {
    printf("memcached-ac anti-caching options (-o ac_KEY=VALUE,...): spill cold items to disk instead of evicting\n");
    print_options();
    exit(EXIT_SUCCESS);
}

/* ---- the -o entry point ---------------------------------------------------- */

bool ac_is_option(const char *kv) {
    return strncmp(kv, "ac_", 3) == 0;
}

int ac_parse_option(const char *arg) {
    ac_options_init();
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
    if (klen == strlen("ac_list") && strncmp(kv, "ac_list", klen) == 0) {
        if (eq != NULL) {
            fprintf(stderr, "memcached-ac: ac_list takes no value (-o ac_list)\n");
            return -1;
        }
        ac_list_json();
        exit(EXIT_SUCCESS);
    }
    const struct ac_opt_table *owner;
    const struct ac_opt *opt = option_named(kv, klen, &owner);
    if (opt != NULL) {
        if (eq == NULL || eq[1] == '\0') {
            fprintf(stderr, "memcached-ac: %s needs a value (%s=VALUE)\n", opt->key, opt->key);
            return -1;
        }
        int rc = parse_value(owner->values, opt, eq + 1);
        if (rc == 0 && n_given < MAX_GIVEN) {
            given[n_given] = opt;
            given_owner[n_given++] = owner;
        }
        return rc;
    }
    fprintf(stderr, "memcached-ac: unknown option \"%.*s\"; valid anti-caching options:", (int)klen, kv);
    const char *sep = "";
    for (size_t t = 0; t < n_tables; t++)
        for (size_t i = 0; i < tables[t]->n; i++, sep = ",")
            fprintf(stderr, "%s %s", sep, tables[t]->opts[i].key);
    fprintf(stderr, "\n");
    return -1;
}
