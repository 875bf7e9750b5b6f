/* ACTRACE files (the run-phase request sequence) and libCacheSim's
 * oracleGeneral format.
 *
 * ACTRACE, little-endian: a 128-byte header
 *   0 "ACTRACE1"  8 u32 version=1  12 u32 header_size=128  16 u64 seed
 *   24 u64 recordcount  32 u64 request_count  40 u8[24] zero
 *   64 char[64] workload name, NUL-padded
 * then request_count 16-byte records
 *   u64 key_id (the YCSB key number)  u32 value_size  u8 op  u8[3] zero
 * with op 0 read, 1 update, 2 insert, 3 read-modify-write.
 *
 * What ycsb-trace writes: the warm-up operations followed by the run
 * operations (request_count = warmupoperations + operationcount), exactly the
 * stream the driver sends after loading, generated single-threaded; the load
 * phase (keys insertstart .. insertstart+insertcount-1) is implied.
 * value_size is the stored value's length (fieldcount * fieldlength).
 *
 * oracleGeneral: 24-byte packed little-endian records, no header:
 *   u32 clock_time (we write the request index, mod 2^32)  u64 obj_id (key_id)
 *   u32 obj_size (value_size)  i64 next_access_vtime (index of the next request
 *   for the same key_id, -1 if none). */
#ifndef YCSB_TRACE_H
#define YCSB_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "ycsb_workload.h"

#define YCSB_TRACE_MAGIC "ACTRACE1"
#define YCSB_TRACE_HEADER 128
#define YCSB_TRACE_RECORD 16
#define YCSB_OG_RECORD 24

struct ycsb_trace_header {
    uint32_t version, header_size;
    uint64_t seed, recordcount, request_count;
    char name[65];
};

struct ycsb_trace_record {
    uint64_t key_id;
    uint32_t value_size;
    uint8_t op;
};

/* one oracleGeneral record (the layout above; ycsb_replay.c reads them) */
struct ycsb_og_record {
    uint32_t clock_time;
    uint64_t obj_id;
    uint32_t obj_size;
    int64_t next_access_vtime;
};

void ycsb_trace_encode_header(unsigned char out[YCSB_TRACE_HEADER],
                              const struct ycsb_trace_header *h);
/* 0, or -1 with err naming what is wrong */
int ycsb_trace_decode_header(const unsigned char in[YCSB_TRACE_HEADER],
                             struct ycsb_trace_header *h, char *err, size_t errlen);
void ycsb_trace_encode_record(unsigned char out[YCSB_TRACE_RECORD],
                              const struct ycsb_trace_record *r);
void ycsb_trace_decode_record(const unsigned char in[YCSB_TRACE_RECORD],
                              struct ycsb_trace_record *r);
void ycsb_og_encode_record(unsigned char out[YCSB_OG_RECORD], const struct ycsb_og_record *r);
void ycsb_og_decode_record(const unsigned char in[YCSB_OG_RECORD], struct ycsb_og_record *r);

/* writes the warm-up + run requests of w to path, a scan as the reads of its
 * keys in load order (memcached has no range scan); counts (may be NULL) gets
 * the number of operations of each type, warmup_written (may be NULL) the
 * records of the warm-up written, scan_reads (may be NULL; added to) the read
 * records the scans became.  0, or -1 with err. */
int ycsb_trace_generate(struct ycsb_workload *w, const char *path,
                        uint64_t counts[YCSB_OP_TYPES], uint64_t *warmup_written,
                        uint64_t *scan_reads, char *err,
                        size_t errlen);
/* ACTRACE file -> oracleGeneral file.  0, or -1 with err. */
int ycsb_trace_to_oracle(const char *actrace, const char *og, char *err, size_t errlen);

#endif
