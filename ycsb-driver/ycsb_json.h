/* A minimal JSON writer into a growing buffer (results, configuration, and
 * the fragment a backend's server_stats() adds).
 *
 * Commas are inserted automatically.  `key` is the member name inside an
 * object and must be NULL for the top-level value.
 * Non-finite doubles are written as null.  Out of memory makes ycsb_json_ok()
 * false and further writes are ignored. */
#ifndef YCSB_JSON_H
#define YCSB_JSON_H

#include <stddef.h>
#include <stdint.h>

struct ycsb_json {
    char *buf;
    size_t len, cap;
    int need_comma;
    int failed;
};

void ycsb_json_init(struct ycsb_json *j);
void ycsb_json_free(struct ycsb_json *j);
int ycsb_json_ok(const struct ycsb_json *j);
/* NUL-terminated text (valid until the next write or free) */
const char *ycsb_json_text(const struct ycsb_json *j);

void ycsb_json_begin_object(struct ycsb_json *j, const char *key);
void ycsb_json_end_object(struct ycsb_json *j);
void ycsb_json_str(struct ycsb_json *j, const char *key, const char *val);
void ycsb_json_i64(struct ycsb_json *j, const char *key, int64_t v);
void ycsb_json_u64(struct ycsb_json *j, const char *key, uint64_t v);
void ycsb_json_double(struct ycsb_json *j, const char *key, double v);
void ycsb_json_bool(struct ycsb_json *j, const char *key, int v);
/* a member whose value is already-valid JSON text */
void ycsb_json_rawvalue(struct ycsb_json *j, const char *key, const char *json);

#endif
