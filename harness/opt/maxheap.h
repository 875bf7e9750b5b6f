/* Binary max-heap of 32-bit keys (request positions) with lazy deletion: the
 * owner marks entries dead elsewhere (a bitmap) and calls ac_heap_compact
 * with a predicate when dead entries pile up; compaction re-heapifies in
 * O(size), so its cost is amortised O(1) per dead entry. */
#ifndef AC_MAXHEAP_H
#define AC_MAXHEAP_H
#include <stdint.h>
#include <stddef.h>

struct ac_heap {
    uint32_t *a;
    size_t size, cap;
};

int ac_heap_init(struct ac_heap *h, size_t cap);   /* 0, or -1 when out of memory */
void ac_heap_free(struct ac_heap *h);

static inline void ac_heap_sift_up(uint32_t *a, size_t i) {
    uint32_t v = a[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (a[p] >= v)
            break;
        a[i] = a[p];
        i = p;
    }
    a[i] = v;
}

static inline void ac_heap_sift_down(uint32_t *a, size_t size, size_t i) {
    uint32_t v = a[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= size)
            break;
        if (c + 1 < size && a[c + 1] > a[c])
            c++;
        if (a[c] <= v)
            break;
        a[i] = a[c];
        i = c;
    }
    a[i] = v;
}

/* The caller guarantees size < cap (compact first). */
static inline void ac_heap_push(struct ac_heap *h, uint32_t v) {
    h->a[h->size] = v;
    ac_heap_sift_up(h->a, h->size++);
}
static inline uint32_t ac_heap_top(const struct ac_heap *h) { return h->a[0]; }
/* Replaces the maximum by v (one sift-down). */
static inline void ac_heap_replace_top(struct ac_heap *h, uint32_t v) {
    h->a[0] = v;
    ac_heap_sift_down(h->a, h->size, 0);
}
static inline uint32_t ac_heap_pop(struct ac_heap *h) {
    uint32_t top = h->a[0];
    h->a[0] = h->a[--h->size];
    if (h->size)
        ac_heap_sift_down(h->a, h->size, 0);
    return top;
}
/* Keeps the entries for which live(ctx, key) is non-zero, then re-heapifies. */
void ac_heap_compact(struct ac_heap *h, int (*live)(const void *ctx, uint32_t key), const void *ctx);
/* 1 if the max-heap property holds (tests). */
int ac_heap_valid(const struct ac_heap *h);

#endif
