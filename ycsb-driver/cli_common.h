/* Shared by the ycsb-trace and ycsb-mc mains (not part of libycsb.a). */
#ifndef YCSB_CLI_COMMON_H
#define YCSB_CLI_COMMON_H

#include <stddef.h>
#include "ycsb_config.h"

#define CLI_MAX_ARGS 64

struct cli_props {
    const char *files[CLI_MAX_ARGS];
    int nfiles;
    const char *kvs[CLI_MAX_ARGS];
    int nkvs;
};

/* remember a -P / -p argument; 0, or -1 with err when there are too many */
int cli_add(struct cli_props *p, int is_file, const char *arg, char *err, size_t errlen);
/* defaults, then every -P file in order, then every -p in order (later wins),
 * then ycsb_config_finish.  0, or -1 with err. */
int cli_load(const struct cli_props *p, struct ycsb_config *c, char *err, size_t errlen);
/* strict integer option: 0, or -1 with err naming the option and range */
int cli_uint(const char *opt, const char *val, long lo, long hi, long *out, char *err,
             size_t errlen);
/* write text + "\n" to path ("-" = stdout); 0, or -1 with err */
int cli_write(const char *path, const char *text, char *err, size_t errlen);

#endif
