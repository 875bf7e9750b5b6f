/* Tier "uvmm"/"emt": dynamic read-ahead (Meyer et al., EMT: "start at a
 * minimum, double on each sequential fault up to a maximum, reset on an
 * out-of-order fault"; the rule, in both directions, and its streams
 * (ac_emt_readahead_streams) in readahead_window.h).
 *
 * After the fault thread fetched page p (uvmm.c, serve), those of the window's
 * w - 1 pages beyond p in its direction that are on disk (pages resident or
 * in flight are skipped, as a page cache reads ahead only what it lacks), up
 * to the room under the cap (read-ahead never waits for the evictor), are
 * taken (FETCHING), read with one transfer per run of consecutive slots,
 * checked like any fetch, and placed; their waiters (a thread that touched
 * one meanwhile) are woken by the placement. A read-ahead
 * page counts as a fetch of nobody's: a later access to it is a memory hit.
 * It is marked until it is touched (ra_used) or evicted untouched
 * (ra_wasted). A page that cannot be read or does not check is put back on
 * disk, to be fetched by its own fault (which retries and reports).
 *
 * Only the fault thread reads ahead (check mode's workers fetch one page
 * each), so the window's state needs no lock. */
#include "memcached.h"
#include "ac_tier.h"
#include "uvmm.h"
#include "readahead_window.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct ra_streams streams;
static char *raw;                        /* ra_max pages: the run's slots */
static _Alignas(UVMM_PAGE) char tmp[UVMM_PAGE];
static struct uvmm_page *metas;
static size_t *page_of;                  /* the pages taken, ascending */
static bool *ok;

int uvmm_readahead_init(char *err, size_t errlen) {
    if (uv.opt.ra_max == 0)
        return 0;
    size_t n = (size_t)uv.opt.ra_max;
    raw = aligned_alloc(UVMM_PAGE, n * UVMM_PAGE);
    metas = calloc(n, sizeof(*metas));
    page_of = calloc(n, sizeof(*page_of));
    ok = calloc(n, sizeof(*ok));
    uv.ra = calloc(uv.npages, 1);
    if (raw == NULL || metas == NULL || page_of == NULL || ok == NULL || uv.ra == NULL) {
        snprintf(err, errlen, "no memory for the read-ahead buffers (%zu pages)", n);
        uvmm_readahead_free();
        return -1;
    }
    return 0;
}

void uvmm_readahead_free(void) {
    free(raw);
    free(metas);
    free(page_of);
    free(ok);
    free(uv.ra);
    raw = NULL;
    metas = NULL;
    page_of = NULL;
    ok = NULL;
    uv.ra = NULL;
}

void uvmm_readahead(size_t p) {
    if (uv.ra == NULL)
        return;
    bool down;
    size_t window = ra_streams_fault(&streams, p, (size_t)uv.opt.ra_min, (size_t)uv.opt.ra_max,
                                     (unsigned)uv.opt.ra_streams, &down);
    if (window <= 1)
        return;
    /* the window's pages on disk, in ascending order (pages resident or in flight are skipped, as
     * a page cache reads ahead only what it lacks); each run of consecutive ones is one transfer */
    size_t n = 0;
    pthread_mutex_lock(&uv.lock);
    size_t room = uv.cap > uv.resident ? uv.cap - uv.resident : 0;
    size_t lo = down ? (p >= window - 1 ? p - (window - 1) : 0) : p + 1;
    size_t hi = down ? p : (p + window < uv.npages ? p + window : uv.npages);   /* [lo, hi) */
    for (size_t q = lo; q < hi && n < room; q++) {
        if (uv.pages[q].state != UVMM_EVICTED)
            continue;
        page_of[n] = q;
        metas[n] = uv.pages[q];
        uv.pages[q].state = UVMM_FETCHING;
        n++;
    }
    uv.resident += n;
    if (n > 0)
        uv.c.ra_faults++;
    if (uv.resident + uvmm_low_water() >= uv.cap)
        pthread_cond_signal(&uv.work);
    pthread_mutex_unlock(&uv.lock);
    if (n == 0)
        return;
    for (size_t i = 0; i < n;) {
        size_t len = 1;
        while (i + len < n && page_of[i + len] == page_of[i] + len)
            len++;
        int rc = uvmm_slots_read(page_of[i], len, raw + i * UVMM_PAGE, &metas[i]);
        for (size_t k = i; k < i + len; k++) {
            const void *page = rc == 0 ? uvmm_slot_page(raw + k * UVMM_PAGE, tmp, &metas[k]) : NULL;
            ok[k] = page != NULL && uvmm_place(page_of[k], page, uv.opt.clean != 0) == 0;
        }
        i += len;
    }
    pthread_mutex_lock(&uv.lock);
    for (size_t i = 0; i < n; i++) {
        size_t q = page_of[i];
        if (!ok[i]) {                    /* back on disk: its own fault fetches it */
            uv.pages[q].state = UVMM_EVICTED;
            uv.resident--;
            continue;
        }
        uv.pages[q].state = uv.opt.clean ? UVMM_CLEAN : UVMM_DIRTY;
        uv.pages[q].ref = 0;             /* not accessed yet */
        uv.ra[q] = 1;
        uvmm_evict_resident(q);
        uv.c.ra_pages++;
    }
    pthread_cond_broadcast(&uv.room);
    pthread_mutex_unlock(&uv.lock);
    for (size_t i = 0; i < n; i++)
        if (!ok[i])
            uvmm_wake(page_of[i]);       /* who waited on it faults again: a fetch of its own */
}
