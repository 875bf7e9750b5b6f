/* I/O engine "uring": io_uring through liburing, one ring (submission and
 * completion queue) per ac_io ring, i.e. per submitting thread. A read of a
 * cached page completes inline; one that must wait for the device is queued
 * by the kernel, and many can be in flight. See io_engine.h.
 *
 * Writes to a file opened without O_DIRECT are done with pwrite in the
 * submitting thread (completed at once, reaped like the others): the kernel
 * does not hold a buffered io_uring write back by its dirty-page limits, so a
 * memory group fills with dirty pages it cannot reclaim. Measured on this
 * machine (kernel 6.18): lru, 20k records of 1 KB, -m 12 in a group of
 * 24.4 MB was OOM-killed with 9.1 MB of dirty page cache when its block writes
 * went through io_uring, and stayed within the group with pwrite (sync,
 * threads), libaio, or io_uring with O_DIRECT writes. */
#define _GNU_SOURCE                     /* O_DIRECT */
#include "io_engine.h"
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* io_uring_submit answering EAGAIN (no kernel memory for now): tries, a yield between */
#define SUBMIT_TRIES 1000

struct uring_ring {
    struct ac_io_ring_head h;
    struct io_uring ring;
    struct ac_io_fifo done;       /* buffered writes, done in submit */
};

static int uring_start(unsigned threads, char *why, size_t whylen) {
    (void)threads;
    struct io_uring ring;
    int rc = io_uring_queue_init(1, &ring, 0);   /* -errno: ENOSYS, or EPERM (kernel.io_uring_disabled) */
    if (rc < 0) {
        snprintf(why, whylen, "io_uring_queue_init: %s", strerror(-rc));
        return -1;
    }
    io_uring_queue_exit(&ring);
    return 0;
}

static void uring_stop(void) {}

static struct ac_io_ring *uring_ring_new(unsigned depth, int *err) {
    struct uring_ring *r = calloc(1, sizeof(*r));
    if (r == NULL) {
        *err = ENOMEM;
        return NULL;
    }
    int rc = io_uring_queue_init(depth, &r->ring, 0);
    if (rc < 0) {
        *err = -rc;
        free(r);
        return NULL;
    }
    return (struct ac_io_ring *)r;
}

static void uring_ring_free(struct ac_io_ring *ring) {
    struct uring_ring *r = (struct uring_ring *)ring;
    io_uring_queue_exit(&r->ring);
    free(r);
}

static int uring_submit(struct ac_io_ring *ring, struct ac_io_req *req) {
    struct uring_ring *r = (struct uring_ring *)ring;
    if (req->write) {
        int fl = fcntl(req->fd, F_GETFL);
        if (fl < 0 || !(fl & O_DIRECT)) {
            req->res = ac_io_transfer(req);   /* a bad descriptor answers its error here */
            ac_io_fifo_push(&r->done, req);
            return 0;
        }
    }
    struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);
    if (sqe == NULL)
        return -EAGAIN;
    if (req->write)
        io_uring_prep_write(sqe, req->fd, req->buf, (unsigned)req->len, req->off);
    else
        io_uring_prep_read(sqe, req->fd, req->buf, (unsigned)req->len, req->off);
    io_uring_sqe_set_data(sqe, req);
    int rc, tries = 0;
    do
        rc = io_uring_submit(&r->ring);
    while (rc == -EINTR || (rc == -EAGAIN && ++tries < SUBMIT_TRIES && sched_yield() == 0));
    if (rc < 0) {
        /* the entry stays queued: made a no-op without a request, so that the
         * next submit cannot send a transfer into the caller's buffer later */
        io_uring_prep_nop(sqe);
        io_uring_sqe_set_data(sqe, NULL);
        return rc;
    }
    return 0;
}

static int uring_reap(struct ac_io_ring *ring, struct ac_io_req **out, int min, int max) {
    struct uring_ring *r = (struct uring_ring *)ring;
    int n = ac_io_fifo_pop(&r->done, out, max);
    while (n < max) {
        struct io_uring_cqe *cqe;
        int rc = n < min ? io_uring_wait_cqe(&r->ring, &cqe) : io_uring_peek_cqe(&r->ring, &cqe);
        if (rc == -EINTR)
            continue;
        if (rc == -EAGAIN)
            break;                        /* nothing more completed (peek) */
        if (rc < 0)
            return n > 0 ? n : rc;
        struct ac_io_req *q = io_uring_cqe_get_data(cqe);
        int res = cqe->res;               /* bytes, or -errno */
        io_uring_cqe_seen(&r->ring, cqe);
        if (q == NULL)
            continue;                     /* a failed submit's no-op */
        q->res = res;
        out[n++] = q;
    }
    return n;
}

const struct ac_io_engine ac_io_uring = {
    .name = "uring", .start = uring_start, .stop = uring_stop, .ring_new = uring_ring_new,
    .ring_free = uring_ring_free, .submit = uring_submit, .reap = uring_reap,
};
