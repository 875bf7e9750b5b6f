/* How a component declares its -o ac_* options: a table of struct ac_opt
 * (key, type and range, the field of the component's own values struct it
 * sets, its default as text, a line of help) wrapped in an ac_opt_table that
 * names the component and points to that struct. The core's table is in
 * ac_options.c (its values: ac_opts); a policy or a tier keeps its table and
 * its values in its own file and points to the table from its descriptor
 * (ac_policy.h, ac_tier.h: .options). ac_options.c parses, checks, prints -h
 * and -o ac_help from all of them, starts every field from its default, and
 * refuses at start an option given for a component that is not in use. */
#ifndef AC_OPT_H
#define AC_OPT_H
#include "ac_options.h"

enum ac_type {
    AC_T_NAME,      /* a component name: known() decides, names() lists them */
    AC_T_PATH,      /* text shorter than max bytes; absolute: must start with '/' */
    AC_T_SIZE,      /* bytes: the size grammar (docs/sizes.txt), min..max */
    AC_T_COUNT,     /* a count, the same grammar as AC_T_SIZE, min..max */
    AC_T_DOUBLE,    /* a number in [lo, hi] or (lo, hi] (lo_open) */
    AC_T_DURATION,  /* digits + one of the allowed units, min..max ns; bare 0 when min is 0 */
    AC_T_ENUM,      /* one of words: stores its value, or its text into a char field */
    AC_T_CUSTOM,    /* parse() does it, what says what it accepts */
};

/* duration units */
enum { AC_U_S = 1, AC_U_MS = 2, AC_U_US = 4, AC_U_NS = 8 };

struct ac_word {
    const char *word;
    const char *desc;    /* said after the word in messages, or NULL */
    uint64_t value;      /* stored in an integer field ... */
    const char *text;    /* ... or, if set, this text into a char field */
};

struct ac_opt;
typedef int (*ac_parse_fn)(void *values, const struct ac_opt *opt, const char *v);

struct ac_opt {
    const char *key;
    enum ac_type type;
    size_t off, size;                /* the field in the table's values */
    uint64_t min, max;               /* SIZE, COUNT, DURATION (ns); PATH: max = length bound */
    double lo, hi;                   /* DOUBLE */
    bool lo_open;                    /* DOUBLE: lo itself refused */
    bool absolute;                   /* PATH */
    unsigned units;                  /* DURATION: AC_U_* allowed */
    const struct ac_word *words;     /* ENUM, ends with a NULL word */
    bool (*known)(const char *name); /* NAME */
    const char *(*names)(void);      /* NAME: comma-separated, for messages */
    ac_parse_fn parse;               /* CUSTOM */
    /* messages: "KEY must be NOUN RANGE NOTE, got "VALUE"" (RANGE from the
     * type); NAME: the plural; CUSTOM: what = the whole accepted text */
    const char *noun, *note, *what;
    /* The default as text. def_is_value: it parses to the value the field
     * starts with (applied at start from this text); otherwise the field
     * starts at 0 and the component derives the value (the text says how). */
    const char *def;
    bool def_is_value;
    bool bookkeeping;                /* it sizes book-keeping charged against -m */
    const char *help;
};

struct ac_opt_table {
    const char *owner;               /* "policy lru", "tier blocks", "the classifier", ... */
    const struct ac_opt *opts;
    size_t n;
    void *values;                    /* the struct the options' fields are in */
};
#define AC_OPT_TABLE(owner, arr, values) { (owner), (arr), sizeof(arr) / sizeof((arr)[0]), (values) }
/* A component's tables (ops .options): up to this many; unused entries NULL. */
#define AC_MAX_OPT_TABLES 4

#define AC_FIELD(type, f) .off = offsetof(type, f), .size = sizeof(((type *)0)->f)
#define AC_NOMAX UINT64_MAX
#define AC_KIB 1024ULL
#define AC_SEC 1000000000ULL

/* For AC_T_CUSTOM parsers: digits only (no sign, no blanks; *end the first byte
 * after them), a duration with one of the allowed units within [min_ns,
 * max_ns], and the refusal message for opt (returns -1). */
bool ac_opt_digits(const char *v, uint64_t *out, const char **end);
bool ac_opt_duration(const char *v, unsigned allowed, uint64_t min_ns, uint64_t max_ns, uint64_t *ns);
int ac_opt_refuse(const struct ac_opt *opt, const char *v);

/* ac_options.c: every table once (the core's first, then each policy's and
 * each tier's in registry order); returns how many, at most max. */
size_t ac_option_tables(const struct ac_opt_table **out, size_t max);
/* The core's own table (ac_options.c). */
extern const struct ac_opt_table ac_core_options;

#endif
