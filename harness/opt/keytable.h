/* Open-addressing hash table (linear probing) from 64-bit keys to 32-bit
 * values; a slot is empty when its value is AC_KT_EMPTY, so every key value,
 * 0 and UINT64_MAX included, can be stored. 12 bytes per slot, load <= 3/4. */
#ifndef AC_KEYTABLE_H
#define AC_KEYTABLE_H
#include <stdint.h>

#define AC_KT_EMPTY UINT32_MAX

struct ac_kt_slot {
    uint64_t key;
    uint32_t val;
} __attribute__((packed));

struct ac_keytable {
    struct ac_kt_slot *slots;
    uint64_t mask;       /* slots - 1, slots a power of two */
    uint64_t count;
};

/* splitmix64's finalizer (Steele, Lea, Flood, OOPSLA 2014) as the hash. */
static inline uint64_t ac_kt_hash(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

/* Slot count (power of two, >= 16) that holds `keys` keys within the load limit. */
uint64_t ac_kt_slots_for(uint64_t keys);
int ac_kt_init(struct ac_keytable *kt, uint64_t slots);   /* 0, or -1 when out of memory */
void ac_kt_free(struct ac_keytable *kt);
/* 1 when inserting one more key would exceed the load limit. */
static inline int ac_kt_full(const struct ac_keytable *kt) {
    return (kt->count + 1) * 4 > (kt->mask + 1) * 3;
}
/* Doubles the table (0, or -1 when out of memory; the table is unchanged then). */
int ac_kt_grow(struct ac_keytable *kt);
/* Sets key's value to val and returns the previous one (AC_KT_EMPTY if the key
 * was new; the caller must have checked ac_kt_full). val != AC_KT_EMPTY. */
uint32_t ac_kt_swap(struct ac_keytable *kt, uint64_t key, uint32_t val);
/* The value of key, AC_KT_EMPTY if absent. */
uint32_t ac_kt_get(const struct ac_keytable *kt, uint64_t key);

#endif
