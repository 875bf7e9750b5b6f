/* ycsb-trace: a workload's request sequence as an ACTRACE file, without a
 * server; optionally also as libCacheSim oracleGeneral.  Usage in README.md. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "cli_common.h"
#include "ycsb_run.h"
#include "ycsb_trace.h"

static const char usage[] =
    "usage: ycsb-trace -P workload [-P ...] [-p key=value ...] -o OUT.actrace\n"
    "                  [--oracle-general OUT.og]\n"
    "       ycsb-trace --from-actrace IN.actrace --oracle-general OUT.og\n";

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"oracle-general", required_argument, NULL, 'g'},
        {"from-actrace", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    struct cli_props props;
    memset(&props, 0, sizeof(props));
    const char *out = NULL, *og = NULL, *from = NULL;
    char err[1536];
    int c;
    while ((c = getopt_long(argc, argv, "P:p:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'P':
        case 'p':
            if (cli_add(&props, c == 'P', optarg, err, sizeof(err)) != 0)
                goto fail;
            break;
        case 'o':
            out = optarg;
            break;
        case 'g':
            og = optarg;
            break;
        case 'f':
            from = optarg;
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        default:
            fputs(usage, stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "ycsb-trace: unexpected argument '%s'\n%s", argv[optind], usage);
        return 2;
    }
    if (from != NULL) {
        if (og == NULL || out != NULL || props.nfiles || props.nkvs) {
            fprintf(stderr, "ycsb-trace: --from-actrace takes only --oracle-general\n%s", usage);
            return 2;
        }
        if (ycsb_trace_to_oracle(from, og, err, sizeof(err)) != 0)
            goto fail;
        return 0;
    }
    if (out == NULL) {
        fprintf(stderr, "ycsb-trace: -o OUT.actrace is required\n%s", usage);
        return 2;
    }
    struct ycsb_config cfg;
    if (cli_load(&props, &cfg, err, sizeof(err)) != 0)
        goto fail;
    if (cfg.loadcount != cfg.insertcount) {
        /* the ACTRACE header implies a load of all insertcount keys */
        snprintf(err, sizeof(err), "loadcount (%lld) differs from insertcount (%lld): an ACTRACE "
                 "file implies the load of every key; accepted: loadcount unset or equal to "
                 "insertcount", (long long)cfg.loadcount, (long long)cfg.insertcount);
        goto fail;
    }
    struct ycsb_workload w;
    if (ycsb_workload_init(&w, &cfg, err, sizeof(err)) != 0)
        goto fail;
    uint64_t counts[YCSB_OP_TYPES];
    uint64_t t0 = ycsb_now_ns();
    uint64_t warmup_written = 0, scan_reads = 0;
    int rc = ycsb_trace_generate(&w, out, counts, &warmup_written, &scan_reads, err, sizeof(err));
    double secs = (double)(ycsb_now_ns() - t0) / 1e9;
    if (rc == 0 && og != NULL)
        rc = ycsb_trace_to_oracle(out, og, err, sizeof(err));
    if (rc != 0) {
        ycsb_workload_destroy(&w);
        goto fail;
    }
    struct ycsb_json j;
    ycsb_json_init(&j);
    ycsb_json_begin_object(&j, NULL);
    ycsb_json_str(&j, "mode", "trace");
    ycsb_json_str(&j, "output", out);
    if (og != NULL)
        ycsb_json_str(&j, "oracle_general", og);
    /* requests in the trace: a scan is there as the reads of its keys */
    uint64_t total = counts[0] + counts[1] + counts[2] + counts[3] + scan_reads;
    ycsb_json_u64(&j, "requests", total);
    ycsb_json_u64(&j, "warmup_requests", warmup_written);
    ycsb_json_begin_object(&j, "ops");
    ycsb_json_u64(&j, "read", counts[YCSB_OP_READ]);
    ycsb_json_u64(&j, "update", counts[YCSB_OP_UPDATE]);
    ycsb_json_u64(&j, "insert", counts[YCSB_OP_INSERT]);
    ycsb_json_u64(&j, "readmodifywrite", counts[YCSB_OP_RMW]);
    ycsb_json_end_object(&j);
    ycsb_json_u64(&j, "scans", counts[YCSB_OP_SCAN]);
    ycsb_json_u64(&j, "scan_reads", scan_reads);
    ycsb_json_double(&j, "generate_s", secs);
    ycsb_json_double(&j, "requests_per_s", secs > 0 ? (double)total / secs : 0.0);
    ycsb_config_json(&cfg, &j, "config");
    ycsb_json_end_object(&j);
    rc = cli_write("-", ycsb_json_text(&j), err, sizeof(err));
    ycsb_json_free(&j);
    ycsb_workload_destroy(&w);
    if (rc != 0)
        goto fail;
    return 0;
fail:
    fprintf(stderr, "ycsb-trace: %s\n", err);
    return 1;
}
