/* A request trace replayed instead of a generated workload (memcached-ac
 * -o ac_driver_trace=FILE; README "Replaying a trace").
 *
 * Formats:
 *   oracleGeneral  libCacheSim's 24-byte records (ycsb_trace.h), no op: every
 *                  request is a get
 *   csv            one request a line, `time,key,size[,op]`: time an unsigned
 *                  integer (read, not used: requests are replayed in file
 *                  order, as fast as the driver goes), key any text without
 *                  a comma, size the object's bytes, op one of get, gets
 *                  (a get), set, add, replace, cas, append, prepend (a set of
 *                  `size` bytes), delete; a first line `time,key,size[,op]`
 *                  is a header and skipped
 * The key of request id n is YCSB's ordered key "user<n>" (ycsb_record.h; an
 * id above 2^63 prints as its two's-complement negative); a CSV key that is
 * a decimal number up to 2^64-1 is that id, any other key the FNV-1a 64 of
 * its bytes (ycsb_rng.h), so the same trace in both formats gives the same
 * keys.  A size above max_size (the server's largest value) is clamped to it
 * and counted.
 *
 * Threads: with one thread the requests go in file order.  With T > 1 each
 * request belongs to thread ycsb_mix64(id) % T and each thread replays its
 * own requests in file order: every key's requests keep their order, the
 * interleaving between keys is the threads'. */
#ifndef YCSB_REPLAY_H
#define YCSB_REPLAY_H

#include <stddef.h>
#include <stdint.h>

enum ycsb_replay_format { YCSB_REPLAY_AUTO = 0, YCSB_REPLAY_ORACLE = 1, YCSB_REPLAY_CSV = 2 };

/* a request's op: YCSB_OP_READ (get), YCSB_OP_UPDATE (set), YCSB_OP_DELETE */
struct ycsb_replay {
    char path[1024];
    int format;                 /* YCSB_REPLAY_ORACLE or YCSB_REPLAY_CSV */
    uint64_t n;                 /* requests */
    uint64_t *ids;
    uint32_t *sizes;            /* clamped to max_size */
    uint8_t *ops;               /* enum ycsb_op_type */
    uint64_t objects;           /* distinct ids */
    uint64_t footprint_bytes;   /* over distinct ids: the largest (clamped) size each has */
    uint64_t clamped;           /* requests whose size was above max_size */
    uint32_t max_size, largest; /* the limit; the largest size after clamping */
    uint64_t gets, sets, deletes;
    uint64_t warmup;            /* the first `warmup` requests are the warm-up */
    /* threads > 1: order[] holds the request indices grouped by thread, thread
     * t's at [start[t], start[t + 1]), the first warm[t] of them warm-up */
    unsigned threads;
    uint64_t *order, *start, *warm;
};

/* the format a path's name implies (case-insensitive): .csv -> csv; .og,
 * .oracleGeneral, .bin -> oracleGeneral; any other name -> AUTO (unknown:
 * the caller asks for the format) */
int ycsb_replay_format_of(const char *path);
/* "oracleGeneral", "csv" or "auto" -> the format; -1 if none of them */
int ycsb_replay_format_parse(const char *name);
const char *ycsb_replay_format_name(int format);

/* Reads the whole trace.  0, or -1 with err naming the file (and line for
 * csv) and what is accepted. */
int ycsb_replay_load(struct ycsb_replay *r, const char *path, int format, uint32_t max_size,
                     char *err, size_t errlen);
/* warm-up = the first `warmup` requests (<= n); threads as above.  0, or -1 */
int ycsb_replay_split(struct ycsb_replay *r, uint64_t warmup, unsigned threads, char *err,
                      size_t errlen);
void ycsb_replay_free(struct ycsb_replay *r);

#endif
