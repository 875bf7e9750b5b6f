/* The components memcached-ac knows (ac_components.def: policies, tiers, and
 * the approach names that stand for a pair), the pairs that can work
 * (capabilities: what a policy needs of a tier, what a tier offers; ac_tier.h),
 * and what -h, -o ac_help and -o ac_list say of them.
 * Uses: nothing of the core (beside the chain; the option parser reads it). */
#include "memcached.h"
#include "ac_internal.h"
#include <stdio.h>
#include <string.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

#define AC_POLICY(n) extern const struct ac_policy_ops ac_policy_##n;
#define AC_TIER(n) extern const struct ac_tier ac_tier_##n;
#define AC_ALIAS(n, p, t)
#include "ac_components.def"
#undef AC_POLICY
#undef AC_TIER
#undef AC_ALIAS

#define AC_POLICY(n) &ac_policy_##n,
#define AC_TIER(n)
#define AC_ALIAS(n, p, t)
static const struct ac_policy_ops *const policies[] = {
#include "ac_components.def"
};
#undef AC_POLICY
#undef AC_TIER
#define AC_POLICY(n)
#define AC_TIER(n) &ac_tier_##n,
static const struct ac_tier *const tiers[] = {
#include "ac_components.def"
};
#undef AC_TIER
#undef AC_ALIAS
#define AC_TIER(n)
#define AC_ALIAS(n, p, t) { #n, #p, #t },
/* Approach names of the papers that are a pair without a policy of their own. */
static const struct { const char *name, *policy, *tier; } aliases[] = {
#include "ac_components.def"
};
#undef AC_POLICY
#undef AC_TIER
#undef AC_ALIAS

/* Tier "none": nothing leaves RAM but by memcached's own eviction (the stock cache). */
static const char *const no_files[] = { NULL };
const struct ac_tier ac_tier_none = {
    .name = "none",
    .summary = "nothing spilled or paged: memcached evicts (only with policy none)",
    .caps = AC_CAP_EVICT,
    .files = no_files,
};

const struct ac_policy_ops *ac_policy_at(size_t i) {
    return i < N(policies) ? policies[i] : NULL;
}

const struct ac_tier *ac_tier_at(size_t i) {
    return i < N(tiers) ? tiers[i] : NULL;
}

static const struct ac_policy_ops *policy_named(const char *name) {
    for (size_t i = 0; i < N(policies); i++)
        if (strcmp(policies[i]->name, name) == 0)
            return policies[i];
    return NULL;
}

static const struct ac_tier *tier_named(const char *name) {
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

bool ac_pair_valid(const struct ac_policy_ops *p, const struct ac_tier *t) {
    return (t->caps & p->tier_shapes & AC_CAP_SHAPES) != 0 && (t->caps & p->tier_needs) == p->tier_needs;
}

/* The tiers a policy works over, its default first, then in registry order. */
static size_t valid_tiers(const struct ac_policy_ops *p, const struct ac_tier **out) {
    size_t n = 0;
    const struct ac_tier *def = tier_named(p->default_tier);
    if (def != NULL && ac_pair_valid(p, def))
        out[n++] = def;
    for (size_t i = 0; i < N(tiers); i++)
        if (tiers[i] != def && ac_pair_valid(p, tiers[i]))
            out[n++] = tiers[i];
    return n;
}

static void tier_list(const struct ac_policy_ops *p, char *out, size_t n) {
    const struct ac_tier *v[N(tiers)];
    size_t k = valid_tiers(p, v);
    out[0] = '\0';
    for (size_t i = 0; i < k; i++)
        snprintf(out + strlen(out), n - strlen(out), "%s%s", i ? ", " : "", v[i]->name);
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
    char list[128];
    printf("     policies (ac_policy), with the tiers each works over, its default first:\n");
    for (size_t i = 0; i < N(policies); i++) {
        tier_list(policies[i], list, sizeof(list));
        printf("       %-10s%s: %s\n", policies[i]->name, list, policies[i]->summary);
    }
    for (size_t i = 0; i < N(aliases); i++)
        printf("       %-10s= ac_policy=%s,ac_tier=%s\n", aliases[i].name, aliases[i].policy, aliases[i].tier);
    printf("     tiers (ac_tier):\n");
    for (size_t i = 0; i < N(tiers); i++)
        printf("       %-10s%s\n", tiers[i]->name, tiers[i]->summary);
}

/* The members core/ac_policy.h and core/ac_tier.h say must be set: the first
 * one missing, or NULL. */
static const char *policy_lacks(const struct ac_policy_ops *p) {
    return p->summary == NULL ? "summary" : p->default_tier == NULL ? "default_tier"
         : (p->tier_shapes & AC_CAP_SHAPES) == 0 ? "tier_shapes" : p->on_insert == NULL ? "on_insert"
         : p->on_access == NULL ? "on_access" : p->on_remove == NULL ? "on_remove"
         : p->pick_victims == NULL ? "pick_victims" : p->metadata_bytes == NULL ? "metadata_bytes" : NULL;
}

static const char *tier_lacks(const struct ac_tier *t) {
    if (t->caps & AC_CAP_EVICT)
        return NULL;                      /* tier none: nothing of its own runs */
    const struct ac_spill_ops *s = t->spill;
    const struct ac_page_ops *g = t->page;
    return t->summary == NULL ? "summary" : t->files == NULL ? "files" : t->fixed_bytes == NULL ? "fixed_bytes"
         : t->open == NULL ? "open" : t->close == NULL ? "close" : t->charged_bytes == NULL ? "charged_bytes"
         : t->get_stats == NULL ? "get_stats"
         : (t->caps & AC_CAP_SPILL) && s == NULL ? "spill"
         : (t->caps & AC_CAP_PAGE) && g == NULL ? "page"
         : s != NULL && (s->put == NULL || s->find == NULL || s->peek == NULL || s->maybe == NULL || s->read == NULL
                         || s->drop == NULL) ? "one of spill's put, find, peek, maybe, read, drop"
         : (t->caps & AC_CAP_READ_AHEAD) && (s == NULL || s->read_token == NULL || s->read_start == NULL
                                             || s->read_valid == NULL) ? "spill's reads ahead (read_ahead)"
         : (t->caps & AC_CAP_BLOCKS) && (s == NULL || s->read_block == NULL || s->begin_merge == NULL
                                         || s->merge_done == NULL) ? "spill's block merges (blocks)"
         : (t->caps & AC_CAP_MOVE) && (s == NULL || s->move == NULL) ? "spill's move (move)"
         : g != NULL && (g->map == NULL || g->thread_page_ins == NULL) ? "one of page's map, thread_page_ins"
         : NULL;
}

int ac_resolve(const char *pname, const char *tname, const struct ac_policy_ops **p, const struct ac_tier **t) {
    const char *given = pname;
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
        tname = (*p)->default_tier;
    *t = tier_named(tname);
    if (*t == NULL || !ac_pair_valid(*p, *t)) {
        char list[128];
        tier_list(*p, list, sizeof(list));
        fprintf(stderr, "memcached-ac: ac_policy=%s cannot work over ac_tier=%s; valid tiers for policy %s: %s\n",
                given, tname, pname, list);
        return -1;
    }
    const char *lacks;
    if ((lacks = policy_lacks(*p)) != NULL || (lacks = tier_lacks(*t)) != NULL) {
        fprintf(stderr, "memcached-ac: %s %s does not set %s, which core/%s says it must\n",
                policy_lacks(*p) != NULL ? "policy" : "tier", policy_lacks(*p) != NULL ? (*p)->name : (*t)->name,
                lacks, policy_lacks(*p) != NULL ? "ac_policy.h" : "ac_tier.h");
        return -1;
    }
    return 0;
}

void ac_all_tier_files(void (*fn)(const char *name, void *arg), void *arg) {
    for (size_t i = 0; i < N(tiers); i++)
        for (const char *const *f = tiers[i]->files; *f != NULL; f++)
            fn(*f, arg);
}

/* ---- -o ac_list: the same as JSON, for the harness, the tests, the fuzz build */

static const struct { unsigned bit; const char *name; } cap_names[] = {
    { AC_CAP_EVICT, "evict" }, { AC_CAP_SPILL, "spill" }, { AC_CAP_PAGE, "page" },
    { AC_CAP_ANON, "anon" }, { AC_CAP_BLOCKS, "blocks" }, { AC_CAP_READ_AHEAD, "read_ahead" },
    { AC_CAP_MOVE, "move" }, { AC_CAP_FILES, "files" },
};

/* A JSON string of s (names, summaries and option keys: printable ASCII). */
static void json_str(const char *s) {
    putchar('"');
    for (; *s != '\0'; s++) {
        if (*s == '"' || *s == '\\')
            putchar('\\');
        putchar(*s);
    }
    putchar('"');
}

static void json_caps(unsigned caps) {
    putchar('[');
    const char *sep = "";
    for (size_t i = 0; i < N(cap_names); i++)
        if (caps & cap_names[i].bit) {
            printf("%s", sep);
            json_str(cap_names[i].name);
            sep = ", ";
        }
    putchar(']');
}

static void json_options(const struct ac_opt_table *const *tables) {
    putchar('[');
    const char *sep = "";
    for (size_t k = 0; k < AC_MAX_OPT_TABLES && tables[k] != NULL; k++)
        for (size_t i = 0; i < tables[k]->n; i++) {
            printf("%s", sep);
            json_str(tables[k]->opts[i].key);
            sep = ", ";
        }
    putchar(']');
}

static const char *shape_of(unsigned caps) {
    return caps & AC_CAP_SPILL ? "spill" : caps & AC_CAP_PAGE ? "page" : "evict";
}

void ac_list_json(void) {
    const struct ac_tier *v[N(tiers)];
    printf("{\"policies\": [");
    for (size_t i = 0; i < N(policies); i++) {
        const struct ac_policy_ops *p = policies[i];
        printf("%s\n  {\"name\": ", i ? "," : "");
        json_str(p->name);
        printf(", \"summary\": ");
        json_str(p->summary);
        printf(", \"default_tier\": ");
        json_str(p->default_tier);
        printf(", \"tier_shapes\": ");
        json_caps(p->tier_shapes);
        printf(", \"tier_needs\": ");
        json_caps(p->tier_needs);
        printf(", \"network\": %s, \"fetch_on_read\": %s, \"tiers\": [", p->in_process_only ? "false" : "true",
               p->fetch_on_read ? "true" : "false");
        size_t k = valid_tiers(p, v);
        for (size_t j = 0; j < k; j++) {
            printf("%s", j ? ", " : "");
            json_str(v[j]->name);
        }
        printf("], \"options\": ");
        json_options(p->options);
        printf("}");
    }
    printf("\n ],\n \"tiers\": [");
    for (size_t i = 0; i < N(tiers); i++) {
        const struct ac_tier *t = tiers[i];
        printf("%s\n  {\"name\": ", i ? "," : "");
        json_str(t->name);
        printf(", \"summary\": ");
        json_str(t->summary);
        printf(", \"shape\": ");
        json_str(shape_of(t->caps));
        printf(", \"caps\": ");
        json_caps(t->caps);
        printf(", \"files\": [");
        for (const char *const *f = t->files; *f != NULL; f++) {
            printf("%s", f != t->files ? ", " : "");
            json_str(*f);
        }
        printf("], \"options\": ");
        json_options(t->options);
        printf("}");
    }
    printf("\n ],\n \"pairs\": [");
    const char *sep = "";
    for (size_t i = 0; i < N(policies); i++) {
        size_t k = valid_tiers(policies[i], v);
        for (size_t j = 0; j < k; j++) {
            printf("%s\n  {\"policy\": ", sep);
            json_str(policies[i]->name);
            printf(", \"tier\": ");
            json_str(v[j]->name);
            printf(", \"shape\": ");
            json_str(shape_of(v[j]->caps));
            printf(", \"default\": %s}", j == 0 && strcmp(v[j]->name, policies[i]->default_tier) == 0 ? "true" : "false");
            sep = ",";
        }
    }
    printf("\n ],\n \"aliases\": [");
    for (size_t i = 0; i < N(aliases); i++) {
        printf("%s\n  {\"name\": ", i ? "," : "");
        json_str(aliases[i].name);
        printf(", \"policy\": ");
        json_str(aliases[i].policy);
        printf(", \"tier\": ");
        json_str(aliases[i].tier);
        printf("}");
    }
    printf("\n ]}\n");
}
