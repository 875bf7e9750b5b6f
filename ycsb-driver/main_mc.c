/* ycsb-mc: YCSB against a memcached-compatible server over the network.
 * Usage in README.md; results as one JSON object on stdout (or -o FILE). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "cli_common.h"
#include "ycsb_net.h"
#include "ycsb_run.h"

static const char usage[] =
    "usage: ycsb-mc -P workload [-P ...] [-p key=value ...] --server HOST:PORT\n"
    "               [--threads T] [--conns C] [--depth D] [--protocol text|meta]\n"
    "               [--phase load|run|both] [-o RESULTS.json]\n";

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"server", required_argument, NULL, 's'},  {"threads", required_argument, NULL, 't'},
        {"conns", required_argument, NULL, 'c'},   {"depth", required_argument, NULL, 'd'},
        {"protocol", required_argument, NULL, 'r'}, {"phase", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
    struct cli_props props;
    memset(&props, 0, sizeof(props));
    struct ycsb_net net;
    memset(&net, 0, sizeof(net));
    net.conns = 1;
    net.depth = 1;
    const char *server = NULL, *out = "-", *threads_arg = NULL;
    int do_load = 1, do_run = 1;
    long v;
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
        case 's':
            server = optarg;
            break;
        case 't':
            threads_arg = optarg;
            break;
        case 'c':
            if (cli_uint("--conns", optarg, 1, 1024, &v, err, sizeof(err)) != 0)
                goto fail;
            net.conns = (unsigned)v;
            break;
        case 'd':
            if (cli_uint("--depth", optarg, 1, 1024, &v, err, sizeof(err)) != 0)
                goto fail;
            net.depth = (unsigned)v;
            break;
        case 'r':
            if (strcmp(optarg, "text") == 0)
                net.meta = 0;
            else if (strcmp(optarg, "meta") == 0)
                net.meta = 1;
            else {
                snprintf(err, sizeof(err), "--protocol '%s': accepted: text, meta", optarg);
                goto fail;
            }
            break;
        case 'f':
            if (strcmp(optarg, "load") == 0)
                do_load = 1, do_run = 0;
            else if (strcmp(optarg, "run") == 0)
                do_load = 0, do_run = 1;
            else if (strcmp(optarg, "both") == 0)
                do_load = 1, do_run = 1;
            else {
                snprintf(err, sizeof(err), "--phase '%s': accepted: load, run, both", optarg);
                goto fail;
            }
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
        fprintf(stderr, "ycsb-mc: unexpected argument '%s'\n%s", argv[optind], usage);
        return 2;
    }
    if (server == NULL) {
        fprintf(stderr, "ycsb-mc: --server HOST:PORT is required\n%s", usage);
        return 2;
    }
    if (ycsb_net_parse_server(&net, server, err, sizeof(err)) != 0)
        goto fail;
    if (threads_arg != NULL) {
        if (cli_uint("--threads", threads_arg, 1, 1024, &v, err, sizeof(err)) != 0)
            goto fail;
        char kv[32];
        snprintf(kv, sizeof(kv), "threads=%ld", v);
        if (cli_add(&props, 0, strdup(kv), err, sizeof(err)) != 0)
            goto fail;
    }
    struct ycsb_config cfg;
    if (cli_load(&props, &cfg, err, sizeof(err)) != 0)
        goto fail;
    struct ycsb_workload w;
    if (ycsb_workload_init(&w, &cfg, err, sizeof(err)) != 0)
        goto fail;
    struct ycsb_run_opts o = {&ycsb_net_ops, &net, 0, net.conns * net.depth, do_load, do_run};
    struct ycsb_result *res = ycsb_result_new();
    if (res == NULL) {
        ycsb_workload_destroy(&w);
        snprintf(err, sizeof(err), "out of memory");
        goto fail;
    }
    char runerr[1024] = "";
    int rc = ycsb_run(&w, &o, res, runerr, sizeof(runerr));
    struct ycsb_json j;
    ycsb_json_init(&j);
    ycsb_result_json(&w, &o, res, net.meta ? "network-meta" : "network-text", &j);
    int wrc = cli_write(out, ycsb_json_text(&j), err, sizeof(err));
    ycsb_json_free(&j);
    ycsb_result_free(res);
    ycsb_workload_destroy(&w);
    if (rc != 0) {
        fprintf(stderr, "ycsb-mc: %s\n", runerr);
        return 1;
    }
    if (wrc != 0)
        goto fail;
    return 0;
fail:
    fprintf(stderr, "ycsb-mc: %s\n", err);
    return 1;
}
