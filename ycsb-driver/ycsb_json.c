/* Minimal JSON writer; see ycsb_json.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ycsb_json.h"

void ycsb_json_init(struct ycsb_json *j)
{
    memset(j, 0, sizeof(*j));
}

void ycsb_json_free(struct ycsb_json *j)
{
    free(j->buf);
    memset(j, 0, sizeof(*j));
}

int ycsb_json_ok(const struct ycsb_json *j)
{
    return !j->failed;
}

const char *ycsb_json_text(const struct ycsb_json *j)
{
    return j->buf != NULL ? j->buf : "";
}

static void put(struct ycsb_json *j, const char *s, size_t n)
{
    if (j->failed)
        return;
    if (j->len + n + 1 > j->cap) {
        size_t cap = j->cap ? j->cap : 256;
        while (cap < j->len + n + 1)
            cap *= 2;
        char *b = realloc(j->buf, cap);
        if (b == NULL) {
            j->failed = 1;
            return;
        }
        j->buf = b;
        j->cap = cap;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = '\0';
}

static void puts_(struct ycsb_json *j, const char *s)
{
    put(j, s, strlen(s));
}

/* Length of the well-formed UTF-8 sequence at s (at most n bytes), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    size_t len;
    uint32_t cp, min;
    if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        len = 2; cp = s[0] & 0x1fu; min = 0x80;
    } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        len = 3; cp = s[0] & 0x0fu; min = 0x800;
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        len = 4; cp = s[0] & 0x07u; min = 0x10000;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3fu);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

/* JSON is UTF-8 (RFC 8259): a byte that is not part of a well-formed UTF-8
 * sequence (text from a property file may be in any encoding) is written as
 * the code point of the same value, \u0080..\u00ff (read as Latin-1). */
static void quoted(struct ycsb_json *j, const char *s, size_t n)
{
    put(j, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        size_t u;
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            put(j, esc, 2);
        } else if (c < 0x20 || c == 0x7f) {
            snprintf(esc, sizeof(esc), "\\u%04x", c);
            put(j, esc, 6);
        } else if (c < 0x80) {
            put(j, (const char *)&s[i], 1);
        } else if ((u = utf8_len((const unsigned char *)s + i, n - i)) != 0) {
            put(j, s + i, u);
            i += u - 1;
        } else {
            snprintf(esc, sizeof(esc), "\\u%04x", c);
            put(j, esc, 6);
        }
    }
    put(j, "\"", 1);
}

static void member(struct ycsb_json *j, const char *key)
{
    if (j->need_comma)
        put(j, ",", 1);
    if (key != NULL) {
        quoted(j, key, strlen(key));
        put(j, ":", 1);
    }
    j->need_comma = 1;
}

void ycsb_json_begin_object(struct ycsb_json *j, const char *key)
{
    member(j, key);
    put(j, "{", 1);
    j->need_comma = 0;
}

void ycsb_json_end_object(struct ycsb_json *j)
{
    put(j, "}", 1);
    j->need_comma = 1;
}

static void ycsb_json_strn(struct ycsb_json *j, const char *key, const char *val, size_t n)
{
    member(j, key);
    quoted(j, val, n);
}

void ycsb_json_str(struct ycsb_json *j, const char *key, const char *val)
{
    ycsb_json_strn(j, key, val, strlen(val));
}

void ycsb_json_i64(struct ycsb_json *j, const char *key, int64_t v)
{
    char b[32];
    member(j, key);
    snprintf(b, sizeof(b), "%lld", (long long)v);
    puts_(j, b);
}

void ycsb_json_u64(struct ycsb_json *j, const char *key, uint64_t v)
{
    char b[32];
    member(j, key);
    snprintf(b, sizeof(b), "%llu", (unsigned long long)v);
    puts_(j, b);
}

void ycsb_json_double(struct ycsb_json *j, const char *key, double v)
{
    char b[40];
    member(j, key);
    if (!isfinite(v)) {
        puts_(j, "null");
        return;
    }
    snprintf(b, sizeof(b), "%.17g", v);
    /* shortest form that round-trips is nicer to read; %.17g always does */
    char s[40];
    for (int prec = 6; prec < 17; prec++) {
        snprintf(s, sizeof(s), "%.*g", prec, v);
        if (strtod(s, NULL) == v) {
            memcpy(b, s, sizeof(s));
            break;
        }
    }
    puts_(j, b);
}

void ycsb_json_bool(struct ycsb_json *j, const char *key, int v)
{
    member(j, key);
    puts_(j, v ? "true" : "false");
}

void ycsb_json_rawvalue(struct ycsb_json *j, const char *key, const char *json)
{
    member(j, key);
    puts_(j, json);
}
