/* ACTRACE writer/reader and oracleGeneral conversion; see ycsb_trace.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "ycsb_trace.h"

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

void ycsb_trace_encode_header(unsigned char out[YCSB_TRACE_HEADER],
                              const struct ycsb_trace_header *h)
{
    memset(out, 0, YCSB_TRACE_HEADER);
    memcpy(out, YCSB_TRACE_MAGIC, 8);
    put32(out + 8, 1);
    put32(out + 12, YCSB_TRACE_HEADER);
    put64(out + 16, h->seed);
    put64(out + 24, h->recordcount);
    put64(out + 32, h->request_count);
    size_t n = strnlen(h->name, 64);
    memcpy(out + 64, h->name, n);
}

int ycsb_trace_decode_header(const unsigned char in[YCSB_TRACE_HEADER],
                             struct ycsb_trace_header *h, char *err, size_t errlen)
{
    if (memcmp(in, YCSB_TRACE_MAGIC, 8) != 0) {
        snprintf(err, errlen, "not an ACTRACE file (magic is not \"ACTRACE1\")");
        return -1;
    }
    h->version = get32(in + 8);
    h->header_size = get32(in + 12);
    if (h->version != 1) {
        snprintf(err, errlen, "ACTRACE version %u is not supported; accepted: 1", h->version);
        return -1;
    }
    if (h->header_size != YCSB_TRACE_HEADER) {
        snprintf(err, errlen, "ACTRACE header_size %u; accepted: 128", h->header_size);
        return -1;
    }
    h->seed = get64(in + 16);
    h->recordcount = get64(in + 24);
    h->request_count = get64(in + 32);
    memcpy(h->name, in + 64, 64);
    h->name[64] = '\0';
    return 0;
}

void ycsb_trace_encode_record(unsigned char out[YCSB_TRACE_RECORD],
                              const struct ycsb_trace_record *r)
{
    put64(out, r->key_id);
    put32(out + 8, r->value_size);
    out[12] = r->op;
    out[13] = out[14] = out[15] = 0;
}

void ycsb_trace_decode_record(const unsigned char in[YCSB_TRACE_RECORD],
                              struct ycsb_trace_record *r)
{
    r->key_id = get64(in);
    r->value_size = get32(in + 8);
    r->op = in[12];
}

void ycsb_og_encode_record(unsigned char out[YCSB_OG_RECORD], const struct ycsb_og_record *r)
{
    put32(out, r->clock_time);
    put64(out + 4, r->obj_id);
    put32(out + 12, r->obj_size);
    put64(out + 16, (uint64_t)r->next_access_vtime);
}

void ycsb_og_decode_record(const unsigned char in[YCSB_OG_RECORD], struct ycsb_og_record *r)
{
    r->clock_time = get32(in);
    r->obj_id = get64(in + 4);
    r->obj_size = get32(in + 12);
    r->next_access_vtime = (int64_t)get64(in + 16);
}

int ycsb_trace_generate(struct ycsb_workload *w, const char *path,
                        uint64_t counts[YCSB_OP_TYPES], uint64_t *warmup_written,
                        uint64_t *scan_reads, char *err,
                        size_t errlen)
{
    if (w->cfg.runwindows > 1) {
        snprintf(err, errlen, "runwindows=%lld: a trace holds one warm-up and one run; accepted: "
                 "runwindows=1 (window w's requests are the trace of seed + w)", (long long)w->cfg.runwindows);
        return -1;
    }
    if (counts != NULL)
        memset(counts, 0, YCSB_OP_TYPES * sizeof(counts[0]));
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        snprintf(err, errlen, "cannot create '%s': %s", path, strerror(errno));
        return -1;
    }
    struct ycsb_trace_header h;
    memset(&h, 0, sizeof(h));
    h.seed = w->cfg.seed;
    h.recordcount = (uint64_t)w->cfg.recordcount;
    h.request_count = ycsb_workload_phase_ops(w, YCSB_PHASE_WARMUP) +
                      ycsb_workload_phase_ops(w, YCSB_PHASE_RUN);
    snprintf(h.name, sizeof(h.name), "%s", w->cfg.name);
    unsigned char hdr[YCSB_TRACE_HEADER];
    ycsb_trace_encode_header(hdr, &h);
    int ok = fwrite(hdr, 1, sizeof(hdr), f) == sizeof(hdr);

    enum { BUFRECS = 4096 };
    unsigned char *buf = malloc((size_t)BUFRECS * YCSB_TRACE_RECORD);
    size_t nbuf = 0;
    ok = ok && buf != NULL;
    struct ycsb_opgen g;
    ycsb_opgen_init(&g, w);
    uint64_t written = 0;
    if (warmup_written != NULL)
        *warmup_written = 0;
    const int phases[2] = {YCSB_PHASE_WARMUP, YCSB_PHASE_RUN};
    for (int pi = 0; pi < 2 && ok; pi++) {
        uint64_t total = ycsb_workload_phase_ops(w, phases[pi]);
        for (uint64_t i = 0; i < total && ok; i++) {
            if (i % YCSB_CHUNK_OPS == 0)
                ycsb_opgen_chunk(&g, phases[pi], i / YCSB_CHUNK_OPS);
            struct ycsb_op op;
            ycsb_opgen_next(&g, &op);
            if (ycsb_opgen_done(&g, &op) != 0) {
                snprintf(err, errlen, "insert counter window overflow");
                free(buf);
                fclose(f);
                return -1;
            }
            if (counts != NULL)
                counts[op.type]++;
            /* a scan is the reads of its keys (memcached has no range scan) */
            int scan = op.type == YCSB_OP_SCAN;
            uint32_t reqs = scan ? op.scanlen : 1;
            if (scan && scan_reads != NULL)
                *scan_reads += reqs;
            for (uint32_t k = 0; k < reqs && ok; k++) {
                written++;
                if (warmup_written != NULL && phases[pi] == YCSB_PHASE_WARMUP)
                    (*warmup_written)++;
                struct ycsb_trace_record r = {(uint64_t)op.keynum + k, (uint32_t)w->value_size,
                                              (uint8_t)(scan ? YCSB_OP_READ : op.type)};
                ycsb_trace_encode_record(buf + nbuf * YCSB_TRACE_RECORD, &r);
                if (++nbuf == BUFRECS) {
                    ok = fwrite(buf, YCSB_TRACE_RECORD, nbuf, f) == nbuf;
                    nbuf = 0;
                }
            }
        }
    }
    if (ok && nbuf > 0)
        ok = fwrite(buf, YCSB_TRACE_RECORD, nbuf, f) == nbuf;
    free(buf);
    if (ok && written != h.request_count) {     /* scans as their reads: the header says what is there */
        h.request_count = written;
        ycsb_trace_encode_header(hdr, &h);
        ok = fseek(f, 0, SEEK_SET) == 0 && fwrite(hdr, 1, sizeof(hdr), f) == sizeof(hdr);
    }
    if (fclose(f) != 0)
        ok = 0;
    if (!ok) {
        snprintf(err, errlen, "writing '%s' failed: %s", path,
                 errno ? strerror(errno) : "out of memory");
        return -1;
    }
    return 0;
}

/* growable open-addressing map key_id -> last index seen */
struct idmap {
    uint64_t *keys;
    int64_t *vals;   /* -1 = empty slot */
    size_t cap, used;
};

static int idmap_init(struct idmap *m, size_t cap)
{
    m->cap = cap;
    m->used = 0;
    m->keys = malloc(cap * sizeof(uint64_t));
    m->vals = malloc(cap * sizeof(int64_t));
    if (!m->keys || !m->vals) {
        free(m->keys);
        free(m->vals);
        return -1;
    }
    memset(m->vals, 0xff, cap * sizeof(int64_t));
    return 0;
}

static size_t idmap_slot(const struct idmap *m, uint64_t key)
{
    size_t i = (size_t)(ycsb_mix64(key) & (m->cap - 1));
    while (m->vals[i] != -1 && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    return i;
}

static int idmap_grow(struct idmap *m)
{
    struct idmap n;
    if (idmap_init(&n, m->cap * 2) != 0)
        return -1;
    for (size_t i = 0; i < m->cap; i++)
        if (m->vals[i] != -1) {
            size_t s = idmap_slot(&n, m->keys[i]);
            n.keys[s] = m->keys[i];
            n.vals[s] = m->vals[i];
            n.used++;
        }
    free(m->keys);
    free(m->vals);
    *m = n;
    return 0;
}

/* previous value for key (or -1) and store idx */
static int idmap_swap(struct idmap *m, uint64_t key, int64_t idx, int64_t *prev)
{
    if ((m->used + 1) * 2 > m->cap && idmap_grow(m) != 0)
        return -1;
    size_t s = idmap_slot(m, key);
    *prev = m->vals[s];
    if (m->vals[s] == -1)
        m->used++;
    m->keys[s] = key;
    m->vals[s] = idx;
    return 0;
}

int ycsb_trace_to_oracle(const char *actrace, const char *og, char *err, size_t errlen)
{
    FILE *in = fopen(actrace, "rb");
    if (in == NULL) {
        snprintf(err, errlen, "cannot open '%s': %s", actrace, strerror(errno));
        return -1;
    }
    unsigned char hdr[YCSB_TRACE_HEADER];
    struct ycsb_trace_header h;
    char why[200];
    if (fread(hdr, 1, sizeof(hdr), in) != sizeof(hdr)) {
        snprintf(err, errlen, "'%s': shorter than the 128-byte ACTRACE header", actrace);
        fclose(in);
        return -1;
    }
    if (ycsb_trace_decode_header(hdr, &h, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "'%s': %s", actrace, why);
        fclose(in);
        return -1;
    }
    fseek(in, 0, SEEK_END);
    long size = ftell(in);
    fseek(in, YCSB_TRACE_HEADER, SEEK_SET);
    uint64_t expect = YCSB_TRACE_HEADER + h.request_count * YCSB_TRACE_RECORD;
    if (size < 0 || (uint64_t)size != expect) {
        snprintf(err, errlen, "'%s': header says %llu requests (%llu bytes) but the file has %ld "
                 "bytes", actrace, (unsigned long long)h.request_count,
                 (unsigned long long)expect, size);
        fclose(in);
        return -1;
    }
    size_t n = (size_t)h.request_count;
    uint64_t *ids = malloc((n ? n : 1) * sizeof(uint64_t));
    uint32_t *sizes = malloc((n ? n : 1) * sizeof(uint32_t));
    int64_t *next = malloc((n ? n : 1) * sizeof(int64_t));
    struct idmap map = {0};
    int rc = -1;
    if (!ids || !sizes || !next || idmap_init(&map, 1u << 16) != 0) {
        snprintf(err, errlen, "out of memory for %zu requests", n);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char rec[YCSB_TRACE_RECORD];
        struct ycsb_trace_record r;
        if (fread(rec, 1, sizeof(rec), in) != sizeof(rec)) {
            snprintf(err, errlen, "'%s': read error at request %zu", actrace, i);
            goto out;
        }
        ycsb_trace_decode_record(rec, &r);
        if (r.op > 3) {
            snprintf(err, errlen, "'%s': request %zu has op %u; accepted: 0-3", actrace, i, r.op);
            goto out;
        }
        ids[i] = r.key_id;
        sizes[i] = r.value_size;
    }
    /* backward pass: next[i] = the index seen most recently (later) for ids[i] */
    for (size_t i = n; i-- > 0;) {
        if (idmap_swap(&map, ids[i], (int64_t)i, &next[i]) != 0) {
            snprintf(err, errlen, "out of memory for the key map");
            goto out;
        }
    }
    FILE *o = fopen(og, "wb");
    if (o == NULL) {
        snprintf(err, errlen, "cannot create '%s': %s", og, strerror(errno));
        goto out;
    }
    int ok = 1;
    unsigned char rec[YCSB_OG_RECORD];
    for (size_t i = 0; i < n && ok; i++) {
        struct ycsb_og_record r = {(uint32_t)i, ids[i], sizes[i], next[i]};
        ycsb_og_encode_record(rec, &r);
        ok = fwrite(rec, 1, sizeof(rec), o) == sizeof(rec);
    }
    if (fclose(o) != 0)
        ok = 0;
    if (!ok) {
        snprintf(err, errlen, "writing '%s' failed: %s", og, strerror(errno));
        goto out;
    }
    rc = 0;
out:
    fclose(in);
    free(ids);
    free(sizes);
    free(next);
    free(map.keys);
    free(map.vals);
    return rc;
}
