/* I/O engine "threads": a pool of threads doing pread/pwrite for every
 * ring; a ring waits for its completions on a condition variable. The
 * portable way to have several transfers in flight without kernel support
 * (the way memcached's extstore runs its IO threads). See io_engine.h. */
#include "io_engine.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_THREADS 64

struct thr_ring {
    struct ac_io_ring_head h;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct ac_io_fifo done;               /* completed, in order */
    int ndone;
};

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct ac_io_fifo work;               /* submitted, not taken yet (priv: the ring) */
    bool stopping;
    unsigned n;
    pthread_t tid[MAX_THREADS];
} pool = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void *worker(void *arg) {
    (void)arg;
    pthread_mutex_lock(&pool.mu);
    for (;;) {
        while (pool.work.head == NULL && !pool.stopping)
            pthread_cond_wait(&pool.cv, &pool.mu);
        struct ac_io_req *q;
        if (ac_io_fifo_pop(&pool.work, &q, 1) == 0)
            break;                        /* stopping, and nothing left to do */
        pthread_mutex_unlock(&pool.mu);

        q->res = ac_io_transfer(q);
        struct thr_ring *r = q->priv;
        pthread_mutex_lock(&r->mu);
        ac_io_fifo_push(&r->done, q);
        r->ndone++;
        pthread_cond_signal(&r->cv);
        pthread_mutex_unlock(&r->mu);

        pthread_mutex_lock(&pool.mu);
    }
    pthread_mutex_unlock(&pool.mu);
    return NULL;
}

static void thr_stop(void) {
    pthread_mutex_lock(&pool.mu);
    pool.stopping = true;
    pthread_cond_broadcast(&pool.cv);
    unsigned n = pool.n;
    pthread_mutex_unlock(&pool.mu);
    for (unsigned i = 0; i < n; i++)
        pthread_join(pool.tid[i], NULL);
    pthread_mutex_lock(&pool.mu);
    pool.n = 0;
    pool.stopping = false;
    pthread_mutex_unlock(&pool.mu);
}

static int thr_start(unsigned threads, char *why, size_t whylen) {
    if (threads == 0)
        threads = 1;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    pthread_mutex_lock(&pool.mu);
    for (pool.n = 0; pool.n < threads; pool.n++) {
        int rc = pthread_create(&pool.tid[pool.n], NULL, worker, NULL);
        if (rc != 0) {
            pthread_mutex_unlock(&pool.mu);
            snprintf(why, whylen, "pthread_create: %s", strerror(rc));
            thr_stop();
            return -1;
        }
    }
    pthread_mutex_unlock(&pool.mu);
    return 0;
}

static struct ac_io_ring *thr_ring_new(unsigned depth, int *err) {
    (void)depth;
    struct thr_ring *r = calloc(1, sizeof(*r));
    if (r == NULL) {
        *err = ENOMEM;
        return NULL;
    }
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    return (struct ac_io_ring *)r;
}

static void thr_ring_free(struct ac_io_ring *ring) {
    struct thr_ring *r = (struct thr_ring *)ring;
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    free(r);
}

static int thr_submit(struct ac_io_ring *ring, struct ac_io_req *req) {
    req->priv = ring;
    pthread_mutex_lock(&pool.mu);
    if (pool.n == 0 || pool.stopping) { /* not started, or stopping */
        pthread_mutex_unlock(&pool.mu);
        return -ESHUTDOWN;
    }
    ac_io_fifo_push(&pool.work, req);
    pthread_cond_signal(&pool.cv);
    pthread_mutex_unlock(&pool.mu);
    return 0;
}

static int thr_reap(struct ac_io_ring *ring, struct ac_io_req **out, int min, int max) {
    struct thr_ring *r = (struct thr_ring *)ring;
    pthread_mutex_lock(&r->mu);
    while (r->ndone < min)
        pthread_cond_wait(&r->cv, &r->mu);
    int n = ac_io_fifo_pop(&r->done, out, max);
    r->ndone -= n;
    pthread_mutex_unlock(&r->mu);
    return n;
}

const struct ac_io_engine ac_io_threads = {
    .name = "threads", .start = thr_start, .stop = thr_stop, .ring_new = thr_ring_new,
    .ring_free = thr_ring_free, .submit = thr_submit, .reap = thr_reap,
};
