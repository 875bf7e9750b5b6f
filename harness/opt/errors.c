/* Error-message helpers and the memory check shared by all phases. */
#include <stdio.h>
#include "opt_internal.h"

int ac_fail(char *err, size_t errlen, const char *fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int ac_mem_check(uint64_t need, uint64_t limit, const char *what, char *err, size_t errlen) {
    if (need <= limit)
        return 0;
    return ac_fail(err, errlen,
                   "%s needs %llu bytes (%.1f MiB) but the memory limit is %llu bytes (%.1f MiB)",
                   what, (unsigned long long)need, need / 1048576.0,
                   (unsigned long long)limit, limit / 1048576.0);
}

int ac_check_caps(const uint64_t *caps, size_t ncaps, const char *unit, char *err, size_t errlen) {
    for (size_t k = 0; k < ncaps; k++)
        if (caps[k] == 0)
            return ac_fail(err, errlen, "capacity must be at least 1 %s, got 0", unit);
    return 0;
}

uint64_t ac_mem_available(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return 0;
    char line[256];
    unsigned long long kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    fclose(f);
    return (uint64_t)kb * 1024;
}
