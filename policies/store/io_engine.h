/* The I/O engines of the spill stores. Every read and write of a spill file
 * (store/spill_file.h) goes through the engine chosen at start (-o ac_io):
 *   sync     pread/pwrite in the calling thread;
 *   threads  a pool of threads doing pread/pwrite, the submitter waits on a
 *            condition variable;
 *   aio      Linux AIO (libaio: io_submit/io_getevents; the interface the
 *            ICDE 2015 paper's UVMM used, §VI). On a buffered file the kernel
 *            performs it inside io_submit;
 *   uring    io_uring (liburing): one ring per submitting thread.
 *
 * The interface is a queue per submitter: submit requests, reap completions
 * (a completion may be short: the caller resubmits the rest). ac_io_rw is
 * the whole-range transfer built on it, which the stores use today; a caller
 * that keeps several requests in flight uses a ring of its own.
 *
 * Tests can inject faults (ac_io_set_fault): the next N reads fail with EIO,
 * the next N writes fail with EIO or ENOSPC, or the next N transfers come back
 * short (half the bytes). They act at completion, for every engine alike.
 *
 * Depends on nothing above store/. */
#ifndef AC_IO_ENGINE_H
#define AC_IO_ENGINE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lathist.h"
#include <sys/types.h>

enum ac_io_kind { AC_IO_SYNC, AC_IO_THREADS, AC_IO_AIO, AC_IO_URING, AC_IO_KINDS };

struct ac_io_req {
    int fd;
    bool write;
    void *buf;                 /* read into, or written from */
    size_t len;
    uint64_t off;
    ssize_t res;               /* at completion: bytes transferred (may be fewer than len) or -errno */
    void *data;                /* the submitter's */
    size_t skip;               /* a read widened for direct I/O (ac_io_widen): the bytes asked for start at buf + skip */
    struct ac_io_req *next;    /* the engine's, while in flight */
    void *priv;                /* the engine's, while in flight */
    uint64_t t0;               /* the engine's: when it was submitted (ac_now_ns; the read latency) */
};

/* One submitter's queue: used by one thread at a time. */
struct ac_io_ring;

/* What every engine provides (io_engine.c: sync; io_threads.c, io_aio.c,
 * io_uring.c). Rings start with struct ac_io_ring_head. */
struct ac_io_ring_head {
    const struct ac_io_engine *eng;
    unsigned depth, inflight;
};
struct ac_io_engine {
    const char *name;
    /* Starts what the engine needs (the pool's threads) and checks that the
     * kernel has what it uses: 0, or -1 with why (e.g. "io_uring_queue_init:
     * Operation not permitted"). */
    int  (*start)(unsigned threads, char *why, size_t whylen);
    void (*stop)(void);
    struct ac_io_ring *(*ring_new)(unsigned depth, int *err);
    void (*ring_free)(struct ac_io_ring *r);
    int  (*submit)(struct ac_io_ring *r, struct ac_io_req *req);               /* 0 or -errno */
    int  (*reap)(struct ac_io_ring *r, struct ac_io_req **out, int min, int max); /* count or -errno */
};

extern const struct ac_io_engine ac_io_sync, ac_io_threads, ac_io_aio, ac_io_uring;
/* A first-in first-out list of requests linked through next: the sync and
 * threads engines' completed requests, the pool's work. */
struct ac_io_fifo {
    struct ac_io_req *head, *tail;
};
static inline void ac_io_fifo_push(struct ac_io_fifo *f, struct ac_io_req *q) {
    q->next = NULL;
    if (f->tail != NULL)
        f->tail->next = q;
    else
        f->head = q;
    f->tail = q;
}
/* Takes up to max from the front into out; returns how many. */
static inline int ac_io_fifo_pop(struct ac_io_fifo *f, struct ac_io_req **out, int max) {
    int n = 0;
    while (n < max && f->head != NULL) {
        out[n++] = f->head;
        f->head = f->head->next;
    }
    if (f->head == NULL)
        f->tail = NULL;
    return n;
}

/* For the engines that do the transfer themselves (sync, threads): one pread
 * or pwrite, again after EINTR; bytes (maybe short) or -errno. */
ssize_t ac_io_transfer(const struct ac_io_req *q);

/* Selects and starts the engine want (threads: the pool's size). When want
 * cannot start, the next that can (uring, then aio, then threads; threads and
 * sync always start) is used instead and *why tells what was missing. Returns
 * the kind in use. Called once before any I/O; ac_io_stop undoes it. Without
 * it, I/O goes through sync. */
enum ac_io_kind ac_io_start(enum ac_io_kind want, unsigned threads, char *why, size_t whylen);
void ac_io_stop(void);
enum ac_io_kind ac_io_kind(void);
const char *ac_io_name(enum ac_io_kind kind);

/* A ring of the engine in use, depth requests in flight at most; NULL with
 * *err = errno. */
struct ac_io_ring *ac_io_ring_new(unsigned depth, int *err);
void ac_io_ring_free(struct ac_io_ring *r);
/* -EAGAIN when depth requests are in flight. */
int ac_io_submit(struct ac_io_ring *r, struct ac_io_req *req);
/* Waits until at least min requests completed (min <= in flight), returns up
 * to max of them. */
int ac_io_reap(struct ac_io_ring *r, struct ac_io_req **out, int min, int max);
unsigned ac_io_inflight(const struct ac_io_ring *r);

/* Reads len bytes at off into rd, or writes len bytes from wr at off (the
 * other pointer NULL), through the calling thread's own ring, resubmitting
 * short transfers: 0, -errno, or -EIO when a transfer makes no progress (a
 * read at the end of the file). */
int ac_io_rw(int fd, void *rd, const void *wr, size_t len, uint64_t off);

/* --- direct I/O ------------------------------------------------------------
 * A file opened with O_DIRECT is read without the page cache: no readahead, no
 * cached copy charged to the memory group, and transfers the device sees as
 * they are (what makes aio asynchronous at all). Offsets, lengths and buffer
 * addresses must be multiples of the file's alignment (its file system's
 * direct-I/O alignment, statx STATX_DIOALIGN: 512 B on ext4 over a disk of 512 B
 * sectors, 4 KiB over zram). A read of [off, off+len) is widened to whole
 * aligned units: [ac_io_align_down(off), ac_io_align_up(off+len)).
 *
 * ac_io_set_direct chooses whether the stores read their record files this way
 * (-o ac_io_direct); ac_io_direct_align tells a file's alignment, 0 when its
 * file system has no direct I/O (tmpfs): that file is read through the page
 * cache. */
#define AC_IO_BUF_ALIGN 4096u            /* buffers of direct reads: the largest alignment asked for */
void ac_io_set_direct(bool on);
bool ac_io_direct(void);
unsigned ac_io_direct_align(int fd);
/* Counts the spill files read with O_DIRECT (+1 opened, -1 closed). */
void ac_io_direct_file(int delta);
static inline uint64_t ac_io_align_down(uint64_t v, unsigned align) {
    return v / align * align;
}
static inline uint64_t ac_io_align_up(uint64_t v, unsigned align) {
    return (v + align - 1) / align * align;
}
/* The bytes a buffer needs for a widened read of len bytes at any offset. */
static inline size_t ac_io_span_cap(size_t len) {
    return len + 2 * (size_t)AC_IO_BUF_ALIGN;
}
/* A buffer of ac_io_span_cap(len) bytes aligned to AC_IO_BUF_ALIGN (free()), or NULL. */
void *ac_io_span_alloc(size_t len);
/* Widens req (fd, off, len set; buf aligned with ac_io_span_cap(len) bytes) to
 * align and sets req->skip; align 0 leaves it as it is (skip 0). */
void ac_io_widen(struct ac_io_req *req, unsigned align);
/* A widened read done: it holds the len bytes asked for (a read that stops at
 * the end of the file may still). */
static inline bool ac_io_widened_ok(const struct ac_io_req *req, size_t len) {
    return req->res >= 0 && (size_t)req->res >= req->skip + len;
}
/* Reads len bytes at off into buf (any address) from fd, opened with O_DIRECT
 * of alignment align, through an aligned buffer: 0 or -errno (-EIO: the file
 * ends before off + len). */
int ac_io_read_direct(int fd, void *buf, size_t len, uint64_t off, unsigned align);
/* Writes len bytes of buf (aligned, len and off multiples of align) at off to
 * fd, opened with O_DIRECT: 0 or -errno. */
int ac_io_write_direct(int fd, const void *buf, size_t len, uint64_t off, unsigned align);

/* Fault injection (tests): kind and how many of the next requests it hits. */
enum ac_io_fault { AC_FAULT_NONE, AC_FAULT_READ_EIO, AC_FAULT_WRITE_EIO, AC_FAULT_WRITE_ENOSPC,
                   AC_FAULT_SHORT, AC_FAULT_SLOW_READ, AC_FAULT_SLOW_WRITE };
#define AC_FAULT_SLOW_READ_US 1000000     /* slow_read, slow_write: each one hit takes this much longer */
/* short: a transfer of two sectors or more comes back with half its bytes,
 * whole sectors (devices complete whole sectors; direct I/O depends on it) */
#define AC_FAULT_SHORT_UNIT 512
void ac_io_set_fault(enum ac_io_fault kind, uint64_t count);

struct ac_io_stats {
    uint64_t reads, writes, read_bytes, write_bytes;   /* completed requests and their bytes */
    uint64_t short_transfers, errors;                   /* completions short of len, failed ones */
    uint64_t faults_injected;
    uint64_t ring_fallbacks;                            /* threads whose ring had to be a sync one */
    uint64_t direct_files;                              /* spill files read with O_DIRECT now */
};
void ac_io_get_stats(struct ac_io_stats *out);
/* The latency of every completed read, from its submission to its completion
 * as its submitter reaped it (the sync engine: the pread itself), whole life:
 * stats io_read_ns_p50/p99 and the histogram's nonzero buckets (ac_lathist.h). */
const struct ac_lathist *ac_io_read_latency(void);

#endif
