/* The fingerprint of a key every layer of memcached-ac uses: FNV-1a 64
 * (Fowler, Noll, Vo), a hash independent of memcached's own key hash. Tiers
 * index spilled items by it, policies key their estimates by it; whoever
 * finds a record under it compares the key the record holds. */
#ifndef AC_FP_H
#define AC_FP_H
#include <stddef.h>
#include <stdint.h>

static inline uint64_t ac_key_fp(const char *key, size_t nkey) {
    uint64_t h = 0xcbf29ce484222325ULL;            /* FNV-1a 64 offset basis */
    for (size_t i = 0; i < nkey; i++) {
        h ^= (unsigned char)key[i];
        h *= 0x100000001b3ULL;                     /* FNV 64 prime */
    }
    return h;
}

#endif
