/* ac-dramlat: DRAM's latency per cache line on this machine, measured as tier
 * nvm measures it at start (store/nvm_delay.c: a dependent pointer chase over
 * 64 MiB, lines visited in an order no prefetcher follows): the median of
 * five chases, printed in ns. The harness sizes the bandwidth limit of the
 * block device that stands for NVM from it (harness/acbench/nvm.py). */
#include "store/nvm_delay.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REGION (64u << 20)
#define RUNS 5

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 1) {
        fprintf(stderr, "usage: %s  (no arguments: prints DRAM's latency per cache line in ns)\n", argv[0]);
        return 2;
    }
    char *region = malloc(REGION);
    if (region == NULL) {
        fprintf(stderr, "ac-dramlat: cannot allocate %u bytes\n", REGION);
        return 1;
    }
    memset(region, 0, REGION);        /* fault every page in before timing */
    double ns[RUNS];
    for (int i = 0; i < RUNS; i++)
        ns[i] = ac_nvm_dram_ns(region, REGION);
    qsort(ns, RUNS, sizeof ns[0], by_value);
    free(region);
    if (!(ns[RUNS / 2] > 0)) {
        fprintf(stderr, "ac-dramlat: the chase measured nothing\n");
        return 1;
    }
    printf("%.1f\n", ns[RUNS / 2]);
    return 0;
}
