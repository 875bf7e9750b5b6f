/* YCSB property files and -p overrides -> struct ycsb_config (ycsb_config.h).
 * Defaults are CoreWorkload's (recordcount and operationcount: 1000, the
 * value every YCSB workload file sets; YCSB itself has no usable default). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ycsb_config.h"
#include "ycsb_resources.h"

enum kind { K_INT, K_U64, K_NUM, K_PROP, K_BOOL, K_ENUM, K_STR };

struct prop {
    const char *name;
    enum kind kind;
    size_t off;          /* offset in struct ycsb_config */
    double lo, hi;       /* K_INT / K_NUM bounds (inclusive unless open) */
    int lo_open, hi_open;
    const char *const *names;  /* K_ENUM, index = stored value */
    size_t size;               /* K_STR: the buffer's size */
};

static const char *const dist_names[] = {"uniform", "zipfian", "latest", "hotspot",
                                         "sequential", "truezipf", NULL};
static const char *const order_names[] = {"ordered", "hashed", NULL};
static const char *const kind_names[] = {"ycsb", "text", "zeros", NULL};
static const char *const scanlen_names[] = {"uniform", "zipfian", NULL};
static const char *const fieldlen_names[] = {"constant", NULL};

/* YCSB 0.17 properties (CoreWorkload, the client, the measurements, the
 * memcached binding's memcached.*) that mean nothing for this driver: accepted
 * so that YCSB's own workload files run unedited, named once in a warning. */
static const char *const ignored_props[] = {
    "table", "fieldnameprefix", "readallfieldsbyname", "dataintegrity",
    "measurementtype", "measurement.interval", "measurement.raw.output_file",
    "measurement.raw.no_summary", "measurement.trackjvm", "histogram.buckets",
    "hdrhistogram.percentiles", "hdrhistogram.fileoutput", "hdrhistogram.output.path",
    "timeseries.granularity", "status.interval", "maxexecutiontime", "exporter", "exportfile",
    "core_workload_insertion_retry_limit", "core_workload_insertion_retry_interval", "db",
    "dotransactions", "threadcount.warmup", NULL};
#define IGNORED_PREFIX "memcached."

#define OFF(f) offsetof(struct ycsb_config, f)
#define STRSZ(f) sizeof(((struct ycsb_config *)0)->f)
#define I32MAX 2147483647.0
static const struct prop props[] = {
    {"recordcount", K_INT, OFF(recordcount), 1, I32MAX, 0, 0, NULL, 0},
    {"operationcount", K_INT, OFF(operationcount), 0, I32MAX, 0, 0, NULL, 0},
    {"workload", K_STR, OFF(workload), 0, 0, 0, 0, NULL, STRSZ(workload)},
    {"readproportion", K_PROP, OFF(readproportion), 0, 1, 0, 0, NULL, 0},
    {"updateproportion", K_PROP, OFF(updateproportion), 0, 1, 0, 0, NULL, 0},
    {"insertproportion", K_PROP, OFF(insertproportion), 0, 1, 0, 0, NULL, 0},
    {"readmodifywriteproportion", K_PROP, OFF(readmodifywriteproportion), 0, 1, 0, 0, NULL, 0},
    {"scanproportion", K_PROP, OFF(scanproportion), 0, 1, 0, 0, NULL, 0},
    {"requestdistribution", K_ENUM, OFF(requestdistribution), 0, 0, 0, 0, dist_names, 0},
    {"zipfianconstant", K_NUM, OFF(zipfianconstant), 0, YCSB_THETA_MAX, 1, 0, NULL, 0},
    {"fieldcount", K_INT, OFF(fieldcount), 1, 1024, 0, 0, NULL, 0},
    {"fieldlength", K_INT, OFF(fieldlength), 1, 1048576, 0, 0, NULL, 0},
    {"insertorder", K_ENUM, OFF(insertorder_hashed), 0, 0, 0, 0, order_names, 0},
    {"insertstart", K_INT, OFF(insertstart), 0, I32MAX, 0, 0, NULL, 0},
    {"insertcount", K_INT, OFF(insertcount), 1, I32MAX, 0, 0, NULL, 0},
    {"loadcount", K_INT, OFF(loadcount), 0, I32MAX, 0, 0, NULL, 0},
    {"hotspotdatafraction", K_PROP, OFF(hotspotdatafraction), 0, 1, 0, 0, NULL, 0},
    {"hotspotopnfraction", K_PROP, OFF(hotspotopnfraction), 0, 1, 0, 0, NULL, 0},
    {"readallfields", K_BOOL, OFF(readallfields), 0, 0, 0, 0, NULL, 0},
    {"writeallfields", K_BOOL, OFF(writeallfields), 0, 0, 0, 0, NULL, 0},
    {"zeropadding", K_INT, OFF(zeropadding), 1, 32, 0, 0, NULL, 0},
    {"minscanlength", K_INT, OFF(minscanlength), 1, I32MAX, 0, 0, NULL, 0},
    {"maxscanlength", K_INT, OFF(maxscanlength), 1, I32MAX, 0, 0, NULL, 0},
    {"scanlengthdistribution", K_ENUM, OFF(scanlength_zipfian), 0, 0, 0, 0, scanlen_names, 0},
    {"seed", K_U64, OFF(seed), 0, 0, 0, 0, NULL, 0},
    {"threads", K_INT, OFF(threads), 1, 1024, 0, 0, NULL, 0},
    {"threadcount", K_INT, OFF(threads), 1, 1024, 0, 0, NULL, 0},   /* YCSB's name of threads */
    {"fieldlengthdistribution", K_ENUM, OFF(fieldlengthdist), 0, 0, 0, 0, fieldlen_names, 0},
    {"warmupoperations", K_INT, OFF(warmupoperations), 0, I32MAX, 0, 0, NULL, 0},
    {"target", K_NUM, OFF(target), 0, 1e12, 0, 0, NULL, 0},
    {"valuekind", K_ENUM, OFF(valuekind), 0, 0, 0, 0, kind_names, 0},
    {"lookaside", K_BOOL, OFF(lookaside), 0, 0, 0, 0, NULL, 0},
    {"runwindows", K_INT, OFF(runwindows), 1, YCSB_RUN_WINDOWS_MAX, 0, 0, NULL, 0},
    {"diskstats_device", K_STR, OFF(diskstats_device), 0, 0, 0, 0, NULL, STRSZ(diskstats_device)},
};
#define NPROPS (sizeof(props) / sizeof(props[0]))

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

void ycsb_config_defaults(struct ycsb_config *c)
{
    memset(c, 0, sizeof(*c));
    c->recordcount = 1000;
    c->operationcount = 1000;
    c->insertstart = 0;
    c->insertcount = -1;
    c->loadcount = -1;
    c->fieldcount = 10;
    c->fieldlength = 100;
    c->zeropadding = 1;
    c->warmupoperations = 0;
    c->threads = 1;
    c->minscanlength = 1;
    c->maxscanlength = 1000;
    c->readproportion = 0.95;
    c->updateproportion = 0.05;
    c->zipfianconstant = 0.99;
    c->hotspotdatafraction = 0.2;
    c->hotspotopnfraction = 0.8;
    c->requestdistribution = YCSB_DIST_UNIFORM;
    c->insertorder_hashed = 1;
    c->readallfields = 1;
    c->writeallfields = 0;
    c->valuekind = YCSB_VALUE_YCSB;
    c->seed = 1;
    c->runwindows = 1;
    snprintf(c->workload, sizeof(c->workload), "site.ycsb.workloads.CoreWorkload");
}

static void accepted(const struct prop *p, char *buf, size_t n)
{
    switch (p->kind) {
    case K_INT:
        snprintf(buf, n, "an integer from %.0f to %.0f", p->lo, p->hi);
        break;
    case K_U64:
        snprintf(buf, n, "an integer from 0 to 18446744073709551615");
        break;
    case K_PROP:
        snprintf(buf, n, "a number from 0 to 1");
        break;
    case K_NUM:
        if (p->off == OFF(zipfianconstant))
            snprintf(buf, n, "a number greater than 0 and at most %g (zipfian and latest: at "
                     "least 1e-9 away from 1)", YCSB_THETA_MAX);
        else if (p->lo_open && p->hi_open)
            snprintf(buf, n, "a number greater than %g and less than %g", p->lo, p->hi);
        else
            snprintf(buf, n, "a number from %g to %g", p->lo, p->hi);
        break;
    case K_BOOL:
        snprintf(buf, n, "true, false");
        break;
    case K_ENUM: {
        size_t used = 0;
        buf[0] = '\0';
        for (int i = 0; p->names[i] != NULL && used < n; i++)
            used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "", p->names[i]);
        if (p->off == OFF(fieldlengthdist) && used < n)
            snprintf(buf + used, n - used, " (every value is fieldcount x fieldlength bytes; "
                     "uniform, zipfian and histogram lengths are not implemented)");
        break;
    }
    case K_STR:
        if (p->off == OFF(diskstats_device))
            snprintf(buf, n, "a device name as in /proc/diskstats (e.g. vda), up to %zu bytes, "
                     "or empty for none", p->size - 1);
        else
            snprintf(buf, n, "any text up to %zu bytes", p->size - 1);
        break;
    }
}

static int looks_negative(const char *v)
{
    while (*v == ' ' || *v == '\t')
        v++;
    return *v == '-';
}

/* key is one of ignored_props: noted once in c->ignored */
static int ignore(struct ycsb_config *c, const char *key)
{
    int known = strncmp(key, IGNORED_PREFIX, strlen(IGNORED_PREFIX)) == 0;
    for (int i = 0; !known && ignored_props[i] != NULL; i++)
        known = strcmp(ignored_props[i], key) == 0;
    if (!known)
        return 0;
    size_t kn = strlen(key), used = strlen(c->ignored);
    for (const char *s = c->ignored; (s = strstr(s, key)) != NULL; s += kn)
        if ((s == c->ignored || s[-2] == ',') && (s[kn] == ',' || s[kn] == '\0'))
            return 1;
    if (used + kn + 3 < sizeof(c->ignored))
        snprintf(c->ignored + used, sizeof(c->ignored) - used, "%s%s", used ? ", " : "", key);
    return 1;
}

int ycsb_config_set(struct ycsb_config *c, const char *key, const char *value, char *err,
                    size_t errlen)
{
    if (ignore(c, key))
        return 0;
    const struct prop *p = NULL;
    for (size_t i = 0; i < NPROPS; i++)
        if (strcmp(props[i].name, key) == 0)
            p = &props[i];
    if (p == NULL) {
        char list[1024];
        size_t used = 0;
        for (size_t i = 0; i < NPROPS && used < sizeof(list); i++)
            used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "",
                                     props[i].name);
        return fail(err, errlen, "unknown property '%s'; accepted: %s (and YCSB's own properties "
                    "that mean nothing here, ignored with a warning: see README)", key, list);
    }
    char acc[256];
    accepted(p, acc, sizeof(acc));
    char *base = (char *)c + p->off;
    char *end = NULL;
    switch (p->kind) {
    case K_INT: {
        errno = 0;
        long long v = strtoll(value, &end, 10);
        if (end == value || *end != '\0')
            return fail(err, errlen, "property '%s': '%s' is not an integer; accepted: %s", key,
                        value, acc);
        if (v < 0 && p->lo >= 0)
            return fail(err, errlen, "property '%s': '%s' is negative; accepted: %s", key, value,
                        acc);
        if (errno == ERANGE || (double)v < p->lo || (double)v > p->hi)
            return fail(err, errlen, "property '%s': '%s' is out of range; accepted: %s", key,
                        value, acc);
        *(int64_t *)(void *)base = v;
        return 0;
    }
    case K_U64: {
        if (looks_negative(value))
            return fail(err, errlen, "property '%s': '%s' is negative; accepted: %s", key, value,
                        acc);
        errno = 0;
        unsigned long long v = strtoull(value, &end, 10);
        if (end == value || *end != '\0')
            return fail(err, errlen, "property '%s': '%s' is not an integer; accepted: %s", key,
                        value, acc);
        if (errno == ERANGE)
            return fail(err, errlen, "property '%s': '%s' is out of range; accepted: %s", key,
                        value, acc);
        *(uint64_t *)(void *)base = v;
        return 0;
    }
    case K_NUM:
    case K_PROP: {
        errno = 0;
        double v = strtod(value, &end);
        if (end == value || *end != '\0' || !isfinite(v))
            return fail(err, errlen, "property '%s': '%s' is not a number; accepted: %s", key,
                        value, acc);
        if (v < 0)
            return fail(err, errlen, "property '%s': '%s' is negative; accepted: %s", key, value,
                        acc);
        if (v < p->lo || v > p->hi || (p->lo_open && v == p->lo) || (p->hi_open && v == p->hi))
            return fail(err, errlen, "property '%s': '%s' is out of range; accepted: %s", key,
                        value, acc);
        *(double *)(void *)base = v;
        return 0;
    }
    case K_BOOL:
        if (strcmp(value, "true") == 0)
            *(int *)(void *)base = 1;
        else if (strcmp(value, "false") == 0)
            *(int *)(void *)base = 0;
        else
            return fail(err, errlen, "property '%s': '%s' is not accepted; accepted: %s", key,
                        value, acc);
        return 0;
    case K_ENUM:
        for (int i = 0; p->names[i] != NULL; i++)
            if (strcmp(p->names[i], value) == 0) {
                *(int *)(void *)base = i;
                return 0;
            }
        return fail(err, errlen, "property '%s': '%s' is not accepted; accepted: %s", key, value,
                    acc);
    case K_STR:
        if (strlen(value) >= p->size)
            return fail(err, errlen, "property '%s': value is too long; accepted: %s", key, acc);
        snprintf(base, p->size, "%s", value);
        return 0;
    }
    return fail(err, errlen, "property '%s': internal error", key);
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = '\0';
    return s;
}

int ycsb_config_set_kv(struct ycsb_config *c, const char *kv, char *err, size_t errlen)
{
    const char *eq = strchr(kv, '=');
    if (eq == NULL || eq == kv)
        return fail(err, errlen, "-p '%s': expected key=value", kv);
    char key[128], val[512];
    size_t kn = (size_t)(eq - kv);
    if (kn >= sizeof(key) || strlen(eq + 1) >= sizeof(val))
        return fail(err, errlen, "-p '%.60s...': too long", kv);
    memcpy(key, kv, kn);
    key[kn] = '\0';
    snprintf(val, sizeof(val), "%s", eq + 1);
    return ycsb_config_set(c, trim(key), trim(val), err, errlen);
}

int ycsb_config_load_file(struct ycsb_config *c, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return fail(err, errlen, "cannot open property file '%s': %s", path, strerror(errno));
    char line[1024];
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
        lineno++;
        if (strchr(line, '\n') == NULL && !feof(f)) {
            rc = fail(err, errlen, "%s:%d: line longer than %zu bytes", path, lineno,
                      sizeof(line) - 2);
            break;
        }
        char *s = trim(line);
        if (*s == '\0' || *s == '#' || *s == '!')
            continue;
        size_t n = strlen(s);
        if (s[n - 1] == '\\') {
            rc = fail(err, errlen, "%s:%d: line continuation ('\\' at the end) is not supported",
                      path, lineno);
            break;
        }
        char *sep = strpbrk(s, "=:");
        if (sep == NULL || sep == s) {
            rc = fail(err, errlen, "%s:%d: expected key=value, got '%s'", path, lineno, s);
            break;
        }
        *sep = '\0';
        char msg[1200];
        if (ycsb_config_set(c, trim(s), trim(sep + 1), msg, sizeof(msg)) != 0)
            rc = fail(err, errlen, "%s:%d: %s", path, lineno, msg);
    }
    if (rc == 0 && ferror(f))
        rc = fail(err, errlen, "reading property file '%s': %s", path, strerror(errno));
    fclose(f);
    if (rc == 0) {
        const char *b = strrchr(path, '/');
        b = b ? b + 1 : path;
        size_t n = strcspn(b, ".");
        if (n >= sizeof(c->name))
            n = sizeof(c->name) - 1;
        memcpy(c->name, b, n);
        c->name[n] = '\0';
    }
    return rc;
}

int ycsb_config_finish(struct ycsb_config *c, char *err, size_t errlen)
{
    double sum = c->readproportion + c->updateproportion + c->insertproportion +
                 c->readmodifywriteproportion + c->scanproportion;
    if (fabs(sum - 1.0) > 1e-9)
        return fail(err, errlen, "proportions do not sum to 1: readproportion %g + "
                    "updateproportion %g + insertproportion %g + readmodifywriteproportion %g "
                    "+ scanproportion %g = %.12g; accepted: a sum of 1 (within 1e-9)",
                    c->readproportion, c->updateproportion, c->insertproportion,
                    c->readmodifywriteproportion, c->scanproportion, sum);
    if (c->insertcount < 0) {
        if (c->insertstart >= c->recordcount)
            return fail(err, errlen, "insertstart (%lld) leaves no keys to load; accepted: "
                        "insertstart < recordcount (%lld)", (long long)c->insertstart,
                        (long long)c->recordcount);
        c->insertcount = c->recordcount - c->insertstart;
    }
    if (c->insertstart + c->insertcount > c->recordcount)
        return fail(err, errlen, "insertstart (%lld) + insertcount (%lld) exceeds recordcount "
                    "(%lld); accepted: insertstart + insertcount <= recordcount",
                    (long long)c->insertstart, (long long)c->insertcount,
                    (long long)c->recordcount);
    if (c->loadcount < 0)
        c->loadcount = c->insertcount;
    if (c->loadcount > c->insertcount)
        return fail(err, errlen, "loadcount (%lld) exceeds insertcount (%lld); accepted: "
                    "loadcount <= insertcount (the load inserts keys insertstart .. "
                    "insertstart + loadcount - 1, reads choose among insertcount keys)",
                    (long long)c->loadcount, (long long)c->insertcount);
    if (c->runwindows > 1 && c->insertproportion > 0)
        return fail(err, errlen, "runwindows=%lld with insertproportion %g: a window's inserts would take "
                    "keys after the previous window's, not those of a run with its seed; accepted: "
                    "runwindows=1, or insertproportion=0", (long long)c->runwindows, c->insertproportion);
    if (c->minscanlength > c->maxscanlength)
        return fail(err, errlen, "minscanlength (%lld) exceeds maxscanlength (%lld); accepted: "
                    "1 <= minscanlength <= maxscanlength (a scan reads that many consecutive keys)",
                    (long long)c->minscanlength, (long long)c->maxscanlength);
    if ((c->requestdistribution == YCSB_DIST_ZIPFIAN || c->requestdistribution == YCSB_DIST_LATEST) &&
        fabs(c->zipfianconstant - 1.0) < YCSB_THETA_NOT_ONE)
        return fail(err, errlen, "zipfianconstant=%.12g with requestdistribution=%s: 1 or within "
                    "1e-9 of it, and Gray's Zipfian method (YCSB's ZipfianGenerator) divides by "
                    "1 - theta (alpha = 1/(1 - theta)); accepted: zipfianconstant at least 1e-9 "
                    "away from 1, or requestdistribution=truezipf, which accepts 1",
                    c->zipfianconstant, ycsb_dist_name(c->requestdistribution));
    if (c->requestdistribution == YCSB_DIST_LATEST && c->recordcount < 2)
        return fail(err, errlen, "requestdistribution=latest needs recordcount >= 2 (got %lld)",
                    (long long)c->recordcount);
    if (ycsb_config_value_size(c) > 1048576)
        return fail(err, errlen, "fieldcount (%lld) x fieldlength (%lld) = %zu bytes per value; "
                    "accepted: at most 1048576 bytes", (long long)c->fieldcount,
                    (long long)c->fieldlength, ycsb_config_value_size(c));
    if (c->diskstats_device[0] != '\0' &&
        ycsb_diskstats_check(c->diskstats_device, err, errlen) != 0)
        return -1;
    if (c->ignored[0] != '\0')
        fprintf(stderr, "ycsb: warning: ignored YCSB properties that have no effect here: %s\n",
                c->ignored);
    return 0;
}

size_t ycsb_config_value_size(const struct ycsb_config *c)
{
    return (size_t)c->fieldcount * (size_t)c->fieldlength;
}

const char *ycsb_dist_name(int dist)
{
    return dist >= 0 && dist <= YCSB_DIST_TRUEZIPF ? dist_names[dist] : "?";
}

void ycsb_config_json(const struct ycsb_config *c, struct ycsb_json *j, const char *key)
{
    ycsb_json_begin_object(j, key);
    ycsb_json_str(j, "name", c->name);
    for (size_t i = 0; i < NPROPS; i++) {
        const struct prop *p = &props[i];
        const char *base = (const char *)c + p->off;
        switch (p->kind) {
        case K_INT:
            ycsb_json_i64(j, p->name, *(const int64_t *)(const void *)base);
            break;
        case K_U64:
            ycsb_json_u64(j, p->name, *(const uint64_t *)(const void *)base);
            break;
        case K_NUM:
        case K_PROP:
            ycsb_json_double(j, p->name, *(const double *)(const void *)base);
            break;
        case K_BOOL:
            ycsb_json_bool(j, p->name, *(const int *)(const void *)base);
            break;
        case K_ENUM:
            ycsb_json_str(j, p->name, p->names[*(const int *)(const void *)base]);
            break;
        case K_STR:
            ycsb_json_str(j, p->name, base);
            break;
        }
    }
    ycsb_json_end_object(j);
}
