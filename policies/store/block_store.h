/* The spill-store interface: where spilled items live. A store takes opaque,
 * self-checking records (store/record.h) and hands back a location. */
#ifndef AC_STORE_H
#define AC_STORE_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "io_engine.h"
#include "loc.h"

enum { AC_STORE_OK = 0, AC_STORE_FULL = 1 };

struct ac_store_stats {
    uint64_t blocks_written, bytes_written;
    uint64_t record_reads, bytes_read, block_reads;
    uint64_t bytes_on_disk;      /* extents holding live blocks */
    uint64_t live_records, live_bytes;
    uint64_t open_bytes;         /* records buffered, not yet written */
    uint64_t io_errors;
    uint64_t merges_triggered;   /* blocks that fell below the fill threshold */
    uint64_t sealed_blocks;      /* write queue: closed blocks waiting for the writer now */
    uint64_t write_waits, write_wait_ns, write_timeouts;   /* flushes that waited for room, how long, gave up */
};

struct ac_store;

struct ac_store_ops {
    const char *name;
    /* dir is private to the store; block_size and fill as the options say. */
    struct ac_store *(*open)(const char *dir, size_t block_size, double compact_fill, char *err, size_t errlen);
    /* Appends a record to the open block. AC_STORE_FULL: flush, then retry. */
    int  (*put)(struct ac_store *s, const void *rec, size_t len, struct ac_loc *loc);
    /* Writes the open block with one sequential write, or with a write queue
     * hands it to the writer; 0 or -errno (data kept; -ETIMEDOUT: the queue
     * stayed full for the wait). */
    int  (*flush)(struct ac_store *s);
    /* A write queue of queue blocks and a writer thread (0: none); a flush
     * waits at most wait_ns for room. Once, right after open: 0 or -errno. */
    int  (*set_writer)(struct ac_store *s, unsigned queue, uint64_t wait_ns);
    /* Reads loc->len bytes of the record; 0 or -errno. */
    int  (*get)(struct ac_store *s, const struct ac_loc *loc, void *buf);
    /* The same without waiting (block_store.c): get_token while the record is
     * known live at loc, get_start sends the read out on ring r, get_valid
     * tells whether the bytes read are still the record's. */
    uint64_t (*get_token)(struct ac_store *s, const struct ac_loc *loc);
    int  (*get_start)(struct ac_store *s, const struct ac_loc *loc, void *buf, struct ac_io_ring *r,
                      struct ac_io_req *req, uint64_t token);
    bool (*get_valid)(struct ac_store *s, const struct ac_loc *loc, uint64_t token);
    /* The record at loc is dead. Returns 1 when its block should now be merged
     * whole (its live fraction fell below compact_fill), else 0. */
    int  (*invalidate)(struct ac_store *s, const struct ac_loc *loc);
    /* Reads a whole block the caller claimed (begin_merge) into a malloc'd
     * buffer, with the store's lock not held during the read; returns its
     * length or -errno (-ESTALE: every record died meanwhile). */
    ssize_t (*read_block)(struct ac_store *s, uint32_t block, void **buf);
    /* Claims a block for a whole-block merge: 1 if the caller now owns it. */
    int  (*begin_merge)(struct ac_store *s, uint32_t block);
    void (*merge_done)(struct ac_store *s, uint32_t block);
    void (*stats)(struct ac_store *s, struct ac_store_stats *out);
    void (*close)(struct ac_store *s);   /* frees memory and removes its files */
};

extern const struct ac_store_ops ac_block_store_ops;

#endif
