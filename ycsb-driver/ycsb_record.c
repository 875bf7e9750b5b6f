/* Keys and values as YCSB builds them; see ycsb_record.h. */
#include <stdio.h>
#include <string.h>
#include "ycsb_config.h"
#include "ycsb_record.h"
#include "ycsb_rng.h"

size_t ycsb_key(char *buf, int64_t keynum, int hashed, int zeropadding)
{
    char digits[24];
    int64_t n = hashed ? ycsb_fnvhash64(keynum) : keynum;
    int nd = snprintf(digits, sizeof(digits), "%lld", (long long)n);
    int fill = zeropadding - nd;
    if (fill < 0)
        fill = 0;
    if (fill > YCSB_KEY_MAX - 1 - 4 - nd)
        fill = YCSB_KEY_MAX - 1 - 4 - nd;
    memcpy(buf, "user", 4);
    memset(buf + 4, '0', (size_t)fill);
    memcpy(buf + 4 + fill, digits, (size_t)nd + 1);
    return (size_t)(4 + fill + nd);
}

static const char *const words[64] = {
    "the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with", "be",
    "by", "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have",
    "an", "had", "they", "you", "were", "their", "one", "all", "we", "can", "her", "has",
    "there", "been", "if", "more", "when", "will", "would", "who", "so", "no", "memory",
    "cache", "disk", "block", "record", "key", "value", "cold", "hot", "tuple", "page",
    "store", "query", "table", "index", "data"};

void ycsb_value_fill(char *buf, size_t len, int kind, uint64_t seed, int64_t keynum,
                     uint64_t version)
{
    struct ycsb_rng r;
    ycsb_rng_seed(&r, seed ^ ycsb_mix64((uint64_t)keynum), version ^ 0x76616c7565ULL);
    if (kind == YCSB_VALUE_ZEROS) {
        memset(buf, 0, len);
        return;
    }
    if (kind == YCSB_VALUE_TEXT) {
        size_t i = 0;
        while (i < len) {
            uint64_t b = ycsb_rng_u64(&r);
            for (int w = 0; w < 10 && i < len; w++, b >>= 6) {
                const char *word = words[b & 63];
                size_t wl = strlen(word);
                for (size_t k = 0; k < wl && i < len; k++)
                    buf[i++] = word[k];
                if (i < len)
                    buf[i++] = ' ';
            }
        }
        return;
    }
    size_t i = 0;
    while (i < len) {
        uint64_t d = ycsb_rng_u64(&r);
        for (int half = 0; half < 2 && i < len; half++, d >>= 32) {
            uint32_t b = (uint32_t)d;
            static const int shift[6] = {0, 5, 10, 15, 20, 25};
            static const uint32_t mask[6] = {31, 63, 95, 31, 63, 95};
            for (int k = 0; k < 6 && i < len; k++)
                buf[i++] = (char)(((b >> shift[k]) & mask[k]) + ' ');
        }
    }
}
