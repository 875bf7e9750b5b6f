/* Max-heap with lazy deletion, see maxheap.h. */
#include <stdlib.h>
#include "maxheap.h"

int ac_heap_init(struct ac_heap *h, size_t cap) {
    h->a = malloc((cap ? cap : 1) * sizeof *h->a);
    h->size = 0;
    h->cap = cap;
    return h->a ? 0 : -1;
}

void ac_heap_free(struct ac_heap *h) {
    free(h->a);
    h->a = NULL;
    h->size = h->cap = 0;
}

void ac_heap_compact(struct ac_heap *h, int (*live)(const void *ctx, uint32_t key), const void *ctx) {
    size_t k = 0;
    for (size_t i = 0; i < h->size; i++)
        if (live(ctx, h->a[i]))
            h->a[k++] = h->a[i];
    h->size = k;
    for (size_t i = k / 2; i-- > 0;)
        ac_heap_sift_down(h->a, k, i);
}

int ac_heap_valid(const struct ac_heap *h) {
    for (size_t i = 1; i < h->size; i++)
        if (h->a[(i - 1) / 2] < h->a[i])
            return 0;
    return 1;
}
