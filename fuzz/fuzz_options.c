/* libFuzzer target: the bytes are the string of memcached-ac's `-o` option,
 * handed to our ac_* parser (policies/core/ac_options.c) the way memcached's -o
 * loop does: for every comma-separated suboption starting with "ac_",
 * ac_parse_option() gets the rest of the list (but for a bare ac_help,
 * which exits).
 * Checked for every input:
 *  - no crash, no sanitizer report (ac_options.c is built with
 *    -fsanitize=integer here as well: a wrapped multiplication in a range
 *    check is a finding);
 *  - a rejected suboption prints a message (stderr is captured);
 *  - an accepted one leaves ac_opts within the documented ranges;
 *  - no leak: ac_opts (global) is reset after each input
 *    (ac_options_reset: the defaults again, ac_driver_set's strings freed). */
#include "memcached.h"
#include "ac_options.h"
#include "ac_policy.h"
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

static bool fraction_ok(double d) {
    return d > 0.0 && d <= 1.0;
}

/* what ac_options.c and policies/README.md promise about an accepted value */
static void check_opts(const char *in) {
    const struct ac_options *o = &ac_opts;
    CHECK(memchr(o->policy, '\0', sizeof(o->policy)) != NULL && ac_policy_known(o->policy), in);
    CHECK(memchr(o->tier, '\0', sizeof(o->tier)) != NULL && (o->tier[0] == '\0' || ac_tier_known(o->tier)), in);
    CHECK(memchr(o->spill_dir, '\0', sizeof(o->spill_dir)) != NULL, in);
    CHECK(o->spill_dir[0] == '\0' || (o->spill_dir[0] == '/' && strlen(o->spill_dir) < sizeof(o->spill_dir) - 32), in);
    CHECK(o->block_size == 0 || (o->block_size >= 4096 && o->block_size <= (64u << 20)), in);
    CHECK(o->compact_fill >= 0.0 && o->compact_fill <= 1.0, in);
    CHECK(o->evicted_max == 0 || (o->evicted_max >= 1 && o->evicted_max <= 4294967294ULL), in);
    CHECK(o->alloc_wait_ns <= 600ULL * 1000000000ULL, in);
    CHECK(o->borrow_pages <= 64, in);
    CHECK(o->lru_sample >= 1 && o->lru_sample <= 1000000, in);
    CHECK(o->alru_bits >= 22 && o->alru_bits <= 24, in);
    CHECK(o->alru_samples >= 1 && o->alru_samples <= 64, in);
    CHECK(o->alru_resolution_ns >= 1 && o->alru_resolution_ns <= 3600ULL * 1000000000ULL, in);
    CHECK(fraction_ok(o->log_sample) && fraction_ok(o->log_alpha) && fraction_ok(o->log_hot_fill), in);
    CHECK((o->log_round >= 1 && o->log_round <= 1000000000ULL && o->log_round_ns == 0) ||
          (o->log_round == 0 && o->log_round_ns >= 10000000ULL && o->log_round_ns <= 3600ULL * 1000000000ULL), in);
    CHECK(o->log_slice >= 1 && o->log_slice <= 1000000000ULL, in);
    CHECK(o->log_keys == 0 || (o->log_keys >= 1024 && o->log_keys <= (1ULL << 30)), in);
    CHECK(o->bloom_keys == 0 || (o->bloom_keys >= 1024 && o->bloom_keys <= (1ULL << 30)), in);
    CHECK(o->eff_memory == 0 || o->eff_memory >= (2u << 20), in);
    CHECK(memchr(o->driver, '\0', sizeof(o->driver)) != NULL, in);
    CHECK(memchr(o->driver_out, '\0', sizeof(o->driver_out)) != NULL, in);
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
        /* ac_help prints the options and exits 0 by design (memcached/tests/
         * test_startup.py checks it): not a finding, skipped */
        bool help = strncmp(p, "ac_help", 7) == 0 && (p[7] == ',' || p[7] == '\0');
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
