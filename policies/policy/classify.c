/* The estimates and top-K classification of classify.h (Siberia's forward
 * algorithm, Levandoski et al. ICDE 2013 §IV-A): exponential smoothing per
 * time slice in an open-addressing table keyed by fingerprint. */
#include "classify.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HOT_BIT 0x80000000u
#define SEEN_BIT 0x40000000u     /* x = 1 already counted for slice `slice` */
#define FLAGS (HOT_BIT | SEEN_BIT)

static uint64_t norm(uint64_t fp) {
    return fp == 0 ? 1 : fp;
}

static uint64_t slot_of(uint64_t fp, uint64_t nslots) {
    return ((fp * 0x9E3779B97F4A7C15ULL) >> 17) & (nslots - 1);
}

uint64_t ac_cls_slots_for(size_t capacity) {
    uint64_t n = 16;
    while ((double)n * 0.9 < (double)capacity)
        n *= 2;
    return n;
}

size_t ac_cls_bytes_for_slots(uint64_t nslots) {
    return (size_t)nslots * (sizeof(struct ac_est) + sizeof(uint32_t));
}

/* The table's first size: the whole capacity when it is small, else at most an
 * eighth of it (see grow). */
#define FIRST_SLOTS 4096

int ac_cls_init(struct ac_classifier *c, size_t capacity, double alpha, uint64_t slice_len) {
    memset(c, 0, sizeof(*c));
    if (capacity == 0 || !(alpha > 0.0 && alpha <= 1.0) || slice_len == 0 || capacity > (1ULL << 30))
        return -1;
    uint64_t n = ac_cls_slots_for(capacity);
    uint64_t use = n <= 2 * FIRST_SLOTS ? n : (n / 8 < FIRST_SLOTS ? n / 8 : FIRST_SLOTS);
    c->tab = calloc(use, sizeof(struct ac_est));
    c->order = calloc(use, sizeof(uint32_t));
    if (c->tab == NULL || c->order == NULL) {
        ac_cls_destroy(c);
        return -1;
    }
    c->nslots = n;
    c->nuse = use;
    c->alpha = alpha;
    c->slice_len = slice_len;
    for (int k = 0; k < AC_CLS_POWERS; k++)
        c->pw[k] = pow(1.0 - alpha, (double)k);
    return 0;
}

void ac_cls_destroy(struct ac_classifier *c) {
    free(c->tab);
    free(c->order);
    memset(c, 0, sizeof(*c));
}

size_t ac_cls_bytes(const struct ac_classifier *c) {
    return ac_cls_bytes_for_slots(c->nuse);
}

static struct ac_est *lookup(const struct ac_classifier *c, uint64_t fp) {
    for (uint64_t i = slot_of(fp, c->nuse);; i = (i + 1) & (c->nuse - 1)) {
        struct ac_est *e = &c->tab[i];
        if (e->fp == fp || e->fp == 0)
            return e;
    }
}

/* pow(1 - alpha, k), from the table when k is small (the same value) */
static double decay(const struct ac_classifier *c, uint64_t k) {
    return k < AC_CLS_POWERS ? c->pw[k] : pow(1.0 - c->alpha, (double)k);
}

static double decayed(const struct ac_classifier *c, const struct ac_est *e, uint64_t now) {
    if (now == e->slice)
        return e->est;
    return e->est * decay(c, now - e->slice);
}

/* The next size of the table: doubled while that stays within an eighth of
 * the capacity, then the capacity. While it grows from s slots, the old table
 * and its sort scratch (28 s bytes) and the new table are held at once, never
 * more than the capacity's bytes (28 nslots): a doubling holds 28 s + 48 s
 * with s <= nslots / 16, the last step 28 s + 24 nslots with s <= nslots / 8;
 * the new scratch is allocated once the old table is freed. */
static uint64_t next_size(const struct ac_classifier *c) {
    return 2 * c->nuse <= c->nslots / 8 ? 2 * c->nuse : c->nslots;
}

/* Moves every entry into a table of the next size (same entries, new slots). */
static void grow(struct ac_classifier *c) {
    uint64_t n = next_size(c);
    struct ac_est *tab = calloc(n, sizeof(struct ac_est));
    if (tab == NULL) {
        c->grow_failed = true;
        return;
    }
    for (uint64_t i = 0; i < c->nuse; i++) {
        if (c->tab[i].fp == 0)
            continue;
        uint64_t j = slot_of(c->tab[i].fp, n);
        while (tab[j].fp != 0)
            j = (j + 1) & (n - 1);
        tab[j] = c->tab[i];
    }
    free(c->tab);
    free(c->order);
    c->tab = tab;
    c->nuse = n;
    c->order = calloc(n, sizeof(uint32_t));   /* NULL: classify tries again */
}

void ac_cls_prefetch(const struct ac_classifier *c, uint64_t fp) {
    __builtin_prefetch(&c->tab[slot_of(norm(fp), c->nuse)], 1);
}

void ac_cls_record(struct ac_classifier *c, uint64_t fp, uint32_t size) {
    fp = norm(fp);
    uint64_t now = ac_cls_slice(c);
    c->accesses++;
    struct ac_est *e = lookup(c, fp);
    if (e->fp == 0) {
        if ((double)(c->count + 1) > 0.9 * (double)c->nslots) {
            c->dropped++;
            return;
        }
        if (c->nuse < c->nslots && 2 * (c->count + 1) > c->nuse && !c->grow_failed) {
            grow(c);
            e = lookup(c, fp);
        }
        if ((double)(c->count + 1) > 0.9 * (double)c->nuse) {
            c->dropped++;          /* a table that could not grow is full */
            return;
        }
        e->fp = fp;
        e->est = c->alpha;          /* est_prev = 0 */
        e->slice = (uint32_t)now;
        e->size = (size & ~FLAGS) | SEEN_BIT;
        c->count++;
        return;
    }
    bool seen = e->slice == (uint32_t)now && (e->size & SEEN_BIT) != 0;
    e->size = (e->size & HOT_BIT) | (size & ~FLAGS) | SEEN_BIT;
    if (seen)
        return;                     /* already counted in this slice (x_t = 1) */
    e->est = c->alpha + decayed(c, e, now);
    e->slice = (uint32_t)now;
}

double ac_cls_estimate(const struct ac_classifier *c, uint64_t fp) {
    const struct ac_est *e = lookup(c, norm(fp));
    return e->fp == 0 ? 0.0 : decayed(c, e, ac_cls_slice(c));
}

bool ac_cls_is_hot(const struct ac_classifier *c, uint64_t fp) {
    const struct ac_est *e = lookup(c, norm(fp));
    return e->fp != 0 && (e->size & HOT_BIT) != 0;
}

/* for qsort: estimate descending, then fingerprint ascending */
static const struct ac_classifier *sorting;

static int by_estimate(const void *a, const void *b) {
    const struct ac_est *x = &sorting->tab[*(const uint32_t *)a], *y = &sorting->tab[*(const uint32_t *)b];
    if (x->est != y->est)
        return x->est > y->est ? -1 : 1;
    return x->fp < y->fp ? -1 : x->fp > y->fp;
}

/* Removes the entry at slot i by backward-shift deletion (Knuth, TAOCP 6.4,
 * Algorithm R): later entries of the same probe run move up. */
static void delete_at(struct ac_classifier *c, uint64_t i) {
    uint64_t mask = c->nuse - 1, j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (c->tab[j].fp == 0)
            break;
        uint64_t k = slot_of(c->tab[j].fp, c->nuse);
        /* move tab[j] to the hole i unless its home k lies cyclically in (i, j] */
        bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (!stays) {
            c->tab[i] = c->tab[j];
            i = j;
        }
    }
    memset(&c->tab[i], 0, sizeof(c->tab[i]));
    c->count--;
}

/* Drops the keys whose estimate has decayed below AC_CLS_FORGET by slice now. */
static void forget(struct ac_classifier *c, uint64_t now) {
    for (uint64_t i = 0; i < c->nuse; i++) {
        while (c->tab[i].fp != 0 && decayed(c, &c->tab[i], now) < AC_CLS_FORGET) {
            delete_at(c, i);          /* may move another entry into slot i */
            c->forgotten++;
        }
    }
}

/* Decays every entry to the current slice (idempotent) and clears its hot
 * bit: the estimates the sort compares. */
static void rebase(struct ac_classifier *c, uint64_t now) {
    for (uint64_t i = 0; i < c->nuse; i++) {
        struct ac_est *e = &c->tab[i];
        if (e->fp == 0)
            continue;
        if (e->slice != (uint32_t)now) {
            e->est = decayed(c, e, now);
            e->slice = (uint32_t)now;
            e->size &= ~SEEN_BIT;      /* rebased, not accessed in this slice */
        }
        e->size &= ~HOT_BIT;
    }
}

uint64_t ac_cls_classify(struct ac_classifier *c, uint64_t budget) {
    if (c->order == NULL && (c->order = calloc(c->nuse, sizeof(uint32_t))) == NULL)
        return c->hot_keys;        /* no memory for the sort scratch: the last hot set stays */
    uint64_t now = ac_cls_slice(c);
    /* One pass: the bytes of the keys that stay (the others are dropped
     * after it), each marked hot on the chance that all of them fit the
     * budget, the common case when the budget is larger than the keys: then
     * the longest prefix of any order is all of them, and nothing is sorted
     * (a key already marked is not written again). */
    uint64_t total = 0, fading = 0;
    for (uint64_t i = 0; i < c->nuse; i++) {
        struct ac_est *e = &c->tab[i];
        if (e->fp == 0)
            continue;
        if (decayed(c, e, now) < AC_CLS_FORGET) {
            fading++;
            continue;
        }
        total += e->size & ~FLAGS;
        if ((e->size & HOT_BIT) == 0)
            e->size |= HOT_BIT;
    }
    if (fading > 0)
        forget(c, now);
    uint64_t bytes = 0, keys = 0;
    if (total <= budget) {
        bytes = total;
        keys = c->count;
    } else {
        rebase(c, now);
        uint32_t n = 0;
        for (uint64_t i = 0; i < c->nuse; i++)
            if (c->tab[i].fp != 0)
                c->order[n++] = (uint32_t)i;
        sorting = c;
        qsort(c->order, n, sizeof(uint32_t), by_estimate);
        sorting = NULL;
        for (uint32_t k = 0; k < n; k++) {
            struct ac_est *e = &c->tab[c->order[k]];
            uint32_t size = e->size & ~FLAGS;
            if (bytes + size > budget)
                break;
            bytes += size;
            e->size |= HOT_BIT;
            keys++;
        }
    }
    c->hot_keys = keys;
    c->hot_bytes = bytes;
    c->budget = budget;
    c->rounds++;
    return keys;
}

void ac_cls_foreach_hot(const struct ac_classifier *c, void (*fn)(uint64_t fp, void *arg), void *arg) {
    for (uint64_t i = 0; i < c->nuse; i++)
        if (c->tab[i].fp != 0 && (c->tab[i].size & HOT_BIT) != 0)
            fn(c->tab[i].fp, arg);
}
