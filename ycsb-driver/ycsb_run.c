/* Load / warm-up / run loop over a backend; see ycsb_run.h. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ycsb_record.h"
#include "ycsb_run.h"

uint64_t ycsb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

struct ycsb_result *ycsb_result_new(void)
{
    return calloc(1, sizeof(struct ycsb_result));
}

void ycsb_result_free(struct ycsb_result *r)
{
    if (r == NULL)
        return;
    free(r->load.server_start);
    free(r->warmup.server_start);
    free(r->run.server_start);
    free(r->run.server_end);
    for (unsigned k = 0; k < r->windows_alloc; k++) {
        free(r->windows[k].server_start);
        free(r->windows[k].server_end);
    }
    free(r->windows);
    free(r);
}

/* what phase_begin() names each phase (as the results do) */
static const char *const phase_names[3] = {"load", "warmup", "run"};

/* The steps of a run: load, warm-up, then the run's windows (runwindows,
 * window w the run as seed + w draws it); counters are kept per step. */
#define STEPS (2 + YCSB_RUN_WINDOWS_MAX)

static int step_phase(int step)
{
    return step < YCSB_PHASE_RUN ? step : YCSB_PHASE_RUN;
}

static int steps_of(const struct ycsb_workload *w)
{
    return YCSB_PHASE_RUN + (int)w->cfg.runwindows;
}

/* the backend's server counters as one JSON object's text, or NULL */
static char *server_snapshot(const struct ycsb_run_opts *o)
{
    if (o->ops->server_stats == NULL)
        return NULL;
    struct ycsb_json j;
    char err[256] = "";
    ycsb_json_init(&j);
    ycsb_json_begin_object(&j, NULL);
    if (o->ops->server_stats(o->backend, &j, err, sizeof(err)) != 0)
        ycsb_json_str(&j, "error", err);
    ycsb_json_end_object(&j);
    char *text = ycsb_json_ok(&j) ? strdup(ycsb_json_text(&j)) : NULL;
    ycsb_json_free(&j);
    return text;
}

static void phase_result_init(struct ycsb_phase_result *p)
{
    memset(p, 0, sizeof(*p));
    for (int i = 0; i < YCSB_OP_TYPES; i++)
        ycsb_hist_init(&p->hist[i]);
}

static void phase_result_merge(struct ycsb_phase_result *into, const struct ycsb_phase_result *f)
{
    for (int i = 0; i < YCSB_OP_TYPES; i++) {
        into->ops[i] += f->ops[i];
        into->errors[i] += f->errors[i];
        ycsb_hist_merge(&into->hist[i], &f->hist[i]);
    }
    into->read_hit += f->read_hit;
    into->read_disk_hit += f->read_disk_hit;
    into->read_miss += f->read_miss;
    into->refills += f->refills;
    into->refill_errors += f->refill_errors;
    into->scan_keys += f->scan_keys;
}

/* a barrier whose party count can shrink (if a thread fails to start) */
struct gate {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    unsigned parties, waiting;
    uint64_t generation;
};

static void gate_init(struct gate *g, unsigned parties)
{
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->cond, NULL);
    g->parties = parties;
    g->waiting = 0;
    g->generation = 0;
}

static void gate_destroy(struct gate *g)
{
    pthread_cond_destroy(&g->cond);
    pthread_mutex_destroy(&g->lock);
}

static void gate_release_locked(struct gate *g)
{
    if (g->waiting >= g->parties) {
        g->waiting = 0;
        g->generation++;
        pthread_cond_broadcast(&g->cond);
    }
}

static void gate_wait(struct gate *g)
{
    pthread_mutex_lock(&g->lock);
    uint64_t gen = g->generation;
    g->waiting++;
    pthread_cond_broadcast(&g->cond);   /* gate_wait_others sees each arrival */
    gate_release_locked(g);
    while (gen == g->generation)
        pthread_cond_wait(&g->cond, &g->lock);
    pthread_mutex_unlock(&g->lock);
}

static void gate_set_parties(struct gate *g, unsigned parties)
{
    pthread_mutex_lock(&g->lock);
    g->parties = parties;
    gate_release_locked(g);
    pthread_mutex_unlock(&g->lock);
}

/* Waits until every party but the caller waits at the gate (1), or for at
 * most wait_ns (0). */
static int gate_wait_others(struct gate *g, uint64_t wait_ns)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    uint64_t ns = (uint64_t)until.tv_nsec + wait_ns;
    until.tv_sec += (time_t)(ns / 1000000000);
    until.tv_nsec = (long)(ns % 1000000000);
    pthread_mutex_lock(&g->lock);
    int all;
    while (!(all = g->waiting + 1 >= g->parties))
        if (pthread_cond_timedwait(&g->cond, &g->lock, &until) != 0)
            break;
    all = g->waiting + 1 >= g->parties;
    pthread_mutex_unlock(&g->lock);
    return all;
}

struct shared {
    struct ycsb_workload *w;
    const struct ycsb_run_opts *o;
    unsigned threads, batch;
    struct gate barrier;
    uint64_t next_chunk[STEPS]; /* per step, atomic */
    uint64_t issued[STEPS];     /* per step: ops started, atomic (throttling) */
    uint64_t phase_start_ns;    /* written by the main thread between barriers */
    int abort;                  /* atomic */
    pthread_mutex_t err_lock;
    char err[512];
};

struct worker {
    struct shared *sh;
    unsigned index;
    pthread_t tid;
    void *tctx;
    struct ycsb_opgen gen;
    struct ycsb_phase_result *res;     /* one per step (steps_of) */
    /* one batch, or two when batches are pipelined (ops->prepare): batch b's
     * requests are at [b * batch, (b + 1) * batch) of each */
    char *keys;                 /* YCSB_KEY_MAX each */
    char *values;               /* value_size each */
    struct ycsb_req *reqs;
    struct ycsb_op *opsbuf;
    /* lookaside only: refill values (batch * value_size), the follow-up
     * requests of a batch (refills, then read-modify-writes' writes), and
     * which request of the batch each write belongs to */
    char *refill_values;
    struct ycsb_req *reqs2;
    size_t *owner;
};

static void set_error(struct shared *sh, const char *fmt, const char *detail)
{
    pthread_mutex_lock(&sh->err_lock);
    if (sh->err[0] == '\0')
        snprintf(sh->err, sizeof(sh->err), fmt, detail);
    pthread_mutex_unlock(&sh->err_lock);
    __atomic_store_n(&sh->abort, 1, __ATOMIC_RELEASE);
}

static int aborted(struct shared *sh)
{
    return __atomic_load_n(&sh->abort, __ATOMIC_ACQUIRE);
}

static void fatal(struct worker *wk)
{
    const struct ycsb_backend_ops *ops = wk->sh->o->ops;
    const char *why = ops->error ? ops->error(wk->tctx) : NULL;
    set_error(wk->sh, "backend failed: %s", why && *why ? why : "(no reason given)");
}

/* target ops/s over all threads: every op takes a ticket k from the phase's
 * shared counter and does not start before phase start + k / target */
static void throttle(struct worker *wk, int step, size_t n)
{
    double target = wk->sh->w->cfg.target;
    if (target <= 0)
        return;
    uint64_t k = __atomic_fetch_add(&wk->sh->issued[step], n, __ATOMIC_RELAXED);
    uint64_t due = wk->sh->phase_start_ns + (uint64_t)((double)k * 1e9 / target);
    if (ycsb_now_ns() >= due)
        return;
    struct timespec ts = {(time_t)(due / 1000000000ULL), (long)(due % 1000000000ULL)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

static void count_read(struct ycsb_phase_result *r, int hit)
{
    if (hit == YCSB_HIT_DISK)
        r->read_disk_hit++;
    else if (hit)
        r->read_hit++;
    else
        r->read_miss++;
}

static void account(struct ycsb_phase_result *r, int type, int status, int hit, uint64_t ns)
{
    r->ops[type]++;
    if (status != YCSB_OK) {
        r->errors[type]++;
        return;
    }
    if (type == YCSB_OP_READ || type == YCSB_OP_RMW)
        count_read(r, hit);
    ycsb_hist_record(&r->hist[type], ns);
}

/* lookaside: store the load value (version 0) of the key a read missed.
 * YCSB_ERR_FATAL to stop, else YCSB_OK (a failed store is counted). */
static int refill(struct worker *wk, const struct ycsb_op *op, const char *key, size_t klen,
                  struct ycsb_phase_result *r)
{
    struct ycsb_workload *w = wk->sh->w;
    size_t vlen = ycsb_op_vlen(w, op);
    ycsb_value_fill(wk->refill_values, vlen, w->cfg.valuekind, w->cfg.seed, op->keynum, 0);
    int rc = wk->sh->o->ops->insert(wk->tctx, key, klen, wk->refill_values, vlen);
    if (rc == YCSB_ERR_FATAL)
        return rc;
    r->refills++;
    if (rc != YCSB_OK)
        r->refill_errors++;
    return YCSB_OK;
}

/* A scan: memcached has no range scan, so it is the reads of its keys, one
 * after another in load order (keynum, keynum + 1, ...). Each read counts as a
 * read (hit, disk hit or miss, refilled like one) and in scan_keys; the scan
 * is one operation whose latency spans its reads, an error if any read failed.
 * YCSB_ERR_FATAL to stop. */
static int do_scan(struct worker *wk, const struct ycsb_op *op, struct ycsb_phase_result *r)
{
    const struct ycsb_backend_ops *ops = wk->sh->o->ops;
    struct ycsb_workload *w = wk->sh->w;
    char key[YCSB_KEY_MAX];
    int status = YCSB_OK;
    uint64_t t0 = ycsb_now_ns();
    for (uint32_t k = 0; k < op->scanlen; k++) {
        struct ycsb_op one = *op;
        one.keynum = op->keynum + k;
        size_t klen = ycsb_key(key, one.keynum, w->cfg.insertorder_hashed, (int)w->cfg.zeropadding);
        int hit = 0, rc = ops->read(wk->tctx, key, klen, &hit);
        if (rc == YCSB_ERR_FATAL)
            return rc;
        if (rc != YCSB_OK) {
            status = rc;
            continue;
        }
        r->scan_keys++;
        count_read(r, hit);
        if (hit == YCSB_MISS && w->cfg.lookaside && refill(wk, &one, key, klen, r) == YCSB_ERR_FATAL)
            return YCSB_ERR_FATAL;
    }
    account(r, YCSB_OP_SCAN, status, 0, ycsb_now_ns() - t0);
    return YCSB_OK;
}

/* one op through read/update/insert; returns YCSB_ERR_FATAL to stop */
static int do_sync(struct worker *wk, const struct ycsb_op *op, struct ycsb_phase_result *r)
{
    const struct ycsb_backend_ops *ops = wk->sh->o->ops;
    struct ycsb_workload *w = wk->sh->w;
    char key[YCSB_KEY_MAX];
    size_t klen = ycsb_key(key, op->keynum, w->cfg.insertorder_hashed, (int)w->cfg.zeropadding);
    size_t vlen = ycsb_op_vlen(w, op);
    int hit = 0, rc;
    if (op->type == YCSB_OP_SCAN)
        return do_scan(wk, op, r);
    if (op->type != YCSB_OP_READ && op->type != YCSB_OP_DELETE)
        ycsb_value_fill(wk->values, vlen, w->cfg.valuekind, w->cfg.seed, op->keynum, op->version);
    uint64_t t0 = ycsb_now_ns(), t1;
    switch (op->type) {
    case YCSB_OP_READ:
        rc = ops->read(wk->tctx, key, klen, &hit);
        t1 = ycsb_now_ns();   /* a read's latency excludes its refill */
        if (rc == YCSB_OK && hit == YCSB_MISS && w->cfg.lookaside &&
            refill(wk, op, key, klen, r) == YCSB_ERR_FATAL)
            return YCSB_ERR_FATAL;
        break;
    case YCSB_OP_UPDATE:
        rc = ops->update(wk->tctx, key, klen, wk->values, vlen);
        t1 = ycsb_now_ns();
        break;
    case YCSB_OP_INSERT:
        rc = ops->insert(wk->tctx, key, klen, wk->values, vlen);
        t1 = ycsb_now_ns();
        break;
    case YCSB_OP_DELETE:      /* ycsb_run checked that the backend has del */
        rc = ops->del(wk->tctx, key, klen, &hit);
        t1 = ycsb_now_ns();
        break;
    default:
        rc = ops->read(wk->tctx, key, klen, &hit);
        if (rc == YCSB_OK && hit == YCSB_MISS && w->cfg.lookaside &&
            refill(wk, op, key, klen, r) == YCSB_ERR_FATAL)
            return YCSB_ERR_FATAL;
        if (rc == YCSB_OK)
            rc = ops->update(wk->tctx, key, klen, wk->values, vlen);
        t1 = ycsb_now_ns();
        break;
    }
    if (rc == YCSB_ERR_FATAL)
        return rc;
    account(r, op->type, rc, hit, t1 - t0);
    return YCSB_OK;
}

/* lookaside, after a batch went out with read-modify-writes as reads: one
 * batch of refills for the misses, then one of the read-modify-writes'
 * writes (their status and completion time become the request's) */
static int batch_lookaside(struct worker *wk, size_t at, size_t n, struct ycsb_phase_result *r)
{
    const struct ycsb_backend_ops *ops = wk->sh->o->ops;
    struct ycsb_workload *w = wk->sh->w;
    size_t nf = 0;
    for (size_t i = 0; i < n; i++) {
        const struct ycsb_req *q = &wk->reqs[at + i];
        int t = wk->opsbuf[at + i].type;
        if ((t != YCSB_OP_READ && t != YCSB_OP_RMW) || q->status != YCSB_OK || q->hit != YCSB_MISS)
            continue;
        struct ycsb_req *f = &wk->reqs2[nf];
        char *v = wk->refill_values + nf * w->value_size;
        size_t vlen = ycsb_op_vlen(w, &wk->opsbuf[at + i]);
        ycsb_value_fill(v, vlen, w->cfg.valuekind, w->cfg.seed, wk->opsbuf[at + i].keynum, 0);
        *f = (struct ycsb_req){YCSB_OP_INSERT, q->key, q->keylen, v, vlen, YCSB_OK, 0, 0};
        nf++;
    }
    if (nf > 0) {
        if (ops->execute(wk->tctx, wk->reqs2, nf) == YCSB_ERR_FATAL)
            return YCSB_ERR_FATAL;
        r->refills += nf;
        for (size_t k = 0; k < nf; k++)
            r->refill_errors += wk->reqs2[k].status != YCSB_OK;
    }
    size_t nu = 0;
    for (size_t i = 0; i < n; i++) {
        const struct ycsb_req *q = &wk->reqs[at + i];
        if (wk->opsbuf[at + i].type != YCSB_OP_RMW || q->status != YCSB_OK)
            continue;
        wk->reqs2[nu] = (struct ycsb_req){YCSB_OP_UPDATE, q->key, q->keylen, q->value, q->vlen,
                                          YCSB_OK, 0, 0};
        wk->owner[nu++] = i;
    }
    if (nu > 0) {
        if (ops->execute(wk->tctx, wk->reqs2, nu) == YCSB_ERR_FATAL)
            return YCSB_ERR_FATAL;
        for (size_t k = 0; k < nu; k++) {
            wk->reqs[at + wk->owner[k]].status = wk->reqs2[k].status;
            wk->reqs[at + wk->owner[k]].done_ns = wk->reqs2[k].done_ns;
        }
    }
    return YCSB_OK;
}

/* The requests of the batch at `at` from its generated operations. */
static void batch_fill(struct worker *wk, size_t at, size_t n)
{
    struct ycsb_workload *w = wk->sh->w;
    for (size_t j = 0; j < n; j++) {
        size_t i = at + j;
        const struct ycsb_op *op = &wk->opsbuf[i];
        struct ycsb_req *q = &wk->reqs[i];
        char *key = wk->keys + i * YCSB_KEY_MAX;
        /* lookaside: a read-modify-write's write waits for its refill */
        q->op = w->cfg.lookaside && op->type == YCSB_OP_RMW ? YCSB_OP_READ : op->type;
        q->key = key;
        q->keylen = ycsb_key(key, op->keynum, w->cfg.insertorder_hashed, (int)w->cfg.zeropadding);
        q->value = NULL;
        q->vlen = 0;
        if (op->type != YCSB_OP_READ && op->type != YCSB_OP_DELETE) {
            char *v = wk->values + i * w->value_size;
            q->vlen = ycsb_op_vlen(w, op);
            ycsb_value_fill(v, q->vlen, w->cfg.valuekind, w->cfg.seed, op->keynum, op->version);
            q->value = v;
        }
        q->status = YCSB_OK;
        q->hit = 0;
        q->done_ns = 0;
    }
}

/* Executes the filled batch at `at`; a request's latency counts from here. */
static int batch_exec(struct worker *wk, size_t at, size_t n, struct ycsb_phase_result *r)
{
    struct ycsb_workload *w = wk->sh->w;
    uint64_t t0 = ycsb_now_ns();
    int rc = wk->sh->o->ops->execute(wk->tctx, &wk->reqs[at], n);
    if (rc == YCSB_ERR_FATAL)
        return rc;
    if (w->cfg.lookaside && batch_lookaside(wk, at, n, r) == YCSB_ERR_FATAL)
        return YCSB_ERR_FATAL;
    for (size_t i = at; i < at + n; i++) {
        const struct ycsb_req *q = &wk->reqs[i];
        uint64_t done = q->done_ns > t0 ? q->done_ns : t0;
        account(r, wk->opsbuf[i].type, q->status, q->hit, done - t0);
    }
    return YCSB_OK;
}

/* Generates the next n operations into the batch at `at` (throttled); a
 * scan among them is executed there and then, one read after another (so
 * ahead of the batch it was drawn in), and left out: returns how many
 * requests the batch holds. A scan that fails fatally stops the run. */
static size_t batch_gen(struct worker *wk, int step, size_t at, size_t n, struct ycsb_phase_result *r)
{
    throttle(wk, step, n);
    size_t kept = 0;
    for (size_t k = 0; k < n; k++) {
        ycsb_opgen_next(&wk->gen, &wk->opsbuf[at + kept]);
        if (wk->opsbuf[at + kept].type != YCSB_OP_SCAN)
            kept++;
        else if (!aborted(wk->sh) && do_scan(wk, &wk->opsbuf[at + kept], r) == YCSB_ERR_FATAL)
            fatal(wk);
    }
    return kept;
}

/* The batch's operations are done with (their insert keys acknowledged). */
static void batch_done(struct worker *wk, size_t at, size_t n)
{
    for (size_t k = at; k < at + n; k++)
        if (ycsb_opgen_done(&wk->gen, &wk->opsbuf[k]) != 0)
            set_error(wk->sh, "%s", "too many unacknowledged insertion keys (more than "
                                    "2^20 inserts in flight)");
}

/* The chunk's next batch [*i, last) into the buffers at `at`, generated and
 * filled: its size (0 at the chunk's end). */
static size_t batch_next(struct worker *wk, int step, size_t at, uint64_t *i, uint64_t last,
                         struct ycsb_phase_result *r)
{
    while (*i < last) {
        size_t n = last - *i < wk->sh->batch ? (size_t)(last - *i) : wk->sh->batch;
        *i += n;
        size_t kept = batch_gen(wk, step, at, n, r);
        if (kept > 0) {
            batch_fill(wk, at, kept);
            return kept;
        }
    }
    return 0;
}

/* Pipelined batches of one chunk [i, last): while one batch is executed the
 * next one has been generated and handed to ops->prepare, in the other half
 * of the buffers (the chunk's first batch is not prepared). Returns
 * YCSB_ERR_FATAL or YCSB_OK. */
static int run_pipelined(struct worker *wk, int step, uint64_t i, uint64_t last, struct ycsb_phase_result *r)
{
    struct shared *sh = wk->sh;
    size_t cur = 0, n = aborted(sh) ? 0 : batch_next(wk, step, cur, &i, last, r);
    while (n > 0) {
        size_t next = cur == 0 ? sh->batch : 0;
        size_t nn = batch_next(wk, step, next, &i, last, r);
        if (nn > 0)
            sh->o->ops->prepare(wk->tctx, &wk->reqs[next], nn);
        int rc = batch_exec(wk, cur, n, r);
        batch_done(wk, cur, n);
        if (rc == YCSB_ERR_FATAL)
            return rc;
        cur = next;
        n = aborted(sh) ? 0 : nn;
    }
    return YCSB_OK;
}

static void run_phase(struct worker *wk, int step)
{
    struct shared *sh = wk->sh;
    struct ycsb_phase_result *r = &wk->res[step];
    int phase = step_phase(step);
    wk->gen.window = (uint64_t)(step - phase);
    uint64_t total = ycsb_opgen_phase_ops(&wk->gen, phase);
    int batched = sh->batch > 1;
    uint64_t own = 0;   /* a trace split by key: each thread walks its own requests */
    while (!aborted(sh)) {
        uint64_t chunk = ycsb_workload_partitioned(sh->w)
                             ? own++ : __atomic_fetch_add(&sh->next_chunk[step], 1, __ATOMIC_RELAXED);
        uint64_t first = chunk * YCSB_CHUNK_OPS;
        if (first >= total)
            break;
        uint64_t last = first + YCSB_CHUNK_OPS < total ? first + YCSB_CHUNK_OPS : total;
        ycsb_opgen_chunk(&wk->gen, phase, chunk);
        uint64_t i = first;
        if (batched && sh->o->ops->prepare != NULL) {
            if (run_pipelined(wk, step, i, last, r) == YCSB_ERR_FATAL) {
                fatal(wk);
                return;
            }
            continue;
        }
        while (i < last && !aborted(sh)) {
            size_t n = batched ? sh->batch : 1;
            if (n > last - i)
                n = (size_t)(last - i);
            i += n;
            int rc = YCSB_OK;
            if (batched) {
                size_t kept = batch_gen(wk, step, 0, n, r);
                if (kept > 0) {
                    batch_fill(wk, 0, kept);
                    rc = batch_exec(wk, 0, kept, r);
                }
                batch_done(wk, 0, kept);
            } else {
                throttle(wk, step, 1);
                ycsb_opgen_next(&wk->gen, &wk->opsbuf[0]);
                rc = do_sync(wk, &wk->opsbuf[0], r);
                batch_done(wk, 0, 1);
            }
            if (rc == YCSB_ERR_FATAL) {
                fatal(wk);
                return;
            }
        }
    }
}

struct resident_sample {
    int valid;
    uint64_t t_ns;
    double items, bytes;
};

/* One sample of the backend's resident(), integrated from the previous one
 * by the trapezoid rule. */
static void take_resident(const struct ycsb_run_opts *o, struct ycsb_phase_result *res, struct resident_sample *prev)
{
    double items, bytes;
    if (o->ops->resident(o->backend, &items, &bytes) != 0)
        return;
    uint64_t now = ycsb_now_ns();
    if (prev->valid) {
        double dt = (double)(now - prev->t_ns) / 1e9;
        res->resident_time_s += dt;
        res->resident_items_s += 0.5 * (prev->items + items) * dt;
        res->resident_bytes_s += 0.5 * (prev->bytes + bytes) * dt;
    }
    res->resident_samples++;
    *prev = (struct resident_sample){ 1, now, items, bytes };
}

/* While the workers run a phase: the backend's resident() at its start, every
 * max(5 ms, elapsed / 50) (at most 1 s: about 50 samples per decade of run
 * time, so a 0.1 s phase gets ~20 and a minute ~300, and mincore over a
 * paging server's mapping costs little) and when the last worker finished
 * (woken by its arrival at the gate, so the phase's end is not delayed). */
static void sample_resident(struct gate *g, const struct ycsb_run_opts *o, struct ycsb_phase_result *res)
{
    if (o->ops->resident == NULL)
        return;
    struct resident_sample prev = { 0 };
    uint64_t t0 = ycsb_now_ns();
    take_resident(o, res, &prev);
    for (;;) {
        uint64_t wait = (ycsb_now_ns() - t0) / 50;
        wait = wait < 5000000 ? 5000000 : wait > 1000000000 ? 1000000000 : wait;
        int last = gate_wait_others(g, wait);
        take_resident(o, res, &prev);
        if (last)
            return;
    }
}

static void *worker_main(void *arg)
{
    struct worker *wk = arg;
    struct shared *sh = wk->sh;
    const struct ycsb_run_opts *o = sh->o;
    char err[256] = "";
    int ok = o->ops->thread_init(o->backend, wk->index, &wk->tctx, err, sizeof(err)) == 0;
    if (!ok)
        set_error(sh, "backend thread_init failed: %s", err);
    gate_wait(&sh->barrier);              /* ready */
    for (int step = 0; step < steps_of(sh->w); step++) {
        int phase = step_phase(step);
        if (phase == YCSB_PHASE_LOAD ? !o->do_load : !o->do_run)
            continue;
        if (ok && o->ops->thread_phase_begin != NULL)
            o->ops->thread_phase_begin(wk->tctx, phase_names[phase]);
        gate_wait(&sh->barrier);          /* phase start */
        if (ok)
            run_phase(wk, step);
        gate_wait(&sh->barrier);          /* phase end */
    }
    if (ok)
        o->ops->thread_fini(wk->tctx);
    return NULL;
}

int ycsb_run(struct ycsb_workload *w, const struct ycsb_run_opts *o, struct ycsb_result *res,
             char *err, size_t errlen)
{
    struct shared sh;
    memset(&sh, 0, sizeof(sh));
    sh.w = w;
    sh.o = o;
    sh.threads = o->threads ? o->threads : (unsigned)w->cfg.threads;
    sh.batch = (o->batch > 1 && o->ops->execute != NULL) ? o->batch : 1;
    phase_result_init(&res->load);
    phase_result_init(&res->warmup);
    phase_result_init(&res->run);
    int steps = steps_of(w);
    if (steps - 1 > YCSB_PHASE_RUN && res->windows == NULL) {
        res->windows = calloc((size_t)(steps - 1 - YCSB_PHASE_RUN), sizeof(*res->windows));
        if (res->windows == NULL) {
            snprintf(err, errlen, "out of memory for %d run windows", steps - YCSB_PHASE_RUN);
            snprintf(res->error, sizeof(res->error), "%s", err);
            return -1;
        }
        res->windows_alloc = (unsigned)(steps - 1 - YCSB_PHASE_RUN);
    }
    for (unsigned k = 0; k < res->windows_alloc; k++)
        phase_result_init(&res->windows[k]);
    res->threads = sh.threads;
    res->batch = sh.batch;

    res->error[0] = '\0';
    if (w->replay != NULL && w->replay->deletes > 0 && o->ops->del == NULL) {
        snprintf(err, errlen, "the trace has deletes and backend %s cannot delete", o->ops->name);
        snprintf(res->error, sizeof(res->error), "%s", err);
        return -1;
    }
    if (w->replay != NULL && w->cfg.runwindows > 1) {
        snprintf(err, errlen, "runwindows=%lld with a replayed trace: its run is its requests after the "
                 "warm-up, once; accepted: runwindows=1", (long long)w->cfg.runwindows);
        snprintf(res->error, sizeof(res->error), "%s", err);
        return -1;
    }
    if (w->replay != NULL && w->replay->threads != sh.threads) {
        snprintf(err, errlen, "the trace was split for %u threads, the run has %u", w->replay->threads, sh.threads);
        snprintf(res->error, sizeof(res->error), "%s", err);
        return -1;
    }
    struct worker *wks = calloc(sh.threads, sizeof(*wks));
    if (wks == NULL) {
        snprintf(err, errlen, "out of memory for %u driver threads", sh.threads);
        snprintf(res->error, sizeof(res->error), "%s", err);
        return -1;
    }
    pthread_mutex_init(&sh.err_lock, NULL);
    gate_init(&sh.barrier, sh.threads + 1);
    unsigned started = 0;
    int rc = 0;
    for (unsigned t = 0; t < sh.threads; t++) {
        struct worker *wk = &wks[t];
        wk->sh = &sh;
        wk->index = t;
        ycsb_opgen_init(&wk->gen, w);
        wk->gen.part = t;
        wk->res = calloc((size_t)steps, sizeof(*wk->res));
        if (wk->res == NULL) {
            snprintf(err, errlen, "out of memory for driver thread results");
            rc = -1;
            break;
        }
        for (int p = 0; p < steps; p++)
            phase_result_init(&wk->res[p]);
        size_t slots = (size_t)sh.batch * (sh.batch > 1 && o->ops->prepare != NULL ? 2 : 1);
        wk->keys = malloc(slots * YCSB_KEY_MAX);
        wk->values = malloc(slots * (w->value_size ? w->value_size : 1));
        wk->reqs = calloc(slots, sizeof(*wk->reqs));
        wk->opsbuf = calloc(slots, sizeof(*wk->opsbuf));
        int refill_ok = 1;
        if (w->cfg.lookaside) {
            wk->refill_values = malloc((size_t)sh.batch * (w->value_size ? w->value_size : 1));
            wk->reqs2 = calloc(sh.batch, sizeof(*wk->reqs2));
            wk->owner = calloc(sh.batch, sizeof(*wk->owner));
            refill_ok = wk->refill_values && wk->reqs2 && wk->owner;
        }
        if (!wk->keys || !wk->values || !wk->reqs || !wk->opsbuf || !refill_ok) {
            snprintf(err, errlen, "out of memory for driver thread buffers");
            rc = -1;
            break;
        }
    }
    if (rc == 0) {
        for (; started < sh.threads; started++)
            if (pthread_create(&wks[started].tid, NULL, worker_main, &wks[started]) != 0)
                break;
        if (started < sh.threads) {
            /* the started threads see the abort flag and only pass the gates */
            char what[64];
            snprintf(what, sizeof(what), "%u of %u", started + 1, sh.threads);
            set_error(&sh, "cannot start driver thread %s", what);
            gate_set_parties(&sh.barrier, started + 1);
        }
        gate_wait(&sh.barrier);           /* ready */
        struct ycsb_phase_result *out[STEPS] = {&res->load, &res->warmup, &res->run};
        for (unsigned k = 0; k < res->windows_alloc; k++)
            out[YCSB_PHASE_RUN + 1 + k] = &res->windows[k];
        res->windows_run = 0;
        for (int step = 0; step < steps; step++) {
            int phase = step_phase(step);
            if (phase == YCSB_PHASE_LOAD ? !o->do_load : !o->do_run)
                continue;
            struct ycsb_resources r0, r1;
            if (o->ops->phase_begin != NULL)
                o->ops->phase_begin(o->backend, phase_names[phase]);
            out[step]->server_start = server_snapshot(o);   /* before the window opens */
            ycsb_resources_take(&r0, w->cfg.diskstats_device, 0);
            sh.phase_start_ns = ycsb_now_ns();
            gate_wait(&sh.barrier);       /* phase start */
            sample_resident(&sh.barrier, o, out[step]);
            gate_wait(&sh.barrier);       /* phase end */
            out[step]->duration_s = (double)(ycsb_now_ns() - sh.phase_start_ns) / 1e9;
            ycsb_resources_take(&r1, w->cfg.diskstats_device, 1);
            ycsb_resources_delta(&out[step]->resources, &r1, &r0);
            out[step]->have_resources = 1;
            out[step]->ran = 1;
            if (phase == YCSB_PHASE_RUN) {
                res->windows_run++;
                if (steps > YCSB_PHASE_RUN + 1)      /* each window's own end: the next one's start is later */
                    out[step]->server_end = server_snapshot(o);
            }
        }
        for (unsigned t = 0; t < started; t++)
            pthread_join(wks[t].tid, NULL);
        for (unsigned t = 0; t < sh.threads; t++)
            for (int p = 0; p < steps; p++)
                phase_result_merge(out[p], &wks[t].res[p]);
        if (sh.err[0] != '\0') {
            snprintf(err, errlen, "%s", sh.err);
            rc = -1;
        }
    }
    for (unsigned t = 0; t < sh.threads; t++) {
        free(wks[t].keys);
        free(wks[t].values);
        free(wks[t].reqs);
        free(wks[t].opsbuf);
        free(wks[t].refill_values);
        free(wks[t].reqs2);
        free(wks[t].owner);
        free(wks[t].res);
    }
    free(wks);
    gate_destroy(&sh.barrier);
    pthread_mutex_destroy(&sh.err_lock);
    if (rc != 0)
        snprintf(res->error, sizeof(res->error), "%s", err);
    return rc;
}
