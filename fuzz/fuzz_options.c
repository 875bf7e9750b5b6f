/* libFuzzer target: the bytes are the string of memcached-ac's `-o` option,
 * handed to our ac_* parser (policies/core/ac_options.c) the way memcached's -o
 * loop does: for every comma-separated suboption starting with "ac_",
 * ac_parse_option() gets the rest of the list (but for a bare ac_help or
 * ac_list, which print and exit).
 * Checked for every input:
 *  - no crash, no sanitizer report (ac_options.c is built with
 *    -fsanitize=integer here as well: a wrapped multiplication in a range
 *    check is a finding);
 *  - a rejected suboption prints a message (stderr is captured);
 *  - an accepted one leaves every option of every component's table
 *    (ac_opt.h) within the range its table declares;
 *  - no leak: ac_opts (global) is reset after each input
 *    (ac_options_reset: the defaults again, ac_driver_set's strings freed). */
#include "memcached.h"
#include "ac_options.h"
#include "ac_policy.h"
#include "policy/hotcold.h"
#include "ac_internal.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc; (void)argv;
    ac_options_init();
    return 0;
}

static void fail(const char *input, const char *what) __attribute__((noreturn));
static void fail(const char *input, const char *what) {
    fprintf(stderr, "fuzz_options: FINDING: %s (input \"%s\")\n", what, input);
    abort();
}

#define CHECK(cond, input) do { if (!(cond)) fail(input, "accepted, but ac_opts breaks: " #cond); } while (0)

/* a field of the width of an unsigned integer option (bool, unsigned, size_t, uint64_t) */
static uint64_t load_uint(const char *field, size_t size) {
    switch (size) {
    case 1: { uint8_t x; memcpy(&x, field, 1); return x; }
    case 2: { uint16_t x; memcpy(&x, field, 2); return x; }
    case 4: { uint32_t x; memcpy(&x, field, 4); return x; }
    default: { uint64_t x; memcpy(&x, field, 8); return x; }
    }
}

/* What every option's table promises about its value (ac_opt.h), checked
 * from the tables themselves: a new option of any component is covered. */
static void check_option(const struct ac_opt_table *t, const struct ac_opt *o, const char *in) {
    const char *field = (const char *)t->values + o->off;
    switch (o->type) {
    case AC_T_NAME:
        CHECK(memchr(field, '\0', o->size) != NULL && (field[0] == '\0' || o->known(field)), in);
        break;
    case AC_T_PATH:
        CHECK(memchr(field, '\0', o->size) != NULL && strlen(field) < o->max, in);
        CHECK(!o->absolute || field[0] == '\0' || field[0] == '/', in);
        break;
    case AC_T_SIZE:
    case AC_T_COUNT:
    case AC_T_DURATION: {
        uint64_t v = load_uint(field, o->size);
        /* 0: the default a component derives (or a duration's bare 0) */
        bool zero_ok = !o->def_is_value || (o->type == AC_T_DURATION && o->min == 0);
        CHECK((v == 0 && zero_ok) || (v >= o->min && v <= o->max), in);
        break;
    }
    case AC_T_DOUBLE: {
        double d;
        memcpy(&d, field, sizeof(d));
        CHECK(d <= o->hi && (o->lo_open ? d > o->lo : d >= o->lo), in);
        break;
    }
    case AC_T_ENUM: {
        if (o->words[0].text != NULL) {   /* a text field another name option shares (ac_os_backing) */
            CHECK(memchr(field, '\0', o->size) != NULL, in);
            break;
        }
        bool found = false;
        for (const struct ac_word *w = o->words; w->word != NULL; w++)
            found |= load_uint(field, o->size) == w->value;
        CHECK(found, in);
        break;
    }
    case AC_T_CUSTOM:
        break;                  /* below, one by one */
    }
}

static void check_opts(const char *in) {
    const struct ac_opt_table *tables[32];
    size_t n = ac_option_tables(tables, 32);
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < tables[t]->n; i++)
            check_option(tables[t], &tables[t]->opts[i], in);
    /* the custom ones */
    const struct ac_classifier_settings *c = &ac_cls_opts;
    CHECK((c->round >= 1 && c->round <= 1000000000ULL && c->round_ns == 0) ||
          (c->round == 0 && c->round_ns >= 10000000ULL && c->round_ns <= 3600ULL * 1000000000ULL), in);
    const struct ac_io_settings *io = &ac_io_opts;
    CHECK(io->fault <= AC_FAULT_SHORT && (io->fault == AC_FAULT_NONE) == (io->fault_count == 0), in);
    const struct ac_options *o = &ac_opts;
    CHECK(o->n_driver_set >= 0 && o->n_driver_set <= AC_DRIVER_SET_MAX, in);
    for (int i = 0; i < o->n_driver_set; i++)
        CHECK(o->driver_set[i] != NULL && strchr(o->driver_set[i], '=') != NULL && o->driver_set[i][0] != '=', in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *in = malloc(size + 1);
    if (in == NULL)
        return 0;
    memcpy(in, data, size);
    in[size] = '\0';            /* an argv string: the bytes up to the first NUL */

    char *msg = NULL;
    size_t msglen = 0;
    FILE *cap = open_memstream(&msg, &msglen);
    FILE *saved_stderr = stderr;
    for (char *p = in; *p != '\0';) {
        char *comma = strchr(p, ',');
        /* ac_help and ac_list print and exit 0 by design (memcached/tests/
         * test_startup.py checks them): not a finding, skipped */
        bool help = (strncmp(p, "ac_help", 7) == 0 || strncmp(p, "ac_list", 7) == 0) &&
                    (p[7] == ',' || p[7] == '\0');
        if (ac_is_option(p) && !help) {
            fflush(cap);
            size_t before = msglen;
            stderr = cap;
            int rc = ac_parse_option(p);
            stderr = saved_stderr;
            fflush(cap);
            if (rc != 0 && rc != -1)
                fail(in, "ac_parse_option returned neither 0 nor -1");
            if (rc == -1 && msglen == before)
                fail(in, "a rejected suboption printed no message");
            if (rc == -1)
                break;          /* memcached stops here (exit status 1) */
            check_opts(in);
        }
        if (comma == NULL)
            break;
        p = comma + 1;
    }
    fclose(cap);
    free(msg);

    ac_options_reset();
    free(in);
    return 0;
}
