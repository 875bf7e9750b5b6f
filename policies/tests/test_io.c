/* Unit tests of the I/O engines (store/io_engine.h), each of sync, threads,
 * aio and uring in turn: whole-range writes and reads byte-exact, many
 * requests in flight on one ring completing with their own data, a ring's
 * depth enforced, reads past the end of the file, concurrent threads, each
 * injected fault (read EIO, write EIO and ENOSPC, short transfers resubmitted)
 * and the counters; direct reads (O_DIRECT) widened to the file system's
 * alignment, byte-exact at any offset, on rings and with faults; every read's
 * latency in the engine's histogram (a slowed read at its 1 s, the others
 * fast), and the histogram's buckets and quantiles (store/lathist.h). */
#define _GNU_SOURCE
#include "check.h"
#include "../store/io_engine.h"
#include "../store/spill_file.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FILE_BYTES (1u << 20)
#define DEPTH 16
#define CHUNK 4096

static char path[] = "/tmp/ac-test-io.XXXXXX";
static unsigned char pattern[FILE_BYTES];

static void fill_pattern(unsigned seed) {
    for (size_t i = 0; i < FILE_BYTES; i++)
        pattern[i] = (unsigned char)((i * 131u + seed * 7u + (i >> 9)) & 0xff);
}

/* Whole-range transfers, including ones that cross the chunk grid. */
static void test_rw(int fd) {
    CHECK_EQ(spill_file_write(fd, pattern, FILE_BYTES, 0), 0);
    unsigned char *back = malloc(FILE_BYTES);
    CHECK_EQ(spill_file_read(fd, back, FILE_BYTES, 0), 0);
    CHECK(memcmp(back, pattern, FILE_BYTES) == 0);
    memset(back, 0, 1184);
    CHECK_EQ(spill_file_read(fd, back, 1184, 777777), 0);
    CHECK(memcmp(back, pattern + 777777, 1184) == 0);
    /* past the end: no progress is an error, never a silent short read */
    CHECK_EQ(spill_file_read(fd, back, 100, FILE_BYTES - 50), -EIO);
    free(back);
}

/* DEPTH reads in flight on one ring, reaped in any order, each with its data. */
static void test_ring(int fd) {
    int err = 0;
    struct ac_io_ring *r = ac_io_ring_new(DEPTH, &err);
    CHECK(r != NULL);
    if (r == NULL)
        return;
    static unsigned char bufs[DEPTH + 1][CHUNK];
    struct ac_io_req reqs[DEPTH + 1];
    for (int i = 0; i <= DEPTH; i++) {
        /* every 37th chunk, so that no two requests read neighbours */
        reqs[i] = (struct ac_io_req){ .fd = fd, .buf = bufs[i], .len = CHUNK,
                                      .off = (uint64_t)((i * 37) % (FILE_BYTES / CHUNK)) * CHUNK,
                                      .data = &bufs[i] };
    }
    for (int i = 0; i < DEPTH; i++)
        CHECK_EQ(ac_io_submit(r, &reqs[i]), 0);
    CHECK_EQ(ac_io_inflight(r), DEPTH);
    CHECK_EQ(ac_io_submit(r, &reqs[DEPTH]), -EAGAIN);          /* the depth holds */
    int got = 0, right = 0;
    while (got < DEPTH) {
        struct ac_io_req *done[DEPTH];
        int n = ac_io_reap(r, done, 1, DEPTH);
        CHECK(n >= 1);
        if (n < 1)
            break;
        for (int i = 0; i < n; i++) {
            struct ac_io_req *q = done[i];
            if (q->res == CHUNK && q->data == q->buf && memcmp(q->buf, pattern + q->off, CHUNK) == 0)
                right++;
        }
        got += n;
    }
    CHECK_EQ(got, DEPTH);
    CHECK_EQ(right, DEPTH);
    CHECK_EQ(ac_io_inflight(r), 0);
    struct ac_io_req *none[1];
    CHECK_EQ(ac_io_reap(r, none, 1, 1), 0);                   /* nothing in flight: no wait */
    /* freed with reads in flight: it waits for them (ASan would see a pool thread or the
     * kernel write into freed memory otherwise) */
    for (int i = 0; i < 4; i++)
        CHECK_EQ(ac_io_submit(r, &reqs[i]), 0);
    ac_io_ring_free(r);
    /* more in flight than one reap takes: min is held to max, every call makes progress */
    enum { MANY = 80 };
    static unsigned char many_buf[MANY][512];
    static struct ac_io_req many[MANY];
    r = ac_io_ring_new(MANY, &err);
    CHECK(r != NULL);
    if (r == NULL)
        return;
    for (int i = 0; i < MANY; i++) {
        many[i] = (struct ac_io_req){ .fd = fd, .buf = many_buf[i], .len = 512, .off = (uint64_t)i * 4096 };
        CHECK_EQ(ac_io_submit(r, &many[i]), 0);
    }
    int total = 0, calls = 0;
    while (ac_io_inflight(r) > 0 && calls++ < MANY) {
        struct ac_io_req *done[64];
        int n = ac_io_reap(r, done, MANY, 64);
        CHECK(n > 0 && n <= 64);
        if (n <= 0)
            break;
        total += n;
    }
    CHECK_EQ(total, MANY);
    ac_io_ring_free(r);
}

struct worker_arg { int fd; int id; int ok; };

static void *worker(void *p) {
    struct worker_arg *a = p;
    unsigned char buf[CHUNK];
    a->ok = 1;
    for (int i = 0; i < 200; i++) {
        uint64_t off = (uint64_t)((a->id * 1000 + i * 13) % (FILE_BYTES / CHUNK)) * CHUNK;
        if (spill_file_read(a->fd, buf, CHUNK, off) != 0 || memcmp(buf, pattern + off, CHUNK) != 0)
            a->ok = 0;
    }
    return NULL;
}

static void test_threads(int fd) {
    pthread_t t[4];
    struct worker_arg a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (struct worker_arg){ .fd = fd, .id = i };
        pthread_create(&t[i], NULL, worker, &a[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        CHECK_EQ(a[i].ok, 1);
    }
}

static void test_faults(int fd) {
    unsigned char buf[CHUNK];
    struct ac_io_stats before, after;
    ac_io_get_stats(&before);
    ac_io_set_fault(AC_FAULT_READ_EIO, 2);
    CHECK_EQ(spill_file_read(fd, buf, CHUNK, 0), -EIO);
    CHECK_EQ(spill_file_write(fd, pattern, CHUNK, 0), 0);     /* a read fault leaves writes alone */
    CHECK_EQ(spill_file_read(fd, buf, CHUNK, 0), -EIO);
    CHECK_EQ(spill_file_read(fd, buf, CHUNK, 0), 0);          /* the fault has cleared */
    CHECK(memcmp(buf, pattern, CHUNK) == 0);

    ac_io_set_fault(AC_FAULT_WRITE_ENOSPC, 1);
    CHECK_EQ(spill_file_read(fd, buf, CHUNK, 0), 0);
    CHECK_EQ(spill_file_write(fd, pattern, CHUNK, 0), -ENOSPC);
    CHECK_EQ(spill_file_write(fd, pattern, CHUNK, 0), 0);
    ac_io_set_fault(AC_FAULT_WRITE_EIO, 1);
    CHECK_EQ(spill_file_write(fd, pattern, CHUNK, 0), -EIO);
    CHECK_EQ(spill_file_write(fd, pattern, CHUNK, 0), 0);

    /* short transfers: 4096 -> 2048 -> 1024 -> 512 come back halved, the rest resubmitted */
    ac_io_set_fault(AC_FAULT_SHORT, 3);
    memset(buf, 0, sizeof(buf));
    CHECK_EQ(spill_file_read(fd, buf, CHUNK, 8192), 0);
    CHECK(memcmp(buf, pattern + 8192, CHUNK) == 0);
    ac_io_set_fault(AC_FAULT_SHORT, 2);
    CHECK_EQ(spill_file_write(fd, pattern + 8192, CHUNK, 8192), 0);
    CHECK_EQ(spill_file_read(fd, buf, CHUNK, 8192), 0);
    CHECK(memcmp(buf, pattern + 8192, CHUNK) == 0);
    ac_io_set_fault(AC_FAULT_NONE, 0);

    ac_io_get_stats(&after);
    CHECK_EQ(after.faults_injected - before.faults_injected, 2 + 1 + 1 + 3 + 2);
    CHECK_EQ(after.errors - before.errors, 2 + 1 + 1);
    CHECK_EQ(after.short_transfers - before.short_transfers, 3 + 2);
    /* reads: 2 good + 4 (short chain) + 1; bytes: exactly what came back */
    CHECK_EQ(after.reads - before.reads, 2 + 4 + 1);
    CHECK_EQ(after.read_bytes - before.read_bytes, 2 * CHUNK + CHUNK + CHUNK);
    CHECK_EQ(after.writes - before.writes, 1 + 1 + 1 + 3);
    CHECK_EQ(after.write_bytes - before.write_bytes, 4 * CHUNK);
}

/* The histogram itself: a value lies in [lower bound, 1.125 x lower bound) of
 * its bucket, buckets grow with the value, quantiles of a known sample. */
static void test_lathist(void) {
    unsigned last = 0;
    bool within = true, monotonic = true;
    for (uint64_t v = 1; v < (1ull << 41); v = v + v / 7 + 1) {
        unsigned b = ac_lathist_bucket(v);
        uint64_t lo = ac_lathist_value(b);
        within &= lo <= v && (double)v < (double)lo * 1.125 + 1;
        monotonic &= b >= last;
        last = b;
    }
    CHECK(within);
    CHECK(monotonic);
    static struct ac_lathist h;
    for (int i = 0; i < 99; i++)
        ac_lathist_add(&h, 1000);
    ac_lathist_add(&h, 1000000);
    CHECK_EQ(ac_lathist_count(&h), 100);
    CHECK_EQ(ac_lathist_quantile(&h, 0.5), 960);          /* 1000 lies in [960, 1024) */
    CHECK_EQ(ac_lathist_quantile(&h, 0.99), 960);         /* the 99th of 100 */
    CHECK_EQ(ac_lathist_quantile(&h, 0.995), 983040);     /* the 100th: rank ceil(99.5) */
    CHECK_EQ(ac_lathist_quantile(&h, 0.0), 960);          /* rank at least 1 */
    CHECK_EQ(ac_lathist_quantile(&h, 1.0), 983040);       /* 10^6 lies in [983040, 1048576) */
}

/* Nine reads and one slowed by AC_FAULT_SLOW_READ (1 s): the window of the
 * engine's read histogram holds ten, its median and 0.9-quantile fast, its
 * 0.99-quantile (the 10th by nearest rank) and maximum the slow one. */
static void test_read_latency(int fd) {
    unsigned char buf[CHUNK];
    static struct ac_lathist before, window;
    memcpy(&before, ac_io_read_latency(), sizeof(before));
    for (int i = 0; i < 9; i++)
        CHECK_EQ(spill_file_read(fd, buf, CHUNK, (uint64_t)i * CHUNK), 0);
    ac_io_set_fault(AC_FAULT_SLOW_READ, 1);
    CHECK_EQ(spill_file_read(fd, buf, CHUNK, 0), 0);
    ac_io_set_fault(AC_FAULT_NONE, 0);
    const struct ac_lathist *now = ac_io_read_latency();
    for (unsigned b = 0; b < AC_LATHIST_N; b++)
        window.n[b] = now->n[b] - before.n[b];
    CHECK_EQ(ac_lathist_count(&window), 10);
    CHECK(ac_lathist_quantile(&window, 0.5) < 100000000);                  /* page-cache reads: under 0.1 s */
    CHECK(ac_lathist_quantile(&window, 0.9) < 100000000);                  /* the 9th of 10 */
    uint64_t slow = ac_lathist_quantile(&window, 1.0);
    CHECK(slow >= 888000000 && slow < 2000000000);                          /* 1 s in its bucket */
    CHECK_EQ(ac_lathist_quantile(&window, 0.99), slow);
}

/* Direct reads of the file at dpath (its last 300 bytes short of a whole
 * unit): through a spill_reader, at unaligned offsets and lengths, up to the
 * end of the file, past it, on a ring, with short transfers, after a buffered
 * write that is still in the page cache. */
static void test_direct(const char *dpath) {
    int fd = open(dpath, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    const size_t size = FILE_BYTES - 300;
    CHECK_EQ(spill_file_write(fd, pattern, size, 0), 0);
    struct ac_io_stats before, after;
    ac_io_get_stats(&before);
    ac_io_set_direct(true);
    struct spill_reader rd;
    spill_reader_open(&rd, fd, dpath, false);
    ac_io_set_direct(false);
    /* ext4 over a disk of 512-byte sectors here: a file system without direct
     * I/O (tmpfs) would leave align 0 and the store's own descriptor */
    CHECK(rd.align >= 512 && rd.align <= AC_IO_BUF_ALIGN && rd.fd != fd);
    if (rd.align == 0) {
        printf("test_io: %s has no direct I/O: direct reads not tested\n", dpath);
        close(fd);
        return;
    }
    ac_io_get_stats(&after);
    CHECK_EQ(after.direct_files - before.direct_files, 1);
    unsigned a = rd.align;
    static unsigned char back[3 * CHUNK];
    const struct { uint64_t off; size_t len; } cases[] = {
        { 0, 1 }, { 1, 1184 }, { a - 1, 2 }, { a, a }, { 777777, 1184 }, { 4095, 4097 },
        { size - 1184, 1184 }, { size - 1, 1 }, { 12345, 3 * CHUNK },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        memset(back, 0, sizeof(back));
        CHECK_EQ(spill_reader_read(&rd, back, cases[i].len, cases[i].off), 0);
        CHECK(memcmp(back, pattern + cases[i].off, cases[i].len) == 0);
    }
    CHECK_EQ(spill_reader_read(&rd, back, 100, size - 50), -EIO);    /* past the end */
    /* the device reads whole units: 100 bytes at a + 10 cost one unit, at a - 10 two */
    ac_io_get_stats(&before);
    CHECK_EQ(spill_reader_read(&rd, back, 100, a + 10), 0);
    CHECK_EQ(spill_reader_read(&rd, back, 100, a - 10), 0);
    ac_io_get_stats(&after);
    CHECK_EQ(after.read_bytes - before.read_bytes, 3 * a);
    /* short transfers go on from the unit they stopped in */
    ac_io_set_fault(AC_FAULT_SHORT, 2);
    memset(back, 0, sizeof(back));
    CHECK_EQ(spill_reader_read(&rd, back, 2000, 3 * (uint64_t)a + 7), 0);
    CHECK(memcmp(back, pattern + 3 * a + 7, 2000) == 0);
    ac_io_set_fault(AC_FAULT_NONE, 0);
    /* direct writes: short ones go on from where they stopped (2048 -> 1024, then the remaining
     * 1024 -> 512, then 512 whole) */
    {
        int wfd = open(dpath, O_RDWR | O_DIRECT);
        char *wb = ac_io_span_alloc(2048);
        CHECK(wfd >= 0 && wb != NULL);
        if (wfd >= 0 && wb != NULL) {
            for (int i = 0; i < 2048; i++)
                wb[i] = (char)(pattern[8192 + i] ^ 0x33);
            struct ac_io_stats f0, f1;
            ac_io_get_stats(&f0);
            ac_io_set_fault(AC_FAULT_SHORT, 2);
            CHECK_EQ(ac_io_write_direct(wfd, wb, 2048, 8192, a), 0);
            ac_io_get_stats(&f1);
            CHECK_EQ(f1.faults_injected - f0.faults_injected, 2);
            CHECK_EQ(f1.writes - f0.writes, 3);
            CHECK_EQ(f1.write_bytes - f0.write_bytes, 2048);
            ac_io_set_fault(AC_FAULT_NONE, 0);
            CHECK_EQ(spill_reader_read(&rd, back, 2048, 8192), 0);
            CHECK(memcmp(back, wb, 2048) == 0);
            /* put the pattern back for what follows */
            memcpy(wb, pattern + 8192, 2048);
            CHECK_EQ(ac_io_write_direct(wfd, wb, 2048, 8192, a), 0);
        }
        free(wb);
        if (wfd >= 0)
            close(wfd);
    }
    /* a buffered write still in the page cache is what a direct read sees */
    static unsigned char fresh[CHUNK];
    for (size_t i = 0; i < CHUNK; i++)
        fresh[i] = (unsigned char)(pattern[i] ^ 0x5a);
    CHECK_EQ(spill_file_write(fd, fresh, CHUNK, 65536 + 100), 0);
    CHECK_EQ(spill_reader_read(&rd, back, CHUNK, 65536 + 100), 0);
    CHECK(memcmp(back, fresh, CHUNK) == 0);
    CHECK_EQ(spill_file_write(fd, pattern + 65536 + 100, CHUNK, 65536 + 100), 0);
    /* on a ring: widened requests, each record at buf + skip */
    int err = 0;
    struct ac_io_ring *r = ac_io_ring_new(8, &err);
    CHECK(r != NULL);
    if (r != NULL) {
        struct ac_io_req reqs[8];
        char *bufs[8];
        for (int i = 0; i < 8; i++) {
            bufs[i] = ac_io_span_alloc(1184);
            CHECK(bufs[i] != NULL && (uintptr_t)bufs[i] % AC_IO_BUF_ALIGN == 0);
            uint64_t off = i == 7 ? size - 1184 : (uint64_t)i * 100003 + 13;
            reqs[i] = (struct ac_io_req){ .fd = rd.fd, .buf = bufs[i], .len = 1184, .off = off };
            ac_io_widen(&reqs[i], a);
            CHECK_EQ(reqs[i].off % a, 0);
            CHECK_EQ(reqs[i].len % a, 0);
            CHECK_EQ(reqs[i].off + reqs[i].skip, off);
            CHECK(reqs[i].skip + 1184 <= reqs[i].len && reqs[i].len <= ac_io_span_cap(1184));
            CHECK_EQ(ac_io_submit(r, &reqs[i]), 0);
        }
        int got = 0, right = 0;
        while (got < 8) {
            struct ac_io_req *done[8];
            int n = ac_io_reap(r, done, 1, 8);
            CHECK(n >= 1);
            if (n < 1)
                break;
            for (int i = 0; i < n; i++)
                right += ac_io_widened_ok(done[i], 1184) &&
                         memcmp((char *)done[i]->buf + done[i]->skip, pattern + done[i]->off + done[i]->skip, 1184) == 0;
            got += n;
        }
        CHECK_EQ(right, 8);
        ac_io_ring_free(r);
        for (int i = 0; i < 8; i++)
            free(bufs[i]);
    }
    ac_io_get_stats(&before);
    spill_reader_close(&rd, fd);
    ac_io_get_stats(&after);
    CHECK_EQ(after.direct_files - before.direct_files, (uint64_t)-1);
    CHECK(rd.fd == fd && rd.align == 0);
    /* tmpfs has no direct I/O: the reader is the store's descriptor, reads still exact */
    char shm[] = "/dev/shm/ac-test-io.XXXXXX";
    int sfd = mkstemp(shm);
    if (sfd >= 0) {
        CHECK_EQ(spill_file_write(sfd, pattern, CHUNK, 0), 0);
        ac_io_set_direct(true);
        spill_reader_open(&rd, sfd, shm, false);
        ac_io_set_direct(false);
        CHECK(rd.fd == sfd && rd.align == 0);
        CHECK_EQ(spill_reader_read(&rd, back, 1000, 99), 0);
        CHECK(memcmp(back, pattern + 99, 1000) == 0);
        spill_reader_close(&rd, sfd);
        close(sfd);
        unlink(shm);
    }
    close(fd);
}

int main(void) {
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return check_report("test_io");
    unlink(path);
    const enum ac_io_kind kinds[] = { AC_IO_SYNC, AC_IO_THREADS, AC_IO_AIO, AC_IO_URING };
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        char why[300];
        enum ac_io_kind got = ac_io_start(kinds[k], 3, why, sizeof(why));
        if (got != kinds[k]) {
            /* a kernel without it: the fallback is named, and the tests run on it */
            printf("test_io: %s not available (%s), testing %s\n", ac_io_name(kinds[k]), why, ac_io_name(got));
            CHECK(why[0] != '\0');
        }
        CHECK_EQ(ac_io_kind(), got);
        fill_pattern((unsigned)k);
        test_rw(fd);
        test_ring(fd);
        test_threads(fd);
        test_faults(fd);
        test_read_latency(fd);
        char dpath[] = "/tmp/ac-test-direct.XXXXXX";
        int dfd = mkstemp(dpath);
        CHECK(dfd >= 0);
        if (dfd >= 0) {
            close(dfd);
            test_direct(dpath);
            unlink(dpath);
        }
        ac_io_stop();
        CHECK_EQ(ac_io_kind(), AC_IO_SYNC);
    }
    CHECK(strcmp(ac_io_name(AC_IO_URING), "uring") == 0);
    test_lathist();
    close(fd);
    return check_report("test_io");
}
