/* Sizes and counts in -o ac_* settings: the one size grammar of the
 * repository (docs/sizes.txt, shared with acbench and acg; its test vectors
 * are checked here by tests/test_size.c):
 *
 *   size := digits [ "." digits ] [ K | M | G | T ]   (either case, powers of 1024)
 *
 * no whitespace, sign, exponent or "B"/"iB"; a fraction needs a unit and must
 * come to a whole number of bytes (1.5G, 0.0009765625K; not 1.5 or 0.1K); at
 * most 2^64 - 1. Dependency-free: exact integer arithmetic, no locale. */
#ifndef AC_SIZE_H
#define AC_SIZE_H
#include <stdbool.h>
#include <stdint.h>

/* The accepted forms in words, as messages say them (docs/sizes.txt). */
#define AC_SIZE_FORMS "a whole number of bytes (4096) or a number with a binary unit K, M, G or T (512M, 1G, 1.5G)"

/* The reasons for a refusal (docs/sizes.txt: syntax, fraction-of-a-byte,
 * too-large), the texts *why points to. */
extern const char ac_size_not_a_size[];      /* "not a size" */
extern const char ac_size_fraction[];        /* "a fraction of a byte" */
extern const char ac_size_too_large[];       /* "too large: more than 2^64 - 1 bytes" */

/* The bytes `text` (NUL-terminated) stands for. true: *out set. false: *out
 * untouched and, if why is not NULL, *why set to one of the static texts
 * above (checked in that order: the syntax, then exactness, then range). */
bool ac_parse_size(const char *text, uint64_t *out, const char **why);

#endif
