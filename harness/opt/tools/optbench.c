/* ac-optbench TRACE CAP[,CAP...]: times each phase of the OPT / LRU pipeline
 * on one core and prints requests per second and the peak RSS. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "ac_opt.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void report(const char *phase, double secs, uint64_t n) {
    printf("%-28s %8.3f s  %8.2f M requests/s\n", phase, secs, n / secs / 1e6);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: ac-optbench TRACE CAP[,CAP...]\n");
        return 2;
    }
    uint64_t caps[16];
    size_t ncaps = 0;
    for (char *s = strtok(argv[2], ","); s && ncaps < 16; s = strtok(NULL, ","))
        caps[ncaps++] = strtoull(s, NULL, 10);
    char err[512];
    uint64_t limit = ac_mem_available();
    double t0 = now();
    struct ac_trace *t = ac_trace_open(argv[1], AC_FMT_AUTO, err, sizeof err);
    if (!t) {
        fprintf(stderr, "ac-optbench: %s\n", err);
        return 1;
    }
    uint64_t n = ac_trace_requests(t);
    struct ac_nextuse *nu = ac_nextuse_build(t, 0, limit, err, sizeof err);
    if (!nu) {
        fprintf(stderr, "ac-optbench: %s\n", err);
        return 1;
    }
    double t1 = now();
    uint64_t d = ac_nextuse_distinct(nu);
    printf("requests %llu, distinct keys %llu\n", (unsigned long long)n, (unsigned long long)d);
    report("next-use pass (hash)", t1 - t0, n);
    double opt_total = t1 - t0;
    for (size_t k = 0; k < ncaps; k++) {
        for (int bypass = 0; bypass <= 1; bypass++) {
            uint64_t hits;
            double a = now();
            if (ac_opt_unit(nu, &caps[k], 1, bypass, limit, &hits, err, sizeof err)) {
                fprintf(stderr, "ac-optbench: %s\n", err);
                return 1;
            }
            double b = now();
            char name[64];
            snprintf(name, sizeof name, "OPT %s replay c=%llu", bypass ? "bypass" : "demand",
                     (unsigned long long)caps[k]);
            report(name, b - a, n);
            printf("%28s hit rate %.4f\n", "", (double)hits / n);
            if (k == 0 && bypass == 0)
                opt_total += b - a;
        }
    }
    report("OPT demand, one capacity, total", opt_total, n);
    uint64_t *hist = calloc(d ? d : 1, sizeof *hist);
    double a = now();
    if (ac_lru_hist(nu, limit, hist, err, sizeof err)) {
        fprintf(stderr, "ac-optbench: %s\n", err);
        return 1;
    }
    double b = now();
    report("LRU stack distances (curve)", b - a, n);
    report("LRU curve, total", (t1 - t0) + (b - a), n);
    for (size_t k = 0; k < ncaps; k++) {
        uint64_t h = 0;
        for (uint64_t x = 0; x < caps[k] && x < d; x++)
            h += hist[x];
        printf("%28s LRU c=%llu hit rate %.4f\n", "", (unsigned long long)caps[k], (double)h / n);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("peak RSS %.1f MiB (%.2f bytes/request)\n", ru.ru_maxrss / 1024.0, ru.ru_maxrss * 1024.0 / n);
    free(hist);
    ac_nextuse_free(nu);
    ac_trace_close(t);
    return 0;
}
