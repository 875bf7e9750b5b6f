/* The results object of a run (ycsb_result_json); field list in README.md. */
#include <stdio.h>
#include "ycsb_run.h"

static const char *const op_names[YCSB_OP_TYPES] = {"read", "update", "insert",
                                                    "readmodifywrite", "scan", "delete"};

static void latency_json(const struct ycsb_hist *h, struct ycsb_json *j, const char *key)
{
    static const struct {
        const char *name;
        double q;
    } qs[] = {{"p50", 0.50}, {"p95", 0.95}, {"p99", 0.99}, {"p99.9", 0.999}};
    ycsb_json_begin_object(j, key);
    ycsb_json_u64(j, "count", h->count);
    ycsb_json_double(j, "mean", h->count ? (double)h->sum / (double)h->count / 1e3 : 0.0);
    ycsb_json_double(j, "min", (double)h->min / 1e3);
    for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++)
        ycsb_json_double(j, qs[i].name, (double)ycsb_hist_quantile(h, qs[i].q) / 1e3);
    ycsb_json_double(j, "max", (double)h->max / 1e3);
    ycsb_json_end_object(j);
}

/* failed: the run stopped, so no duration, throughput or latency (they would
 * look like a result); the counts say how far it got */
static void phase_json(const struct ycsb_phase_result *p, struct ycsb_json *j, const char *key, int failed)
{
    uint64_t total = 0, errors = 0;
    for (int i = 0; i < YCSB_OP_TYPES; i++) {
        total += p->ops[i];
        errors += p->errors[i];
    }
    ycsb_json_begin_object(j, key);
    ycsb_json_u64(j, "operations", total);
    if (!failed) {
        ycsb_json_double(j, "duration_s", p->duration_s);
        ycsb_json_double(j, "throughput_ops_per_s",
                         p->duration_s > 0 ? (double)total / p->duration_s : 0.0);
    }
    ycsb_json_begin_object(j, "ops");
    for (int i = 0; i < YCSB_OP_TYPES; i++)
        ycsb_json_u64(j, op_names[i], p->ops[i]);
    ycsb_json_end_object(j);
    ycsb_json_begin_object(j, "errors");
    ycsb_json_u64(j, "total", errors);
    for (int i = 0; i < YCSB_OP_TYPES; i++)
        ycsb_json_u64(j, op_names[i], p->errors[i]);
    ycsb_json_end_object(j);
    ycsb_json_begin_object(j, "reads");
    ycsb_json_u64(j, "total", p->read_hit + p->read_disk_hit + p->read_miss);
    ycsb_json_u64(j, "hit", p->read_hit);
    ycsb_json_u64(j, "disk_hit", p->read_disk_hit);
    ycsb_json_u64(j, "miss", p->read_miss);
    ycsb_json_u64(j, "refills", p->refills);
    ycsb_json_u64(j, "refill_errors", p->refill_errors);
    ycsb_json_u64(j, "scan_keys", p->scan_keys);
    ycsb_json_end_object(j);
    if (!failed) {
        ycsb_json_begin_object(j, "latency_us");
        for (int i = 0; i < YCSB_OP_TYPES; i++)
            if (p->hist[i].count > 0)
                latency_json(&p->hist[i], j, op_names[i]);
        ycsb_json_end_object(j);
    }
    if (p->have_resources)
        ycsb_resources_json(&p->resources, j, "resources");
    if (p->server_start != NULL)
        ycsb_json_rawvalue(j, "server_start", p->server_start);
    if (p->server_end != NULL)
        ycsb_json_rawvalue(j, "server_end", p->server_end);
    if (p->resident_samples > 0 && p->resident_time_s > 0) {
        ycsb_json_begin_object(j, "resident");
        ycsb_json_u64(j, "samples", p->resident_samples);
        ycsb_json_double(j, "items_mean", p->resident_items_s / p->resident_time_s);
        ycsb_json_double(j, "bytes_mean", p->resident_bytes_s / p->resident_time_s);
        ycsb_json_end_object(j);
    }
    ycsb_json_end_object(j);
}

void ycsb_phase_json(const struct ycsb_phase_result *p, struct ycsb_json *j, const char *key)
{
    phase_json(p, j, key, 0);
}

void ycsb_result_json(const struct ycsb_workload *w, const struct ycsb_run_opts *o,
                      const struct ycsb_result *res, const char *mode, struct ycsb_json *j)
{
    int failed = res->error[0] != '\0';
    ycsb_json_begin_object(j, NULL);
    ycsb_json_str(j, "status", failed ? "failed" : "ok");
    if (failed)
        ycsb_json_str(j, "error", res->error);
    ycsb_json_str(j, "mode", mode);
    ycsb_json_str(j, "backend", o->ops->name);
    ycsb_json_u64(j, "threads", res->threads);
    ycsb_json_u64(j, "batch", res->batch);
    ycsb_config_json(&w->cfg, j, "config");
    if (w->replay != NULL) {
        const struct ycsb_replay *r = w->replay;
        ycsb_json_begin_object(j, "trace");
        ycsb_json_str(j, "path", r->path);
        ycsb_json_str(j, "format", ycsb_replay_format_name(r->format));
        ycsb_json_u64(j, "requests", r->n);
        ycsb_json_u64(j, "gets", r->gets);
        ycsb_json_u64(j, "sets", r->sets);
        ycsb_json_u64(j, "deletes", r->deletes);
        ycsb_json_u64(j, "objects", r->objects);
        ycsb_json_u64(j, "footprint_bytes", r->footprint_bytes);
        ycsb_json_u64(j, "max_size", r->max_size);
        ycsb_json_u64(j, "largest_size", r->largest);
        ycsb_json_u64(j, "clamped", r->clamped);
        ycsb_json_u64(j, "warmup_requests", r->warmup);
        ycsb_json_u64(j, "split_threads", r->threads);
        ycsb_json_end_object(j);
    }
    if (res->load.ran)
        phase_json(&res->load, j, "load", failed);
    if (res->warmup.ran)
        phase_json(&res->warmup, j, "warmup", failed);
    if (res->run.ran)
        phase_json(&res->run, j, "run", failed);
    ycsb_json_i64(j, "run_windows", res->windows_run);
    for (unsigned k = 1; k < res->windows_run; k++) {
        char key[16];
        snprintf(key, sizeof(key), "run_%u", k);
        phase_json(&res->windows[k - 1], j, key, failed);
    }
    if (o->ops->server_stats != NULL) {
        char err[256] = "";
        ycsb_json_begin_object(j, "server");
        if (o->ops->server_stats(o->backend, j, err, sizeof(err)) != 0)
            ycsb_json_str(j, "error", err);
        ycsb_json_end_object(j);
    }
    ycsb_json_end_object(j);
}
