/* How many keys a server of a given memory tracks by default: the keys a
 * table of 28 bytes per slot (logging's estimate table, policy/classify.c)
 * holds at 90 % load in an eighth of the memory, slots a power of two, at
 * least 1024. The default of ac_log_keys (policy/hotcold.c) and of the tuples
 * tier's Bloom filters (tier/tuples.c, ac_bloom_keys), which are sized for
 * the keys the classifier can know. */
#ifndef AC_KEYS_H
#define AC_KEYS_H
#include <stddef.h>
#include <stdint.h>

#define AC_KEY_SLOT_BYTES 28

static inline size_t ac_default_keys(size_t bytes) {
    uint64_t slots = 16;
    while ((slots * 2) * AC_KEY_SLOT_BYTES <= bytes / 8)
        slots *= 2;
    size_t keys = (size_t)((double)slots * 0.9);
    return keys < 1024 ? 1024 : keys;
}

#endif
