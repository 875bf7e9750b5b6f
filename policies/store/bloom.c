/* The Bloom filter of bloom.h: k probes by double hashing of the 64-bit
 * fingerprint (the second hash splitmix64's finalizer), sized for n keys at a
 * false-positive rate p. */
#include "bloom.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64's finalizer (Steele, Lea, Flood, OOPSLA 2014): a second,
 * independent-looking hash from the fingerprint for double hashing. */
static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static uint64_t bits_for(size_t n, double p) {
    double ln2 = log(2.0);
    double m = ceil(-(double)n * log(p) / (ln2 * ln2));
    return ((uint64_t)m + 63) / 64 * 64;
}

size_t ac_bloom_bytes_for(size_t n, double p) {
    if (n == 0 || !(p > 0.0 && p < 1.0))
        return 0;
    return (size_t)(bits_for(n, p) / 8);
}

int ac_bloom_init(struct ac_bloom *b, size_t n, double p) {
    memset(b, 0, sizeof(*b));
    if (n == 0 || !(p > 0.0 && p < 1.0))
        return -1;
    double ln2 = log(2.0);
    uint64_t nbits = bits_for(n, p);
    unsigned k = (unsigned)lround((double)nbits / (double)n * ln2);
    if (k < 1)
        k = 1;
    if (k > 16)
        k = 16;
    b->words = calloc(nbits / 64, sizeof(uint64_t));
    if (b->words == NULL)
        return -1;
    b->nbits = nbits;
    b->k = k;
    b->capacity = n;
    return 0;
}

void ac_bloom_destroy(struct ac_bloom *b) {
    free(b->words);
    memset(b, 0, sizeof(*b));
}

size_t ac_bloom_bytes(const struct ac_bloom *b) {
    return (size_t)(b->nbits / 8);
}

void ac_bloom_clear(struct ac_bloom *b) {
    for (uint64_t i = 0; i < b->nbits / 64; i++)
        __atomic_store_n(&b->words[i], 0, __ATOMIC_RELAXED);
}

void ac_bloom_add(struct ac_bloom *b, uint64_t fp) {
    uint64_t h1 = mix64(fp), h2 = mix64(fp ^ 0x9E3779B97F4A7C15ULL) | 1;
    for (unsigned i = 0; i < b->k; i++) {
        uint64_t bit = (h1 + i * h2) % b->nbits;
        __atomic_fetch_or(&b->words[bit / 64], 1ULL << (bit % 64), __ATOMIC_RELEASE);
    }
}

bool ac_bloom_may_contain(const struct ac_bloom *b, uint64_t fp) {
    uint64_t h1 = mix64(fp), h2 = mix64(fp ^ 0x9E3779B97F4A7C15ULL) | 1;
    for (unsigned i = 0; i < b->k; i++) {
        uint64_t bit = (h1 + i * h2) % b->nbits;
        if ((__atomic_load_n(&b->words[bit / 64], __ATOMIC_ACQUIRE) & (1ULL << (bit % 64))) == 0)
            return false;
    }
    return true;
}

double ac_bloom_expected_fp(const struct ac_bloom *b, size_t keys) {
    if (b->nbits == 0)
        return 1.0;
    return pow(1.0 - exp(-(double)b->k * (double)keys / (double)b->nbits), (double)b->k);
}
