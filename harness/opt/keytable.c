/* Linear-probing hash table, see keytable.h. */
#include <stdlib.h>
#include <string.h>
#include "keytable.h"

uint64_t ac_kt_slots_for(uint64_t keys) {
    uint64_t s = 16;
    while (keys * 4 > s * 3)
        s <<= 1;
    return s;
}

int ac_kt_init(struct ac_keytable *kt, uint64_t slots) {
    kt->slots = malloc(slots * sizeof *kt->slots);
    if (!kt->slots)
        return -1;
    memset(kt->slots, 0xff, slots * sizeof *kt->slots);   /* val = AC_KT_EMPTY */
    kt->mask = slots - 1;
    kt->count = 0;
    return 0;
}

void ac_kt_free(struct ac_keytable *kt) {
    free(kt->slots);
    kt->slots = NULL;
}

int ac_kt_grow(struct ac_keytable *kt) {
    struct ac_keytable bigger;
    if (ac_kt_init(&bigger, (kt->mask + 1) * 2) != 0)
        return -1;
    for (uint64_t s = 0; s <= kt->mask; s++) {
        const struct ac_kt_slot *o = &kt->slots[s];
        if (o->val == AC_KT_EMPTY)
            continue;
        uint64_t h = ac_kt_hash(o->key) & bigger.mask;
        while (bigger.slots[h].val != AC_KT_EMPTY)
            h = (h + 1) & bigger.mask;
        bigger.slots[h] = *o;
    }
    bigger.count = kt->count;
    free(kt->slots);
    *kt = bigger;
    return 0;
}

uint32_t ac_kt_swap(struct ac_keytable *kt, uint64_t key, uint32_t val) {
    uint64_t h = ac_kt_hash(key) & kt->mask;
    for (;;) {
        struct ac_kt_slot *s = &kt->slots[h];
        uint32_t old = s->val;
        if (old == AC_KT_EMPTY) {
            s->key = key;
            s->val = val;
            kt->count++;
            return AC_KT_EMPTY;
        }
        if (s->key == key) {
            s->val = val;
            return old;
        }
        h = (h + 1) & kt->mask;
    }
}

uint32_t ac_kt_get(const struct ac_keytable *kt, uint64_t key) {
    uint64_t h = ac_kt_hash(key) & kt->mask;
    for (;;) {
        const struct ac_kt_slot *s = &kt->slots[h];
        if (s->val == AC_KT_EMPTY)
            return AC_KT_EMPTY;
        if (s->key == key)
            return s->val;
        h = (h + 1) & kt->mask;
    }
}
