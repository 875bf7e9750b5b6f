/* Keys/s of our generators, the counterpart of ZipfBench.java: same N, same
 * item count, theta 0.99, one untimed warm-up run, then 3 timed runs, one
 * line each: "c <draws/s>".
 *   scrambled      ycsb_scrambled_next (YCSB's ScrambledZipfian, as Java's)
 *   truezipf       ycsb_truezipf_next, one key per call (what the workload uses)
 *   truezipf-fill  ycsb_truezipf_fill, 4096 keys per call (the same keys)
 * usage: zipf_rate N ITEMS [scrambled|truezipf|truezipf-fill] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ycsb_gen.h"
#include "ycsb_run.h"

enum { BLOCK = 4096 };

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: zipf_rate N ITEMS [scrambled|truezipf|truezipf-fill]\n");
        return 2;
    }
    long n = atol(argv[1]);
    long items = atol(argv[2]);
    const char *mode = argc == 4 ? argv[3] : "scrambled";
    int kind = strcmp(mode, "scrambled") == 0 ? 0 : strcmp(mode, "truezipf") == 0 ? 1
             : strcmp(mode, "truezipf-fill") == 0 ? 2 : -1;
    if (n < 1 || items < 1 || kind < 0) {
        fprintf(stderr, "zipf_rate: N and ITEMS must be positive integers and the mode one of "
                "scrambled, truezipf, truezipf-fill\n");
        return 2;
    }
    struct ycsb_scrambled g;
    ycsb_scrambled_init(&g, 0, items - 1, 0.99);
    struct ycsb_truezipf z;
    if (ycsb_truezipf_init(&z, 0, items - 1, 0.99) != 0) {
        fprintf(stderr, "zipf_rate: out of memory\n");
        return 1;
    }
    static int64_t buf[BLOCK];
    struct ycsb_rng r;
    ycsb_rng_seed(&r, 1, 0);
    int64_t sink = 0;
    for (int run = -1; run < 3; run++) {
        uint64_t t0 = ycsb_now_ns();
        if (kind == 0)
            for (long i = 0; i < n; i++)
                sink += ycsb_scrambled_next(&g, &r);
        else if (kind == 1)
            for (long i = 0; i < n; i++)
                sink += ycsb_truezipf_next(&z, &r);
        else
            for (long i = 0; i < n; i += BLOCK) {
                size_t m = n - i < BLOCK ? (size_t)(n - i) : BLOCK;
                ycsb_truezipf_fill(&z, &r, buf, m);
                for (size_t k = 0; k < m; k++)
                    sink += buf[k];
            }
        double secs = (double)(ycsb_now_ns() - t0) / 1e9;
        if (run >= 0)
            printf("c %.0f\n", (double)n / secs);
    }
    ycsb_truezipf_destroy(&z);
    return sink < 0 ? 1 : 0;   /* keeps the draws live */
}
