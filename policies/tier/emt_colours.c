/* Tier emt's page colours and pinned pages (ac_emt_colours=1). EMT (Meyer et
 * al., seed paper 001) lets the application give its pages colours
 * (temperatures), adjusted by the accesses it observes, and pin pages the
 * cache must keep. Here the application's knowledge is the shared hot/cold
 * classifier (policy/hotcold.c: Siberia's sampled access log, exponential
 * smoothing and forward algorithm, Levandoski et al. ICDE 2013), fed with
 * pages instead of keys: every access the item path reports (the pager's
 * touched hook) logs the pages it covers, sampled per ac_log_sample, under
 * fingerprint page + 1; each round (ac_log_round) classifies them and the hot
 * set becomes the pinned pages (uv.pin), which the evictor passes over
 * (uvmm_evict.c). So a page has two colours: hot (pinned) or not; the
 * estimates behind them are the observed accesses, smoothed.
 *
 * The hot set's budget is ac_log_hot_fill of the pages the evictor may hold
 * beyond its watermarks (the cache less the low water level and the eviction
 * size), recomputed each round as the cgroup moves the cache: pins never take
 * the room the evictor makes, and were every other resident page gone, the
 * evictor writes a pinned one all the same (uvmm_pin_overrides). The estimate
 * table tracks every page of the region unless ac_log_keys says otherwise;
 * its memory and the rings' are the process's, under the cgroup like the
 * pager's book-keeping. Online rounds only: ac_log_offline is refused. */
#include "memcached.h"
#include "ac_services.h"
#include "policy/hotcold.h"
#include "uvmm.h"
#include "emt_colours.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct ac_hotcold hc;
static uint8_t *next_pin;            /* the round's scratch: the new hot set */
static bool started;

int emt_colours_check(char *err, size_t errlen) {
    if (ac_cls_opts.offline) {
        snprintf(err, errlen, "ac_emt_colours=1 classifies pages online, round by round; ac_log_offline=1"
                 " (logging's offline classification) is not accepted with it: leave ac_log_offline=0");
        return -1;
    }
    return 0;
}

/* Pages the hot set may take: ac_log_hot_fill of the cache beyond the watermarks. */
static uint64_t budget_bytes(void) {
    size_t cap = __atomic_load_n(&uv.cap, __ATOMIC_RELAXED), keep = uvmm_low_water() + (size_t)uv.opt.batch;
    size_t room = cap > keep ? cap - keep : 0;
    return (uint64_t)((double)room * ac_cls_opts.hot_fill) * UVMM_PAGE;
}

static void mark_hot(uint64_t fp, void *arg) {
    (void)arg;
    if (fp >= 1 && fp <= uv.npages)
        next_pin[fp - 1] = 1;
}

/* After a classification (the classifier's thread): the hot pages pinned,
 * the others unpinned, in one pass; the next round's budget. */
static void colour_round(void) {
    memset(next_pin, 0, uv.npages);
    ac_cls_foreach_hot(&hc.cls, mark_hot, NULL);
    size_t pinned = 0;
    for (size_t p = 0; p < uv.npages; p++) {
        if (__atomic_load_n(&uv.pin[p], __ATOMIC_RELAXED) != next_pin[p])
            __atomic_store_n(&uv.pin[p], next_pin[p], __ATOMIC_RELAXED);
        pinned += next_pin[p];
    }
    __atomic_store_n(&uv.pinned, pinned, __ATOMIC_RELAXED);
    hc.budget = budget_bytes();
}

/* uv.on_touch: one page an access covered (the item path), logged if sampled */
static void page_touched(size_t p) {
    if (ac_log_sampled(&hc.log))
        ac_log_record(&hc.log, p + 1, UVMM_PAGE);
}

int emt_colours_start(void) {
    size_t keys = ac_cls_opts.keys != 0 ? ac_cls_opts.keys : uv.npages;
    next_pin = calloc(uv.npages, 1);
    if (next_pin == NULL || uv.pin == NULL) {
        fprintf(stderr, "memcached-ac: emt: no memory for the colours of %zu pages\n", uv.npages);
        return -1;
    }
    if (ac_hc_init(&hc, keys < 1024 ? 1024 : keys, budget_bytes(), colour_round, "emt colours") != 0)
        return -1;
    if (ac_hc_start(&hc, "emt colours") != 0) {
        ac_hc_destroy(&hc);
        return -1;
    }
    started = true;
    uv.on_touch = page_touched;
    return 0;
}

void emt_colours_stop(void) {
    if (!started)
        return;
    started = false;
    uv.on_touch = NULL;
    ac_hc_destroy(&hc);
    free(next_pin);
    next_pin = NULL;
}

void emt_colours_stats(ADD_STAT add_stats, void *c) {
    if (!started)
        return;
    ac_hc_stats(&hc, add_stats, c);
}
