/* Compression of a spilled record's value (-o ac_compress): lz4 (liblz4) or
 * zstd (libzstd), one value at a time so that a record stays readable on its
 * own (tuple-level fetch). No memcached dependency. */
#ifndef AC_COMPRESS_H
#define AC_COMPRESS_H
#include <stddef.h>

enum ac_codec { AC_CODEC_NONE = 0, AC_CODEC_LZ4 = 1, AC_CODEC_ZSTD = 2 };
#define AC_CODEC_MAX AC_CODEC_ZSTD

/* "none", "lz4", "zstd"; NULL for a value that names no codec. */
const char *ac_codec_name(int codec);
/* The most bytes codec may need for n input bytes. */
size_t ac_compress_bound(int codec, size_t n);
/* Compresses src[0..n) into dst (cap bytes): the compressed size, or 0 when
 * it failed or would not be smaller than n (the value is then stored as is). */
size_t ac_compress(int codec, const void *src, size_t n, void *dst, size_t cap);
/* Decompresses src[0..len) into dst, which holds exactly n bytes: 0 when it
 * produced exactly n bytes, -1 otherwise (corrupt input, wrong length). */
int ac_decompress(int codec, const void *src, size_t len, void *dst, size_t n);

#endif
