/* Unit tests of the spill store: record format and CRC-32C, compressed records
 * (lz4, zstd: byte-exact back, incompressible values left as they are, damage
 * caught), block packing, one write per block, reads back byte-exact, the
 * lazy-compaction threshold, extent reuse, oversized records, checksum
 * failures, and reads in flight (get_start, get_valid). */
#define _GNU_SOURCE
#include "check.h"
#include "../store/block_store.h"
#include "../store/compress.h"
#include "../store/crc32c.h"
#include "../store/io_engine.h"
#include "../store/record.h"
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/ac-test-store.XXXXXX";
/* The block store's tests run twice: through the page cache, then with direct
 * I/O (ext4 under /tmp here: 512-byte units; a block's write padded to one). */
static bool direct;
static off_t written_size(size_t bytes) {
    return (off_t)(direct ? ac_io_align_up(bytes, 512) : bytes);
}

/* A record for key "k<i>" with a value of n bytes derived from i. */
static size_t make_record(char *buf, int i, size_t n) {
    char key[32], *val = malloc(n);
    int nkey = snprintf(key, sizeof(key), "k%d", i);
    for (size_t j = 0; j < n; j++)
        val[j] = (char)(i * 31 + j * 7);
    struct ac_record r = { .len = (uint32_t)ac_record_size(nkey, n), .nbytes = (uint32_t)n,
                           .client_flags = (uint32_t)i, .exptime = 0, .time = 5, .cas = 1000 + i,
                           .nkey = (uint8_t)nkey, .key = key, .value = val };
    ac_record_pack(buf, &r);
    free(val);
    return r.len;
}

static void test_crc_and_record(void) {
    CHECK_EQ(ac_crc32c(0, "123456789", 9), 0xE3069283u);     /* RFC 3720 B.4 check value */
    CHECK_EQ(ac_crc32c(0, "", 0), 0);
    CHECK_EQ(ac_crc32c_table(0, "123456789", 9), 0xE3069283u);
    /* the CPU's instruction (this machine's x86-64 has SSE4.2) gives the table's CRC at every
     * length and alignment, also continued from an earlier CRC */
#if defined(__x86_64__)
    CHECK(ac_crc32c_hardware());
#endif
    {
        static unsigned char rnd[4099];
        uint32_t x = 12345;
        for (size_t i = 0; i < sizeof(rnd); i++) {
            x = x * 1103515245u + 12345u;
            rnd[i] = (unsigned char)(x >> 16);
        }
        int same = 0, cases = 0;
        for (size_t start = 0; start < 9; start++)
            for (size_t n = 0; n + start <= sizeof(rnd); n += 1 + n / 3, cases++)
                same += ac_crc32c(7, rnd + start, n) == ac_crc32c_table(7, rnd + start, n);
        CHECK_EQ(same, cases);
        uint32_t whole = ac_crc32c(0, rnd, 1000);
        CHECK_EQ(ac_crc32c(ac_crc32c(0, rnd, 333), rnd + 333, 667), whole);
        CHECK(ac_crc32c(0, rnd, 1000) != ac_crc32c(0, rnd + 1, 1000));
    }
    char buf[256];
    size_t len = make_record(buf, 42, 100);
    CHECK_EQ(len, AC_RECORD_HDR + 3 + 100);
    struct ac_record r;
    CHECK_EQ(ac_record_parse(buf, len, &r), AC_REC_OK);
    CHECK_EQ(r.nkey, 3);
    CHECK(memcmp(r.key, "k42", 3) == 0);
    CHECK_EQ(r.nbytes, 100);
    CHECK_EQ(r.client_flags, 42);
    CHECK_EQ(r.cas, 1042);
    CHECK_EQ((unsigned char)r.value[99], (unsigned char)(42 * 31 + 99 * 7));
    /* every single flipped bit anywhere in the record is caught */
    int caught = 0;
    for (size_t off = 0; off < len; off++) {
        for (int bit = 0; bit < 8; bit++) {
            buf[off] ^= (char)(1 << bit);
            caught += ac_record_parse(buf, len, &r) != AC_REC_OK;
            buf[off] ^= (char)(1 << bit);
        }
    }
    CHECK_EQ(caught, (int)len * 8);
    CHECK_EQ(ac_record_parse(buf, len - 1, &r), AC_REC_SHORT);
    CHECK_EQ(ac_record_parse(buf, 10, &r), AC_REC_SHORT);
}

/* A record of key "t" whose n-byte value is text (compressible) or pseudo-random bytes. */
static size_t make_value_record(char *buf, char *val, size_t n, bool text) {
    uint64_t x = 88172645463325252ULL;
    for (size_t j = 0; j < n; j++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        val[j] = text ? "the quick brown fox jumps over the lazy dog "[j % 44] : (char)x;
    }
    struct ac_record r = { .len = (uint32_t)ac_record_size(1, n), .nbytes = (uint32_t)n, .time = 7, .cas = 99,
                           .nkey = 1, .key = "t", .value = val };
    ac_record_pack(buf, &r);
    return r.len;
}

static void test_compressed_records(void) {
    enum { N = 3000 };
    static char buf[AC_RECORD_HDR + 1 + N], val[N], tmp[2 * N + 1024], out[N];
    CHECK(ac_codec_name(AC_CODEC_ZSTD) != NULL && strcmp(ac_codec_name(AC_CODEC_LZ4), "lz4") == 0);
    CHECK(ac_codec_name(AC_CODEC_MAX + 1) == NULL);
    for (int codec = AC_CODEC_LZ4; codec <= AC_CODEC_ZSTD; codec++) {
        CHECK(ac_compress_bound(codec, N) <= sizeof(tmp));
        /* text: smaller, parses, expands byte-exact; the header keeps the value's own length */
        size_t len = make_value_record(buf, val, N, true);
        size_t clen = ac_record_compress(buf, len, codec, tmp, sizeof(tmp));
        CHECK(clen < len / 4);
        struct ac_record r;
        CHECK_EQ(ac_record_parse(buf, clen, &r), AC_REC_OK);
        CHECK_EQ(r.codec, codec);
        CHECK_EQ(r.nbytes, N);
        CHECK_EQ(r.stored, clen - AC_RECORD_HDR - 1);
        CHECK_EQ(r.cas, 99);
        CHECK(r.nkey == 1 && r.key[0] == 't');
        CHECK_EQ(ac_record_expand(&r, out), 0);
        CHECK(r.value == out && r.codec == AC_CODEC_NONE && r.stored == N);
        CHECK(memcmp(out, val, N) == 0);
        /* a second compression of a compressed record changes nothing */
        CHECK_EQ(ac_record_compress(buf, clen, codec, tmp, sizeof(tmp)), clen);
        /* damage under a valid CRC (a wrong codec byte, a payload the codec rejects) is caught at expand */
        CHECK_EQ(ac_record_parse(buf, clen, &r), AC_REC_OK);
        buf[33] = (char)(codec == AC_CODEC_LZ4 ? AC_CODEC_ZSTD : AC_CODEC_LZ4);
        ac_record_seal(buf, clen);
        CHECK_EQ(ac_record_parse(buf, clen, &r), AC_REC_OK);
        CHECK_EQ(ac_record_expand(&r, out), -1);
        buf[33] = (char)(AC_CODEC_MAX + 1);
        ac_record_seal(buf, clen);
        CHECK_EQ(ac_record_parse(buf, clen, &r), AC_REC_CRC);          /* no such codec */
        /* random bytes do not shrink: the record stays as it was */
        len = make_value_record(buf, val, N, false);
        CHECK_EQ(ac_record_compress(buf, len, codec, tmp, sizeof(tmp)), len);
        CHECK_EQ(ac_record_parse(buf, len, &r), AC_REC_OK);
        CHECK(r.codec == AC_CODEC_NONE && r.stored == N && memcmp(r.value, val, N) == 0);
        CHECK_EQ(ac_record_expand(&r, out), 0);
        CHECK(r.value != out);                                        /* nothing to expand */
    }
    /* a "compressed" record claiming to be no smaller than its value is refused */
    size_t len = make_value_record(buf, val, 100, true);
    buf[33] = AC_CODEC_LZ4;
    ac_record_seal(buf, len);
    struct ac_record r;
    CHECK_EQ(ac_record_parse(buf, len, &r), AC_REC_CRC);
    CHECK_EQ(ac_decompress(AC_CODEC_NONE, val, 10, out, 10), -1);
}

static off_t file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

static void test_packing_and_reads(void) {
    char err[256];
    const size_t bs = 8192;
    struct ac_store *s = ac_block_store_ops.open(dir, bs, 0.5, err, sizeof(err));
    CHECK(s != NULL);
    struct ac_io_stats io;
    ac_io_get_stats(&io);
    CHECK_EQ(io.direct_files, direct ? 1u : 0u);       /* the store reads its file with O_DIRECT */
    char path[256];
    snprintf(path, sizeof(path), "%s/blocks.dat", dir);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);

    /* records of 36 + 2..4 + 1000 bytes: 7 fit in 8 KiB, the 8th says FULL */
    char rec[2048];
    struct ac_loc loc[32];
    int n = 0, rc;
    size_t used = 0;
    while ((rc = ac_block_store_ops.put(s, rec, make_record(rec, n, 1000), &loc[n])) == AC_STORE_OK) {
        CHECK_EQ(loc[n].block, 0);
        CHECK_EQ(loc[n].offset, used);
        used += loc[n].len;
        n++;
    }
    CHECK_EQ(rc, AC_STORE_FULL);
    CHECK_EQ(n, 7);
    struct ac_store_stats ss;
    ac_block_store_ops.stats(s, &ss);
    CHECK_EQ(ss.open_bytes, used);
    CHECK_EQ(ss.blocks_written, 0);
    CHECK_EQ(file_size(path), 0);
    /* an open (unwritten) block is readable from memory */
    char back[2048];
    CHECK_EQ(ac_block_store_ops.get(s, &loc[3], back), 0);
    struct ac_record r;
    CHECK_EQ(ac_record_parse(back, loc[3].len, &r), AC_REC_OK);
    CHECK(r.nkey == 2 && memcmp(r.key, "k3", 2) == 0);

    /* one flush = one block on disk, an extent of block_size */
    CHECK_EQ(ac_block_store_ops.flush(s), 0);
    ac_block_store_ops.stats(s, &ss);
    CHECK_EQ(ss.blocks_written, 1);
    CHECK_EQ(ss.bytes_written, used);
    CHECK_EQ(ss.bytes_on_disk, bs);
    CHECK_EQ(ss.open_bytes, 0);
    CHECK_EQ(ss.live_records, 7);
    CHECK_EQ(file_size(path), written_size(used));
    for (int i = 0; i < n; i++) {
        char want[2048];
        size_t wl = make_record(want, i, 1000);
        CHECK_EQ(ac_block_store_ops.get(s, &loc[i], back), 0);
        CHECK(wl == loc[i].len && memcmp(back, want, wl) == 0);
    }
    /* the next record starts block 1 */
    CHECK_EQ(ac_block_store_ops.put(s, rec, make_record(rec, 7, 1000), &loc[7]), AC_STORE_OK);
    CHECK_EQ(loc[7].block, 1);
    CHECK_EQ(loc[7].offset, 0);

    /* lazy compaction: block 0 holds 7 records of equal size; invalidating the
     * 4th drops the live bytes to 3/7 < 0.5: merge reported once, exactly then */
    CHECK_EQ(ac_block_store_ops.invalidate(s, &loc[0]), 0);
    CHECK_EQ(ac_block_store_ops.invalidate(s, &loc[1]), 0);
    CHECK_EQ(ac_block_store_ops.invalidate(s, &loc[2]), 0);
    CHECK_EQ(ac_block_store_ops.invalidate(s, &loc[3]), 1);
    CHECK_EQ(ac_block_store_ops.invalidate(s, &loc[4]), 0);    /* already being merged */
    ac_block_store_ops.stats(s, &ss);
    CHECK_EQ(ss.merges_triggered, 1);
    void *blk;
    ssize_t bl = ac_block_store_ops.read_block(s, 0, &blk);
    CHECK_EQ(bl, (ssize_t)used);
    CHECK_EQ(ac_record_parse((char *)blk + loc[6].offset, loc[6].len, &r), AC_REC_OK);
    free(blk);
    /* the last live records die: the extent is freed, its space punched out,
     * and the next written block reuses it */
    CHECK_EQ(ac_block_store_ops.invalidate(s, &loc[5]), 0);
    CHECK_EQ(ac_block_store_ops.invalidate(s, &loc[6]), 0);
    ac_block_store_ops.merge_done(s, 0);
    ac_block_store_ops.stats(s, &ss);
    CHECK_EQ(ss.bytes_on_disk, 0);
    CHECK_EQ(ss.live_records, 1);              /* k7 in the open block */
    CHECK(ac_block_store_ops.get(s, &loc[0], back) != 0);   /* a freed block */
    CHECK_EQ(ac_block_store_ops.flush(s), 0);
    ac_block_store_ops.stats(s, &ss);
    CHECK_EQ(ss.bytes_on_disk, bs);
    CHECK_EQ(file_size(path), written_size(used));    /* extent 0 reused: the file did not grow */
    CHECK_EQ(ac_block_store_ops.get(s, &loc[7], back), 0);
    CHECK_EQ(ac_record_parse(back, loc[7].len, &r), AC_REC_OK);
    CHECK(memcmp(r.key, "k7", 2) == 0);

    /* a record larger than a block gets a block (and extent) of its own */
    char *big = malloc(40000);
    size_t biglen = make_record(big, 99, 30000);
    struct ac_loc bloc;
    CHECK_EQ(ac_block_store_ops.put(s, big, biglen, &bloc), AC_STORE_OK);
    CHECK_EQ(bloc.offset, 0);
    CHECK_EQ(ac_block_store_ops.put(s, rec, make_record(rec, 8, 10), &loc[8]), AC_STORE_FULL);
    CHECK_EQ(ac_block_store_ops.flush(s), 0);
    char *bigback = malloc(40000);
    CHECK_EQ(ac_block_store_ops.get(s, &bloc, bigback), 0);
    CHECK(memcmp(bigback, big, biglen) == 0);
    ac_block_store_ops.stats(s, &ss);
    CHECK_EQ(ss.bytes_on_disk, bs + (biglen + 4095) / 4096 * 4096);
    free(big);
    free(bigback);

    /* a damaged record on disk reads back but fails its checksum */
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL);
    fseek(f, (long)(loc[7].offset + 50), SEEK_SET);
    int c = fgetc(f);
    fseek(f, (long)(loc[7].offset + 50), SEEK_SET);
    fputc(c ^ 0x5A, f);
    fclose(f);
    CHECK_EQ(ac_block_store_ops.get(s, &loc[7], back), 0);
    CHECK_EQ(ac_record_parse(back, loc[7].len, &r), AC_REC_CRC);

    ac_block_store_ops.close(s);
    CHECK(access(path, F_OK) != 0);            /* close removes the spill file */
}

static void test_all_dead_open_block_is_not_written(void) {
    char err[256];
    struct ac_store *s = ac_block_store_ops.open(dir, 4096, 0.5, err, sizeof(err));
    char rec[512];
    struct ac_loc a, b;
    CHECK_EQ(ac_block_store_ops.put(s, rec, make_record(rec, 1, 100), &a), AC_STORE_OK);
    CHECK_EQ(ac_block_store_ops.put(s, rec, make_record(rec, 2, 100), &b), AC_STORE_OK);
    CHECK_EQ(ac_block_store_ops.invalidate(s, &a), 0);
    CHECK_EQ(ac_block_store_ops.invalidate(s, &b), 0);
    CHECK_EQ(ac_block_store_ops.flush(s), 0);
    struct ac_store_stats ss;
    ac_block_store_ops.stats(s, &ss);
    CHECK_EQ(ss.blocks_written, 0);
    CHECK_EQ(ss.live_records, 0);
    ac_block_store_ops.close(s);
}

/* Reads sent without waiting (get_start) and their check (get_valid): the
 * bytes come back byte-exact through a ring; a record in the open block is
 * copied at once; once the block is freed and its id taken again, or the open
 * block starts afresh, a read made before no longer counts as the record's. */
static void test_reads_in_flight(void) {
    char err[256], rec[2048], *back[8];
    for (int i = 0; i < 8; i++)
        back[i] = ac_io_span_alloc(2048);      /* what get_start asks for: room and alignment for direct reads */
    struct ac_store *s = ac_block_store_ops.open(dir, 8192, 0.5, err, sizeof(err));
    CHECK(s != NULL);
    int e = 0;
    struct ac_io_ring *r = ac_io_ring_new(8, &e);
    CHECK(r != NULL);
    if (s == NULL || r == NULL)
        return;
    struct ac_loc loc[8];
    size_t len[8];
    for (int i = 0; i < 6; i++) {
        len[i] = make_record(rec, 100 + i, 1000);
        if (ac_block_store_ops.put(s, rec, len[i], &loc[i]) == AC_STORE_FULL) {
            CHECK_EQ(ac_block_store_ops.flush(s), 0);
            CHECK_EQ(ac_block_store_ops.put(s, rec, len[i], &loc[i]), AC_STORE_OK);
        }
    }
    CHECK_EQ(loc[0].block, 0);
    CHECK_EQ(loc[5].block, 0);                      /* 6 x ~1.04 KB in 8 KiB: one block */
    /* the open block: copied, no I/O */
    struct ac_io_req req[8];
    uint64_t tok[8];
    memset(req, 0, sizeof(req));
    tok[1] = ac_block_store_ops.get_token(s, &loc[1]);
    CHECK_EQ(ac_block_store_ops.get_start(s, &loc[1], back[1], r, &req[1], tok[1]), 1);
    make_record(rec, 101, 1000);
    CHECK(memcmp(back[1], rec, len[1]) == 0);
    CHECK(ac_block_store_ops.get_valid(s, &loc[1], tok[1]));
    CHECK_EQ(ac_block_store_ops.flush(s), 0);
    CHECK(ac_block_store_ops.get_valid(s, &loc[1], tok[1]));   /* written out: the same bytes */
    /* written: every read in flight at once, then reaped */
    for (int i = 0; i < 6; i++) {
        tok[i] = ac_block_store_ops.get_token(s, &loc[i]);
        CHECK_EQ(ac_block_store_ops.get_start(s, &loc[i], back[i], r, &req[i], tok[i]), 0);
    }
    CHECK_EQ(ac_io_inflight(r), 6);
    for (int got = 0; got < 6;) {
        struct ac_io_req *done[8];
        int n = ac_io_reap(r, done, 1, 8);
        CHECK(n > 0);
        if (n <= 0)
            break;
        got += n;
    }
    for (int i = 0; i < 6; i++) {
        make_record(rec, 100 + i, 1000);
        /* direct: whole 512-byte units around the record, which starts at skip */
        CHECK_EQ(req[i].skip, direct ? (loc[i].offset % 512) : 0);
        CHECK_EQ(req[i].res, direct ? (ssize_t)ac_io_align_up(req[i].skip + len[i], 512) : (ssize_t)len[i]);
        CHECK(memcmp(back[i] + req[i].skip, rec, len[i]) == 0);
        CHECK(ac_block_store_ops.get_valid(s, &loc[i], tok[i]));
    }
    /* every record dead: block 0 is freed, and taken again by the next put */
    int merges = 0;
    for (int i = 0; i < 6; i++)
        merges += ac_block_store_ops.invalidate(s, &loc[i]);
    CHECK_EQ(merges, 1);                            /* below compact_fill: claimed for a merge */
    CHECK(!ac_block_store_ops.get_valid(s, &loc[0], tok[0]));
    ac_block_store_ops.merge_done(s, loc[0].block);  /* the claim released: the id is free */
    struct ac_loc again;
    len[6] = make_record(rec, 200, 1000);
    CHECK_EQ(ac_block_store_ops.put(s, rec, len[6], &again), AC_STORE_OK);
    CHECK(again.block == loc[0].block && again.offset == loc[0].offset);
    CHECK(!ac_block_store_ops.get_valid(s, &loc[0], tok[0]));  /* same place, another incarnation */
    /* a token taken before the block was taken again: no read, no copy of what the place holds now */
    memset(back[0], 0, 2048);
    CHECK_EQ(ac_block_store_ops.get_start(s, &loc[0], back[0], r, &req[0], tok[0]), -ESTALE);
    CHECK_EQ(back[0][0], 0);
    /* beyond what the open block holds now */
    struct ac_loc past = { again.block, again.offset + again.len, 100 };
    CHECK_EQ(ac_block_store_ops.get_start(s, &past, back[0], r, &req[0],
                                          ac_block_store_ops.get_token(s, &past)), -ESTALE);
    /* the open block starting afresh (all dead) takes its offsets again */
    tok[6] = ac_block_store_ops.get_token(s, &again);
    CHECK_EQ(ac_block_store_ops.get_start(s, &again, back[6], r, &req[6], tok[6]), 1);
    CHECK(ac_block_store_ops.get_valid(s, &again, tok[6]));
    ac_block_store_ops.invalidate(s, &again);
    len[7] = make_record(rec, 201, 1000);
    CHECK_EQ(ac_block_store_ops.put(s, rec, len[7], &loc[7]), AC_STORE_OK);
    CHECK(loc[7].block == again.block && loc[7].offset == again.offset);
    CHECK(!ac_block_store_ops.get_valid(s, &loc[7], tok[6]));
    CHECK_EQ(ac_block_store_ops.get_start(s, &loc[7], back[6], r, &req[6], tok[6]), -ESTALE);
    ac_io_ring_free(r);
    ac_block_store_ops.close(s);
    for (int i = 0; i < 8; i++)
        free(back[i]);
}

/* Waits (at most 5 s) until the writer has written every sealed block. */
static void drain(struct ac_store *s) {
    struct ac_store_stats ss;
    for (int i = 0; i < 500; i++) {
        ac_block_store_ops.stats(s, &ss);
        if (ss.sealed_blocks == 0)
            return;
        usleep(10000);
    }
    CHECK_EQ(ss.sealed_blocks, 0);
}

/* Puts records of 1000-byte values until the open block is full: how many. */
static int fill_block(struct ac_store *s, int first, struct ac_loc *loc) {
    char rec[2048];
    int n = 0;
    while (ac_block_store_ops.put(s, rec, make_record(rec, first + n, 1000), &loc[n]) == AC_STORE_OK)
        n++;
    return n;
}

static bool reads_back(struct ac_store *s, int first, const struct ac_loc *loc, int n) {
    char want[2048], back[2048];
    for (int i = 0; i < n; i++) {
        size_t wl = make_record(want, first + i, 1000);
        if (ac_block_store_ops.get(s, &loc[i], back) != 0 || wl != loc[i].len || memcmp(back, want, wl) != 0)
            return false;
    }
    return true;
}

/* A store of 8 KiB blocks with a writer behind a queue of one block, flushes
 * waiting at most wait_ns; NULL if it cannot be had (counted as a failure). */
static struct ac_store *open_with_writer(uint64_t wait_ns) {
    char err[256];
    struct ac_store *s = ac_block_store_ops.open(dir, 8192, 0.5, err, sizeof(err));
    CHECK(s != NULL);
    if (s != NULL)
        CHECK_EQ(ac_block_store_ops.set_writer(s, 1, wait_ns), 0);
    return s;
}

/* The write queue: a flush seals the block and returns; the block reads from
 * memory until the writer wrote it, then from the file; a full queue waits at
 * most the wait, then -ETIMEDOUT with the block still open; a failed write
 * keeps the block, the next flush says so, the writer retries; a block whose
 * records all died while sealed is never written. */
static void test_writer(void) {
    struct ac_store *s = open_with_writer(200u * 1000 * 1000);
    if (s == NULL)
        return;
    struct ac_loc a[8], b[8], c[8];
    struct ac_store_stats ss;
    /* block A: sealed, its write held up 1 s; readable meanwhile */
    ac_io_set_fault(AC_FAULT_SLOW_WRITE, 1);
    int na = fill_block(s, 0, a);
    CHECK_EQ(na, 7);
    CHECK_EQ(ac_block_store_ops.flush(s), 0);
    CHECK(reads_back(s, 0, a, na));
    ac_block_store_ops.stats(s, &ss);
    CHECK_EQ(ss.sealed_blocks, 1);
    CHECK_EQ(ss.blocks_written, 0);
    /* block B: the queue (1) is full: the flush waits 0.2 s and gives up, B stays open */
    int nb = fill_block(s, 100, b);
    CHECK_EQ(ac_block_store_ops.flush(s), -ETIMEDOUT);
    ac_block_store_ops.stats(s, &ss);
    CHECK_EQ(ss.write_timeouts, 1);
    CHECK_EQ(ss.write_waits, 1);
    CHECK(ss.write_wait_ns >= 190u * 1000 * 1000 && ss.write_wait_ns < 900u * 1000 * 1000);
    CHECK(ss.open_bytes > 0);
    CHECK(reads_back(s, 100, b, nb));
    drain(s);
    ac_block_store_ops.stats(s, &ss);
    CHECK_EQ(ss.blocks_written, 1);
    CHECK(reads_back(s, 0, a, na));                 /* from the file now */
    /* B goes through; its write fails once: the next flush says so, the writer retries */
    ac_io_set_fault(AC_FAULT_WRITE_EIO, 1);
    CHECK_EQ(ac_block_store_ops.flush(s), 0);
    for (int i = 0; i < 100; i++) {
        ac_block_store_ops.stats(s, &ss);
        if (ss.io_errors > 0)
            break;
        usleep(10000);
    }
    CHECK_EQ(ss.io_errors, 1);
    CHECK(reads_back(s, 100, b, nb));               /* kept in memory */
    int nc = fill_block(s, 200, c);
    CHECK_EQ(ac_block_store_ops.flush(s), -EIO);    /* said once ... */
    drain(s);                                       /* ... and B written on the retry */
    CHECK_EQ(ac_block_store_ops.flush(s), 0);
    drain(s);
    ac_block_store_ops.stats(s, &ss);
    CHECK_EQ(ss.blocks_written, 3);
    CHECK(reads_back(s, 0, a, na) && reads_back(s, 100, b, nb) && reads_back(s, 200, c, nc));
    /* D's records all die while its (slow) write is in flight: written, then its extent given back */
    struct ac_loc d[8];
    ac_io_set_fault(AC_FAULT_SLOW_WRITE, 1);
    int nd = fill_block(s, 300, d);
    uint64_t on_disk = ss.bytes_on_disk;
    CHECK_EQ(ac_block_store_ops.flush(s), 0);
    usleep(100000);                                 /* the writer is in D's write now */
    for (int i = 0; i < nd; i++)
        ac_block_store_ops.invalidate(s, &d[i]);
    drain(s);
    ac_block_store_ops.stats(s, &ss);
    CHECK_EQ(ss.bytes_on_disk, on_disk);           /* its extent given back once written */
    CHECK_EQ(ss.blocks_written, 4);
    CHECK_EQ(ss.live_records, (uint64_t)(na + nb + nc));
    ac_io_set_fault(AC_FAULT_NONE, 0);
    ac_block_store_ops.close(s);                    /* joins the writer */
}

/* A put that grows the block table while the writer is in a write: the writer
 * finds its block again in the new table (ASan would see the old one used). */
static void test_writer_table_grows(void) {
    /* the wait is not what this tests: a minute, so that a disk stalled for seconds (it
     * happened once, right after gigabytes of files were deleted) does not time a flush out */
    struct ac_store *s = open_with_writer(60ull * 1000 * 1000 * 1000);
    if (s == NULL)
        return;
    static struct ac_loc loc[70][8];
    int n[70];
    for (int b = 0; b < 64; b++) {                  /* ids 0..63: the table's first 64 entries */
        n[b] = fill_block(s, b * 10, loc[b]);
        if (b == 63)
            ac_io_set_fault(AC_FAULT_SLOW_WRITE, 1);  /* block 63's write takes 1 s */
        CHECK_EQ(ac_block_store_ops.flush(s), 0);
    }
    usleep(100000);                                 /* the writer is in block 63's write */
    n[64] = fill_block(s, 640, loc[64]);            /* id 64: the table grows */
    drain(s);
    struct ac_store_stats ss;
    ac_block_store_ops.stats(s, &ss);
    CHECK_EQ(ss.blocks_written, 64);
    int wrong = 0;
    for (int b = 0; b <= 64; b++)
        wrong += !reads_back(s, b * 10, loc[b], n[b]);
    CHECK_EQ(wrong, 0);
    ac_io_set_fault(AC_FAULT_NONE, 0);
    ac_block_store_ops.close(s);
}

int main(void) {
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 2;
    }
    test_crc_and_record();
    test_compressed_records();
    for (int d = 0; d < 2; d++) {
        direct = d == 1;
        ac_io_set_direct(direct);
        struct ac_io_stats before, after;
        ac_io_get_stats(&before);
        test_packing_and_reads();
        test_all_dead_open_block_is_not_written();
        test_reads_in_flight();
        ac_io_get_stats(&after);
        CHECK_EQ(after.direct_files, before.direct_files);   /* every store closed its reader */
    }
    ac_io_set_direct(false);
    test_writer();
    test_writer_table_grows();
    rmdir(dir);
    return check_report("test_store");
}
