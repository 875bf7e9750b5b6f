/* Policy "none": stock memcached. No hook runs (ac_enabled stays false); items
 * are evicted, not spilled. Listed so that ac_policy=none is a valid choice. */
#include "memcached.h"
#include "ac_policy.h"

const struct ac_policy_ops ac_policy_none = {
    .name = "none",
    .summary = "stock memcached: evict, never spill",
};
