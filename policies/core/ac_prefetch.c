/* Reads of spilled records kept in flight by an in-process driver thread
 * (-o ac_driver_depth): the fetch path's I/O without its wait.
 *
 * A batch of requests starts with ac_prefetch_begin for each read: under the
 * key's lock it learns whether the key is spilled and where (the tier's book-
 * keeping, no I/O), and sends the read of that record out on the prefetcher's
 * ring (spill->read_start) with nothing held. The requests are then served in
 * order, as with depth 1, through the ordinary lookup (item_get ->
 * ac_item_find -> ac_fetch, whose struct ac_lookup carries the prefetcher the
 * thread named with ac_prefetcher_use): before a request is served its read
 * is waited for, and the record is taken from here instead of read
 * (ac_prefetched, from ac_read_record_at) when it is still live at the same
 * place and its space was not taken again meanwhile (spill->read_valid) --
 * otherwise it is read as usual. So the policy sees the same calls in the
 * same order as at depth 1; only the waits for the device overlap. A key
 * asked for twice in a batch is read once. A driver thread keeps two
 * prefetchers: the next batch's reads go out on one while the current batch
 * is served from the other.
 *
 * Counted in `stats anticache`: prefetch_reads (reads sent), prefetch_used
 * (reads that served a fetch), prefetch_unused (reads that did not: the key
 * was in RAM again, the record had moved or its space was reused, the read
 * failed -- the fetch then read again, or needed nothing); once every batch
 * is over, reads = used + unused.
 *
 * A policy's migration thread reads ahead the same way (ac_prefetch_at, from
 * ac_migrate_in): it knows a fingerprint and a place, not the key, so the read
 * is sent without the key's lock and its bytes are used only when they check
 * out under that lock. Its reads are counted apart (migrate_prefetch_reads,
 * _used, _unused): its batch may be open when the counts are read.
 * Uses: ac_state. */
#include "memcached.h"
#include "ac_internal.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum pf_state { PF_FLIGHT, PF_DONE };

struct ac_prefetch {
    uint64_t fp;
    struct ac_loc loc;
    uint64_t token;                  /* the tier's name for what loc pointed into */
    struct ac_io_req req;
    char *buf;                       /* ac_io_span_alloc'd: the record at buf + req.skip */
    size_t cap;
    enum pf_state state;
    bool ok;                         /* done, and buf holds loc->len bytes */
    bool io;                         /* a read was sent (not copied from the open block) */
    bool used;
};

/* reads sent, used, unused: [0] the requests' (driver, parked gets), [1] a
 * policy's migration's (counted apart: its batches may be open whenever the
 * counts are read) */
enum { PF_SENT, PF_USED, PF_UNUSED };
static uint64_t counts[2][3];

struct ac_prefetcher {
    uint64_t *count;                 /* counts[0] or counts[1] */
    struct ac_io_ring *ring;
    struct ac_prefetch *slot;
    unsigned depth, n;
    bool broken;                     /* the ring could not be reaped: no more reads ahead */
};

static struct ac_prefetcher *prefetcher_new(unsigned depth, uint64_t *count, char *err, size_t errlen) {
    struct ac_prefetcher *p = calloc(1, sizeof(*p));
    int e = ENOMEM;
    if (p != NULL && (p->slot = calloc(depth, sizeof(*p->slot))) != NULL &&
            (p->ring = ac_io_ring_new(depth, &e)) != NULL) {
        p->depth = depth;
        p->count = count;
        return p;
    }
    snprintf(err, errlen, "a ring of %u requests for the %s engine: %s", depth, ac_io_name(ac_io_kind()),
             strerror(e));
    if (p != NULL)
        free(p->slot);
    free(p);
    return NULL;
}

struct ac_prefetcher *ac_prefetcher_new(unsigned depth, char *err, size_t errlen) {
    return prefetcher_new(depth, counts[0], err, errlen);
}

struct ac_prefetcher *ac_prefetcher_new_migration(unsigned depth, char *err, size_t errlen) {
    return prefetcher_new(depth, counts[1], err, errlen);
}

#define REAP_MAX 64

/* Takes completions: at least min (at most REAP_MAX). The engine cannot reap
 * (a kernel interface failing): the reads stay where they are, their buffers
 * are never freed, and this prefetcher sends no more (every fetch reads). */
static void reap(struct ac_prefetcher *p, int min) {
    struct ac_io_req *done[REAP_MAX];
    int n = ac_io_reap(p->ring, done, min < REAP_MAX ? min : REAP_MAX, REAP_MAX);
    if (n < 0) {
        fprintf(stderr, "memcached-ac: reads in flight cannot be reaped (%s): the driver thread reads"
                " one at a time from now on\n", strerror(-n));
        p->broken = true;
        for (unsigned i = 0; i < p->n; i++)
            if (p->slot[i].state == PF_FLIGHT) {
                p->slot[i].state = PF_DONE;
                p->slot[i].ok = false;
                p->slot[i].buf = NULL;   /* left to the kernel */
                p->slot[i].cap = 0;
            }
        return;
    }
    for (int i = 0; i < n; i++) {
        struct ac_prefetch *s = done[i]->data;
        s->state = PF_DONE;
        s->ok = ac_io_widened_ok(done[i], s->loc.len);
    }
}

void ac_prefetch_wait(struct ac_prefetcher *p, int slot) {
    if (slot < 0)
        return;
    while (p->slot[slot].state == PF_FLIGHT)
        reap(p, 1);
}

void ac_prefetch_batch(struct ac_prefetcher *p) {
    while (ac_io_inflight(p->ring) > 0 && !p->broken)
        reap(p, (int)ac_io_inflight(p->ring));
    unsigned unused = 0;
    for (unsigned i = 0; i < p->n; i++)
        unused += p->slot[i].io && !p->slot[i].used;
    if (unused > 0)
        __atomic_add_fetch(&p->count[PF_UNUSED], unused, __ATOMIC_RELAXED);
    p->n = 0;
}

void ac_prefetcher_free(struct ac_prefetcher *p) {
    if (p == NULL)
        return;
    ac_prefetch_batch(p);
    for (unsigned i = 0; i < p->depth; i++)
        free(p->slot[i].buf);
    free(p->slot);
    if (!p->broken)
        ac_io_ring_free(p->ring);
    free(p);
}

/* Sends the read of fp's record at loc, named token by the tier, into the next
 * slot: its index, or -1 (nothing sent: the tier refused, or no buffer). */
static int send_read(struct ac_prefetcher *p, uint64_t fp, const struct ac_loc *loc, uint64_t token) {
    struct ac_prefetch *s = &p->slot[p->n];
    if (s->cap < loc->len) {
        char *nb = ac_io_span_alloc(loc->len);
        if (nb == NULL)
            return -1;
        free(s->buf);
        s->buf = nb;
        s->cap = loc->len;
    }
    s->fp = fp;
    s->loc = *loc;
    s->token = token;
    s->used = false;
    memset(&s->req, 0, sizeof(s->req));
    s->req.data = s;
    int rc = ac.spill->read_start(&s->loc, s->buf, p->ring, &s->req, token);
    if (rc < 0)
        return -1;
    s->state = rc == 1 ? PF_DONE : PF_FLIGHT;
    s->ok = rc == 1;
    s->io = rc == 0;
    if (rc == 0)
        __atomic_add_fetch(&p->count[PF_SENT], 1, __ATOMIC_RELAXED);
    return (int)p->n++;
}

static bool can_send(const struct ac_prefetcher *p) {
    return ac_enabled && ac.spill != NULL && ac.spill->read_start != NULL && p->n < p->depth && !p->broken;
}

int ac_prefetch_begin(struct ac_prefetcher *p, const char *key, size_t nkey) {
    if (!can_send(p))
        return -1;
    uint64_t fp = ac_key_fp(key, nkey);
    for (unsigned i = 0; i < p->n; i++)
        if (p->slot[i].fp == fp)
            return (int)i;               /* asked for twice: one read */
    uint32_t hv = hash(key, nkey);
    struct ac_loc locs[AC_LOCS];
    uint64_t token = 0;
    item_lock(hv);
    int n = assoc_find(key, nkey, hv) != NULL ? 0 : ac.spill->peek(fp, locs, AC_LOCS);
    if (n > 0)
        token = ac.spill->read_token(&locs[0]);   /* while the record is known live there */
    item_unlock(hv);
    if (n <= 0)
        return -1;                       /* in RAM, or not stored */
    return send_read(p, fp, &locs[0], token);
}

int ac_prefetch_at(struct ac_prefetcher *p, uint64_t fp, const struct ac_loc *loc) {
    if (!can_send(p))
        return -1;
    for (unsigned i = 0; i < p->n; i++)
        if (p->slot[i].fp == fp && ac_loc_same(&p->slot[i].loc, loc))
            return (int)i;
    /* no key lock: the token may already name a later tenant of the place;
     * whoever takes the bytes checks them under the key's lock (read_valid) */
    return send_read(p, fp, loc, ac.spill->read_token(loc));
}

char *ac_prefetched(struct ac_prefetcher *p, uint64_t fp, const struct ac_loc *loc) {
    if (p == NULL)
        return NULL;
    for (unsigned i = 0; i < p->n; i++) {
        struct ac_prefetch *s = &p->slot[i];
        if (s->fp != fp || !ac_loc_same(&s->loc, loc))
            continue;
        ac_prefetch_wait(p, (int)i);
        if (!s->ok || !ac.spill->read_valid(loc, s->token))
            return NULL;
        if (!s->used && s->io)
            __atomic_add_fetch(&p->count[PF_USED], 1, __ATOMIC_RELAXED);
        s->used = true;
        return s->buf + s->req.skip;
    }
    return NULL;
}

void ac_prefetch_stats(ADD_STAT add_stats, void *c) {
    static const char *const names[2][3] = {
        { "prefetch_reads", "prefetch_used", "prefetch_unused" },
        { "migrate_prefetch_reads", "migrate_prefetch_used", "migrate_prefetch_unused" },
    };
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 3; j++)
            APPEND_STAT(names[k][j], "%llu", (unsigned long long)__atomic_load_n(&counts[k][j], __ATOMIC_RELAXED));
}
