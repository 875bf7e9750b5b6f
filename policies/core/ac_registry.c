/* The components memcached-ac knows: policies (policy/), tiers (tier/), and
 * the approach names that stand for a pair. To add a policy or a tier, add
 * its ops table to the list here (and its file to policy/ or tier/); its
 * options come with its ops (.options). */
#include "memcached.h"
#include "ac_internal.h"
#include <stdio.h>
#include <string.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct ac_policy_ops *const policies[] = {
    &ac_policy_none, &ac_policy_lru, &ac_policy_alru, &ac_policy_logging, &ac_policy_effpaging,
    &ac_policy_vma,
};

static const char *const no_files[] = { NULL };
/* Tier "none": nothing leaves RAM but by memcached's own eviction (the stock cache). */
const struct ac_tier_ops ac_tier_none = {
    .name = "none",
    .summary = "nothing spilled or paged: memcached evicts (only with policy none)",
    .files = no_files,
};

static const struct ac_tier_ops *const tiers[] = {
    &ac_tier_none, &ac_tier_blocks, &ac_tier_tuples, &ac_tier_swap, &ac_tier_mmapfile,
};

/* Approach names of the paper that are a pair without a policy of their own. */
static const struct { const char *name, *policy, *tier; } aliases[] = {
    { "ospaging", "none", "swap" },      /* Zhang et al. §III-B: OS paging */
};

static const struct ac_policy_ops *policy_named(const char *name) {
    for (size_t i = 0; i < N(policies); i++)
        if (strcmp(policies[i]->name, name) == 0)
            return policies[i];
    return NULL;
}

static const struct ac_tier_ops *tier_named(const char *name) {
    for (size_t i = 0; i < N(tiers); i++)
        if (strcmp(tiers[i]->name, name) == 0)
            return tiers[i];
    return NULL;
}

static int alias_of(const char *name) {
    for (size_t i = 0; i < N(aliases); i++)
        if (strcmp(aliases[i].name, name) == 0)
            return (int)i;
    return -1;
}

bool ac_policy_known(const char *name) {
    return policy_named(name) != NULL || alias_of(name) >= 0;
}

bool ac_tier_known(const char *name) {
    return tier_named(name) != NULL;
}

const char *ac_policy_names(void) {
    static char names[256];
    if (names[0] == '\0') {
        for (size_t i = 0; i < N(policies); i++)
            snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "", policies[i]->name);
        for (size_t i = 0; i < N(aliases); i++)
            snprintf(names + strlen(names), sizeof(names) - strlen(names), ", %s", aliases[i].name);
    }
    return names;
}

const char *ac_tier_names(void) {
    static char names[256];
    if (names[0] == '\0')
        for (size_t i = 0; i < N(tiers); i++)
            snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "", tiers[i]->name);
    return names;
}

void ac_list_components(void) {
    printf("     policies (ac_policy), with the tiers each works over, its default first:\n");
    for (size_t i = 0; i < N(policies); i++) {
        printf("       %-10s", policies[i]->name);
        for (const char *const *t = policies[i]->tiers; *t != NULL; t++)
            printf("%s%s", t == policies[i]->tiers ? "" : ", ", *t);
        printf(": %s\n", policies[i]->summary);
    }
    for (size_t i = 0; i < N(aliases); i++)
        printf("       %-10s= ac_policy=%s,ac_tier=%s\n", aliases[i].name, aliases[i].policy, aliases[i].tier);
    printf("     tiers (ac_tier):\n");
    for (size_t i = 0; i < N(tiers); i++)
        printf("       %-10s%s\n", tiers[i]->name, tiers[i]->summary);
}

/* The tiers a policy works over, for a message. */
static void tier_list(const struct ac_policy_ops *p, char *out, size_t n) {
    out[0] = '\0';
    for (const char *const *t = p->tiers; *t != NULL; t++)
        snprintf(out + strlen(out), n - strlen(out), "%s%s", t == p->tiers ? "" : ", ", *t);
}

int ac_resolve(const struct ac_policy_ops **p, const struct ac_tier_ops **t) {
    const char *pname = ac_opts.policy, *tname = ac_opts.tier;
    int a = alias_of(pname);
    if (a >= 0) {
        pname = aliases[a].policy;
        if (tname[0] == '\0')
            tname = aliases[a].tier;
    }
    *p = policy_named(pname);
    if (*p == NULL) {                    /* ac_options.c checked the name */
        fprintf(stderr, "memcached-ac: unknown ac_policy \"%s\"; valid policies: %s\n", pname, ac_policy_names());
        return -1;
    }
    if (tname[0] == '\0')
        tname = (*p)->tiers[0];
    *t = tier_named(tname);
    bool valid = false;
    for (const char *const *v = (*p)->tiers; *v != NULL && *t != NULL; v++)
        valid |= strcmp(*v, tname) == 0;
    if (!valid) {
        char list[128];
        tier_list(*p, list, sizeof(list));
        fprintf(stderr, "memcached-ac: ac_policy=%s cannot work over ac_tier=%s; valid tiers for policy %s: %s\n",
                ac_opts.policy, tname, pname, list);
        return -1;
    }
    return 0;
}

void ac_all_tier_files(void (*fn)(const char *name, void *arg), void *arg) {
    for (size_t i = 0; i < N(tiers); i++)
        for (const char *const *f = tiers[i]->files; *f != NULL; f++)
            fn(*f, arg);
}

/* Adds each of a component's tables unless it is there already (shared). */
static void add_tables(const struct ac_opt_table *const *list, const struct ac_opt_table **out, size_t *n,
                       size_t max) {
    for (size_t k = 0; k < AC_MAX_OPT_TABLES && list[k] != NULL; k++) {
        bool seen = false;
        for (size_t j = 0; j < *n; j++)
            seen |= out[j] == list[k];
        if (!seen && *n < max)
            out[(*n)++] = list[k];
    }
}

size_t ac_option_tables(const struct ac_opt_table **out, size_t max) {
    size_t n = 0;
    if (max > 0)
        out[n++] = &ac_core_options;
    for (size_t i = 0; i < N(policies); i++)
        add_tables(policies[i]->options, out, &n, max);
    for (size_t i = 0; i < N(tiers); i++)
        add_tables(tiers[i]->options, out, &n, max);
    return n;
}
