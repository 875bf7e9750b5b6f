/* Reading a trace to replay; see ycsb_replay.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "ycsb_backend.h"
#include "ycsb_replay.h"
#include "ycsb_rng.h"
#include "ycsb_trace.h"

#define CSV_ACCEPTED "time,key,size[,op] with time and size unsigned integers, key without a comma, " \
                     "op get|gets|set|add|replace|cas|append|prepend|delete"

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

int ycsb_replay_format_of(const char *path)
{
    if (ends_with(path, ".csv"))
        return YCSB_REPLAY_CSV;
    if (ends_with(path, ".og") || ends_with(path, ".oracleGeneral") || ends_with(path, ".bin"))
        return YCSB_REPLAY_ORACLE;
    return YCSB_REPLAY_AUTO;
}

int ycsb_replay_format_parse(const char *name)
{
    if (strcasecmp(name, "oracleGeneral") == 0)
        return YCSB_REPLAY_ORACLE;
    if (strcasecmp(name, "csv") == 0)
        return YCSB_REPLAY_CSV;
    if (strcasecmp(name, "auto") == 0)
        return YCSB_REPLAY_AUTO;
    return -1;
}

const char *ycsb_replay_format_name(int format)
{
    return format == YCSB_REPLAY_CSV ? "csv" : format == YCSB_REPLAY_ORACLE ? "oracleGeneral" : "auto";
}

static int grow(struct ycsb_replay *r, uint64_t *cap)
{
    uint64_t c = *cap ? *cap * 2 : 4096;
    uint64_t *ids = realloc(r->ids, c * sizeof(*ids));
    if (ids != NULL)
        r->ids = ids;
    uint32_t *sizes = realloc(r->sizes, c * sizeof(*sizes));
    if (sizes != NULL)
        r->sizes = sizes;
    uint8_t *ops = realloc(r->ops, c);
    if (ops != NULL)
        r->ops = ops;
    if (ids == NULL || sizes == NULL || ops == NULL)
        return -1;
    *cap = c;
    return 0;
}

static int append(struct ycsb_replay *r, uint64_t *cap, uint64_t id, uint64_t size, int op)
{
    if (r->n == *cap && grow(r, cap) != 0)
        return -1;
    if (size > r->max_size) {
        size = r->max_size;
        r->clamped++;
    }
    r->ids[r->n] = id;
    r->sizes[r->n] = (uint32_t)size;
    r->ops[r->n] = (uint8_t)op;
    r->n++;
    return 0;
}

static int load_oracle(struct ycsb_replay *r, FILE *f, uint64_t *cap, char *err, size_t errlen)
{
    unsigned char rec[YCSB_OG_RECORD];
    size_t got;
    while ((got = fread(rec, 1, sizeof(rec), f)) == sizeof(rec)) {
        struct ycsb_og_record o;
        ycsb_og_decode_record(rec, &o);
        if (append(r, cap, o.obj_id, o.obj_size, YCSB_OP_READ) != 0) {
            snprintf(err, errlen, "%s: out of memory after %llu requests", r->path, (unsigned long long)r->n);
            return -1;
        }
    }
    if (ferror(f)) {
        snprintf(err, errlen, "%s: read error: %s", r->path, strerror(errno));
        return -1;
    }
    if (got != 0) {
        snprintf(err, errlen, "%s: not an oracleGeneral trace: %llu bytes is not a multiple of the "
                 "24-byte record (time u32, id u64, size u32, next-access i64)", r->path,
                 (unsigned long long)(r->n * YCSB_OG_RECORD + got));
        return -1;
    }
    return 0;
}

/* an unsigned decimal integer filling [s, e): 0, or -1 */
static int parse_u64(const char *s, const char *e, uint64_t *v)
{
    if (s == e || e - s > 20)
        return -1;
    uint64_t x = 0;
    for (const char *p = s; p < e; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        unsigned d = (unsigned)(*p - '0');
        if (x > (UINT64_MAX - d) / 10)
            return -1;
        x = x * 10 + d;
    }
    *v = x;
    return 0;
}

static int parse_op(const char *s, size_t n)
{
    static const struct {
        const char *name;
        int op;
    } ops[] = {{"get", YCSB_OP_READ}, {"gets", YCSB_OP_READ}, {"set", YCSB_OP_UPDATE},
               {"add", YCSB_OP_UPDATE}, {"replace", YCSB_OP_UPDATE}, {"cas", YCSB_OP_UPDATE},
               {"append", YCSB_OP_UPDATE}, {"prepend", YCSB_OP_UPDATE}, {"delete", YCSB_OP_DELETE}};
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        if (strlen(ops[i].name) == n && strncasecmp(s, ops[i].name, n) == 0)
            return ops[i].op;
    return -1;
}

/* One CSV line (no newline).  0, 1 for the header, or -1 with why (what was wrong). */
static int parse_line(char *line, uint64_t lineno, uint64_t *id, uint64_t *size, int *op, char *why,
                      size_t whylen)
{
    char *field[5];
    size_t len[5];
    int nf = 0;
    for (char *p = line;; nf++) {
        char *c = strchr(p, ',');
        if (nf == 4) {
            snprintf(why, whylen, "more than 4 fields");
            return -1;
        }
        field[nf] = p;
        len[nf] = c != NULL ? (size_t)(c - p) : strlen(p);
        if (c == NULL) {
            nf++;
            break;
        }
        p = c + 1;
    }
    if (lineno == 1 && nf >= 3 && len[0] == 4 && strncmp(field[0], "time", 4) == 0)
        return 1;
    if (nf < 3) {
        snprintf(why, whylen, "%d field%s", nf, nf == 1 ? "" : "s");
        return -1;
    }
    uint64_t t;
    if (parse_u64(field[0], field[0] + len[0], &t) != 0) {
        snprintf(why, whylen, "time '%.*s' is not an unsigned integer", (int)(len[0] > 40 ? 40 : len[0]), field[0]);
        return -1;
    }
    if (len[1] == 0) {
        snprintf(why, whylen, "empty key");
        return -1;
    }
    if (parse_u64(field[1], field[1] + len[1], id) != 0)
        *id = ycsb_fnv1a64(field[1], len[1]);
    if (parse_u64(field[2], field[2] + len[2], size) != 0 || *size > UINT32_MAX) {
        snprintf(why, whylen, "size '%.*s' is not an unsigned integer below 2^32",
                 (int)(len[2] > 40 ? 40 : len[2]), field[2]);
        return -1;
    }
    *op = YCSB_OP_READ;
    if (nf == 4 && (*op = parse_op(field[3], len[3])) < 0) {
        snprintf(why, whylen, "op '%.*s' is not known", (int)(len[3] > 40 ? 40 : len[3]), field[3]);
        return -1;
    }
    return 0;
}

static int load_csv(struct ycsb_replay *r, FILE *f, uint64_t *cap, char *err, size_t errlen)
{
    char *line = NULL;
    size_t linecap = 0;
    ssize_t got;
    uint64_t lineno = 0;
    int rc = 0;
    while ((got = getline(&line, &linecap, f)) >= 0) {
        lineno++;
        while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r'))
            line[--got] = '\0';
        uint64_t id, size;
        int op;
        char why[160];
        int p = parse_line(line, lineno, &id, &size, &op, why, sizeof(why));
        if (p == 1)
            continue;
        if (p < 0) {
            snprintf(err, errlen, "%s:%llu: %s; accepted: %s", r->path, (unsigned long long)lineno, why,
                     CSV_ACCEPTED);
            rc = -1;
            break;
        }
        if (append(r, cap, id, size, op) != 0) {
            snprintf(err, errlen, "%s: out of memory at line %llu", r->path, (unsigned long long)lineno);
            rc = -1;
            break;
        }
    }
    free(line);
    if (rc == 0 && ferror(f)) {
        snprintf(err, errlen, "%s: read error: %s", r->path, strerror(errno));
        rc = -1;
    }
    return rc;
}

static int cmp_pair(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] < y[1] ? -1 : x[1] > y[1];
}

/* objects, footprint_bytes, largest and the op counts */
static int summarise(struct ycsb_replay *r)
{
    uint64_t *pairs = malloc(r->n * 2 * sizeof(*pairs));
    if (pairs == NULL)
        return -1;
    for (uint64_t i = 0; i < r->n; i++) {
        pairs[2 * i] = r->ids[i];
        pairs[2 * i + 1] = r->sizes[i];
        if (r->sizes[i] > r->largest)
            r->largest = r->sizes[i];
        r->gets += r->ops[i] == YCSB_OP_READ;
        r->sets += r->ops[i] == YCSB_OP_UPDATE;
        r->deletes += r->ops[i] == YCSB_OP_DELETE;
    }
    qsort(pairs, r->n, 2 * sizeof(*pairs), cmp_pair);
    for (uint64_t i = 0; i < r->n; i++)
        if (i + 1 == r->n || pairs[2 * i + 2] != pairs[2 * i]) {   /* the id's last: its largest size */
            r->objects++;
            r->footprint_bytes += pairs[2 * i + 1];
        }
    free(pairs);
    return 0;
}

int ycsb_replay_load(struct ycsb_replay *r, const char *path, int format, uint32_t max_size,
                     char *err, size_t errlen)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->path, sizeof(r->path), "%s", path);
    r->max_size = max_size;
    if (format == YCSB_REPLAY_AUTO)
        format = ycsb_replay_format_of(path);
    if (format == YCSB_REPLAY_AUTO) {
        snprintf(err, errlen, "%s: cannot tell the trace's format from its name; accepted: a name ending "
                 ".csv (time,key,size[,op]) or .og, .oracleGeneral, .bin (oracleGeneral), or "
                 "ac_driver_format=csv|oracleGeneral", path);
        return -1;
    }
    r->format = format;
    FILE *f = fopen(path, format == YCSB_REPLAY_CSV ? "r" : "rb");
    if (f == NULL) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    uint64_t cap = 0;
    int rc = format == YCSB_REPLAY_CSV ? load_csv(r, f, &cap, err, errlen) : load_oracle(r, f, &cap, err, errlen);
    fclose(f);
    if (rc == 0 && r->n == 0) {
        snprintf(err, errlen, "%s: the trace has no requests", path);
        rc = -1;
    }
    if (rc == 0 && summarise(r) != 0) {
        snprintf(err, errlen, "%s: out of memory counting its objects", path);
        rc = -1;
    }
    if (rc != 0)
        ycsb_replay_free(r);
    return rc;
}

int ycsb_replay_split(struct ycsb_replay *r, uint64_t warmup, unsigned threads, char *err, size_t errlen)
{
    if (warmup > r->n) {
        snprintf(err, errlen, "%s: warmupoperations %llu is more than the trace's %llu requests", r->path,
                 (unsigned long long)warmup, (unsigned long long)r->n);
        return -1;
    }
    r->warmup = warmup;
    r->threads = threads ? threads : 1;
    if (r->threads == 1)
        return 0;
    r->order = malloc(r->n * sizeof(*r->order));
    r->start = calloc(r->threads + 1, sizeof(*r->start));
    r->warm = calloc(r->threads, sizeof(*r->warm));
    uint64_t *fill = calloc(r->threads, sizeof(*fill));
    if (r->order == NULL || r->start == NULL || r->warm == NULL || fill == NULL) {
        free(fill);
        snprintf(err, errlen, "out of memory splitting the trace over %u threads", r->threads);
        return -1;
    }
    for (uint64_t i = 0; i < r->n; i++) {
        unsigned t = (unsigned)(ycsb_mix64(r->ids[i]) % r->threads);
        r->start[t + 1]++;
        r->warm[t] += i < warmup;
    }
    for (unsigned t = 0; t < r->threads; t++)
        r->start[t + 1] += r->start[t];
    for (uint64_t i = 0; i < r->n; i++) {
        unsigned t = (unsigned)(ycsb_mix64(r->ids[i]) % r->threads);
        r->order[r->start[t] + fill[t]++] = i;
    }
    free(fill);
    return 0;
}

void ycsb_replay_free(struct ycsb_replay *r)
{
    free(r->ids);
    free(r->sizes);
    free(r->ops);
    free(r->order);
    free(r->start);
    free(r->warm);
    r->ids = r->order = r->start = r->warm = NULL;
    r->sizes = NULL;
    r->ops = NULL;
}
