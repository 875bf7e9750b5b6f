/* The in-process driver of memcached-ac (-o ac_driver=WORKLOAD_FILE).
 *
 * The paper's set-up (Zhang et al., ICDE 2015, §IV-A): YCSB runs inside the
 * server, so no network stack sits between the workload and the store. Driver
 * threads call memcached's item API exactly as a worker thread serving a text
 * `get` / `set` does -- item_get (hash, item lock, do_item_get: the anti-caching
 * lookup and fetch hooks, do_item_bump: the policy's on_access), item_alloc
 * (do_item_alloc_pull: the spill hook) and store_item (do_store_item, link and
 * unlink hooks) -- so every policy sees the same calls as with network clients.
 *
 * Each driver thread owns a connection-less `conn` with its own
 * LIBEVENT_THREAD (stats mutex, logger, LRU bump buffer: what a worker thread
 * sets up in worker_libevent), which is all the item API touches.
 * The run loop, generators and results JSON are ycsb-driver's (ycsb_run.h);
 * this file is only the backend and the start-up. The server's listeners are
 * off in this mode (ac_init); the driver writes its JSON and exits the process.
 */
#include "memcached.h"
#include "ac_hooks.h"
#include "ac_chunk.h"
#include "ycsb_config.h"
#include "ycsb_record.h"
#include "ycsb_run.h"
#include "ycsb_workload.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
/* callgrind's client requests (no-ops natively): acbench fig2 runs valgrind
 * with --instr-atstart=no; the warm-up (or, without one, the measured run)
 * switches instrumentation on and each driver thread zeroes what it was
 * counted before the measured run, so the load runs at valgrind's
 * uninstrumented speed and the run's simulated caches start warm */
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_START_INSTRUMENTATION do { } while (0)
#define CALLGRIND_ZERO_STATS do { } while (0)
#endif

struct inproc_thread {
    conn c;
    LIBEVENT_THREAD t;
    char *buf;                /* value + "\r\n" */
    size_t bufsize;
    /* -o ac_driver_depth > 1: reads kept in flight, on two prefetchers: the
     * next batch's reads go out on one (ip_prepare) while the current batch
     * is served from the other (ip_execute) */
    struct ac_prefetcher *pf[2];
    int *slot[2];             /* each request's prefetch slot in its batch, or -1 */
    const struct ycsb_req *held[2];   /* the batch whose reads pf[k] holds, or NULL */
};

struct inproc {
    uint64_t op_errors;       /* atomic: out of memory, unreadable spilled item */
    char first_error[256];    /* the first such error, for the results */
    pthread_mutex_t lock;
};

static void note_error(struct inproc *ip, const char *fmt, const char *arg) {
    __atomic_add_fetch(&ip->op_errors, 1, __ATOMIC_RELAXED);
    pthread_mutex_lock(&ip->lock);
    if (ip->first_error[0] == '\0')
        snprintf(ip->first_error, sizeof(ip->first_error), fmt, arg);
    pthread_mutex_unlock(&ip->lock);
}

static struct inproc inproc_state = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int ip_thread_init(void *backend, unsigned index, void **tctx, char *err, size_t errlen) {
    (void)backend;
    struct inproc_thread *th = calloc(1, sizeof(*th));
    if (th == NULL) {
        snprintf(err, errlen, "in-process driver thread %u: out of memory", index);
        return -1;
    }
    pthread_mutex_init(&th->t.stats.mutex, NULL);
    /* what memcached's worker_libevent sets up for a worker thread */
    th->t.l = logger_create();          /* also this thread's logger for LOGGER_LOG */
    th->t.lru_bump_buf = item_lru_bump_buf_create();   /* segmented LRU (ac_policy=none) */
    if (th->t.l == NULL || th->t.lru_bump_buf == NULL) {
        free(th);
        snprintf(err, errlen, "in-process driver thread %u: cannot create its logger / LRU bump buffer", index);
        return -1;
    }
    th->t.storage = NULL;
    th->c.thread = &th->t;
    th->c.sfd = -1;
    if (ac_opts.driver_depth > 1 && ac_enabled) {
        char why[300] = "out of memory";
        bool ok = true;
        for (int k = 0; k < 2 && ok; k++) {
            th->slot[k] = calloc(ac_opts.driver_depth, sizeof(*th->slot[k]));
            th->pf[k] = th->slot[k] != NULL ? ac_prefetcher_new((unsigned)ac_opts.driver_depth, why, sizeof(why))
                                            : NULL;
            ok = th->pf[k] != NULL;
        }
        if (!ok) {
            snprintf(err, errlen, "in-process driver thread %u: ac_driver_depth=%llu: %s", index,
                     (unsigned long long)ac_opts.driver_depth, why);
            for (int k = 0; k < 2; k++) {
                ac_prefetcher_free(th->pf[k]);
                free(th->slot[k]);
            }
            free(th);
            return -1;
        }
    }
    *tctx = th;
    return 0;
}

static void ip_thread_fini(void *tctx) {
    struct inproc_thread *th = tctx;
    if (th->pf[0] != NULL)
        ac_prefetcher_use(NULL);      /* this thread's lookups no longer look in them */
    for (int k = 0; k < 2; k++) {
        ac_prefetcher_free(th->pf[k]);
        free(th->slot[k]);
    }
    free(th->buf);
    free(th);   /* logger and bump buffer stay linked to memcached's threads until exit */
}

static int reserve(struct inproc_thread *th, size_t n) {
    if (th->bufsize >= n)
        return 0;
    char *b = realloc(th->buf, n);
    if (b == NULL)
        return -1;
    th->buf = b;
    th->bufsize = n;
    return 0;
}

/* A read copies the value out, as a network get copies it into the response:
 * the bytes are touched (page faults of kernel-paged approaches included). */
static void copy_value(struct inproc_thread *th, item *it) {
    size_t n = (size_t)it->nbytes;
    if (reserve(th, n) != 0)
        return;
    if ((it->it_flags & ITEM_CHUNKED) == 0) {
        memcpy(th->buf, ITEM_data(it), n);
        return;
    }
    char *dst = th->buf;
    for (char *ch = ac_chunk_first(it); ch != NULL; ch = ac_chunk_next(ch)) {
        int used = ac_chunk_used(ch);      /* ac_chunk.h: the first chunk is unaligned */
        memcpy(dst, ac_chunk_data(ch), (size_t)used);
        dst += used;
    }
}

static int ip_read(void *tctx, const char *key, size_t keylen, int *hit) {
    struct inproc_thread *th = tctx;
    uint64_t disk_before = ac_enabled ? ac_thread_disk_hits() : 0;
    /* kernel paging (ospaging): a disk hit is a major fault of this thread
     * between here and the end of the value copy */
    bool paged = ac_kernel_paged();
    if (paged)
        ac_fault_window_begin();
    item *it = item_get(key, keylen, &th->c, DO_UPDATE);
    if (it == NULL) {
        if (paged)
            ac_fault_window_end();
        const char *e = ac_enabled ? ac_take_lookup_error() : NULL;
        if (e != NULL) {
            note_error(&inproc_state, "read: %s", e);
            return YCSB_ERR_OP;
        }
        *hit = YCSB_MISS;
        return YCSB_OK;
    }
    copy_value(th, it);
    if (paged)
        *hit = ac_fault_window_end() == 1 ? YCSB_HIT_DISK : YCSB_HIT;
    else
        *hit = ac_enabled && ac_thread_disk_hits() != disk_before ? YCSB_HIT_DISK : YCSB_HIT;
    item_remove(it);
    return YCSB_OK;
}

static int store_one(struct inproc_thread *th, const char *key, size_t keylen, const char *value, size_t vlen) {
    if (vlen + 2 > (size_t)settings.item_size_max) {
        note_error(&inproc_state, "store: value larger than the item size limit (-I) %s", "");
        return YCSB_ERR_OP;
    }
    if (reserve(th, vlen + 2) != 0) {
        note_error(&inproc_state, "store: %s", "out of memory for the value buffer");
        return YCSB_ERR_OP;
    }
    memcpy(th->buf, value, vlen);
    memcpy(th->buf + vlen, "\r\n", 2);
    item *it = item_alloc((char *)key, keylen, 0, 0, (int)(vlen + 2));
    if (it == NULL) {
        note_error(&inproc_state, "store: %s", "out of memory (SERVER_ERROR out of memory storing object)");
        return YCSB_ERR_OP;
    }
    if (ac_item_fill(it, th->buf, vlen + 2) != 0) {
        item_remove(it);
        note_error(&inproc_state, "store: %s", "out of memory for a chunk of a large value");
        return YCSB_ERR_OP;
    }
    enum store_item_type r = store_item(it, NREAD_SET, &th->c);
    item_remove(it);
    if (r != STORED) {
        const char *e = ac_enabled ? ac_take_lookup_error() : NULL;
        note_error(&inproc_state, "store: %s", e != NULL ? e : "not stored");
        return YCSB_ERR_OP;
    }
    return YCSB_OK;
}

/* kernel paging: the faults a store takes (allocating its item, relinking the
 * hash chain and LRU neighbours, unlinking the old item) are counted as a
 * write's (stats anticache write_major_faults) */
static int ip_store(void *tctx, const char *key, size_t keylen, const char *value, size_t vlen) {
    bool paged = ac_kernel_paged();
    if (paged)
        ac_write_window_begin();
    int rc = store_one(tctx, key, keylen, value, vlen);
    if (paged)
        ac_write_window_end();
    return rc;
}

/* A replayed trace's delete: what memcached's text `delete` does
 * (process_delete_command) */
static int ip_delete(void *tctx, const char *key, size_t keylen, int *found) {
    struct inproc_thread *th = tctx;
    uint32_t hv;
    item *it = item_get_locked(key, keylen, &th->c, DONT_UPDATE, &hv);
    *found = it != NULL;
    if (it != NULL) {
        do_item_unlink(it, hv);
        do_item_remove(it);
    }
    item_unlock(hv);
    return YCSB_OK;
}

/* A batch of requests (-o ac_driver_depth): the reads of the spilled records
 * the batch's reads and read-modify-writes ask for go out first, then the
 * requests are served in order as one at a time would serve them, each after
 * its own read completed (core/ac_prefetch.c). The driver hands the next
 * batch of a chunk to ip_prepare before executing the current one, so its
 * reads are in flight while the current batch is served: the device is not
 * left idle between batches. */
static void send_reads(struct inproc_thread *th, int k, const struct ycsb_req *reqs, size_t n) {
    for (size_t i = 0; i < n; i++) {
        bool reads = reqs[i].op == YCSB_OP_READ || reqs[i].op == YCSB_OP_RMW;
        th->slot[k][i] = reads ? ac_prefetch_begin(th->pf[k], reqs[i].key, reqs[i].keylen) : -1;
    }
    th->held[k] = reqs;
}

static void ip_prepare(void *tctx, struct ycsb_req *reqs, size_t n) {
    struct inproc_thread *th = tctx;
    int k = th->held[0] == NULL ? 0 : th->held[1] == NULL ? 1 : -1;
    if (k >= 0)
        send_reads(th, k, reqs, n);      /* else ip_execute sends them */
}

static int ip_execute(void *tctx, struct ycsb_req *reqs, size_t n) {
    struct inproc_thread *th = tctx;
    int k = th->held[0] == reqs ? 0 : th->held[1] == reqs ? 1 : -1;
    if (k < 0) {                         /* not prepared: its reads go out now */
        k = th->held[0] == NULL ? 0 : 1;
        send_reads(th, k, reqs, n);
    }
    ac_prefetcher_use(th->pf[k]);
    for (size_t i = 0; i < n; i++) {
        struct ycsb_req *q = &reqs[i];
        ac_prefetch_wait(th->pf[k], th->slot[k][i]);
        int rc = YCSB_OK;
        if (q->op == YCSB_OP_DELETE)
            rc = ip_delete(th, q->key, q->keylen, &q->hit);
        else if (q->op == YCSB_OP_READ || q->op == YCSB_OP_RMW)
            rc = ip_read(th, q->key, q->keylen, &q->hit);
        if (rc == YCSB_OK && q->op != YCSB_OP_READ && q->op != YCSB_OP_DELETE)
            rc = ip_store(th, q->key, q->keylen, q->value, q->vlen);
        q->status = rc == YCSB_OK ? YCSB_OK : YCSB_ERR_OP;
        q->done_ns = ycsb_now_ns();
    }
    ac_prefetch_batch(th->pf[k]);
    th->held[k] = NULL;
    return YCSB_OK;
}

/* `stats anticache` as a JSON object: numbers where the value is one */
struct stats_sink {
    struct ycsb_json *j;
};

static void add_stat_json(const char *key, const uint16_t klen, const char *val, const uint32_t vlen,
                          const void *cookie) {
    const struct stats_sink *s = cookie;
    if (klen == 0)
        return;   /* the terminating END */
    char k[128], v[1200];
    snprintf(k, sizeof(k), "%.*s", (int)klen, key);
    snprintf(v, sizeof(v), "%.*s", (int)vlen, val);
    char *end;
    errno = 0;
    (void)strtod(v, &end);
    if (v[0] != '\0' && *end == '\0' && errno == 0 && strspn(v, "0123456789.-") == strlen(v))
        ycsb_json_rawvalue(s->j, k, v);
    else
        ycsb_json_str(s->j, k, v);
}

/* Items in RAM (memcached's curr_items: under anti-caching the resident ones)
 * and, for a paging tier, the resident bytes of its slab mapping. */
static int ip_resident(void *backend, double *items, double *bytes) {
    (void)backend;
    STATS_LOCK();
    uint64_t n = stats_state.curr_items;
    STATS_UNLOCK();
    *items = (double)n;
    *bytes = ac_kernel_paged() ? (double)ac_slab_resident_bytes() : 0.0;
    return 0;
}

static int ip_server_stats(void *backend, struct ycsb_json *out, char *err, size_t errlen) {
    (void)backend;
    (void)err;
    (void)errlen;
    struct stats_sink sink = { out };
    ycsb_json_begin_object(out, "anticache");
    ac_stats(add_stat_json, (void *)&sink);
    ycsb_json_end_object(out);
    ycsb_json_u64(out, "driver_op_errors", __atomic_load_n(&inproc_state.op_errors, __ATOMIC_RELAXED));
    pthread_mutex_lock(&inproc_state.lock);
    if (inproc_state.first_error[0] != '\0')
        ycsb_json_str(out, "driver_first_error", inproc_state.first_error);
    pthread_mutex_unlock(&inproc_state.lock);
    ycsb_json_u64(out, "item_memory_bytes", (uint64_t)settings.maxbytes);
    return 0;
}

/* ac_driver_gate=PATH: the phase's name is written to PATH.phase (a new file
 * renamed over it) and the phase starts once PATH.go names it, so that who
 * started the server can change the cell between phases (the harness limits
 * the disk for the measured run: harness/README.md "Regimes"). 0, or -1 after
 * printing why (the run then stops: a phase that was to run changed must not
 * run unchanged). */
#define GATE_WAIT_S 600
static int gate(const char *phase) {
    const char *base = ac_opts.driver_gate;
    char path[sizeof(ac_opts.driver_gate) + 16], tmp[sizeof(path)];
    snprintf(path, sizeof(path), "%s.phase", base);
    snprintf(tmp, sizeof(tmp), "%s.phase.tmp", base);
    FILE *f = fopen(tmp, "w");
    if (f == NULL || fprintf(f, "%s\n", phase) < 0 || fclose(f) != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, "memcached-ac: ac_driver_gate: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    snprintf(path, sizeof(path), "%s.go", base);
    struct timespec nap = { 0, 1000000 };
    for (long waited = 0; waited < GATE_WAIT_S * 1000L; waited++) {
        char got[64] = "";
        f = fopen(path, "r");
        if (f != NULL) {
            if (fgets(got, sizeof(got), f) == NULL)
                got[0] = '\0';
            fclose(f);
            got[strcspn(got, "\n")] = '\0';
            if (strcmp(got, phase) == 0)
                return 0;
        }
        nanosleep(&nap, NULL);
    }
    fprintf(stderr, "memcached-ac: ac_driver_gate: %s did not name phase %s within %d s\n", path, phase, GATE_WAIT_S);
    return -1;
}

/* Before each phase (the driver's threads at its gate): the policy may
 * prepare for it (logging with ac_log_offline classifies the warm-up's
 * history before the run); with ac_driver_gate, the caller is asked; the
 * warm-up and the measured run steer callgrind (above). */
static void ip_phase_begin(void *backend, const char *phase) {
    (void)backend;
    ac_phase_begin(phase);
    if (ac_opts.driver_gate[0] != '\0' && gate(phase) != 0)
        exit(EXIT_FAILURE);
    if (strcmp(phase, "load") != 0)
        CALLGRIND_START_INSTRUMENTATION;   /* nothing when it is on already */
}

/* callgrind zeroes the counts of the thread that asks (above) */
static void ip_thread_phase_begin(void *tctx, const char *phase) {
    (void)tctx;
    if (strcmp(phase, "run") == 0)
        CALLGRIND_ZERO_STATS;
}

static struct ycsb_backend_ops inproc_ops = {
    .name = "memcached-ac-inprocess",
    .thread_init = ip_thread_init,
    .thread_fini = ip_thread_fini,
    .read = ip_read,
    .update = ip_store,
    .insert = ip_store,
    .del = ip_delete,
    .server_stats = ip_server_stats,
    .resident = ip_resident,
    .phase_begin = ip_phase_begin,
    .thread_phase_begin = ip_thread_phase_begin,
};

struct driver_job {
    struct ycsb_workload w;
    struct ycsb_replay replay;   /* -o ac_driver_trace */
};

static int write_result(const char *text) {
    const char *path = ac_opts.driver_out;
    FILE *f = path[0] != '\0' ? fopen(path, "w") : stdout;
    if (f == NULL) {
        fprintf(stderr, "memcached-ac: ac_driver_out %s: %s\n", path, strerror(errno));
        return -1;
    }
    int bad = fputs(text, f) < 0 || fputc('\n', f) < 0;
    bad |= (f != stdout ? fclose(f) : fflush(f)) != 0;
    if (bad) {
        fprintf(stderr, "memcached-ac: writing the driver's result to %s failed: %s\n",
                path[0] ? path : "stdout", strerror(errno));
        return -1;
    }
    return 0;
}

static void *driver_main(void *arg) {
    struct driver_job *job = arg;
    struct ycsb_run_opts o = { &inproc_ops, &inproc_state, 0, 1, job->w.replay == NULL, 1 };
    if (ac_opts.driver_depth > 1 && ac_enabled) {
        /* requests in batches of ac_driver_depth, reads overlapped */
        inproc_ops.execute = ip_execute;
        inproc_ops.prepare = ip_prepare;
        o.batch = (unsigned)ac_opts.driver_depth;
    }
    struct ycsb_result *res = ycsb_result_new();
    if (res == NULL) {
        fprintf(stderr, "memcached-ac: in-process driver: out of memory\n");
        exit(EXIT_FAILURE);
    }
    char err[512] = "";
    int rc = ycsb_run(&job->w, &o, res, err, sizeof(err));
    struct ycsb_json j;
    ycsb_json_init(&j);
    ycsb_result_json(&job->w, &o, res, "in-process", &j);
    int wrc = ycsb_json_ok(&j) ? write_result(ycsb_json_text(&j)) : -1;
    if (!ycsb_json_ok(&j))
        fprintf(stderr, "memcached-ac: in-process driver: out of memory writing the result\n");
    if (rc != 0)
        fprintf(stderr, "memcached-ac: in-process driver: %s\n", err);
    ycsb_json_free(&j);
    ycsb_result_free(res);
    /* the spill files and directory are removed by ac_init's atexit handler */
    exit(rc == 0 && wrc == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
    return NULL;
}

/* The hash table does not grow while the driver runs. memcached grows it in
 * its assoc maintenance thread, which swaps the table while pause_threads
 * holds memcached's own threads still; the driver's threads are not among
 * them, and a read racing the swap found nothing (1 miss in about 10 runs of
 * 2M reads over 200k records in RAM, `-m 4096`, none with -o hashpower=18).
 * So the thread is stopped before the driver starts, and the table is made
 * large enough for the workload's items at once (one bucket per item,
 * memcached grows at 1.5), unless -o hashpower gave its size. The table is
 * replaced while nothing has been stored yet and no request can arrive (the
 * event loop has not started); the first table is not freed (assoc.c keeps it
 * to itself): untouched calloc memory, none of it resident. With the thread
 * gone a graceful stop (SIGUSR1) would join it again: it is ignored. */
static void fixed_hash_table(const struct ycsb_workload *w) {
    const struct ycsb_config *c = &w->cfg;
    double inserts = c->insertproportion * (double)(c->operationcount + c->warmupoperations);
    double items = w->replay != NULL ? (double)w->replay->objects : (double)c->recordcount + inserts;
    unsigned need = 16;
    while (need < 32 && (double)((uint64_t)1 << need) < items)
        need++;
    stop_assoc_maintenance_thread();
    signal(SIGUSR1, SIG_IGN);
    if (settings.hashpower_init == 0 && need > stats_state.hash_power_level)
        assoc_init((int)need);
}

/* The largest value a replayed request may have: the item (header, CAS, key
 * of at most YCSB_KEY_MAX bytes, value and its "\r\n") fits -I. */
static uint32_t trace_max_value(void) {
    long room = (long)settings.item_size_max - (long)sizeof(item) - 8 - YCSB_KEY_MAX - 2;
    return room > 0 ? (uint32_t)room : 0;
}

/* -o ac_driver_trace: the trace read and split, the configuration made to
 * fit it (no load, keys "user<id>", look-aside: a missed get is refilled
 * with the request's size, as cache studies replay a trace), the workload
 * bound to it. 0, or -1 with err. */
static int setup_trace(struct driver_job *job, struct ycsb_config *cfg, char *err, size_t errlen) {
    if (ac_opts.driver_depth > 1) {
        /* the run loop refills a batch's missed reads after the whole batch: a key asked for
         * twice in one batch would miss twice, and its refill could follow its delete */
        snprintf(err, errlen, "ac_driver_depth=%llu: a trace is replayed one request at a time, in order; "
                 "accepted: ac_driver_depth=1", (unsigned long long)ac_opts.driver_depth);
        return -1;
    }
    int format = ycsb_replay_format_parse(ac_opts.driver_trace_format);
    if (ycsb_replay_load(&job->replay, ac_opts.driver_trace, format, trace_max_value(), err, errlen) != 0)
        return -1;
    if (ycsb_replay_split(&job->replay, (uint64_t)cfg->warmupoperations, (unsigned)cfg->threads, err, errlen) != 0)
        return -1;
    cfg->operationcount = (int64_t)(job->replay.n - job->replay.warmup);
    cfg->loadcount = 0;
    cfg->insertorder_hashed = 0;
    cfg->lookaside = 1;
    if (ycsb_workload_init(&job->w, cfg, err, errlen) != 0)
        return -1;
    job->w.replay = &job->replay;
    job->w.value_size = job->replay.largest;
    return 0;
}

void ac_main_loop_starting(void) {
    if (!ac_in_process())
        return;
    if (ext_storage != NULL) {
        fprintf(stderr, "memcached-ac: ac_driver cannot be combined with extstore (-o ext_path):"
                " extstore reads complete asynchronously on worker threads\n");
        exit(EXIT_FAILURE);
    }
    static struct driver_job job;
    struct ycsb_config cfg;
    char err[512];
    ycsb_config_defaults(&cfg);
    bool trace = ac_opts.driver_trace[0] != '\0';
    int bad = ac_opts.driver[0] != '\0' && ycsb_config_load_file(&cfg, ac_opts.driver, err, sizeof(err)) != 0;
    for (int i = 0; !bad && i < ac_opts.n_driver_set; i++)
        bad = ycsb_config_set_kv(&cfg, ac_opts.driver_set[i], err, sizeof(err)) != 0;
    if (!bad)
        bad = ycsb_config_finish(&cfg, err, sizeof(err)) != 0;
    if (!bad)
        bad = trace ? setup_trace(&job, &cfg, err, sizeof(err)) != 0
                    : ycsb_workload_init(&job.w, &cfg, err, sizeof(err)) != 0;
    if (bad) {
        fprintf(stderr, "memcached-ac: %s %s: %s\n", trace ? "ac_driver_trace" : "ac_driver",
                trace ? ac_opts.driver_trace : ac_opts.driver, err);
        exit(EXIT_FAILURE);
    }
    if (job.w.value_size + 2 > (size_t)settings.item_size_max) {
        fprintf(stderr, "memcached-ac: ac_driver: values of %zu bytes exceed the item size limit"
                " (-I %d); raise -I or lower fieldcount x fieldlength\n", job.w.value_size,
                settings.item_size_max);
        exit(EXIT_FAILURE);
    }
    fixed_hash_table(&job.w);
    pthread_t tid;
    if (pthread_create(&tid, NULL, driver_main, &job) != 0) {
        fprintf(stderr, "memcached-ac: cannot start the in-process driver thread\n");
        exit(EXIT_FAILURE);
    }
    pthread_detach(tid);
}
