/* Unit tests of tier nvm's store (store/nvm_store.c) and its latency emulation
 * (store/nvm_delay.c): records read back byte-exact, fingerprint collisions,
 * removal by backward shift keeping every other key findable, freed chunks
 * reused, the region full and the index full refused with their errors, a file
 * not allocated in full refused, cache lines counted, DRAM measured only over
 * a region larger than the caches, and concurrent puts/gets/removes. */
#define _GNU_SOURCE
#include "check.h"
#include "../store/nvm_delay.h"
#include "../store/nvm_store.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static size_t fill(char *buf, int i, size_t n) {
    for (size_t j = 0; j < n; j++)
        buf[j] = (char)(i * 31 + (int)j * 7);
    return n;
}

static bool same(const char *buf, int i, size_t n) {
    char want[8192];
    fill(want, i, n);
    return memcmp(want, buf, n) == 0;
}

#define N 6000

static void test_round_trip_collisions_removal(void) {
    char err[256];
    struct ac_nvm_store *s = ac_nvm_open(NULL, 64u << 20, 16384, err, sizeof(err));
    CHECK(s != NULL);
    static struct ac_loc loc[N];
    char buf[8192];
    struct ac_nvm_cost lines = { 0, 0 };
    for (int i = 0; i < N; i++) {
        size_t n = (size_t)(i % 3000) + 1;
        /* every 50th fingerprint shared with its predecessor */
        uint64_t fp = (uint64_t)(i % 50 == 49 ? i - 1 : i) * 0x9E3779B97F4A7C15ULL;
        CHECK_EQ(ac_nvm_put(s, fp, buf, fill(buf, i, n), &loc[i], &lines), 0);
    }
    CHECK(lines.lines > 0 && lines.accesses > 0 && lines.accesses < lines.lines);
    struct ac_nvm_stats st;
    ac_nvm_stats(s, &st);
    CHECK_EQ(st.records, N);
    int bad = 0, collided = 0;
    for (int i = 0; i < N; i++) {
        uint64_t fp = (uint64_t)(i % 50 == 49 ? i - 1 : i) * 0x9E3779B97F4A7C15ULL;
        struct ac_loc got[4];
        int k = ac_nvm_find(s, fp, got, 4, &lines);
        if (k == 2)
            collided++;
        bool mine = false;
        for (int j = 0; j < k && j < 4; j++)
            mine |= ac_loc_same(&got[j], &loc[i]);
        size_t n = (size_t)(i % 3000) + 1;
        if (!mine || ac_nvm_get(s, &loc[i], buf, &lines) != 0 || !same(buf, i, n))
            bad++;
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(collided, 2 * (N / 50));
    /* remove every third: the others stay findable (backward shift moved them) */
    for (int i = 0; i < N; i += 3) {
        uint64_t fp = (uint64_t)(i % 50 == 49 ? i - 1 : i) * 0x9E3779B97F4A7C15ULL;
        CHECK_EQ(ac_nvm_remove(s, fp, &loc[i], &lines), 1);
        CHECK_EQ(ac_nvm_remove(s, fp, &loc[i], &lines), 0);    /* gone */
    }
    bad = 0;
    for (int i = 0; i < N; i++) {
        uint64_t fp = (uint64_t)(i % 50 == 49 ? i - 1 : i) * 0x9E3779B97F4A7C15ULL;
        struct ac_loc got[4];
        int k = ac_nvm_find(s, fp, got, 4, &lines);
        bool mine = false;
        for (int j = 0; j < k && j < 4; j++)
            mine |= ac_loc_same(&got[j], &loc[i]);
        if (mine != (i % 3 != 0))
            bad++;
    }
    CHECK_EQ(bad, 0);
    ac_nvm_stats(s, &st);
    CHECK_EQ(st.records, N - (N + 2) / 3);
    CHECK(st.free_chunk_bytes > 0);
    /* the freed chunks are taken again before any new space is carved */
    uint64_t carved = st.carved_bytes;
    for (int i = 0; i < N; i += 3) {
        uint64_t fp = (uint64_t)i * 0x9E3779B97F4A7C15ULL + 1;
        CHECK_EQ(ac_nvm_put(s, fp, buf, fill(buf, i, (size_t)(i % 3000) + 1), &loc[i], &lines), 0);
    }
    ac_nvm_stats(s, &st);
    CHECK_EQ(st.carved_bytes, carved);
    CHECK_EQ(st.free_chunk_bytes, 0);
    CHECK(ac_nvm_get(s, &(struct ac_loc){ .block = 0, .offset = 8, .len = 100 }, buf, &lines) == -EINVAL);
    size_t area_len;
    (void)ac_nvm_area(s, &area_len);
    CHECK(area_len > (60u << 20) && area_len < (64u << 20));
    ac_nvm_close(s);
}

static void test_full_and_refusals(void) {
    char err[256];
    /* 1 MiB region, 1024 slots (24 KiB): about 1,000 KiB of records */
    struct ac_nvm_store *s = ac_nvm_open(NULL, 1u << 20, 1024, err, sizeof(err));
    CHECK(s != NULL);
    char buf[4096];
    struct ac_loc loc;
    struct ac_nvm_cost lines = { 0, 0 };
    int i = 0, rc;
    while ((rc = ac_nvm_put(s, (uint64_t)i + 1, buf, fill(buf, i, 4000), &loc, &lines)) == 0)
        i++;
    CHECK_EQ(rc, -ENOSPC);
    CHECK(i >= 200 && i <= 256);               /* 4000 B in chunks of about 4 KiB */
    struct ac_nvm_stats st;
    ac_nvm_stats(s, &st);
    CHECK_EQ(st.full, 1);
    CHECK_EQ(st.records, i);
    /* a record larger than any chunk */
    static char big[2u << 20];
    CHECK_EQ(ac_nvm_put(s, 99, big, sizeof(big), &loc, &lines), -EFBIG);
    ac_nvm_close(s);
    /* the index: 3/4 of 1024 slots, then refused */
    s = ac_nvm_open(NULL, 4u << 20, 1024, err, sizeof(err));
    i = 0;
    while ((rc = ac_nvm_put(s, (uint64_t)i + 1, buf, 10, &loc, &lines)) == 0)
        i++;
    CHECK_EQ(rc, -ENOBUFS);
    CHECK_EQ(i, 768);
    ac_nvm_close(s);
    /* an index that does not fit a quarter of the region; slots not a power of two */
    CHECK(ac_nvm_open(NULL, 1u << 20, 1u << 16, err, sizeof(err)) == NULL);
    CHECK(strstr(err, "does not fit in a quarter") != NULL);
    CHECK(ac_nvm_open(NULL, 4u << 20, 3000, err, sizeof(err)) == NULL);
}

static void test_file(void) {
    char err[512], path[] = "/dev/shm/ac-test-nvm.XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK_EQ(ftruncate(fd, 8u << 20), 0);       /* sparse: refused */
    CHECK(ac_nvm_open(path, 0, 0, err, sizeof(err)) == NULL);
    CHECK(strstr(err, "allocate it in full") != NULL);
    CHECK_EQ(posix_fallocate(fd, 0, 8u << 20), 0);
    struct ac_nvm_store *s = ac_nvm_open(path, 0, 0, err, sizeof(err));
    CHECK(s != NULL);
    if (s != NULL) {
        struct ac_nvm_stats st;
        ac_nvm_stats(s, &st);
        CHECK_EQ(st.region_bytes, 8u << 20);
        CHECK_EQ(st.index_slots, 16384);        /* 8 MiB / 512 */
        CHECK(strcmp(ac_nvm_backing(s), path) == 0);
        char buf[1000];
        struct ac_loc loc;
        struct ac_nvm_cost lines = { 0, 0 };
        CHECK_EQ(ac_nvm_put(s, 7, buf, fill(buf, 7, 1000), &loc, &lines), 0);
        /* 1000 bytes in a 64-aligned chunk: 16 lines, the slot 1 line read and written; two
         * accesses (the record, the probe with its slot write) */
        CHECK_EQ(lines.lines, 16 + 2);
        CHECK_EQ(lines.accesses, 2);
        char back[1000];
        lines = (struct ac_nvm_cost){ 0, 0 };
        CHECK_EQ(ac_nvm_get(s, &loc, back, &lines), 0);
        CHECK_EQ(lines.lines, 16);
        CHECK_EQ(lines.accesses, 1);
        CHECK(same(back, 7, 1000));
        lines = (struct ac_nvm_cost){ 0, 0 };
        CHECK_EQ(ac_nvm_remove(s, 7, &loc, &lines), 1);
        CHECK_EQ(lines.accesses, 2);             /* the probe and its shifts, the free-list link */
        ac_nvm_close(s);
    }
    close(fd);
    unlink(path);
    CHECK(ac_nvm_open("/nonexistent/nvm", 0, 0, err, sizeof(err)) == NULL);
    CHECK(strstr(err, "cannot open it") != NULL);
    CHECK_EQ(ac_nvm_lines(0, 64), 1);
    CHECK_EQ(ac_nvm_lines(63, 2), 2);
    CHECK_EQ(ac_nvm_lines(5, 0), 0);
}

static long rss_shmem_kb(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f != NULL && fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "RssShmem: %ld kB", &kb) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return kb;
}

/* A memfd region's index is not made resident at open: its pages come as slots are used. */
static void test_memfd_index_lazy(void) {
    char err[256];
    long before = rss_shmem_kb();
    struct ac_nvm_store *s = ac_nvm_open(NULL, 256u << 20, 0, err, sizeof(err));   /* a 12 MiB index */
    CHECK(s != NULL);
    long after = rss_shmem_kb();
    CHECK(before >= 0 && after - before < 1024);
    struct ac_nvm_stats st;
    ac_nvm_stats(s, &st);
    CHECK_EQ(st.index_bytes, 12u << 20);
    ac_nvm_close(s);
}

static void test_delay(void) {
    static char small[1u << 20];
    CHECK(ac_nvm_dram_ns(small, sizeof(small)) == 0);   /* in the caches: not measured */
    size_t len = 32u << 20;
    char *big = malloc(len);
    double ns = ac_nvm_dram_ns(big, len);
    CHECK(ns > 5 && ns < 2000);
    free(big);
}

struct worker { struct ac_nvm_store *s; int id; int bad; };

static void *work(void *arg) {
    struct worker *w = arg;
    char buf[3000], got[3000];
    struct ac_nvm_cost lines = { 0, 0 };
    for (int i = 0; i < 4000; i++) {
        uint64_t fp = ((uint64_t)w->id << 32) | (uint64_t)i;
        size_t n = (size_t)(i * 7 % 2900) + 1;
        struct ac_loc loc, f[4];
        if (ac_nvm_put(w->s, fp, buf, fill(buf, i + w->id, n), &loc, &lines) != 0) {
            w->bad++;
            continue;
        }
        if (ac_nvm_find(w->s, fp, f, 4, &lines) != 1 || !ac_loc_same(&f[0], &loc) ||
            ac_nvm_get(w->s, &loc, got, &lines) != 0 || !same(got, i + w->id, n))
            w->bad++;
        if (i % 2 == 0 && ac_nvm_remove(w->s, fp, &loc, &lines) != 1)
            w->bad++;
    }
    return NULL;
}

static void test_threads(void) {
    char err[256];
    struct ac_nvm_store *s = ac_nvm_open(NULL, 64u << 20, 0, err, sizeof(err));
    pthread_t t[8];
    struct worker w[8];
    for (int i = 0; i < 8; i++) {
        w[i] = (struct worker){ s, i + 1, 0 };
        pthread_create(&t[i], NULL, work, &w[i]);
    }
    int bad = 0;
    for (int i = 0; i < 8; i++) {
        pthread_join(t[i], NULL);
        bad += w[i].bad;
    }
    CHECK_EQ(bad, 0);
    struct ac_nvm_stats st;
    ac_nvm_stats(s, &st);
    CHECK_EQ(st.records, 8 * 2000);
    CHECK_EQ(st.puts, 8 * 4000);
    CHECK_EQ(st.drops, 8 * 2000);
    ac_nvm_close(s);
}

int main(void) {
    test_round_trip_collisions_removal();
    test_full_and_refusals();
    test_file();
    test_memfd_index_lazy();
    test_delay();
    test_threads();
    return check_report("test_nvm");
}
