/* Deterministic random numbers for the driver.
 *
 * xoshiro256** (Blackman & Vigna, "Scrambled linear pseudorandom number
 * generators", 2018) seeded through splitmix64 (Steele et al., "Fast splittable
 * pseudorandom number generators", OOPSLA 2014).  Pure integer arithmetic, so
 * the same seed gives the same sequence on every machine and compiler.
 *
 * Streams: ycsb_rng_seed(r, seed, stream) gives an independent-looking
 * sequence for every (seed, stream) pair.  The driver uses one stream per
 * chunk of operations (see ycsb_workload.h), never one per thread, so that the
 * requests do not depend on the thread count. */
#ifndef YCSB_RNG_H
#define YCSB_RNG_H

#include <stddef.h>
#include <stdint.h>

struct ycsb_rng {
    uint64_t s[4];
};

/* splitmix64 finaliser of x + golden gamma: a 64-bit mixing function. */
uint64_t ycsb_mix64(uint64_t x);
void ycsb_rng_seed(struct ycsb_rng *r, uint64_t seed, uint64_t stream);
uint64_t ycsb_rng_u64(struct ycsb_rng *r);

/* one xoshiro256** step, inlined where a generator's hot path needs it
 * (ycsb_rng_u64 is this same step; the sequence is the same either way) */
static inline uint64_t ycsb_rng_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t ycsb_rng_step(struct ycsb_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = ycsb_rng_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = ycsb_rng_rotl(s[3], 45);
    return result;
}

/* uniform in [0, 1) with 53 random bits (like java.util.Random.nextDouble) */
double ycsb_rng_double(struct ycsb_rng *r);
/* uniform non-negative 63-bit value: the role of Math.abs(random.nextLong()) */
int64_t ycsb_rng_nonneg(struct ycsb_rng *r);

/* FNV-1a 64 (Fowler, Noll, Vo; IETF draft-eastlake-fnv): for each byte,
 * h ^= byte, h *= prime, from the offset basis. */
#define YCSB_FNV64_OFFSET 0xCBF29CE484222325ULL
#define YCSB_FNV64_PRIME 1099511628211ULL
uint64_t ycsb_fnv1a64(const void *data, size_t len);

/* YCSB's Utils.fnvhash64: FNV-1a 64 over the 8 little-end-first bytes of the
 * value (offset basis 0xCBF29CE484222325, prime 1099511628211), then
 * Math.abs() of the signed result.  As in Java, abs(INT64_MIN) stays INT64_MIN. */
int64_t ycsb_fnvhash64(int64_t val);

#endif
