/* Parked gets (-o ac_park_threads): over the network, a text `get`/`gets`
 * whose keys are spilled does not block its worker thread. The worker parks the
 * connection the way upstream parks one on extstore's IO queue: the key goes
 * to a pool of fetcher threads, the worker serves other connections, and when
 * every parked key of the connection's batch is back the connection returns
 * to its worker (redispatch_conn), which writes the values in request order.
 *
 * How a lookup becomes parked: proto_text.c begins the command (ac_park_begin:
 * may anything of it be parked?) and allows each key's lookup (ac_park_allow)
 * just before limited_get (the permission is the thread record's, ac_thread:
 * memcached's code lies between); ac_item_find (ac_hooks.c) puts it into the
 * lookup's context, and ac_fetch, when the key is not in RAM but the tier may
 * hold it (spill->maybe: memory only), returns NULL with the lookup marked
 * parked instead of reading; proto_text.c then calls ac_park, which queues the
 * key on the connection's IO queue with the key's response object. The miss
 * upstream counts for it is turned into a hit when the value comes back (the
 * hooks patch has no room for a lookup that is neither).
 *
 * A fetcher does what a worker did before: item_get with its own connection
 * and thread state, i.e. the ordinary fetch path (ac_fetch.c) with its locks,
 * checks and errors -- but with the record's bytes read ahead, without the
 * item lock, for up to FETCH_BATCH keys at once (fetch_loop). So a fetch racing with a delete, an overwrite or another
 * fetch of the same key behaves exactly as two workers would, and concurrent
 * gets of one spilled key read it once (the first fetch links it, the others
 * find it in RAM under the item lock).
 *
 * A get of several keys parks each spilled one; its answer is still every
 * value in request order, or one error alone: the keys of one command share a
 * struct parked_cmd that knows the command's responses (one per key, the last
 * holding END), and a key whose read failed turns them into its error
 * (fail_command). The worker's own error for a command drops every response
 * of the connection not sent yet (upstream's conn_release_items); a parked
 * command's error drops its own responses only.
 *
 * Not parked (read in the worker as before): touch commands (gat/gats: the
 * touch is part of the lookup), meta and binary commands, the in-process
 * driver (ac_driver_depth does its own reads in flight), kernel-paged
 * policies, and any get when the connection's queue table has no room
 * (upstream's proxy and extstore queues both in use).
 * Uses: ac_prefetch, ac_options, ac_record, ac_state. */
#include "memcached.h"
#include "ac_internal.h"
#include <pthread.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AC_IO_QUEUE 0x4143        /* our IO queue's type: none of upstream's IO_QUEUE_* */
#define FETCH_BATCH 16            /* parked keys a fetcher reads at once */

/* The parked keys of one get command: first..last are its responses (one per
 * key, in request order along resp->next; the last holds the command's END),
 * err the failed read that is its whole answer. Freed by its last key's
 * finalize. */
struct parked_cmd {
    mc_resp *first, *last;
    const char *err;              /* static text; the first failed key's, until fail_command */
    unsigned keys;                /* its parked keys not finalized yet */
};

/* One parked key. Its head is io_pending_t's (memcached frees it into the
 * worker's io_cache after calling our finalize). */
struct parked {
    int io_queue_type;
    LIBEVENT_THREAD *thread;
    conn *c;
    mc_resp *resp;
    /* ours */
    struct parked *next;          /* the connection's batch (its queue's stack_ctx) */
    struct parked_cmd *cmd;       /* its command */
    struct parked *qnext;         /* the fetcher's queue */
    io_queue_t *q;                /* the connection's queue: its count is the batch's parked keys */
    char *key;                    /* malloc'd copy */
    uint64_t fp;                  /* its fingerprint: which fetcher reads it */
    uint8_t nkey;
    bool cas;                     /* gets: the answer carries the CAS */
    item *it;                     /* the fetcher's answer: the item (a reference), or NULL */
    const char *err;              /* or the error to answer (static text) */
    bool submitted;               /* handed to a fetcher (submit_cb) */
    bool done;                    /* (atomic) the fetcher is through with it */
};
_Static_assert(sizeof(struct parked) <= sizeof(io_pending_t), "a parked key must fit in an io_pending_t");
_Static_assert(offsetof(struct parked, resp) == offsetof(io_pending_t, resp), "io_pending_t's head");
_Static_assert(offsetof(struct parked, c) == offsetof(io_pending_t, c), "io_pending_t's head");
_Static_assert(offsetof(struct parked, thread) == offsetof(io_pending_t, thread), "io_pending_t's head");

/* A fetcher thread, with what a worker has (its connection and thread state
 * for item_get) and its own queue of parked keys. */
struct fetcher {
    conn c;
    LIBEVENT_THREAD t;
    pthread_t tid;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct parked *head, *tail;
    int ready;                    /* set by the thread: 1 running, -1 could not start */
};

#define MAX_FETCHERS 64

static struct {
    pthread_once_t once;
    struct fetcher *f[MAX_FETCHERS];
    unsigned n;                   /* fetchers running (0: park nothing) */
    bool stop;                    /* ac_park_stop: fetchers finish their queues and exit */
    uint64_t parked, fetched, missed, failed, sync_fallbacks;   /* counters (atomic) */
    uint64_t waiting, max_waiting;                               /* keys queued or being read (atomic) */
} pk = { .once = PTHREAD_ONCE_INIT };

/* One parked key: the ordinary lookup, then the key is back. */
static void serve(struct fetcher *f, struct parked *p) {
    struct ac_thread *th = ac_thread();
    p->it = item_get(p->key, p->nkey, &f->c, DO_UPDATE);
    p->err = p->it == NULL ? th->error : NULL;
    th->error = NULL;
    __atomic_add_fetch(p->it != NULL ? &pk.fetched : p->err != NULL ? &pk.failed : &pk.missed, 1,
                       __ATOMIC_RELAXED);
    __atomic_sub_fetch(&pk.waiting, 1, __ATOMIC_RELAXED);
    /* The queue's count belongs to the side threads once submitted
     * (memcached.h, io_queue_t); the last key back returns the connection.
     * p is not touched after that: the worker answers and frees it. */
    conn *c = p->c;
    bool last = __atomic_sub_fetch(&p->q->count, 1, __ATOMIC_ACQ_REL) == 0;
    __atomic_store_n(&p->done, true, __ATOMIC_RELEASE);   /* p may be freed from here on (finalize_cb) */
    if (last)
        redispatch_conn(c);
}

/* Every parked key of one fingerprint goes to the same fetcher (submit_cb), so
 * gets of one key from many connections are read once: in one batch the read
 * is sent once (ac_prefetch_begin), in a later one the first lookup has linked
 * the item. A fetcher takes up to FETCH_BATCH parked keys at once and sends their reads
 * out together (ac_prefetch.c: each key's place is looked up under its lock,
 * the read goes out with nothing held), then serves them in order: each
 * lookup takes the bytes read ahead when they are still the record's. So no
 * parked read waits under an item lock, and the reads of a batch overlap as
 * far as the ac_io engine lets them (sync: one after the other). A tier
 * without reads ahead (spill->read_start NULL) is read in the lookup; both
 * tiers here have them (tuples: its index looked up under the key's lock,
 * the record read with nothing held). */
static void *fetch_loop(void *arg) {
    struct fetcher *f = arg;
    /* what a worker thread sets up for itself: its logger (also this thread's
     * for LOGGER_LOG) and its LRU bump buffer */
    f->t.l = logger_create();
    f->t.lru_bump_buf = f->t.l != NULL ? item_lru_bump_buf_create() : NULL;
    pthread_mutex_lock(&f->lock);
    f->ready = f->t.lru_bump_buf != NULL ? 1 : -1;
    pthread_cond_broadcast(&f->cond);
    pthread_mutex_unlock(&f->lock);
    if (f->ready < 0)
        return NULL;
    char why[300];
    struct ac_prefetcher *pf = ac_prefetcher_new(FETCH_BATCH, why, sizeof(why));
    if (pf == NULL)
        fprintf(stderr, "memcached-ac: a fetcher thread reads each parked key in its lookup: %s\n", why);
    ac_thread()->pf = pf;                    /* its lookups take the bytes read ahead */
    struct parked *batch[FETCH_BATCH];
    int slot[FETCH_BATCH];
    for (;;) {
        pthread_mutex_lock(&f->lock);
        while (f->head == NULL && !pk.stop)
            pthread_cond_wait(&f->cond, &f->lock);
        if (f->head == NULL) {               /* stopping, and nothing left to read */
            pthread_mutex_unlock(&f->lock);
            break;
        }
        int n = 0;
        while (f->head != NULL && n < FETCH_BATCH) {
            batch[n++] = f->head;
            f->head = f->head->qnext;
        }
        if (f->head == NULL)
            f->tail = NULL;
        pthread_mutex_unlock(&f->lock);
        for (int i = 0; i < n; i++)
            slot[i] = pf != NULL ? ac_prefetch_begin(pf, batch[i]->key, batch[i]->nkey) : -1;
        for (int i = 0; i < n; i++) {
            if (slot[i] >= 0)
                ac_prefetch_wait(pf, slot[i]);
            serve(f, batch[i]);
        }
        if (pf != NULL)
            ac_prefetch_batch(pf);
    }
    ac_thread()->pf = NULL;
    ac_prefetcher_free(pf);
    return NULL;
}

static void start_fetchers(void) {
    unsigned n = (unsigned)ac_opts.park_threads, started = 0;
    for (unsigned i = 0; i < n; i++) {
        struct fetcher *f = calloc(1, sizeof(*f));
        if (f == NULL)
            break;
        pthread_mutex_init(&f->t.stats.mutex, NULL);
        pthread_mutex_init(&f->lock, NULL);
        pthread_cond_init(&f->cond, NULL);
        f->c.thread = &f->t;
        f->c.sfd = -1;
        if (pthread_create(&f->tid, NULL, fetch_loop, f) != 0) {
            free(f);
            break;
        }
        pthread_mutex_lock(&f->lock);
        while (f->ready == 0)
            pthread_cond_wait(&f->cond, &f->lock);
        pthread_mutex_unlock(&f->lock);
        if (f->ready < 0) {                    /* no logger or bump buffer: it has exited */
            pthread_join(f->tid, NULL);
            free(f);
            break;
        }
        pk.f[started++] = f;
    }
    if (started < n)
        fprintf(stderr, "memcached-ac: ac_park_threads=%u: only %u fetcher thread(s) could start%s\n", n, started,
                started == 0 ? "; gets of spilled items are read in the worker threads" : "");
    __atomic_store_n(&pk.n, started, __ATOMIC_RELEASE);
}

/* Before the tier closes: every fetcher reads what is queued for it, then
 * exits (a connection closed meanwhile waits for its keys in finalize_cb). */
void ac_park_stop(void) {
    unsigned n = __atomic_load_n(&pk.n, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n; i++) {
        pthread_mutex_lock(&pk.f[i]->lock);
        pk.stop = true;
        pthread_cond_broadcast(&pk.f[i]->cond);
        pthread_mutex_unlock(&pk.f[i]->lock);
    }
    for (unsigned i = 0; i < n; i++)
        pthread_join(pk.f[i]->tid, NULL);
}

static void submit_cb(io_queue_t *q) {
    uint64_t n = 0;
    for (struct parked *p = q->stack_ctx; p != NULL; p = p->next)
        n++;
    uint64_t w = __atomic_add_fetch(&pk.waiting, n, __ATOMIC_RELAXED);
    uint64_t m = __atomic_load_n(&pk.max_waiting, __ATOMIC_RELAXED);
    while (w > m && !__atomic_compare_exchange_n(&pk.max_waiting, &m, w, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
    for (struct parked *p = q->stack_ctx; p != NULL; p = p->next) {
        struct fetcher *f = pk.f[p->fp % pk.n];
        p->qnext = NULL;
        p->submitted = true;
        pthread_mutex_lock(&f->lock);
        if (f->tail != NULL)
            f->tail->qnext = p;
        else
            f->head = p;
        f->tail = p;
        pthread_cond_signal(&f->cond);
        pthread_mutex_unlock(&f->lock);
    }
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
        uint32_t flags = ac_item_client_flags(it);
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
    } else if (p->err != NULL && p->cmd->err == NULL) {
        p->cmd->err = p->err;                  /* the command's answer (fail_command) */
    }
    for (int i = 0; i < nkeep; i++)
        resp_add_iov(resp, keep[i].iov_base, (int)keep[i].iov_len);
}

/* A key of the command could not be read: its whole answer is the error, as
 * when the worker reads. Every response of the command but the last is
 * skipped (its item released when it is done with); the last, which held END,
 * holds the error alone. */
static void fail_command(struct parked_cmd *cmd) {
    for (mc_resp *r = cmd->first; r != NULL; r = r->next) {
        if (r == cmd->last) {
            resp_reset(r);
            int n = snprintf(r->wbuf, sizeof(r->wbuf), "%s\r\n", cmd->err);
            resp_add_iov(r, r->wbuf, n);
            break;
        }
        r->skip = true;
    }
    cmd->err = NULL;                           /* answered */
}

static void complete_cb(io_queue_t *q) {
    for (struct parked *p = q->stack_ctx; p != NULL; p = p->next)
        answer(p);
    for (struct parked *p = q->stack_ctx; p != NULL; p = p->next)
        if (p->cmd->err != NULL)
            fail_command(p->cmd);
    q->stack_ctx = NULL;
}

static void return_cb(io_pending_t *io) {
    (void)io;                                  /* keys come back through redispatch_conn */
}

/* The response is done with (sent, or dropped with its connection or an
 * error of its command). A key never handed to a fetcher leaves the queue's
 * count (the worker's until submitted); one a fetcher has is waited for: the
 * fetcher still writes into it (only when a connection is closed while its
 * keys are read, e.g. at a graceful stop). */
static void finalize_cb(io_pending_t *io) {
    struct parked *p = (struct parked *)io;
    if (!p->submitted)
        p->q->count--;
    else
        while (!__atomic_load_n(&p->done, __ATOMIC_ACQUIRE))
            usleep(1000);
    if (p->it != NULL)                         /* never answered (the connection went away) */
        item_remove(p->it);
    free(p->key);
    p->key = NULL;
    if (--p->cmd->keys == 0)                   /* the worker's thread: its connection's keys */
        free(p->cmd);
    p->cmd = NULL;
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

bool ac_park_begin(conn *c, bool touch) {
    struct ac_thread *th = ac_thread();
    th->park = AC_PARK_NONE;
    th->park_first = c->resp;                  /* the first key's response */
    th->park_cmd = NULL;
    if (touch || ac_opts.park_threads == 0 || ac.spill == NULL || c->protocol != ascii_prot || c->sfd < 0)
        return false;
    pthread_once(&pk.once, start_fetchers);
    return pk.n > 0 && conn_queue(c) != NULL;
}

void ac_park_allow(conn *c) {
    struct ac_thread *th = ac_thread();
    struct parked_cmd *cmd = th->park_cmd;
    if (cmd != NULL)
        cmd->last = c->resp;                   /* this key's response: the command's last so far */
    th->park = AC_PARK_ALLOWED;
}

void ac_park(conn *c, mc_resp *resp, const char *key, size_t nkey, bool cas) {
    struct ac_thread *th = ac_thread();
    bool parked = th->park == AC_PARK_PARKED;
    th->park = AC_PARK_NONE;
    if (!parked)
        return;
    struct parked_cmd *cur = th->park_cmd;         /* the command's, once a key of it is parked */
    io_queue_t *q = conn_queue(c);
    struct parked *p = q != NULL ? do_cache_alloc(c->thread->io_cache) : NULL;
    char *k = p != NULL ? malloc(nkey) : NULL;
    struct parked_cmd *cmd = k == NULL ? NULL : cur != NULL ? cur : calloc(1, sizeof(*cmd));
    if (cmd == NULL) {
        /* no memory to park it: read it here, as without parking */
        __atomic_add_fetch(&pk.sync_fallbacks, 1, __ATOMIC_RELAXED);
        struct parked now = { .c = c, .resp = resp, .cas = cas };
        free(k);
        if (p != NULL)
            do_cache_free(c->thread->io_cache, p);
        now.it = item_get(key, nkey, c, DO_UPDATE);
        if (now.it != NULL)        /* a miss stays one; an error stays set for proto_text's answer */
            answer(&now);
        return;
    }
    if (cur == NULL) {                      /* the command's first parked key */
        cmd->first = th->park_first;
        cmd->last = resp;                      /* ac_park_allow moves it on, key by key */
        th->park_cmd = cmd;
    }
    cmd->keys++;
    memcpy(k, key, nkey);
    memset(p, 0, sizeof(*p));
    p->io_queue_type = AC_IO_QUEUE;
    p->thread = c->thread;
    p->c = c;
    p->resp = resp;
    p->q = q;
    p->key = k;
    p->nkey = (uint8_t)nkey;
    p->fp = ac_key_fp(key, nkey);
    p->cas = cas;
    p->cmd = cmd;
    p->next = q->stack_ctx;
    q->stack_ctx = p;
    q->count++;
    resp->io_pending = (io_pending_t *)p;
    __atomic_add_fetch(&pk.parked, 1, __ATOMIC_RELAXED);
}

void ac_park_stats(ADD_STAT add_stats, void *c) {
    APPEND_STAT("park_threads", "%u", __atomic_load_n(&pk.n, __ATOMIC_ACQUIRE));
    APPEND_STAT("parked_gets", "%llu", (unsigned long long)__atomic_load_n(&pk.parked, __ATOMIC_RELAXED));
    APPEND_STAT("parked_fetched", "%llu", (unsigned long long)__atomic_load_n(&pk.fetched, __ATOMIC_RELAXED));
    APPEND_STAT("parked_missed", "%llu", (unsigned long long)__atomic_load_n(&pk.missed, __ATOMIC_RELAXED));
    APPEND_STAT("parked_failed", "%llu", (unsigned long long)__atomic_load_n(&pk.failed, __ATOMIC_RELAXED));
    APPEND_STAT("parked_in_worker", "%llu", (unsigned long long)__atomic_load_n(&pk.sync_fallbacks, __ATOMIC_RELAXED));
    APPEND_STAT("parked_max_waiting", "%llu", (unsigned long long)__atomic_load_n(&pk.max_waiting, __ATOMIC_RELAXED));
}
