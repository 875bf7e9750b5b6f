/* Tier emt's page colours (emt_colours.c): the pages' temperatures from the
 * shared hot/cold classifier, the hot ones pinned in the page cache.
 * memcached.h (no include guard) must be included first. */
#ifndef AC_EMT_COLOURS_H
#define AC_EMT_COLOURS_H
#include <stdbool.h>
#include <stddef.h>

/* ac_emt_colours=1 with ac_log_offline=1 is refused here (err). */
int emt_colours_check(char *err, size_t errlen);
/* After the region is mapped (uv.npages, uv.pin): the estimate table for its
 * pages, the access log and the classifier thread, and uvmm's per-page touch
 * hook (uv.on_touch), which logs each page an access covers, sampled. 0, or
 * -1 after printing why. */
int emt_colours_start(void);
/* Stops the thread, frees the table and the log (nothing when not started). */
void emt_colours_stop(void);
/* The classifier's lines of `stats anticache` and the pin budget. */
void emt_colours_stats(ADD_STAT add_stats, void *c);

#endif
