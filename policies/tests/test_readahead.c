/* Unit test of EMT's read-ahead window (tier/readahead_window.h) on scripted
 * fault sequences: it starts at the least size, doubles on each sequential
 * fault (the page just past the window, upwards or downwards) up to the
 * largest, and resets on an out-of-order fault; a window of one page leaves
 * either neighbour sequential. Streams: with one, any fault elsewhere resets
 * the window (EMT's rule); with several, faults elsewhere start other windows
 * and a scan's keeps growing, a new one replacing the one used longest ago. */
#include "../tier/readahead_window.h"
#include "check.h"

struct step {
    size_t page, size;
    bool down;
};

static void script(const char *name, size_t lo, size_t hi, const struct step *s, size_t n) {
    struct ra_window w = RA_WINDOW_INIT;
    for (size_t i = 0; i < n; i++) {
        bool down = !s[i].down;
        size_t got = ra_window_fault(&w, s[i].page, lo, hi, &down);
        if (got != s[i].size || (got > 1 && down != s[i].down))
            fprintf(stderr, "%s: step %zu (page %zu): window %zu%s, expected %zu%s\n", name, i, s[i].page, got,
                    down ? " down" : "", s[i].size, s[i].down ? " down" : "");
        CHECK_EQ(got, s[i].size);
        if (got > 1)
            CHECK(down == s[i].down);
    }
}

int main(void) {
    /* upwards from 100, least 1, largest 8: 1, 2 (101), 4 (103), 8 (107), 8 (115), 8 (123) */
    const struct step up[] = { {100, 1, false}, {101, 2, false}, {103, 4, false}, {107, 8, false},
                               {115, 8, false}, {123, 8, false},
                               /* out of order: back to 1; then its neighbour below doubles downwards */
                               {500, 1, false}, {499, 2, true}, {497, 4, true}, {493, 8, true}, {485, 8, true} };
    script("up", 1, 8, up, sizeof(up) / sizeof(up[0]));
    /* a fault inside the last window (its page was evicted unread) is out of order */
    const struct step inside[] = { {10, 1, false}, {11, 2, false}, {13, 4, false}, {15, 1, false},
                                   {16, 2, false} };
    script("inside", 1, 32, inside, sizeof(inside) / sizeof(inside[0]));
    /* least 4: every reset reads 4 pages upwards; sequential means past them */
    const struct step least4[] = { {0, 4, false}, {4, 8, false}, {12, 16, false}, {28, 16, false},
                                   {3, 4, false}, {2, 4, false}, {6, 8, false} };
    script("least4", 4, 16, least4, sizeof(least4) / sizeof(least4[0]));
    /* downwards to page 0: the window never reaches below it */
    struct ra_window w = RA_WINDOW_INIT;
    bool down;
    CHECK_EQ(ra_window_fault(&w, 3, 1, 64, &down), 1);
    CHECK_EQ(ra_window_fault(&w, 2, 1, 64, &down), 2);
    CHECK(down);
    CHECK_EQ(ra_window_fault(&w, 0, 1, 64, &down), 4);
    CHECK(down && w.next_down == SIZE_MAX);
    /* largest 1: never more than the faulting page */
    struct ra_window one = RA_WINDOW_INIT;
    for (size_t p = 0; p < 10; p++)
        CHECK_EQ(ra_window_fault(&one, p, 1, 1, &down), 1);
    /* a downward scan 1000, 999, 997, 993 ... with a random fault (a hash chain's record) before
     * each of its faults: one stream resets every time, four keep the scan's window doubling */
    size_t scan[] = {1000, 999, 997, 993, 985, 969};
    size_t noise[] = {50, 7000, 123, 5000, 42, 8000};
    for (unsigned n = 1; n <= 4; n += 3) {
        struct ra_streams s = {0};
        size_t last = 0;
        for (size_t i = 0; i < 6; i++) {
            CHECK_EQ(ra_streams_fault(&s, noise[i], 1, 32, n, &down), 1);
            last = ra_streams_fault(&s, scan[i], 1, 32, n, &down);
            if (n == 4 && i > 0)
                CHECK(down);
        }
        CHECK_EQ(last, n == 1 ? 1 : 32);     /* 1, 2, 4, 8, 16, 32 with four streams */
    }
    /* one stream is exactly the single window's rule */
    struct ra_streams one_s = {0};
    struct ra_window one_w = RA_WINDOW_INIT;
    size_t seq[] = {5, 6, 8, 12, 3, 2, 0, 100, 101, 103};
    for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
        bool d1, d2;
        CHECK_EQ(ra_streams_fault(&one_s, seq[i], 1, 8, 1, &d1), ra_window_fault(&one_w, seq[i], 1, 8, &d2));
    }
    /* two streams, a third start replaces the one used longest ago */
    struct ra_streams two = {0};
    ra_streams_fault(&two, 100, 1, 8, 2, &down);     /* A */
    ra_streams_fault(&two, 500, 1, 8, 2, &down);     /* B */
    CHECK_EQ(ra_streams_fault(&two, 101, 1, 8, 2, &down), 2);   /* A goes on: A used last */
    ra_streams_fault(&two, 900, 1, 8, 2, &down);     /* C replaces B */
    CHECK_EQ(ra_streams_fault(&two, 501, 1, 8, 2, &down), 1);   /* B is gone: a new start */
    CHECK_EQ(two.live, 2);
    return check_report("test_readahead");
}
