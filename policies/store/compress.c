/* The codecs of compress.h (lz4, zstd level 1), one value at a time; zstd
 * keeps one context per thread (a context per call cut throughput 5x). */
#include "compress.h"
#include <lz4.h>
#include <zstd.h>

/* zstd's fastest regular level: spilling is on the request path (Collet,
 * zstd manual: level 1 trades ratio for speed) */
#define ZSTD_LEVEL 1

/* One context per thread, kept for the thread's life: creating one per call
 * (ZSTD_compress) costs more than compressing a 1 KB value (measured: 5x
 * lower throughput in a spilling run). */
static __thread ZSTD_CCtx *cctx;
static __thread ZSTD_DCtx *dctx;

const char *ac_codec_name(int codec) {
    switch (codec) {
    case AC_CODEC_NONE: return "none";
    case AC_CODEC_LZ4: return "lz4";
    case AC_CODEC_ZSTD: return "zstd";
    default: return NULL;
    }
}

size_t ac_compress_bound(int codec, size_t n) {
    if (codec == AC_CODEC_LZ4)
        return n > (size_t)LZ4_MAX_INPUT_SIZE ? 0 : (size_t)LZ4_compressBound((int)n);
    if (codec == AC_CODEC_ZSTD)
        return ZSTD_compressBound(n);
    return n;
}

size_t ac_compress(int codec, const void *src, size_t n, void *dst, size_t cap) {
    size_t out = 0;
    if (codec == AC_CODEC_LZ4 && n <= (size_t)LZ4_MAX_INPUT_SIZE) {
        int r = LZ4_compress_default(src, dst, (int)n, cap > (size_t)LZ4_MAX_INPUT_SIZE ? LZ4_MAX_INPUT_SIZE : (int)cap);
        out = r > 0 ? (size_t)r : 0;
    } else if (codec == AC_CODEC_ZSTD) {
        if (cctx == NULL && (cctx = ZSTD_createCCtx()) == NULL)
            return 0;
        size_t r = ZSTD_compressCCtx(cctx, dst, cap, src, n, ZSTD_LEVEL);
        out = ZSTD_isError(r) ? 0 : r;
    }
    return out < n ? out : 0;
}

int ac_decompress(int codec, const void *src, size_t len, void *dst, size_t n) {
    if (codec == AC_CODEC_LZ4) {
        if (len > (size_t)LZ4_MAX_INPUT_SIZE || n > (size_t)LZ4_MAX_INPUT_SIZE)
            return -1;
        int r = LZ4_decompress_safe(src, dst, (int)len, (int)n);
        return r >= 0 && (size_t)r == n ? 0 : -1;
    }
    if (codec == AC_CODEC_ZSTD) {
        if (dctx == NULL && (dctx = ZSTD_createDCtx()) == NULL)
            return -1;
        size_t r = ZSTD_decompressDCtx(dctx, dst, n, src, len);
        return !ZSTD_isError(r) && r == n ? 0 : -1;
    }
    return -1;
}
