/* The record format of record.h: header, key, value; sealing (CRC-32C),
 * parsing and verifying, compressing and expanding the value. */
#include "record.h"
#include "compress.h"
#include "crc32c.h"
#include <string.h>

static void put32(unsigned char *p, uint32_t v) {
    p[0] = v; p[1] = v >> 8; p[2] = v >> 16; p[3] = v >> 24;
}
static uint32_t get32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void ac_record_put_header(void *buf, const struct ac_record *r) {
    unsigned char *p = buf;
    put32(p + 4, r->len);
    put32(p + 8, r->nbytes);
    put32(p + 12, r->client_flags);
    put32(p + 16, r->exptime);
    put32(p + 20, r->time);
    put32(p + 24, (uint32_t)r->cas);
    put32(p + 28, (uint32_t)(r->cas >> 32));
    p[32] = r->nkey;
    p[33] = r->codec;
    p[34] = p[35] = 0;
}

void ac_record_seal(void *buf, size_t len) {
    unsigned char *p = buf;
    put32(p, ac_crc32c(0, p + 4, len - 4));
}

void ac_record_pack(void *buf, const struct ac_record *r) {
    unsigned char *p = buf;
    ac_record_put_header(p, r);
    memcpy(p + AC_RECORD_HDR, r->key, r->nkey);
    memcpy(p + AC_RECORD_HDR + r->nkey, r->value, r->nbytes);
    ac_record_seal(p, r->len);
}

enum ac_record_status ac_record_parse(const void *buf, size_t avail, struct ac_record *out) {
    const unsigned char *p = buf;
    if (avail < AC_RECORD_HDR)
        return AC_REC_SHORT;
    out->len = get32(p + 4);
    out->nbytes = get32(p + 8);
    out->client_flags = get32(p + 12);
    out->exptime = get32(p + 16);
    out->time = get32(p + 20);
    out->cas = (uint64_t)get32(p + 24) | (uint64_t)get32(p + 28) << 32;
    out->nkey = p[32];
    out->codec = p[33];
    if (out->len < AC_RECORD_HDR || out->len > avail)
        return out->len > avail && out->len >= AC_RECORD_HDR ? AC_REC_SHORT : AC_REC_CRC;
    if (ac_crc32c(0, p + 4, out->len - 4) != get32(p))
        return AC_REC_CRC;
    if (out->codec == AC_CODEC_NONE) {
        out->stored = out->nbytes;
        if ((size_t)AC_RECORD_HDR + out->nkey + out->nbytes != out->len)
            return AC_REC_CRC;
    } else {
        /* compressed: stored only when smaller than the value */
        if (out->codec > AC_CODEC_MAX || (size_t)AC_RECORD_HDR + out->nkey >= out->len)
            return AC_REC_CRC;
        out->stored = out->len - AC_RECORD_HDR - out->nkey;
        if (out->stored >= out->nbytes)
            return AC_REC_CRC;
    }
    out->key = (const char *)p + AC_RECORD_HDR;
    out->value = out->key + out->nkey;
    return AC_REC_OK;
}

size_t ac_record_compress(void *buf, size_t len, int codec, void *tmp, size_t cap) {
    unsigned char *p = buf;
    size_t nkey = p[32], nbytes = get32(p + 8);
    if (codec == AC_CODEC_NONE || p[33] != AC_CODEC_NONE || len != AC_RECORD_HDR + nkey + nbytes)
        return len;
    size_t c = ac_compress(codec, p + AC_RECORD_HDR + nkey, nbytes, tmp, cap);
    if (c == 0)
        return len;
    memcpy(p + AC_RECORD_HDR + nkey, tmp, c);
    size_t nlen = AC_RECORD_HDR + nkey + c;
    put32(p + 4, (uint32_t)nlen);
    p[33] = (unsigned char)codec;
    ac_record_seal(p, nlen);
    return nlen;
}

int ac_record_expand(struct ac_record *r, void *dst) {
    if (r->codec == AC_CODEC_NONE)
        return 0;
    if (ac_decompress(r->codec, r->value, r->stored, dst, r->nbytes) != 0)
        return -1;
    r->value = dst;
    r->codec = AC_CODEC_NONE;
    r->stored = r->nbytes;
    return 0;
}
