/* xoshiro256** seeded by splitmix64; YCSB's FNV-1a 64 key hash. See ycsb_rng.h. */
#include "ycsb_rng.h"

uint64_t ycsb_mix64(uint64_t x)
{
    /* splitmix64: z = x + 0x9E3779B97F4A7C15, then two xor-shift-multiply rounds */
    uint64_t z = x + 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void ycsb_rng_seed(struct ycsb_rng *r, uint64_t seed, uint64_t stream)
{
    /* the splitmix64 sequence starting at mix(seed) ^ mix(~stream) fills the
     * 256-bit state; it is never all zero because splitmix64 is a bijection of
     * a counter and four consecutive outputs cannot all be 0. */
    uint64_t x = ycsb_mix64(seed) ^ ycsb_mix64(~stream);
    for (int i = 0; i < 4; i++) {
        x += 0x9E3779B97F4A7C15ULL;
        r->s[i] = ycsb_mix64(x);
    }
}

uint64_t ycsb_rng_u64(struct ycsb_rng *r)
{
    return ycsb_rng_step(r);
}

double ycsb_rng_double(struct ycsb_rng *r)
{
    return (double)(ycsb_rng_u64(r) >> 11) * (1.0 / 9007199254740992.0); /* 2^-53 */
}

int64_t ycsb_rng_nonneg(struct ycsb_rng *r)
{
    return (int64_t)(ycsb_rng_u64(r) >> 1);
}

uint64_t ycsb_fnv1a64(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = YCSB_FNV64_OFFSET;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= YCSB_FNV64_PRIME;
    }
    return h;
}

int64_t ycsb_fnvhash64(int64_t val)
{
    /* the byte loop of ycsb_fnv1a64 over the 8 bytes low to high, without
     * going through memory (the same value on any host byte order) */
    uint64_t v = (uint64_t)val;
    uint64_t h = YCSB_FNV64_OFFSET;
    for (int i = 0; i < 8; i++) {
        h ^= v & 0xff;
        v >>= 8;
        h *= YCSB_FNV64_PRIME;
    }
    if (h == 0x8000000000000000ULL)
        return INT64_MIN;            /* Math.abs(Long.MIN_VALUE) */
    /* |h as signed| without signed overflow: h >= 2^63 means negative */
    return (h >> 63) ? (int64_t)(0 - h) : (int64_t)h;
}
