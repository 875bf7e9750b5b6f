/* A Bloom filter over 64-bit key fingerprints (Bloom, CACM 1970), the
 * book-keeping that stands in front of the tuple-level cold store of policy
 * "logging" (Siberia, Levandoski et al. ICDE 2013 §VI; Stoica & Ailamaki use
 * one per cold partition). m bits and k probes are chosen for n keys and a
 * target false-positive rate p with the textbook formulas
 *   m = -n ln p / (ln 2)^2,  k = round(m/n ln 2)
 * (10 bits per key and k = 7 give about 1 % at p = 0.01).
 * Probes use double hashing g_i = h1 + i*h2 (Kirsch & Mitzenmacher, ESA 2006).
 * Bits are set and read with relaxed atomics, so concurrent adds and lookups
 * need no lock; a key is never reported absent once its add has returned. */
#ifndef AC_BLOOM_H
#define AC_BLOOM_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ac_bloom {
    uint64_t *words;
    uint64_t nbits;      /* m, a multiple of 64 */
    unsigned k;          /* probes per key */
    size_t capacity;     /* n it was sized for */
};

/* Sizes the filter for n keys at false-positive rate p (0 < p < 1).
 * Returns 0, or -1 when n is 0, p out of range, or memory is short. */
int ac_bloom_init(struct ac_bloom *b, size_t n, double p);
void ac_bloom_destroy(struct ac_bloom *b);
/* Bytes of the bit array ac_bloom_init would allocate for n keys at rate p (0 if invalid). */
size_t ac_bloom_bytes_for(size_t n, double p);
size_t ac_bloom_bytes(const struct ac_bloom *b);
void ac_bloom_clear(struct ac_bloom *b);
void ac_bloom_add(struct ac_bloom *b, uint64_t fp);
bool ac_bloom_may_contain(const struct ac_bloom *b, uint64_t fp);
/* The expected false-positive rate with `keys` keys added: (1 - e^(-k n/m))^k. */
double ac_bloom_expected_fp(const struct ac_bloom *b, size_t keys);

#endif
