/* Policy "none": no access tracking, no eviction choice of ours. Over tier
 * "none" it is stock memcached (no hook runs, ac_enabled stays false: items
 * are evicted, not spilled); over a kernel tier (swap, mmapfile) it is OS
 * paging (Zhang et al. ICDE 2015 §III-B): the kernel's page replacement is
 * the only policy. */
#include "memcached.h"
#include "ac_policy.h"
#include "ac_services.h"

void ac_no_op(item *it) {
    (void)it;
}

int ac_no_victims(unsigned int clsid, item **out, int max) {
    (void)clsid;
    (void)out;
    (void)max;
    return 0;              /* never evicts: a kernel tier pages */
}

static size_t none_metadata_bytes(void) {
    return 0;
}

const struct ac_policy_ops ac_policy_none = {
    .name = "none",
    .summary = "no tracking of ours: stock memcached (tier none) or the kernel's paging (swap, mmapfile)",
    .default_tier = "none",
    .tier_shapes = AC_CAP_EVICT | AC_CAP_PAGE,
    .on_insert = ac_no_op,
    .on_access = ac_no_op,
    .on_remove = ac_no_op,
    .pick_victims = ac_no_victims,
    .metadata_bytes = none_metadata_bytes,
};
