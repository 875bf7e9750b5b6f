/* ac-zipfgen OUT N KEYS THETA SEED: writes an ACTRACE of N reads drawn from a
 * Zipf(THETA) distribution over KEYS keys (key id = rank, 0 the hottest),
 * sampled by inverting the CDF (binary search). A plain sampler for the
 * benchmark; the exact YCSB generators live in ycsb-driver/. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state;
static uint64_t splitmix64(void) {   /* Steele, Lea, Flood 2014 */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int parse_u64(const char *s, uint64_t *out) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *s == '\0' || *end != '\0' || *s == '-')
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv) {
    uint64_t n, keys, seed;
    char *end;
    double theta = argc == 6 ? strtod(argv[4], &end) : 0;
    if (argc != 6 || parse_u64(argv[2], &n) || parse_u64(argv[3], &keys) || keys == 0 ||
        keys > UINT32_MAX || *end != '\0' || theta < 0 || parse_u64(argv[5], &seed)) {
        fprintf(stderr, "usage: ac-zipfgen OUT N KEYS THETA SEED  (N >= 0, 1 <= KEYS < 2^32, THETA >= 0)\n");
        return 2;
    }
    double *cdf = malloc(keys * sizeof *cdf);
    if (!cdf) {
        fprintf(stderr, "ac-zipfgen: out of memory for %llu keys\n", (unsigned long long)keys);
        return 1;
    }
    double sum = 0;
    for (uint64_t k = 0; k < keys; k++)
        cdf[k] = (sum += 1.0 / pow((double)(k + 1), theta));
    FILE *f = fopen(argv[1], "wb");
    if (!f) {
        fprintf(stderr, "ac-zipfgen: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    unsigned char hdr[128] = {0};
    uint32_t version = 1, hsize = 128;
    memcpy(hdr, "ACTRACE1", 8);
    memcpy(hdr + 8, &version, 4);
    memcpy(hdr + 12, &hsize, 4);
    memcpy(hdr + 16, &seed, 8);
    memcpy(hdr + 24, &keys, 8);
    memcpy(hdr + 32, &n, 8);
    snprintf((char *)hdr + 64, 64, "zipf-%.2f", theta);
    fwrite(hdr, 1, sizeof hdr, f);
    rng_state = seed;
    enum { BATCH = 4096 };
    static unsigned char buf[BATCH * 16];
    uint32_t vsize = 1000;
    for (uint64_t done = 0; done < n;) {
        uint64_t m = n - done < BATCH ? n - done : BATCH;
        memset(buf, 0, sizeof buf);
        for (uint64_t j = 0; j < m; j++) {
            double u = (double)(splitmix64() >> 11) * 0x1.0p-53 * sum;
            uint64_t lo = 0, hi = keys - 1;          /* first k with cdf[k] > u */
            while (lo < hi) {
                uint64_t mid = (lo + hi) / 2;
                if (cdf[mid] > u)
                    hi = mid;
                else
                    lo = mid + 1;
            }
            memcpy(buf + j * 16, &lo, 8);
            memcpy(buf + j * 16 + 8, &vsize, 4);
        }
        if (fwrite(buf, 16, m, f) != m) {
            fprintf(stderr, "ac-zipfgen: write failed: %s\n", strerror(errno));
            fclose(f);
            return 1;
        }
        done += m;
    }
    free(cdf);
    if (fclose(f) != 0) {
        fprintf(stderr, "ac-zipfgen: close failed: %s\n", strerror(errno));
        return 1;
    }
    return 0;
}
