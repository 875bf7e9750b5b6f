/* EMT's dynamic read-ahead window (Meyer et al.): start at the least size,
 * double on each sequential fault up to the largest, reset on an
 * out-of-order fault. Sequential: the page just past the previous window in
 * its direction (up, or down: memcached's slab allocator hands out a slab
 * page's chunks from its end, so records loaded in key order lie at falling
 * addresses). A pure rule, kept apart so it is tested alone
 * (tests/test_readahead.c); uvmm_readahead.c applies it.
 *
 * Streams (ra_streams): EMT keeps one window, so any fault elsewhere resets
 * it. In memcached a scan's gets walk their hash chains through other
 * records' pages, and those faults land between a scan's own; with several
 * windows (as the kernel keeps read-ahead state per open file) a fault that
 * continues none of them starts a new one in the place of the one used
 * longest ago, and the scan's window keeps growing. One stream is EMT's rule. */
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

#define RA_STREAMS_MAX 16

struct ra_streams {                      /* zero-initialised: no stream yet */
    struct ra_window w[RA_STREAMS_MAX];
    uint64_t used[RA_STREAMS_MAX];       /* when each was last continued or started */
    uint64_t tick;
    unsigned live;                       /* streams started so far (w[0 .. live - 1]) */
};

/* A fault on page p with n streams (1..RA_STREAMS_MAX): the window of the
 * stream it continues, or of a new one that replaces the one used longest ago. */
static inline size_t ra_streams_fault(struct ra_streams *s, size_t p, size_t lo, size_t hi, unsigned n,
                                      bool *down) {
    unsigned pick = RA_STREAMS_MAX, oldest = 0;
    for (unsigned i = 0; i < s->live && i < n && pick == RA_STREAMS_MAX; i++) {
        if (s->w[i].next_up == p || s->w[i].next_down == p)
            pick = i;
        else if (s->used[i] < s->used[oldest])
            oldest = i;
    }
    if (pick == RA_STREAMS_MAX) {        /* a new stream: its first fault is out of order */
        pick = s->live < n ? s->live++ : oldest;
        s->w[pick] = (struct ra_window)RA_WINDOW_INIT;
    }
    s->used[pick] = ++s->tick;
    return ra_window_fault(&s->w[pick], p, lo, hi, down);
}

#endif
