/* CRC-32C (Castagnoli et al., 1993; the reflected polynomial is 0x82F63B78).
 * Check value for "123456789" is 0xE3069283 (RFC 3720 B.4).
 *
 * x86-64 CPUs with SSE4.2 have an instruction for it (crc32, 8 bytes at a time):
 * used when the CPU has it (checked once). The byte-wise table is the fallback:
 * it cost 17 % of a fetch-bound run's CPU time (perf, lru over blocks, 1.2 KB
 * records: the CRC is computed when a record is written, read back or merged). */
#include "crc32c.h"
#include <pthread.h>
#include <string.h>
#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

static uint32_t table[256];
static uint32_t (*impl)(uint32_t crc, const unsigned char *p, size_t len);
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static uint32_t crc_table(uint32_t crc, const unsigned char *p, size_t len) {
    while (len--)
        crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t crc_sse42(uint32_t crc, const unsigned char *p, size_t len) {
    uint64_t c = crc;
    for (; len >= 8; p += 8, len -= 8) {
        uint64_t v;
        memcpy(&v, p, 8);                      /* unaligned, little-endian: the reflected order */
        c = _mm_crc32_u64(c, v);
    }
    crc = (uint32_t)c;
    while (len--)
        crc = _mm_crc32_u8(crc, *p++);
    return crc;
}
#endif

static void init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        table[i] = c;
    }
    impl = crc_table;
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2"))
        impl = crc_sse42;
#endif
}

uint32_t ac_crc32c(uint32_t crc, const void *buf, size_t len) {
    pthread_once(&init_once, init);
    return ~impl(~crc, buf, len);
}

uint32_t ac_crc32c_table(uint32_t crc, const void *buf, size_t len) {
    pthread_once(&init_once, init);
    return ~crc_table(~crc, buf, len);
}

bool ac_crc32c_hardware(void) {
    pthread_once(&init_once, init);
    return impl != crc_table;
}
