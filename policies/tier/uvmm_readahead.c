/* Tier "uvmm"/"emt": dynamic read-ahead (Meyer et al., EMT: "start at a
 * minimum, double on each sequential fault up to a maximum, reset on an
 * out-of-order fault"; the rule, in both directions, in readahead_window.h).
 *
 * After the fault thread fetched page p (uvmm.c, serve), the window's w - 1
 * pages beyond p in its direction that are on disk, up to the first that is not
 * and up to the room under the cap (read-ahead never waits for the evictor),
 * are taken (FETCHING), read with one transfer of their consecutive slots,
 * checked like any fetch, and placed; their waiters (a
 * thread that touched one meanwhile) are woken by the placement. A read-ahead
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

static struct ra_window win = RA_WINDOW_INIT;
static char *raw;                        /* ra_max pages: the run's slots */
static _Alignas(UVMM_PAGE) char tmp[UVMM_PAGE];
static struct uvmm_page *metas;
static bool *ok;

int uvmm_readahead_init(char *err, size_t errlen) {
    if (uv.opt.ra_max == 0)
        return 0;
    size_t n = (size_t)uv.opt.ra_max;
    raw = aligned_alloc(UVMM_PAGE, n * UVMM_PAGE);
    metas = calloc(n, sizeof(*metas));
    ok = calloc(n, sizeof(*ok));
    uv.ra = calloc(uv.npages, 1);
    if (raw == NULL || metas == NULL || ok == NULL || uv.ra == NULL) {
        snprintf(err, errlen, "no memory for the read-ahead buffers (%zu pages)", n);
        uvmm_readahead_free();
        return -1;
    }
    return 0;
}

void uvmm_readahead_free(void) {
    free(raw);
    free(metas);
    free(ok);
    free(uv.ra);
    raw = NULL;
    metas = NULL;
    ok = NULL;
    uv.ra = NULL;
}

void uvmm_readahead(size_t p) {
    if (uv.ra == NULL)
        return;
    bool down;
    size_t window = ra_window_fault(&win, p, (size_t)uv.opt.ra_min, (size_t)uv.opt.ra_max, &down);
    if (window <= 1)
        return;
    size_t n = 0;
    pthread_mutex_lock(&uv.lock);
    size_t room = uv.cap > uv.resident ? uv.cap - uv.resident : 0;
    for (; n < window - 1 && n < room; n++) {
        size_t q = down ? p - 1 - n : p + 1 + n;
        if ((down && n >= p) || q >= uv.npages || uv.pages[q].state != UVMM_EVICTED)
            break;
        uv.pages[q].state = UVMM_FETCHING;
    }
    size_t first = down ? p - n : p + 1;   /* the run's lowest page: one transfer, upwards */
    for (size_t i = 0; i < n; i++) {
        metas[i] = uv.pages[first + i];
        metas[i].state = UVMM_EVICTED;
    }
    uv.resident += n;
    if (n > 0)
        uv.c.ra_faults++;
    if (uv.resident + uvmm_low_water() >= uv.cap)
        pthread_cond_signal(&uv.work);
    pthread_mutex_unlock(&uv.lock);
    if (n == 0)
        return;
    int rc = uvmm_slots_read(first, n, raw, metas);
    for (size_t i = 0; i < n; i++) {
        const void *page = rc == 0 ? uvmm_slot_page(raw + i * UVMM_PAGE, tmp, &metas[i]) : NULL;
        ok[i] = page != NULL && uvmm_place(first + i, page, uv.opt.clean != 0) == 0;
    }
    pthread_mutex_lock(&uv.lock);
    for (size_t i = 0; i < n; i++) {
        size_t q = first + i;
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
            uvmm_wake(first + i);        /* who waited on it faults again: a fetch of its own */
}
