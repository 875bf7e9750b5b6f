/* CRC-32C (Castagnoli, polynomial 0x1EDC6F41, reflected 0x82F63B78), software table. */
#ifndef AC_CRC32C_H
#define AC_CRC32C_H
#include <stddef.h>
#include <stdint.h>

uint32_t ac_crc32c(uint32_t crc, const void *buf, size_t len);

#endif
