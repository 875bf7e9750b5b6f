/* CRC-32C (Castagnoli, polynomial 0x1EDC6F41, reflected 0x82F63B78): the CPU's
 * instruction where it has one (SSE4.2), else a byte-wise table. */
#ifndef AC_CRC32C_H
#define AC_CRC32C_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

uint32_t ac_crc32c(uint32_t crc, const void *buf, size_t len);
/* The table's result, whatever the CPU has (tests compare the two). */
uint32_t ac_crc32c_table(uint32_t crc, const void *buf, size_t len);
/* ac_crc32c uses the CPU's instruction. */
bool ac_crc32c_hardware(void);

#endif
