/* The engine in use, each thread's own ring for whole-range transfers, fault
 * injection, the counters, and the sync engine. See io_engine.h. */
#define _GNU_SOURCE
#include "io_engine.h"
#include "clock.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --- sync: the transfer happens in submit ------------------------------- */
struct sync_ring {
    struct ac_io_ring_head h;
    struct ac_io_fifo done;               /* completed, in order */
};

static int sync_start(unsigned threads, char *why, size_t whylen) {
    (void)threads, (void)why, (void)whylen;
    return 0;
}

static void sync_stop(void) {}

static struct ac_io_ring *sync_ring_new(unsigned depth, int *err) {
    (void)depth;
    struct sync_ring *r = calloc(1, sizeof(*r));
    if (r == NULL)
        *err = ENOMEM;
    return (struct ac_io_ring *)r;
}

static void sync_ring_free(struct ac_io_ring *r) {
    free(r);
}

ssize_t ac_io_transfer(const struct ac_io_req *q) {
    for (;;) {
        ssize_t n = q->write ? pwrite(q->fd, q->buf, q->len, (off_t)q->off)
                             : pread(q->fd, q->buf, q->len, (off_t)q->off);
        if (n >= 0)
            return n;
        if (errno != EINTR)
            return -errno;
    }
}

static int sync_submit(struct ac_io_ring *ring, struct ac_io_req *req) {
    req->res = ac_io_transfer(req);
    ac_io_fifo_push(&((struct sync_ring *)ring)->done, req);
    return 0;
}

static int sync_reap(struct ac_io_ring *ring, struct ac_io_req **out, int min, int max) {
    (void)min;                            /* everything submitted has completed */
    return ac_io_fifo_pop(&((struct sync_ring *)ring)->done, out, max);
}

const struct ac_io_engine ac_io_sync = {
    .name = "sync", .start = sync_start, .stop = sync_stop, .ring_new = sync_ring_new,
    .ring_free = sync_ring_free, .submit = sync_submit, .reap = sync_reap,
};

/* --- the engine in use --------------------------------------------------- */
static const struct ac_io_engine *const engines[AC_IO_KINDS] = {
    [AC_IO_SYNC] = &ac_io_sync, [AC_IO_THREADS] = &ac_io_threads,
    [AC_IO_AIO] = &ac_io_aio, [AC_IO_URING] = &ac_io_uring,
};
/* uring falls back to aio, aio to threads, threads to sync (which always starts) */
static const enum ac_io_kind fallback[AC_IO_KINDS] = {
    [AC_IO_SYNC] = AC_IO_SYNC, [AC_IO_THREADS] = AC_IO_SYNC,
    [AC_IO_AIO] = AC_IO_THREADS, [AC_IO_URING] = AC_IO_AIO,
};
static enum ac_io_kind cur_kind = AC_IO_SYNC;
static const struct ac_io_engine *cur = &ac_io_sync;
static unsigned generation;               /* rings of an earlier engine are renewed */

const char *ac_io_name(enum ac_io_kind kind) {
    return kind < AC_IO_KINDS ? engines[kind]->name : "?";
}

enum ac_io_kind ac_io_kind(void) {
    return cur_kind;
}

enum ac_io_kind ac_io_start(enum ac_io_kind want, unsigned threads, char *why, size_t whylen) {
    if (why != NULL && whylen > 0)
        why[0] = '\0';
    enum ac_io_kind k = want < AC_IO_KINDS ? want : AC_IO_SYNC;
    for (;;) {
        char because[200] = "";
        if (engines[k]->start(threads, because, sizeof(because)) == 0)
            break;
        if (why != NULL && whylen > 0) {
            size_t used = strlen(why);
            snprintf(why + used, whylen - used, "%s%s: %s", used > 0 ? "; " : "", engines[k]->name, because);
        }
        k = fallback[k];
    }
    cur_kind = k;
    __atomic_store_n(&cur, engines[k], __ATOMIC_RELEASE);
    __atomic_add_fetch(&generation, 1, __ATOMIC_RELEASE);
    return k;
}

void ac_io_stop(void) {
    cur->stop();
    cur_kind = AC_IO_SYNC;
    __atomic_store_n(&cur, &ac_io_sync, __ATOMIC_RELEASE);
    __atomic_add_fetch(&generation, 1, __ATOMIC_RELEASE);
}

/* --- counters and faults --------------------------------------------------- */
static struct ac_io_stats st;
static struct ac_lathist read_ns;
static enum ac_io_fault fault_kind;
static uint64_t fault_left;

#define ADD(f, v) __atomic_add_fetch(&st.f, (v), __ATOMIC_RELAXED)

void ac_io_set_fault(enum ac_io_fault kind, uint64_t count) {
    __atomic_store_n(&fault_left, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&fault_kind, kind, __ATOMIC_RELAXED);
    __atomic_store_n(&fault_left, kind == AC_FAULT_NONE ? 0 : count, __ATOMIC_RELEASE);
}

/* Takes one of the armed faults when it applies to q: its kind, or NONE. */
static enum ac_io_fault take_fault(const struct ac_io_req *q) {
    if (__atomic_load_n(&fault_left, __ATOMIC_ACQUIRE) == 0)
        return AC_FAULT_NONE;
    enum ac_io_fault k = __atomic_load_n(&fault_kind, __ATOMIC_RELAXED);
    bool applies = k == AC_FAULT_SHORT ? q->res >= 2 * AC_FAULT_SHORT_UNIT
                 : k == AC_FAULT_READ_EIO || k == AC_FAULT_SLOW_READ ? !q->write
                 : q->write;
    if (!applies)
        return AC_FAULT_NONE;
    uint64_t left = __atomic_load_n(&fault_left, __ATOMIC_RELAXED);
    while (left > 0)
        if (__atomic_compare_exchange_n(&fault_left, &left, left - 1, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            return k;
    return AC_FAULT_NONE;
}

static void completed(struct ac_io_req *q) {
    enum ac_io_fault k = take_fault(q);
    if (k == AC_FAULT_SLOW_READ || k == AC_FAULT_SLOW_WRITE) {
        ADD(faults_injected, 1);
        usleep(AC_FAULT_SLOW_READ_US);     /* the transfer completes, late */
    } else if (k != AC_FAULT_NONE) {
        ADD(faults_injected, 1);
        q->res = k == AC_FAULT_SHORT ? q->res / 2 / AC_FAULT_SHORT_UNIT * AC_FAULT_SHORT_UNIT
               : k == AC_FAULT_WRITE_ENOSPC ? -ENOSPC : -EIO;
    }
    if (q->res < 0) {
        ADD(errors, 1);
        return;
    }
    if (q->write) {
        ADD(writes, 1);
        ADD(write_bytes, (uint64_t)q->res);
    } else {
        ADD(reads, 1);
        ADD(read_bytes, (uint64_t)q->res);
        ac_lathist_add(&read_ns, ac_now_ns() - q->t0);
    }
    if ((size_t)q->res < q->len)
        ADD(short_transfers, 1);
}

const struct ac_lathist *ac_io_read_latency(void) {
    return &read_ns;
}

void ac_io_get_stats(struct ac_io_stats *out) {
    out->reads = __atomic_load_n(&st.reads, __ATOMIC_RELAXED);
    out->writes = __atomic_load_n(&st.writes, __ATOMIC_RELAXED);
    out->read_bytes = __atomic_load_n(&st.read_bytes, __ATOMIC_RELAXED);
    out->write_bytes = __atomic_load_n(&st.write_bytes, __ATOMIC_RELAXED);
    out->short_transfers = __atomic_load_n(&st.short_transfers, __ATOMIC_RELAXED);
    out->errors = __atomic_load_n(&st.errors, __ATOMIC_RELAXED);
    out->faults_injected = __atomic_load_n(&st.faults_injected, __ATOMIC_RELAXED);
    out->ring_fallbacks = __atomic_load_n(&st.ring_fallbacks, __ATOMIC_RELAXED);
    out->direct_files = __atomic_load_n(&st.direct_files, __ATOMIC_RELAXED);
}

/* --- rings ----------------------------------------------------------------- */
static struct ac_io_ring *ring_of(const struct ac_io_engine *e, unsigned depth, int *err) {
    if (depth == 0)
        depth = 1;
    *err = 0;
    struct ac_io_ring *r = e->ring_new(depth, err);
    if (r == NULL) {
        if (*err == 0)
            *err = ENOMEM;
        return NULL;
    }
    struct ac_io_ring_head *h = (struct ac_io_ring_head *)r;
    h->eng = e;
    h->depth = depth;
    h->inflight = 0;
    return r;
}

struct ac_io_ring *ac_io_ring_new(unsigned depth, int *err) {
    return ring_of(__atomic_load_n(&cur, __ATOMIC_ACQUIRE), depth, err);
}

/* Waits for what is still in flight (the kernel or a pool thread would
 * write into freed memory otherwise), then frees. */
void ac_io_ring_free(struct ac_io_ring *r) {
    if (r == NULL)
        return;
    struct ac_io_ring_head *h = (struct ac_io_ring_head *)r;
    struct ac_io_req *done[16];
    while (h->inflight > 0 && ac_io_reap(r, done, 1, 16) >= 0)
        ;
    h->eng->ring_free(r);
}

unsigned ac_io_inflight(const struct ac_io_ring *r) {
    return ((const struct ac_io_ring_head *)r)->inflight;
}

int ac_io_submit(struct ac_io_ring *r, struct ac_io_req *req) {
    struct ac_io_ring_head *h = (struct ac_io_ring_head *)r;
    if (h->inflight >= h->depth)
        return -EAGAIN;
    req->res = 0;
    req->next = NULL;
    req->t0 = ac_now_ns();
    int rc = h->eng->submit(r, req);
    if (rc == 0)
        h->inflight++;
    return rc;
}

int ac_io_reap(struct ac_io_ring *r, struct ac_io_req **out, int min, int max) {
    struct ac_io_ring_head *h = (struct ac_io_ring_head *)r;
    if (min > (int)h->inflight)
        min = (int)h->inflight;
    if (min > max)
        min = max;
    if (max <= 0 || h->inflight == 0)
        return 0;
    int n = h->eng->reap(r, out, min, max);
    for (int i = 0; i < n; i++)
        completed(out[i]);
    if (n > 0)
        h->inflight -= (unsigned)n;
    return n;
}

/* --- each thread's ring for ac_io_rw ------------------------------------- */
static pthread_key_t ring_key;
static pthread_once_t ring_once = PTHREAD_ONCE_INIT;
static __thread struct ac_io_ring *tl_ring;
static __thread unsigned tl_gen;

static void ring_key_free(void *r) {
    ac_io_ring_free(r);
}

static void ring_key_init(void) {
    (void)pthread_key_create(&ring_key, ring_key_free);
}

static struct ac_io_ring *thread_ring(int *err) {
    unsigned gen = __atomic_load_n(&generation, __ATOMIC_ACQUIRE);
    if (tl_ring != NULL && tl_gen == gen)
        return tl_ring;
    pthread_once(&ring_once, ring_key_init);
    ac_io_ring_free(tl_ring);
    tl_ring = ac_io_ring_new(1, err);
    if (tl_ring == NULL && (tl_ring = ring_of(&ac_io_sync, 1, err)) != NULL)
        ADD(ring_fallbacks, 1);          /* e.g. io_uring's locked memory, aio-max-nr: this thread reads in place */
    tl_gen = gen;
    (void)pthread_setspecific(ring_key, tl_ring);
    return tl_ring;
}

/* One request through the calling thread's ring, waited for: its result
 * (bytes, maybe short, or -errno). */
static ssize_t transfer_once(struct ac_io_ring *r, struct ac_io_req *q) {
    int rc = ac_io_submit(r, q);
    if (rc != 0)
        return rc;
    struct ac_io_req *got;
    while ((rc = ac_io_reap(r, &got, 1, 1)) <= 0) {
        /* the request is in the kernel's hands and points at the caller's
         * buffer: returning would leave it writing there later */
        if (rc < 0) {
            fprintf(stderr, "memcached-ac: the %s engine cannot reap a spill-file %s: %s\n",
                    ((struct ac_io_ring_head *)r)->eng->name, q->write ? "write" : "read", strerror(-rc));
            abort();
        }
    }
    return q->res;
}

int ac_io_rw(int fd, void *rd, const void *wr, size_t len, uint64_t off) {
    int err;
    struct ac_io_ring *r = thread_ring(&err);
    if (r == NULL)
        return -err;
    for (size_t done = 0; done < len;) {
        struct ac_io_req q = {
            .fd = fd, .write = rd == NULL, .len = len - done, .off = off + done,
            .buf = rd != NULL ? (char *)rd + done : (char *)(uintptr_t)wr + done,
        };
        ssize_t res = transfer_once(r, &q);
        if (res < 0)
            return (int)res;
        if (res == 0)
            return -EIO;
        done += (size_t)res;
    }
    return 0;
}

/* --- direct I/O ------------------------------------------------------------ */
#define AC_IO_DIRECT_STALLS 8              /* transfers in a row short of one unit before -EIO */
static bool direct_on;

void ac_io_set_direct(bool on) {
    direct_on = on;
}

bool ac_io_direct(void) {
    return direct_on;
}

unsigned ac_io_direct_align(int fd) {
    struct statx sx;
    if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) != 0 || !(sx.stx_mask & STATX_DIOALIGN) ||
            sx.stx_dio_offset_align == 0 || sx.stx_dio_mem_align == 0)
        return 0;
    unsigned a = sx.stx_dio_offset_align > sx.stx_dio_mem_align ? sx.stx_dio_offset_align : sx.stx_dio_mem_align;
    return a <= AC_IO_BUF_ALIGN && (a & (a - 1)) == 0 ? a : 0;
}

void ac_io_direct_file(int delta) {
    __atomic_add_fetch(&st.direct_files, (uint64_t)(int64_t)delta, __ATOMIC_RELAXED);
}

void *ac_io_span_alloc(size_t len) {
    void *p = NULL;
    return posix_memalign(&p, AC_IO_BUF_ALIGN, ac_io_span_cap(len)) == 0 ? p : NULL;
}

void ac_io_widen(struct ac_io_req *req, unsigned align) {
    req->skip = 0;
    if (align == 0)
        return;
    uint64_t start = ac_io_align_down(req->off, align);
    req->skip = (size_t)(req->off - start);
    req->len = (size_t)(ac_io_align_up(req->off + req->len, align) - start);
    req->off = start;
}

/* [off, off + len) of fd (O_DIRECT, every bound a multiple of align) to or
 * from buf, done once the first need bytes are: a short transfer goes on from
 * the unit it stopped in (that unit transferred again); one short of a whole
 * unit is tried again, AC_IO_DIRECT_STALLS times in a row at most. 0 or -errno. */
static int direct_transfer(struct ac_io_ring *r, int fd, bool write, char *buf, size_t len, size_t need,
                           uint64_t off, unsigned align) {
    size_t done = 0;
    for (unsigned stalls = 0; done < need;) {
        struct ac_io_req q = { .fd = fd, .write = write, .buf = buf + done, .len = len - done, .off = off + done };
        ssize_t res = transfer_once(r, &q);
        if (res <= 0)
            return res < 0 ? (int)res : -EIO;
        if (done + (size_t)res >= need)
            return 0;
        size_t next = (size_t)ac_io_align_down(done + (size_t)res, align);
        if (next > done) {
            done = next;
            stalls = 0;
        } else if (++stalls > AC_IO_DIRECT_STALLS) {
            return -EIO;
        }
    }
    return 0;
}

int ac_io_write_direct(int fd, const void *buf, size_t len, uint64_t off, unsigned align) {
    int err;
    struct ac_io_ring *r = thread_ring(&err);
    if (r == NULL)
        return -err;
    return direct_transfer(r, fd, true, (char *)(uintptr_t)buf, len, len, off, align);
}

int ac_io_read_direct(int fd, void *buf, size_t len, uint64_t off, unsigned align) {
    int err;
    struct ac_io_ring *r = thread_ring(&err);
    if (r == NULL)
        return -err;
    char *span = ac_io_span_alloc(len);
    if (span == NULL)
        return -ENOMEM;
    struct ac_io_req w = { .fd = fd, .len = len, .off = off };
    ac_io_widen(&w, align);
    int rc = direct_transfer(r, fd, false, span, w.len, w.skip + len, w.off, align);
    if (rc == 0)
        memcpy(buf, span + w.skip, len);
    free(span);
    return rc;
}
