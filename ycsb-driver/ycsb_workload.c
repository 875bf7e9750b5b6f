/* CoreWorkload's choice of operations and keys; see ycsb_workload.h. */
#include <stdio.h>
#include <string.h>
#include "ycsb_workload.h"

int ycsb_workload_init(struct ycsb_workload *w, const struct ycsb_config *cfg, char *err,
                       size_t errlen)
{
    memset(w, 0, sizeof(*w));
    w->cfg = *cfg;
    const struct ycsb_config *c = &w->cfg;
    w->value_size = ycsb_config_value_size(c);

    /* CoreWorkload.createOperationGenerator: only positive proportions, in
     * this order (read, update, insert, scan, read-modify-write) */
    ycsb_discrete_init(&w->opchooser);
    if (c->readproportion > 0)
        ycsb_discrete_add(&w->opchooser, c->readproportion, YCSB_OP_READ);
    if (c->updateproportion > 0)
        ycsb_discrete_add(&w->opchooser, c->updateproportion, YCSB_OP_UPDATE);
    if (c->insertproportion > 0)
        ycsb_discrete_add(&w->opchooser, c->insertproportion, YCSB_OP_INSERT);
    if (c->scanproportion > 0)
        ycsb_discrete_add(&w->opchooser, c->scanproportion, YCSB_OP_SCAN);
    if (c->readmodifywriteproportion > 0)
        ycsb_discrete_add(&w->opchooser, c->readmodifywriteproportion, YCSB_OP_RMW);

    if (c->scanproportion > 0) {
        if (c->scanlength_zipfian)
            ycsb_zipfian_init(&w->scanlen_zipfian, c->minscanlength, c->maxscanlength, 0.99);
        else
            ycsb_uniform_init(&w->scanlen_uniform, c->minscanlength, c->maxscanlength);
    }
    if (ycsb_ackcounter_init(&w->inserts, c->recordcount) != 0) {
        snprintf(err, errlen, "out of memory for the insert counter");
        return -1;
    }
    int64_t lo = c->insertstart, hi = c->insertstart + c->insertcount - 1;
    switch (c->requestdistribution) {
    case YCSB_DIST_UNIFORM:
    case YCSB_DIST_SEQUENTIAL:
        ycsb_uniform_init(&w->uniform, lo, hi);
        break;
    case YCSB_DIST_ZIPFIAN: {
        /* YCSB: expectednewkeys = (int)(operationcount * insertproportion * 2)
         * ("2 is fudge factor"); ScrambledZipfian(insertstart,
         * insertstart + insertcount + expectednewkeys) */
        int64_t expected = (int64_t)((double)c->operationcount * c->insertproportion * 2.0);
        ycsb_scrambled_init(&w->scrambled, lo, lo + c->insertcount + expected,
                            c->zipfianconstant);
        break;
    }
    case YCSB_DIST_LATEST:
        ycsb_latest_init(&w->latest, ycsb_ackcounter_last(&w->inserts), c->zipfianconstant);
        break;
    case YCSB_DIST_TRUEZIPF: {
        /* ranks over the keys the run will have by its end, with zipfian's
         * allowance for inserts; a rank whose key is not inserted yet is
         * redrawn (next_keynum), as for zipfian */
        int64_t expected = (int64_t)((double)c->operationcount * c->insertproportion * 2.0);
        if (ycsb_truezipf_init(&w->truezipf, lo, lo + c->insertcount + expected - 1,
                               c->zipfianconstant) != 0) {
            ycsb_ackcounter_destroy(&w->inserts);
            snprintf(err, errlen, "out of memory for the truezipf table");
            return -1;
        }
        break;
    }
    case YCSB_DIST_HOTSPOT:
        ycsb_hotspot_init(&w->hotspot, lo, hi, c->hotspotdatafraction, c->hotspotopnfraction);
        break;
    default:
        ycsb_ackcounter_destroy(&w->inserts);
        snprintf(err, errlen, "requestdistribution %d is not implemented", c->requestdistribution);
        return -1;
    }
    return 0;
}

void ycsb_workload_destroy(struct ycsb_workload *w)
{
    ycsb_ackcounter_destroy(&w->inserts);
    ycsb_truezipf_destroy(&w->truezipf);
}

uint64_t ycsb_workload_phase_ops(const struct ycsb_workload *w, int phase)
{
    const struct ycsb_replay *r = w->replay;
    if (r != NULL)
        return phase == YCSB_PHASE_LOAD ? 0 : phase == YCSB_PHASE_WARMUP ? r->warmup : r->n - r->warmup;
    switch (phase) {
    case YCSB_PHASE_LOAD:
        return (uint64_t)w->cfg.loadcount;
    case YCSB_PHASE_WARMUP:
        return (uint64_t)w->cfg.warmupoperations;
    default:
        return (uint64_t)w->cfg.operationcount;
    }
}

int ycsb_workload_partitioned(const struct ycsb_workload *w)
{
    return w->replay != NULL && w->replay->threads > 1;
}

uint64_t ycsb_opgen_phase_ops(const struct ycsb_opgen *g, int phase)
{
    const struct ycsb_replay *r = g->w->replay;
    if (!ycsb_workload_partitioned(g->w))
        return ycsb_workload_phase_ops(g->w, phase);
    uint64_t mine = r->start[g->part + 1] - r->start[g->part];
    return phase == YCSB_PHASE_LOAD ? 0 : phase == YCSB_PHASE_WARMUP ? r->warm[g->part] : mine - r->warm[g->part];
}

size_t ycsb_op_vlen(const struct ycsb_workload *w, const struct ycsb_op *op)
{
    return w->replay != NULL ? op->size : w->value_size;
}

/* the next request of a replayed trace */
static void replay_next(struct ycsb_opgen *g, uint64_t index, struct ycsb_op *op)
{
    const struct ycsb_replay *r = g->w->replay;
    uint64_t i;
    if (r->threads > 1)
        i = r->order[r->start[g->part] + (g->phase == YCSB_PHASE_RUN ? r->warm[g->part] : 0) + index];
    else
        i = (g->phase == YCSB_PHASE_RUN ? r->warmup : 0) + index;
    op->type = r->ops[i];
    op->keynum = (int64_t)r->ids[i];
    op->size = r->sizes[i];
    op->version = 1 + i;
}

void ycsb_opgen_init(struct ycsb_opgen *g, struct ycsb_workload *w)
{
    memset(g, 0, sizeof(*g));
    g->w = w;
    g->scrambled = w->scrambled;
    g->latest = w->latest;
    g->scanlen = w->scanlen_zipfian;
}

void ycsb_opgen_chunk(struct ycsb_opgen *g, int phase, uint64_t chunk)
{
    g->phase = phase;
    g->next_index = chunk * YCSB_CHUNK_OPS;
    ycsb_rng_seed(&g->rng, g->w->cfg.seed + (phase == YCSB_PHASE_RUN ? g->window : 0), ((uint64_t)phase << 40) | chunk);
}

/* CoreWorkload.nextKeynum: redraw while the key is beyond the last
 * acknowledged insert */
static int64_t next_keynum(struct ycsb_opgen *g, uint64_t opnum)
{
    struct ycsb_workload *w = g->w;
    int64_t last = ycsb_ackcounter_last(&w->inserts);
    int64_t k;
    switch (w->cfg.requestdistribution) {
    case YCSB_DIST_SEQUENTIAL:
        /* SequentialGenerator: insertstart + counter % interval, the counter
         * being the op number here */
        return w->uniform.lb + (int64_t)(opnum % (uint64_t)w->uniform.interval);
    case YCSB_DIST_LATEST:
        return ycsb_latest_next(&g->latest, &g->rng, last);   /* always <= last */
    case YCSB_DIST_ZIPFIAN:
        do
            k = ycsb_scrambled_next(&g->scrambled, &g->rng);
        while (k > last);
        return k;
    case YCSB_DIST_TRUEZIPF:
        do
            k = ycsb_truezipf_next(&w->truezipf, &g->rng);
        while (k > last);
        return k;
    case YCSB_DIST_HOTSPOT:
        do
            k = ycsb_hotspot_next(&w->hotspot, &g->rng);
        while (k > last);
        return k;
    default:
        do
            k = ycsb_uniform_next(&w->uniform, &g->rng);
        while (k > last);
        return k;
    }
}

void ycsb_opgen_next(struct ycsb_opgen *g, struct ycsb_op *op)
{
    struct ycsb_workload *w = g->w;
    uint64_t index = g->next_index++;
    op->size = 0;
    op->scanlen = 0;
    if (w->replay != NULL) {
        replay_next(g, index, op);
        return;
    }
    if (g->phase == YCSB_PHASE_LOAD) {
        op->type = YCSB_OP_INSERT;
        op->keynum = w->cfg.insertstart + (int64_t)index;
        op->version = 0;
        return;
    }
    uint64_t opnum = index + (g->phase == YCSB_PHASE_RUN ? (uint64_t)w->cfg.warmupoperations : 0);
    op->type = ycsb_discrete_next(&w->opchooser, &g->rng);
    op->version = 1 + opnum;
    if (op->type == YCSB_OP_INSERT)
        op->keynum = ycsb_ackcounter_next(&w->inserts);
    else
        op->keynum = next_keynum(g, opnum);
    if (op->type == YCSB_OP_SCAN) {
        /* CoreWorkload.doTransactionScan: the start key, then the length;
         * the store's scan would return only the keys that exist */
        int64_t len = w->cfg.scanlength_zipfian ? ycsb_zipfian_next(&g->scanlen, &g->rng)
                                                : ycsb_uniform_next(&w->scanlen_uniform, &g->rng);
        int64_t left = ycsb_ackcounter_last(&w->inserts) - op->keynum + 1;
        op->scanlen = (uint32_t)(len < left ? len : left > 0 ? left : 0);
    }
}

int ycsb_opgen_done(struct ycsb_opgen *g, const struct ycsb_op *op)
{
    if (g->phase != YCSB_PHASE_LOAD && op->type == YCSB_OP_INSERT)
        return ycsb_ackcounter_ack(&g->w->inserts, op->keynum);
    return 0;
}
