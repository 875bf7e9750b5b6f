/* Keys/s of our ScrambledZipfian (ycsb_scrambled_next), the counterpart of
 * ZipfBench.java: same N, same item count, theta 0.99, one untimed warm-up
 * run, then 3 timed runs, one line each: "c <draws/s>".
 * usage: zipf_rate N ITEMS */
#include <stdio.h>
#include <stdlib.h>
#include "ycsb_gen.h"
#include "ycsb_run.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: zipf_rate N ITEMS\n");
        return 2;
    }
    long n = atol(argv[1]);
    long items = atol(argv[2]);
    if (n < 1 || items < 1) {
        fprintf(stderr, "zipf_rate: N and ITEMS must be positive integers\n");
        return 2;
    }
    struct ycsb_scrambled g;
    ycsb_scrambled_init(&g, 0, items - 1, 0.99);
    struct ycsb_rng r;
    ycsb_rng_seed(&r, 1, 0);
    int64_t sink = 0;
    for (int run = -1; run < 3; run++) {
        uint64_t t0 = ycsb_now_ns();
        for (long i = 0; i < n; i++)
            sink += ycsb_scrambled_next(&g, &r);
        double secs = (double)(ycsb_now_ns() - t0) / 1e9;
        if (run >= 0)
            printf("c %.0f\n", (double)n / secs);
    }
    return sink < 0 ? 1 : 0;   /* keeps the draws live */
}
