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
    double zipf[3], scr[3], uni[3], tz[3], tzf[3], tz7[3];
    static int64_t buf[4096];
    struct ycsb_truezipf t6, t7;
    if (ycsb_truezipf_init(&t6, 0, 999999, 0.99) != 0 ||
        ycsb_truezipf_init(&t7, 0, 9999999, 0.99) != 0) {
        fprintf(stderr, "bench_gen: out of memory\n");
        return 1;
    }
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

        t0 = ycsb_now_ns();
        for (long i = 0; i < DRAWS; i++)
            sink += ycsb_truezipf_next(&t6, &r);
        tz[k] = DRAWS / ((double)(ycsb_now_ns() - t0) / 1e9);

        t0 = ycsb_now_ns();
        for (long i = 0; i < DRAWS; i++)
            sink += ycsb_truezipf_next(&t7, &r);
        tz7[k] = DRAWS / ((double)(ycsb_now_ns() - t0) / 1e9);

        t0 = ycsb_now_ns();
        for (long i = 0; i < DRAWS; i += 4096) {
            size_t m = DRAWS - i < 4096 ? (size_t)(DRAWS - i) : 4096;
            ycsb_truezipf_fill(&t6, &r, buf, m);
            sink += buf[m - 1];
        }
        tzf[k] = DRAWS / ((double)(ycsb_now_ns() - t0) / 1e9);
    }
    ycsb_truezipf_destroy(&t6);
    ycsb_truezipf_destroy(&t7);
    printf("zipfian(n=1e6, theta=0.99)           %6.1f M draws/s (median of 3 x 1e7)\n",
           median3(zipf) / 1e6);
    printf("scrambled zipfian(n=1e6, theta=0.99) %6.1f M draws/s\n", median3(scr) / 1e6);
    printf("uniform(n=1e6)                       %6.1f M draws/s\n", median3(uni) / 1e6);
    printf("truezipf(n=1e6, theta=0.99) next     %6.1f M draws/s\n", median3(tz) / 1e6);
    printf("truezipf(n=1e7, theta=0.99) next     %6.1f M draws/s\n", median3(tz7) / 1e6);
    printf("truezipf(n=1e6, theta=0.99) fill     %6.1f M draws/s (same keys, 4096 per call)\n",
           median3(tzf) / 1e6);
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
