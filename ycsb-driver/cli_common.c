/* -P/-p handling and small helpers shared by the mains; see cli_common.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli_common.h"

int cli_add(struct cli_props *p, int is_file, const char *arg, char *err, size_t errlen)
{
    int *n = is_file ? &p->nfiles : &p->nkvs;
    if (*n >= CLI_MAX_ARGS) {
        snprintf(err, errlen, "too many %s options; accepted: at most %d", is_file ? "-P" : "-p",
                 CLI_MAX_ARGS);
        return -1;
    }
    (is_file ? p->files : p->kvs)[(*n)++] = arg;
    return 0;
}

int cli_load(const struct cli_props *p, struct ycsb_config *c, char *err, size_t errlen)
{
    ycsb_config_defaults(c);
    for (int i = 0; i < p->nfiles; i++)
        if (ycsb_config_load_file(c, p->files[i], err, errlen) != 0)
            return -1;
    for (int i = 0; i < p->nkvs; i++)
        if (ycsb_config_set_kv(c, p->kvs[i], err, errlen) != 0)
            return -1;
    return ycsb_config_finish(c, err, errlen);
}

int cli_uint(const char *opt, const char *val, long lo, long hi, long *out, char *err,
             size_t errlen)
{
    char *end;
    errno = 0;
    long v = strtol(val, &end, 10);
    if (end == val || *end != '\0' || errno != 0 || v < lo || v > hi) {
        snprintf(err, errlen, "%s '%s': accepted: an integer from %ld to %ld", opt, val, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_write(const char *path, const char *text, char *err, size_t errlen)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (f == NULL) {
        snprintf(err, errlen, "cannot create '%s': %s", path, strerror(errno));
        return -1;
    }
    int ok = fputs(text, f) >= 0 && fputc('\n', f) != EOF;
    if (f != stdout)
        ok = (fclose(f) == 0) && ok;
    else
        ok = (fflush(f) == 0) && ok;
    if (!ok) {
        snprintf(err, errlen, "writing '%s' failed: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}
