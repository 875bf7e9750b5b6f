/* EMT's dynamic read-ahead window (Meyer et al.): start at the least size,
 * double on each sequential fault up to the largest, reset on an
 * out-of-order fault. Sequential: the page just past the previous window in
 * its direction (up, or down: memcached's slab allocator hands out a slab
 * page's chunks from its end, so records loaded in key order lie at falling
 * addresses). A pure rule, kept apart so it is tested alone
 * (tests/test_readahead.c); uvmm_readahead.c applies it. */
#ifndef AC_READAHEAD_WINDOW_H
#define AC_READAHEAD_WINDOW_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ra_window {
    size_t next_up, next_down;   /* where a sequential fault would hit next (SIZE_MAX: nowhere) */
    size_t size;                 /* the current window, in pages, the faulting one included */
};

#define RA_WINDOW_INIT { SIZE_MAX, SIZE_MAX, 0 }

/* A fault on page p: the window's pages (p and size - 1 beyond it, in the
 * direction *down says). */
static inline size_t ra_window_fault(struct ra_window *w, size_t p, size_t lo, size_t hi, bool *down) {
    bool up_seq = p == w->next_up, down_seq = p == w->next_down;
    *down = down_seq && !up_seq;
    w->size = up_seq || down_seq ? (2 * w->size < hi ? 2 * w->size : hi) : lo;
    if (w->size <= 1) {                  /* no read-ahead: either neighbour is sequential */
        w->next_up = p + 1;
        w->next_down = p >= 1 ? p - 1 : SIZE_MAX;
    } else if (*down) {
        w->next_up = SIZE_MAX;
        w->next_down = p >= w->size ? p - w->size : SIZE_MAX;
    } else {
        w->next_up = p + w->size;
        w->next_down = SIZE_MAX;
    }
    return w->size;
}

#endif
