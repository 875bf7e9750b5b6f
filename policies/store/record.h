/* The on-disk record of one spilled item: a fixed little-endian header, the key,
 * then the value (memcached's data bytes including the trailing "\r\n"), as is
 * or compressed (header byte 33: the codec, compress.h; nbytes stays the
 * value's own length). The CRC-32C covers every byte after the crc field. */
#ifndef AC_RECORD_H
#define AC_RECORD_H
#include <stddef.h>
#include <stdint.h>

#define AC_RECORD_HDR 36

struct ac_record {
    uint32_t len;          /* whole record, header included */
    uint32_t nbytes;       /* value length as memcached stores it (with \r\n) */
    uint32_t client_flags;
    uint32_t exptime;      /* memcached rel_time_t, 0 = never */
    uint32_t time;         /* last access, rel_time_t */
    uint64_t cas;
    uint8_t  nkey;
    uint8_t  codec;        /* how the value is stored: AC_CODEC_NONE, _LZ4, _ZSTD */
    uint32_t stored;       /* value bytes in the record (nbytes unless compressed) */
    const char *key;       /* points into the record buffer after parsing */
    const char *value;     /* the stored value bytes (compressed if codec is set) */
};

static inline size_t ac_record_size(size_t nkey, size_t nbytes) {
    return AC_RECORD_HDR + nkey + nbytes;
}

/* Writes the header for r (key/value copied by the caller or by ac_record_pack)
 * and the CRC into buf; buf must hold ac_record_size(r->nkey, r->nbytes). */
void ac_record_pack(void *buf, const struct ac_record *r);
/* Writes header only; the caller fills key and value at buf + AC_RECORD_HDR and
 * then calls ac_record_seal. */
void ac_record_put_header(void *buf, const struct ac_record *r);
void ac_record_seal(void *buf, size_t len);

/* Compresses the value of the sealed, uncompressed record in buf (len bytes)
 * with codec, in place, through tmp (cap bytes, at least
 * ac_compress_bound(codec, nbytes)), and seals it again: its new length, or len
 * when the codec is none or the value would not get smaller. */
size_t ac_record_compress(void *buf, size_t len, int codec, void *tmp, size_t cap);

enum ac_record_status { AC_REC_OK = 0, AC_REC_SHORT, AC_REC_CRC };
/* Parses and verifies a record of exactly len bytes (len 0: read from header, buf
 * must then hold at least the header and the length it names; avail bounds it). */
enum ac_record_status ac_record_parse(const void *buf, size_t avail, struct ac_record *out);
/* A parsed record's value as memcached stores it: a compressed one is
 * decompressed into dst (r->nbytes bytes) and r then points there (codec none);
 * 0, or -1 when it does not decompress to exactly nbytes (corrupt). */
int ac_record_expand(struct ac_record *r, void *dst);

#endif
