/* Parked gets (-o ac_park_threads): over the network, a text `get`/`gets` of
 * one spilled key does not block its worker thread. The worker parks the
 * connection the way upstream parks one on extstore's IO queue: the key goes
 * to a pool of fetcher threads, the worker serves other connections, and when
 * every parked key of the connection's batch is back the connection returns
 * to its worker (redispatch_conn), which writes the values in request order.
 *
 * How a lookup becomes parked: proto_text.c allows it (ac_park_allow) just
 * before limited_get; ac_item_find (ac_spill.c) takes the permission and, when
 * the key is not in RAM but the tier may hold it (tier->maybe: memory only),
 * returns NULL with this thread's lookup marked parked instead of reading;
 * proto_text.c then calls ac_park, which queues the key on the connection's
 * IO queue with the key's response object. The miss upstream counts for it
 * is turned into a hit when the value comes back.
 *
 * A fetcher does what a worker did before: item_get with its own connection
 * and thread state, i.e. the ordinary fetch path (ac_spill.c) with its locks,
 * checks and errors. So a fetch racing with a delete, an overwrite or another
 * fetch of the same key behaves exactly as two workers would, and concurrent
 * gets of one spilled key read it once (the first fetch links it, the others
 * find it in RAM under the item lock).
 *
 * Not parked (read in the worker as before): gets of several keys (their
 * answer is every value or one error for the command, which a key answered
 * later could not change), touch commands (gat/gats), meta and binary commands, the in-process driver (ac_driver_depth does its own
 * reads in flight), kernel-paged policies, and any get when the connection's
 * queue table has no room (upstream's proxy and extstore queues both in use). */
#include "memcached.h"
#include "ac_internal.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AC_IO_QUEUE 0x4143        /* our IO queue's type: none of upstream's IO_QUEUE_* */

/* One parked key. Its head is io_pending_t's (memcached frees it into the
 * worker's io_cache after calling our finalize). */
struct parked {
    int io_queue_type;
    LIBEVENT_THREAD *thread;
    conn *c;
    mc_resp *resp;
    /* ours */
    struct parked *next;          /* the connection's batch, then the fetchers' queue */
    io_queue_t *q;                /* the connection's queue: its count is the batch's parked keys */
    char *key;                    /* malloc'd copy */
    uint8_t nkey;
    bool cas;                     /* gets: the answer carries the CAS */
    item *it;                     /* the fetcher's answer: the item (a reference), or NULL */
    const char *err;              /* or the error to answer (static text) */
};
_Static_assert(sizeof(struct parked) <= sizeof(io_pending_t), "a parked key must fit in an io_pending_t");
_Static_assert(offsetof(struct parked, resp) == offsetof(io_pending_t, resp), "io_pending_t's head");
_Static_assert(offsetof(struct parked, c) == offsetof(io_pending_t, c), "io_pending_t's head");
_Static_assert(offsetof(struct parked, thread) == offsetof(io_pending_t, thread), "io_pending_t's head");

enum { PARK_NONE, PARK_ALLOWED, PARK_PARKED };
static __thread int tl_state;

static struct {
    pthread_once_t once;
    bool running;                 /* the fetchers started */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct parked *head, *tail;   /* keys waiting for a fetcher */
    uint64_t parked, fetched, missed, failed, sync_fallbacks;   /* counters (atomic) */
    uint64_t waiting, max_waiting;                               /* keys queued or being read */
} pk = { .once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

struct fetcher {
    conn c;
    LIBEVENT_THREAD t;
};

static void *fetch_loop(void *arg) {
    struct fetcher *f = arg;
    for (;;) {
        pthread_mutex_lock(&pk.lock);
        while (pk.head == NULL)
            pthread_cond_wait(&pk.cond, &pk.lock);
        struct parked *p = pk.head;
        pk.head = p->next;
        if (pk.head == NULL)
            pk.tail = NULL;
        pthread_mutex_unlock(&pk.lock);

        p->it = item_get(p->key, p->nkey, &f->c, DO_UPDATE);
        p->err = p->it == NULL ? ac_take_lookup_error() : NULL;
        __atomic_add_fetch(p->it != NULL ? &pk.fetched : p->err != NULL ? &pk.failed : &pk.missed, 1,
                           __ATOMIC_RELAXED);
        __atomic_sub_fetch(&pk.waiting, 1, __ATOMIC_RELAXED);
        /* The queue's count belongs to the side threads once submitted
         * (memcached.h, io_queue_t); the last key back returns the connection. */
        conn *c = p->c;
        if (__atomic_sub_fetch(&p->q->count, 1, __ATOMIC_ACQ_REL) == 0)
            redispatch_conn(c);
    }
    return NULL;
}

static void start_fetchers(void) {
    unsigned n = (unsigned)ac_opts.park_threads, started = 0;
    for (unsigned i = 0; i < n; i++) {
        struct fetcher *f = calloc(1, sizeof(*f));
        if (f == NULL)
            break;
        pthread_mutex_init(&f->t.stats.mutex, NULL);
        f->t.l = logger_create();              /* what a worker has: its logger for LOGGER_LOG */
        f->t.lru_bump_buf = item_lru_bump_buf_create();
        f->c.thread = &f->t;
        f->c.sfd = -1;
        pthread_t tid;
        if (f->t.l == NULL || f->t.lru_bump_buf == NULL || pthread_create(&tid, NULL, fetch_loop, f) != 0) {
            free(f);
            break;
        }
        pthread_detach(tid);
        started++;
    }
    if (started < n)
        fprintf(stderr, "memcached-ac: ac_park_threads=%u: only %u fetcher thread(s) could start%s\n", n, started,
                started == 0 ? "; gets of spilled items are read in the worker threads" : "");
    pk.running = started > 0;
}

static void submit_cb(io_queue_t *q) {
    struct parked *first = q->stack_ctx, *last = first;
    uint64_t n = 1;
    while (last->next != NULL) {
        last = last->next;
        n++;
    }
    uint64_t w = __atomic_add_fetch(&pk.waiting, n, __ATOMIC_RELAXED);
    pthread_mutex_lock(&pk.lock);
    if (w > pk.max_waiting)
        pk.max_waiting = w;
    if (pk.tail != NULL)
        pk.tail->next = first;
    else
        pk.head = first;
    pk.tail = last;
    pthread_cond_broadcast(&pk.cond);
    pthread_mutex_unlock(&pk.lock);
}

/* Writes the answer for one key into its response, in front of what the
 * response holds already (the command's "END" when the key was its last). */
static void answer(struct parked *p) {
    mc_resp *resp = p->resp;
    item *it = p->it;
    struct iovec keep[MC_RESP_IOVCOUNT];
    int nkeep = resp->iovcnt;
    memcpy(keep, resp->iov, sizeof(keep));
    resp->iovcnt = 0;
    resp->tosend = 0;
    if (it != NULL) {
        uint32_t flags = 0;
        FLAGS_CONV(it, flags);
        int n = snprintf(resp->wbuf, sizeof(resp->wbuf), "VALUE %.*s %u %d", (int)it->nkey, ITEM_key(it),
                         (unsigned)flags, it->nbytes - 2);
        if (p->cas)
            n += snprintf(resp->wbuf + n, sizeof(resp->wbuf) - (size_t)n, " %llu",
                          (unsigned long long)ITEM_get_cas(it));
        memcpy(resp->wbuf + n, "\r\n", 2);
        resp_add_iov(resp, resp->wbuf, n + 2);
        if ((it->it_flags & ITEM_CHUNKED) == 0)
            resp_add_iov(resp, ITEM_data(it), it->nbytes);
        else
            resp_add_chunked_iov(resp, it, it->nbytes);
        resp->item = it;                       /* released when the response is done */
        p->it = NULL;
        pthread_mutex_lock(&p->c->thread->stats.mutex);
        p->c->thread->stats.get_misses--;      /* upstream counted the parked lookup as a miss */
        p->c->thread->stats.lru_hits[it->slabs_clsid]++;
        pthread_mutex_unlock(&p->c->thread->stats.mutex);
    } else if (p->err != NULL) {
        /* the command's whole answer is the error, as when the worker reads
         * (a parked get has one key: its response holds the command's END) */
        int n = snprintf(resp->wbuf, sizeof(resp->wbuf), "%s\r\n", p->err);
        resp_add_iov(resp, resp->wbuf, n);
        nkeep = 0;
    }
    for (int i = 0; i < nkeep; i++)
        resp_add_iov(resp, keep[i].iov_base, (int)keep[i].iov_len);
}

static void complete_cb(io_queue_t *q) {
    for (struct parked *p = q->stack_ctx; p != NULL; p = p->next)
        answer(p);
    q->stack_ctx = NULL;
}

static void return_cb(io_pending_t *io) {
    (void)io;                                  /* keys come back through redispatch_conn */
}

static void finalize_cb(io_pending_t *io) {
    struct parked *p = (struct parked *)io;
    if (p->it != NULL)                         /* never answered (the connection went away) */
        item_remove(p->it);
    free(p->key);
    p->key = NULL;
}

/* The connection's queue of parked keys, set up on first use; NULL when its
 * table of IO queues is full. */
static io_queue_t *conn_queue(conn *c) {
    io_queue_t *q = conn_io_queue_get(c, AC_IO_QUEUE);
    if (q != NULL)
        return q;
    if (thread_io_queue_get(c->thread, AC_IO_QUEUE) == NULL) {
        int n = 0;
        while (c->thread->io_queues[n].type != IO_QUEUE_NONE)
            n++;
        if (n + 1 >= IO_QUEUE_COUNT)
            return NULL;
        thread_io_queue_add(c->thread, AC_IO_QUEUE, NULL, submit_cb, complete_cb, return_cb, finalize_cb);
    }
    int n = 0;
    while (c->io_queues[n].type != IO_QUEUE_NONE)
        n++;
    if (n + 1 >= IO_QUEUE_COUNT)
        return NULL;
    q = &c->io_queues[n];
    q->ctx = NULL;
    q->stack_ctx = NULL;
    q->count = 0;
    q->type = AC_IO_QUEUE;
    return q;
}

void ac_park_allow(conn *c, bool single) {
    tl_state = PARK_NONE;
    if (!single || ac_opts.park_threads == 0 || !ac_tier_spills() || c->protocol != ascii_prot || c->sfd < 0)
        return;
    pthread_once(&pk.once, start_fetchers);
    if (pk.running && conn_queue(c) != NULL)
        tl_state = PARK_ALLOWED;
}

bool ac_park_take(void) {
    bool allowed = tl_state == PARK_ALLOWED;
    tl_state = PARK_NONE;
    return allowed;
}

void ac_park_mark(void) {
    tl_state = PARK_PARKED;
}

void ac_park(conn *c, mc_resp *resp, const char *key, size_t nkey, bool cas) {
    bool parked = tl_state == PARK_PARKED;
    tl_state = PARK_NONE;
    if (!parked)
        return;
    io_queue_t *q = conn_queue(c);
    struct parked *p = q != NULL ? do_cache_alloc(c->thread->io_cache) : NULL;
    char *k = p != NULL ? malloc(nkey) : NULL;
    if (k == NULL) {
        /* no memory to park it: read it here, as without parking */
        __atomic_add_fetch(&pk.sync_fallbacks, 1, __ATOMIC_RELAXED);
        struct parked now = { .c = c, .resp = resp, .cas = cas };
        if (p != NULL)
            do_cache_free(c->thread->io_cache, p);
        now.it = item_get(key, nkey, c, DO_UPDATE);
        now.err = now.it == NULL ? ac_take_lookup_error() : NULL;
        answer(&now);
        return;
    }
    memcpy(k, key, nkey);
    memset(p, 0, sizeof(*p));
    p->io_queue_type = AC_IO_QUEUE;
    p->thread = c->thread;
    p->c = c;
    p->resp = resp;
    p->q = q;
    p->key = k;
    p->nkey = (uint8_t)nkey;
    p->cas = cas;
    p->next = q->stack_ctx;
    q->stack_ctx = p;
    q->count++;
    resp->io_pending = (io_pending_t *)p;
    __atomic_add_fetch(&pk.parked, 1, __ATOMIC_RELAXED);
}

void ac_park_stats(ADD_STAT add_stats, void *c) {
    APPEND_STAT("park_threads", "%llu", (unsigned long long)(pk.running ? ac_opts.park_threads : 0));
    APPEND_STAT("parked_gets", "%llu", (unsigned long long)__atomic_load_n(&pk.parked, __ATOMIC_RELAXED));
    APPEND_STAT("parked_fetched", "%llu", (unsigned long long)__atomic_load_n(&pk.fetched, __ATOMIC_RELAXED));
    APPEND_STAT("parked_missed", "%llu", (unsigned long long)__atomic_load_n(&pk.missed, __ATOMIC_RELAXED));
    APPEND_STAT("parked_failed", "%llu", (unsigned long long)__atomic_load_n(&pk.failed, __ATOMIC_RELAXED));
    APPEND_STAT("parked_in_worker", "%llu", (unsigned long long)__atomic_load_n(&pk.sync_fallbacks, __ATOMIC_RELAXED));
    pthread_mutex_lock(&pk.lock);
    APPEND_STAT("parked_max_waiting", "%llu", (unsigned long long)pk.max_waiting);
    pthread_mutex_unlock(&pk.lock);
}
