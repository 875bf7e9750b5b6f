/* The memory limit of the cgroup this process runs in, for policies that lock
 * memory (effpaging): locking more than the group allows ends in an OOM kill,
 * so they check before they lock. Both cgroup versions: v1's memory controller
 * (/sys/fs/cgroup/memory, the hierarchical limit of memory.stat, which takes
 * the parents' limits into account) and v2's memory.max (the lowest on the
 * path from the group to the root, since a parent's limit bounds its
 * children), at /sys/fs/cgroup or /sys/fs/cgroup/unified (hybrid layout).
 * Uses: nothing of the core (a service of ac_services.h). */
#include "memcached.h"
#include "ac_internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define UNLIMITED_V1 (1ULL << 62)     /* v1 reports "no limit" as PAGE_COUNTER_MAX pages */

/* The first number in file f after the word key ("" : the file's first number);
 * "max" reads as UINT64_MAX. 0, or -1. */
static int read_u64(const char *dir, const char *f, const char *key, uint64_t *out) {
    char path[1400], line[256];
    snprintf(path, sizeof(path), "%s/%s", dir, f);
    FILE *fp = fopen(path, "r");
    if (fp == NULL)
        return -1;
    int rc = -1;
    size_t klen = strlen(key);
    while (rc != 0 && fgets(line, sizeof(line), fp) != NULL) {
        const char *v = line;
        if (klen > 0) {
            if (strncmp(line, key, klen) != 0 || line[klen] != ' ')
                continue;
            v = line + klen + 1;
        }
        if (strncmp(v, "max", 3) == 0) {
            *out = UINT64_MAX;
            rc = 0;
        } else {
            char *end;
            unsigned long long n = strtoull(v, &end, 10);
            if (end != v) {
                *out = n;
                rc = 0;
            }
        }
        if (klen == 0)
            break;
    }
    fclose(fp);
    return rc;
}

/* The group's path in hierarchy `want` ("memory" for v1, "" for v2). */
static int group_path(const char *want, char *out, size_t n) {
    FILE *fp = fopen("/proc/self/cgroup", "r");
    if (fp == NULL)
        return -1;
    char line[1200];
    int rc = -1;
    while (rc != 0 && fgets(line, sizeof(line), fp) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (c2 == NULL)
            continue;
        *c2 = '\0';
        /* v2: "0::/path"; v1: "N:ctrl,ctrl:/path" */
        bool match = c1[1] == '\0' && want[0] == '\0';
        char *save = NULL;
        for (char *t = strtok_r(c1 + 1, ",", &save); t != NULL && want[0] != '\0'; t = strtok_r(NULL, ",", &save))
            match = match || strcmp(t, want) == 0;
        if (match) {
            snprintf(out, n, "%s", c2 + 1);
            rc = 0;
        }
    }
    fclose(fp);
    return rc;
}

static int v1(uint64_t *limit, uint64_t *usage, char *path, size_t n) {
    char rel[1100];
    if (group_path("memory", rel, sizeof(rel)) != 0)
        return -1;
    snprintf(path, n, "/sys/fs/cgroup/memory%s", strcmp(rel, "/") == 0 ? "" : rel);
    if (read_u64(path, "memory.stat", "hierarchical_memory_limit", limit) != 0
            && read_u64(path, "memory.limit_in_bytes", "", limit) != 0)
        return -1;
    if (*limit >= UNLIMITED_V1)
        *limit = UINT64_MAX;
    return read_u64(path, "memory.usage_in_bytes", "", usage);
}

static int v2(uint64_t *limit, uint64_t *usage, char *path, size_t n) {
    char rel[1100];
    if (group_path("", rel, sizeof(rel)) != 0)
        return -1;
    static const char *const roots[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
    for (size_t r = 0; r < sizeof(roots) / sizeof(roots[0]); r++) {
        snprintf(path, n, "%s%s", roots[r], strcmp(rel, "/") == 0 ? "" : rel);
        if (read_u64(path, "memory.current", "", usage) != 0)
            continue;        /* no memory controller in this hierarchy */
        *limit = UINT64_MAX;
        char dir[1400];
        snprintf(dir, sizeof(dir), "%s", path);
        while (strlen(dir) > strlen(roots[r])) {
            uint64_t m;
            if (read_u64(dir, "memory.max", "", &m) == 0 && m < *limit)
                *limit = m;
            *strrchr(dir, '/') = '\0';
        }
        return 0;
    }
    return -1;
}

int ac_cgroup_memory(uint64_t *limit, uint64_t *usage, char *path, size_t n) {
    if (access("/sys/fs/cgroup/memory/memory.usage_in_bytes", R_OK) == 0 && v1(limit, usage, path, n) == 0)
        return 0;
    if (v2(limit, usage, path, n) == 0)
        return 0;
    *limit = UINT64_MAX;
    *usage = 0;
    snprintf(path, n, "(no cgroup memory controller)");
    return access("/proc/self/cgroup", R_OK) == 0 ? 0 : -1;
}
