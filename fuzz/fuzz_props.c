/* libFuzzer target: the bytes are a YCSB workload (property) file, read by
 * ycsb-driver's parser as ycsb-mc, ycsb-trace and memcached-ac's in-process
 * driver (-o ac_driver=FILE) read it:
 *   ycsb_config_load_file -> ycsb_config_finish -> ycsb_workload_init,
 * then the first operations of each phase with their keys and values, and
 * the configuration as JSON (the results' "config" object). Every line is
 * also given to ycsb_config_set_kv, the -p / ac_driver_set path.
 * Checked for every input:
 *  - no crash, no sanitizer report (ycsb_props.c is built with
 *    -fsanitize=integer here as well);
 *  - every rejection comes with a message;
 *  - the JSON is well-formed (RFC 8259: syntax and UTF-8);
 *  - load keys are insertstart.. in order; a read, update or read-modify-write
 *    only names a key whose insert was acknowledged (ycsb_workload.h).
 * Workloads are built only when they are small (recordcount and the keys a
 * run may insert <= 20000): building a large one is slow by design
 * (zeta sums, the truezipf table), not a bug. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "ycsb_config.h"
#include "ycsb_json.h"
#include "ycsb_record.h"
#include "ycsb_workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t *cur_data;
static size_t cur_size;

static void fail(const char *what, const char *detail) __attribute__((noreturn));
static void fail(const char *what, const char *detail) {
    fprintf(stderr, "fuzz_props: FINDING: %s%s%s\n--- input (%zu bytes) ---\n%.*s\n", what,
            detail ? ": " : "", detail ? detail : "", cur_size, (int)cur_size, (const char *)cur_data);
    abort();
}

/* --- a strict JSON checker (RFC 8259) ----------------------------------- */
struct js { const unsigned char *p, *end; int depth; };

static void ws(struct js *j) {
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static bool lit(struct js *j, const char *s) {
    size_t n = strlen(s);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, s, n) != 0)
        return false;
    j->p += n;
    return true;
}

static bool utf8_char(struct js *j) {
    unsigned c = *j->p, n, min;
    if (c < 0x80) { j->p++; return true; }
    if (c >= 0xc2 && c <= 0xdf) { n = 1; min = 0x80; }
    else if (c >= 0xe0 && c <= 0xef) { n = 2; min = 0x800; }
    else if (c >= 0xf0 && c <= 0xf4) { n = 3; min = 0x10000; }
    else return false;
    if ((size_t)(j->end - j->p) <= n)
        return false;
    unsigned cp = c & (0x3fu >> n);
    for (unsigned i = 1; i <= n; i++) {
        if ((j->p[i] & 0xc0) != 0x80)
            return false;
        cp = cp << 6 | (j->p[i] & 0x3fu);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return false;
    j->p += n + 1;
    return true;
}

static bool string(struct js *j) {
    if (!lit(j, "\""))
        return false;
    while (j->p < j->end && *j->p != '"') {
        if (*j->p < 0x20)
            return false;
        if (*j->p == '\\') {
            j->p++;
            if (j->p >= j->end)
                return false;
            if (*j->p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (j->p + i >= j->end || !strchr("0123456789abcdefABCDEF", j->p[i]) || j->p[i] == 0)
                        return false;
                j->p += 5;
            } else if (strchr("\"\\/bfnrt", *j->p) != NULL && *j->p != 0) {
                j->p++;
            } else
                return false;
        } else if (!utf8_char(j))
            return false;
    }
    return lit(j, "\"");
}

static bool number(struct js *j) {
    const unsigned char *s = j->p;
    lit(j, "-");
    if (lit(j, "0")) {
    } else if (j->p < j->end && *j->p >= '1' && *j->p <= '9') {
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9') j->p++;
    } else
        return false;
    if (lit(j, ".")) {
        if (!(j->p < j->end && *j->p >= '0' && *j->p <= '9')) return false;
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9') j->p++;
    }
    if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
        j->p++;
        if (!lit(j, "+")) lit(j, "-");
        if (!(j->p < j->end && *j->p >= '0' && *j->p <= '9')) return false;
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9') j->p++;
    }
    return j->p > s;
}

static bool value(struct js *j) {
    ws(j);
    if (j->p >= j->end || ++j->depth > 64)
        return false;
    bool ok;
    if (*j->p == '{' || *j->p == '[') {
        char close = *j->p == '{' ? '}' : ']';
        bool obj = *j->p == '{';
        j->p++;
        ws(j);
        ok = true;
        if (j->p < j->end && *j->p == close) {
            j->p++;
        } else {
            for (;;) {
                if (obj) {
                    ws(j);
                    if (!string(j)) { ok = false; break; }
                    ws(j);
                    if (!lit(j, ":")) { ok = false; break; }
                }
                if (!value(j)) { ok = false; break; }
                ws(j);
                if (lit(j, ",")) continue;
                ok = j->p < j->end && *j->p == close;
                j->p++;
                break;
            }
        }
    } else if (*j->p == '"') {
        ok = string(j);
    } else {
        ok = lit(j, "true") || lit(j, "false") || lit(j, "null") || number(j);
    }
    j->depth--;
    return ok;
}

static void check_json(const char *text) {
    struct js j = { (const unsigned char *)text, (const unsigned char *)text + strlen(text), 0 };
    if (!value(&j))
        fail("ycsb_config_json wrote invalid JSON", text);
    ws(&j);
    if (j.p != j.end)
        fail("ycsb_config_json wrote trailing bytes", text);
}

/* --- the workload ---------------------------------------------------------- */
static void run_phase(struct ycsb_workload *w, int phase) {
    struct ycsb_opgen g;
    ycsb_opgen_init(&g, w);
    ycsb_opgen_chunk(&g, phase, 0);
    uint64_t n = ycsb_workload_phase_ops(w, phase);
    if (n > 64)
        n = 64;
    static char val[4096];
    for (uint64_t i = 0; i < n; i++) {
        struct ycsb_op op;
        int64_t last = ycsb_ackcounter_last(&w->inserts);
        ycsb_opgen_next(&g, &op);
        char msg[160];
        if (phase == YCSB_PHASE_LOAD && op.keynum != w->cfg.insertstart + (int64_t)i) {
            snprintf(msg, sizeof(msg), "load op %llu has key %lld", (unsigned long long)i, (long long)op.keynum);
            fail("load keys out of order", msg);
        }
        if (phase != YCSB_PHASE_LOAD && op.type != YCSB_OP_INSERT && (op.keynum < 0 || op.keynum > last)) {
            snprintf(msg, sizeof(msg), "op type %d key %lld, last acknowledged insert %lld", op.type,
                     (long long)op.keynum, (long long)last);
            fail("an operation names a key that was never inserted", msg);
        }
        char key[YCSB_KEY_MAX];
        size_t kl = ycsb_key(key, op.keynum, w->cfg.insertorder_hashed, (int)w->cfg.zeropadding);
        if (kl >= YCSB_KEY_MAX || strlen(key) != kl)
            fail("ycsb_key overran its buffer", key);
        if (i < 4 && w->value_size <= sizeof(val))   /* a few: the fill dominates the time */
            ycsb_value_fill(val, w->value_size, w->cfg.valuekind, w->cfg.seed, op.keynum, op.version);
        if (ycsb_opgen_done(&g, &op) != 0)
            fail("ycsb_opgen_done refused an acknowledgement", NULL);
    }
}

static void build_workload(const struct ycsb_config *c) {
    double expected = (double)c->operationcount * c->insertproportion * 2.0;
    if (c->recordcount > 20000 || c->insertcount > 20000 || expected > 20000.0)
        return;
    struct ycsb_workload w;
    char err[512] = "";
    if (ycsb_workload_init(&w, c, err, sizeof(err)) != 0) {
        if (err[0] == '\0')
            fail("ycsb_workload_init failed without a message", NULL);
        return;
    }
    run_phase(&w, YCSB_PHASE_LOAD);
    run_phase(&w, YCSB_PHASE_WARMUP);
    run_phase(&w, YCSB_PHASE_RUN);
    ycsb_workload_destroy(&w);
}

static int memfd = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    cur_data = data;
    cur_size = size;
    if (memfd < 0 && (memfd = memfd_create("workload", 0)) < 0)
        abort();
    if (ftruncate(memfd, 0) != 0 || pwrite(memfd, data, size, 0) != (ssize_t)size)
        abort();
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);

    struct ycsb_config c;
    char err[2048] = "";
    ycsb_config_defaults(&c);
    int rc = ycsb_config_load_file(&c, path, err, sizeof(err));
    if (rc == 0)
        rc = ycsb_config_finish(&c, err, sizeof(err));
    if (rc != 0 && err[0] == '\0')
        fail("a rejected workload file got no message", NULL);
    if (rc == 0) {
        struct ycsb_json j;
        ycsb_json_init(&j);
        ycsb_config_json(&c, &j, NULL);
        if (!ycsb_json_ok(&j))
            fail("ycsb_config_json ran out of memory", NULL);
        check_json(ycsb_json_text(&j));
        ycsb_json_free(&j);
        build_workload(&c);
    }

    /* every line as a -p key=value override */
    char *copy = malloc(size + 1);
    if (copy == NULL)
        return 0;
    memcpy(copy, data, size);
    copy[size] = '\0';
    ycsb_config_defaults(&c);
    for (char *line = copy, *next; line != NULL; line = next) {
        next = strchr(line, '\n');
        if (next != NULL)
            *next++ = '\0';
        err[0] = '\0';
        if (ycsb_config_set_kv(&c, line, err, sizeof(err)) != 0 && err[0] == '\0')
            fail("a rejected -p override got no message", line);
    }
    free(copy);
    return 0;
}
