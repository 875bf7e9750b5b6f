/* Unit tests of ac_parse_size (core/ac_size.c) against every test vector of
 * docs/sizes.txt, the size grammar shared with acbench and acg: the value of
 * each accepted text, the reason of each refused one (and *out untouched),
 * with and without why; then texts the file cannot hold (a newline) and very
 * long ones. The file is argv[1], else SIZES_TXT (the Makefile passes it). */
#define _GNU_SOURCE
#include "check.h"
#include "../core/ac_size.h"
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#ifndef SIZES_TXT
#define SIZES_TXT "../docs/sizes.txt"
#endif

#define SENTINEL UINT64_C(0x5a5a5a5a5a5a5a5a)

static const char *reason_text(const char *reason) {
    if (strcmp(reason, "syntax") == 0)
        return ac_size_not_a_size;
    if (strcmp(reason, "fraction-of-a-byte") == 0)
        return ac_size_fraction;
    if (strcmp(reason, "too-large") == 0)
        return ac_size_too_large;
    return NULL;
}

/* One vector: text must come to value (accepted) or be refused for reason. */
static void check_vector(int lineno, const char *text, const char *expect) {
    uint64_t out = SENTINEL, out2 = SENTINEL;
    const char *why = NULL;
    bool ok = ac_parse_size(text, &out, &why);
    bool ok2 = ac_parse_size(text, &out2, NULL);
    if (strncmp(expect, "error:", 6) == 0) {
        const char *want = reason_text(expect + 6);
        CHECK(want != NULL);
        if (ok || why != want || out != SENTINEL || ok2 || out2 != SENTINEL) {
            checks_failed++;
            fprintf(stderr, "sizes.txt:%d: \"%s\": want refusal \"%s\", got %s %" PRIu64 " (%s)\n", lineno,
                    text, want ? want : "?", ok ? "accepted" : "refused", out, why ? why : "no reason");
        } else {
            checks_passed++;
        }
    } else {
        char *end;
        errno = 0;
        uint64_t want = strtoull(expect, &end, 10);
        CHECK(errno == 0 && end != expect && *end == '\0');
        if (!ok || out != want || !ok2 || out2 != want) {
            checks_failed++;
            fprintf(stderr, "sizes.txt:%d: \"%s\": want %" PRIu64 ", got %s %" PRIu64 " (%s)\n", lineno,
                    text, want, ok ? "accepted" : "refused", out, why ? why : "no reason");
        } else {
            checks_passed++;
        }
    }
}

/* Every vector of the file; returns how many, and counts accepted, syntax,
 * fraction-of-a-byte and too-large vectors in kinds[0..3]. */
static int check_file(const char *path, int kinds[4]) {
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "test_size: cannot open %s\n", path);
        checks_failed++;
        return 0;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0, n = 0;
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (len > 0 && line[len - 1] == '\n')
            line[--len] = '\0';
        if (len == 0 || line[0] == '#')
            continue;
        /* "TEXT"<TAB>EXPECT: TEXT holds no '"' or tab */
        char *close = line[0] == '"' ? strchr(line + 1, '"') : NULL;
        if (close == NULL || close[1] != '\t' || close[2] == '\0' || strchr(close + 2, '\t') != NULL) {
            fprintf(stderr, "sizes.txt:%d: not a vector: %s\n", lineno, line);
            checks_failed++;
            continue;
        }
        *close = '\0';
        const char *expect = close + 2;
        check_vector(lineno, line + 1, expect);
        const char *why = strncmp(expect, "error:", 6) == 0 ? reason_text(expect + 6) : NULL;
        kinds[why == NULL ? 0 : why == ac_size_not_a_size ? 1 : why == ac_size_fraction ? 2 : 3]++;
        n++;
    }
    free(line);
    fclose(f);
    return n;
}

static void expect_size(const char *text, uint64_t want) {
    uint64_t out = SENTINEL;
    const char *why = NULL;
    bool ok = ac_parse_size(text, &out, &why);
    CHECK(ok && out == want);
}

static void expect_refusal(const char *text, const char *want) {
    uint64_t out = SENTINEL;
    const char *why = NULL;
    CHECK(!ac_parse_size(text, &out, &why));
    CHECK(why == want);
    CHECK(out == SENTINEL);
}

static void test_outside_the_file(void) {
    /* a newline (the file cannot hold one) */
    expect_refusal("8M\n", ac_size_not_a_size);
    expect_refusal("\n8M", ac_size_not_a_size);
    expect_refusal("8\n", ac_size_not_a_size);
    expect_refusal("1.5\n", ac_size_not_a_size);
    /* very long texts: leading zeros, trailing zeros of the fraction, too many digits */
    enum { LONG = 100000 };
    char *s = malloc(LONG + 8);
    CHECK(s != NULL);
    memset(s, '0', LONG);
    strcpy(s + LONG, "1K");
    expect_size(s, 1024);
    s[0] = '1';
    s[1] = '.';
    strcpy(s + LONG, "K");
    expect_size(s, 1024);
    strcpy(s + LONG, "1T");
    expect_refusal(s, ac_size_fraction);
    memset(s, '9', LONG);
    s[LONG] = '\0';
    expect_refusal(s, ac_size_too_large);
    s[5] = '.';
    expect_refusal(s, ac_size_fraction);
    free(s);
    /* the words messages use */
    CHECK(strcmp(ac_size_not_a_size, "not a size") == 0);
    CHECK(strcmp(ac_size_fraction, "a fraction of a byte") == 0);
    CHECK(strcmp(ac_size_too_large, "too large: more than 2^64 - 1 bytes") == 0);
    CHECK(strstr(AC_SIZE_FORMS, "K, M, G or T") != NULL);
}

int main(int argc, char **argv) {
    int kinds[4] = {0, 0, 0, 0};
    const char *path = argc > 1 ? argv[1] : SIZES_TXT;
    int n = check_file(path, kinds);
    /* the file is all there: accepted and refused vectors of every reason */
    CHECK(n > 80);
    CHECK(kinds[0] >= 30 && kinds[1] >= 30 && kinds[2] >= 10 && kinds[3] >= 10);
    test_outside_the_file();
    printf("test_size: %d vectors from %s\n", n, path);
    return check_report("test_size");
}
