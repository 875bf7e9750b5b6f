/* CRC-32C, byte-wise table (Castagnoli et al., 1993; the reflected polynomial is
 * 0x82F63B78). Check value for "123456789" is 0xE3069283 (RFC 3720 B.4). */
#include "crc32c.h"
#include <pthread.h>

static uint32_t table[256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        table[i] = c;
    }
}

uint32_t ac_crc32c(uint32_t crc, const void *buf, size_t len) {
    const unsigned char *p = buf;
    pthread_once(&table_once, table_init);
    crc = ~crc;
    while (len--)
        crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}
