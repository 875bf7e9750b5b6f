/* Benchmark: generator draws per second on one core (median of 3 runs of
 * 10^7 draws), and sample values of each valuekind for the lz4 measurement.
 * usage: bench_gen [SAMPLE_DIR] */
#include <stdio.h>
#include <stdlib.h>
#include "ycsb_config.h"
#include "ycsb_gen.h"
#include "ycsb_record.h"
#include "ycsb_run.h"

#define DRAWS 10000000L

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median3(double v[3])
{
    qsort(v, 3, sizeof(double), cmp);
    return v[1];
}

int main(int argc, char **argv)
{
    struct ycsb_rng r;
    ycsb_rng_seed(&r, 1, 0);
    volatile int64_t sink = 0;
    double zipf[3], scr[3], uni[3];
    for (int k = 0; k < 3; k++) {
        struct ycsb_zipfian z;
        ycsb_zipfian_init(&z, 0, 999999, 0.99);
        uint64_t t0 = ycsb_now_ns();
        for (long i = 0; i < DRAWS; i++)
            sink += ycsb_zipfian_next(&z, &r);
        zipf[k] = DRAWS / ((double)(ycsb_now_ns() - t0) / 1e9);

        struct ycsb_scrambled s;
        ycsb_scrambled_init(&s, 0, 999999, 0.99);
        t0 = ycsb_now_ns();
        for (long i = 0; i < DRAWS; i++)
            sink += ycsb_scrambled_next(&s, &r);
        scr[k] = DRAWS / ((double)(ycsb_now_ns() - t0) / 1e9);

        struct ycsb_uniform u;
        ycsb_uniform_init(&u, 0, 999999);
        t0 = ycsb_now_ns();
        for (long i = 0; i < DRAWS; i++)
            sink += ycsb_uniform_next(&u, &r);
        uni[k] = DRAWS / ((double)(ycsb_now_ns() - t0) / 1e9);
    }
    printf("zipfian(n=1e6, theta=0.99)           %6.1f M draws/s (median of 3 x 1e7)\n",
           median3(zipf) / 1e6);
    printf("scrambled zipfian(n=1e6, theta=0.99) %6.1f M draws/s\n", median3(scr) / 1e6);
    printf("uniform(n=1e6)                       %6.1f M draws/s\n", median3(uni) / 1e6);
    if (argc > 1) {
        /* 100 values of 1000 bytes per kind, one file each, for lz4 */
        static const char *kinds[] = {"ycsb", "text", "zeros"};
        char path[4096], buf[1000];
        for (int kind = 0; kind < 3; kind++)
            for (int key = 0; key < 100; key++) {
                snprintf(path, sizeof(path), "%s/%s.%03d", argv[1], kinds[kind], key);
                FILE *f = fopen(path, "wb");
                if (f == NULL) {
                    perror(path);
                    return 1;
                }
                ycsb_value_fill(buf, sizeof(buf), kind, 1, key, 0);
                fwrite(buf, 1, sizeof(buf), f);
                fclose(f);
            }
    }
    return sink == 42 ? 2 : 0;
}
