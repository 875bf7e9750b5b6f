/* Trace readers: ACTRACE (128-byte header, 16-byte records: key, size, op)
 * and libCacheSim's oracleGeneral (24-byte records, no header, no op: every
 * request is a read), mmapped read-only and validated before use (op codes
 * are checked by the next-use pass, which reads every record anyway).
 * Records are read in place (little-endian). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "opt_internal.h"

#define ACT_MAGIC "ACTRACE1"
#define ACT_HEADER 128u
#define ACT_REC 16u
#define ORA_REC 24u

static void set_layout(struct ac_trace *t, int format) {
    t->format = format;
    if (format == AC_FMT_ACTRACE) {
        t->stride = ACT_REC; t->key_off = 0; t->size_off = 8; t->op_off = 12; t->has_ops = 1;
    } else {
        t->stride = ORA_REC; t->key_off = 4; t->size_off = 12; t->op_off = 0; t->has_ops = 0;
    }
}

static int check_count(uint64_t n, const char *path, char *err, size_t errlen) {
    if (n > AC_MAX_REQUESTS)
        return ac_fail(err, errlen, "%s: %llu requests; at most %llu are supported", path,
                       (unsigned long long)n, (unsigned long long)AC_MAX_REQUESTS);
    return 0;
}

/* Validates the ACTRACE header of a file of `size` bytes at `p`. */
static int parse_actrace(struct ac_trace *t, const unsigned char *p, uint64_t size,
                         const char *path, char *err, size_t errlen) {
    if (size < ACT_HEADER)
        return ac_fail(err, errlen, "%s: truncated ACTRACE header: file has %llu bytes, the header needs %u",
                       path, (unsigned long long)size, ACT_HEADER);
    if (memcmp(p, ACT_MAGIC, 8) != 0)
        return ac_fail(err, errlen, "%s: bad magic: expected \"ACTRACE1\"", path);
    uint32_t version = ac_load32(p + 8), hsize = ac_load32(p + 12);
    if (version != 1)
        return ac_fail(err, errlen, "%s: unsupported ACTRACE version %u (expected 1)", path, version);
    if (hsize != ACT_HEADER)
        return ac_fail(err, errlen, "%s: wrong header_size %u (expected %u)", path, hsize, ACT_HEADER);
    t->seed = ac_load64(p + 16);
    t->recordcount = ac_load64(p + 24);
    uint64_t n = ac_load64(p + 32);
    if (n > (size - ACT_HEADER) / ACT_REC || size - ACT_HEADER != n * ACT_REC) {
        if (n <= (UINT64_MAX - ACT_HEADER) / ACT_REC && size < ACT_HEADER + n * ACT_REC)
            return ac_fail(err, errlen,
                           "%s: truncated: header says %llu requests (%llu bytes), file has %llu bytes",
                           path, (unsigned long long)n,
                           (unsigned long long)(ACT_HEADER + n * ACT_REC), (unsigned long long)size);
        return ac_fail(err, errlen, "%s: header says %llu requests but the file has %llu bytes of records "
                       "(%u bytes each)", path, (unsigned long long)n,
                       (unsigned long long)(size - ACT_HEADER), ACT_REC);
    }
    if (check_count(n, path, err, errlen))
        return -1;
    memcpy(t->workload, p + 64, 64);
    t->workload[64] = '\0';
    t->n = n;
    t->recs = p + ACT_HEADER;
    set_layout(t, AC_FMT_ACTRACE);
    return 0;
}

static int parse_oracle(struct ac_trace *t, const unsigned char *p, uint64_t size,
                        const char *path, char *err, size_t errlen) {
    if (size % ORA_REC != 0)
        return ac_fail(err, errlen, "%s: truncated oracleGeneral trace: %llu bytes is not a multiple "
                       "of the %u-byte record", path, (unsigned long long)size, ORA_REC);
    if (check_count(size / ORA_REC, path, err, errlen))
        return -1;
    /* libCacheSim's next_access_vtime (bytes 16..23): the index of the object's next request in
     * this trace, or -1 (INT64_MAX in some writers) for none. Anything else is not an
     * oracleGeneral trace (a text file whose size happens to be a multiple of 24, say). */
    uint64_t n = size / ORA_REC;
    for (uint64_t i = 0; i < n; i++) {
        int64_t nav;
        memcpy(&nav, p + i * ORA_REC + 16, sizeof nav);
        if (nav != -1 && nav != INT64_MAX && (nav <= (int64_t)i || (uint64_t)nav >= n))
            return ac_fail(err, errlen, "%s: not an oracleGeneral trace: record %llu has next_access_vtime "
                           "%lld, accepted: -1 (no next request) or the index of a later request "
                           "(%llu..%llu)", path, (unsigned long long)i, (long long)nav,
                           (unsigned long long)i + 1, (unsigned long long)(n - 1));
    }
    t->n = n;
    t->recs = p;
    set_layout(t, AC_FMT_ORACLE);
    return 0;
}

struct ac_trace *ac_trace_open(const char *path, int format, char *err, size_t errlen) {
    if (format != AC_FMT_AUTO && format != AC_FMT_ACTRACE && format != AC_FMT_ORACLE) {
        ac_fail(err, errlen, "unknown trace format code %d", format);
        return NULL;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        ac_fail(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ac_fail(err, errlen, "%s: not a regular file", path);
        close(fd);
        return NULL;
    }
    uint64_t size = (uint64_t)st.st_size;
    struct ac_trace *t = calloc(1, sizeof *t);
    if (!t) {
        ac_fail(err, errlen, "out of memory");
        close(fd);
        return NULL;
    }
    static const unsigned char empty[1];
    const unsigned char *p = empty;
    if (size > 0) {
        void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            ac_fail(err, errlen, "%s: mmap failed: %s", path, strerror(errno));
            close(fd);
            free(t);
            return NULL;
        }
        t->map = m;
        t->map_len = size;
        p = m;
    }
    close(fd);
    if (format == AC_FMT_AUTO) {
        if (size >= 8 && memcmp(p, ACT_MAGIC, 8) == 0)
            format = AC_FMT_ACTRACE;
        else if (size % ORA_REC == 0)
            format = AC_FMT_ORACLE;
        else {
            ac_fail(err, errlen, "%s: unknown format: no \"ACTRACE1\" magic and %llu bytes is not a multiple "
                    "of the 24-byte oracleGeneral record (use --format to force one)",
                    path, (unsigned long long)size);
            ac_trace_close(t);
            return NULL;
        }
    }
    int rc = format == AC_FMT_ACTRACE ? parse_actrace(t, p, size, path, err, errlen)
                                      : parse_oracle(t, p, size, path, err, errlen);
    if (rc != 0) {
        ac_trace_close(t);
        return NULL;
    }
    return t;
}

struct ac_trace *ac_trace_from_memory(const void *recs, uint64_t n, int format,
                                      char *err, size_t errlen) {
    if (format != AC_FMT_ACTRACE && format != AC_FMT_ORACLE) {
        ac_fail(err, errlen, "a memory view needs format ACTRACE (1) or oracleGeneral (2), got %d", format);
        return NULL;
    }
    if (check_count(n, "memory trace", err, errlen))
        return NULL;
    struct ac_trace *t = calloc(1, sizeof *t);
    if (!t) {
        ac_fail(err, errlen, "out of memory");
        return NULL;
    }
    t->recs = recs;
    t->n = n;
    set_layout(t, format);
    return t;
}

void ac_trace_close(struct ac_trace *t) {
    if (!t)
        return;
    if (t->map)
        munmap(t->map, t->map_len);
    free(t);
}

uint64_t ac_trace_requests(const struct ac_trace *t) { return t->n; }
int ac_trace_format(const struct ac_trace *t) { return t->format; }

void ac_trace_header(const struct ac_trace *t, uint64_t *seed, uint64_t *recordcount,
                     char workload[65]) {
    *seed = t->seed;
    *recordcount = t->recordcount;
    memcpy(workload, t->workload, 65);
}

uint64_t ac_trace_key(const struct ac_trace *t, uint64_t i) {
    return ac_load64(t->recs + i * t->stride + t->key_off);
}

uint32_t ac_trace_size(const struct ac_trace *t, uint64_t i) {
    return ac_load32(t->recs + i * t->stride + t->size_off);
}

unsigned ac_trace_op(const struct ac_trace *t, uint64_t i) {
    return t->has_ops ? t->recs[i * t->stride + t->op_off] : AC_OP_READ;
}
