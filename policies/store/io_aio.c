/* I/O engine "aio": Linux AIO through libaio (io_setup, io_submit,
 * io_getevents), one AIO context per ring. The ICDE 2015 paper's UVMM swaps
 * pages with it (§VI). The kernel runs a transfer on a buffered file inside
 * io_submit; only O_DIRECT files overlap in the device. See io_engine.h. */
#include "io_engine.h"
#include <errno.h>
#include <libaio.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* io_submit answering EAGAIN (no kernel resources for now): tries, a yield between */
#define SUBMIT_TRIES 1000

struct aio_ring {
    struct ac_io_ring_head h;
    io_context_t ctx;
    struct iocb *cbs;
    struct iocb **free_cbs;               /* a stack of the unused ones */
    unsigned nfree;
    struct io_event *ev;
};

static int aio_start(unsigned threads, char *why, size_t whylen) {
    (void)threads;
    io_context_t ctx = 0;
    int rc = io_setup(1, &ctx);           /* libaio returns -errno */
    if (rc < 0) {
        snprintf(why, whylen, "io_setup: %s", strerror(-rc));
        return -1;
    }
    io_destroy(ctx);
    return 0;
}

static void aio_stop(void) {}

static void aio_ring_free(struct ac_io_ring *ring) {
    struct aio_ring *r = (struct aio_ring *)ring;
    if (r->ctx != 0)
        io_destroy(r->ctx);
    free(r->cbs);
    free(r->free_cbs);
    free(r->ev);
    free(r);
}

static struct ac_io_ring *aio_ring_new(unsigned depth, int *err) {
    struct aio_ring *r = calloc(1, sizeof(*r));
    if (r == NULL) {
        *err = ENOMEM;
        return NULL;
    }
    r->cbs = calloc(depth, sizeof(*r->cbs));
    r->free_cbs = calloc(depth, sizeof(*r->free_cbs));
    r->ev = calloc(depth, sizeof(*r->ev));
    if (r->cbs == NULL || r->free_cbs == NULL || r->ev == NULL) {
        *err = ENOMEM;
        aio_ring_free((struct ac_io_ring *)r);
        return NULL;
    }
    int rc = io_setup((int)depth, &r->ctx);
    if (rc < 0) {
        *err = -rc;
        r->ctx = 0;
        aio_ring_free((struct ac_io_ring *)r);
        return NULL;
    }
    for (unsigned i = 0; i < depth; i++)
        r->free_cbs[r->nfree++] = &r->cbs[i];
    return (struct ac_io_ring *)r;
}

static int aio_submit(struct ac_io_ring *ring, struct ac_io_req *req) {
    struct aio_ring *r = (struct aio_ring *)ring;
    if (r->nfree == 0)
        return -EAGAIN;
    struct iocb *cb = r->free_cbs[--r->nfree];
    if (req->write)
        io_prep_pwrite(cb, req->fd, req->buf, req->len, (long long)req->off);
    else
        io_prep_pread(cb, req->fd, req->buf, req->len, (long long)req->off);
    cb->data = req;
    int rc, tries = 0;
    do
        rc = io_submit(r->ctx, 1, &cb);
    while (rc == -EINTR || (rc == -EAGAIN && ++tries < SUBMIT_TRIES && sched_yield() == 0));
    if (rc != 1) {
        r->free_cbs[r->nfree++] = cb;
        return rc < 0 ? rc : -EIO;
    }
    return 0;
}

static int aio_reap(struct ac_io_ring *ring, struct ac_io_req **out, int min, int max) {
    struct aio_ring *r = (struct aio_ring *)ring;
    if (max > (int)r->h.depth)
        max = (int)r->h.depth;
    int n;
    do
        n = io_getevents(r->ctx, min, max, r->ev, NULL);
    while (n == -EINTR);
    if (n < 0)
        return n;
    for (int i = 0; i < n; i++) {
        struct ac_io_req *q = r->ev[i].data;
        q->res = (ssize_t)(long)r->ev[i].res;   /* bytes, or -errno */
        r->free_cbs[r->nfree++] = r->ev[i].obj;
        out[i] = q;
    }
    return n;
}

const struct ac_io_engine ac_io_aio = {
    .name = "aio", .start = aio_start, .stop = aio_stop, .ring_new = aio_ring_new,
    .ring_free = aio_ring_free, .submit = aio_submit, .reap = aio_reap,
};
