/* NVM latency emulated in software (Arulraj, DeBrabant, Pavlo et al. ran on
 * Intel's NVM emulator at 2x and 8x DRAM latency, "the base DRAM latency is
 * approximately 90 ns"): every cache line of the NVM region an operation
 * touched costs `extra` nanoseconds more than DRAM, paid by the calling thread
 * in a busy wait after the operation (never under a lock). DRAM's own latency
 * is measured on the machine by a dependent pointer chase over the region (its
 * lines visited in an order no prefetcher follows), or given. No memcached
 * dependency. */
#ifndef AC_NVM_DELAY_H
#define AC_NVM_DELAY_H
#include <stddef.h>
#include <stdint.h>

/* DRAM's latency in ns, measured by a pointer chase over the len bytes at p
 * (at most the first 64 MiB; the bytes are overwritten). 0 when len is below
 * 16 MiB: a smaller region fits the caches, so what a chase there measures is not DRAM. */
double ac_nvm_dram_ns(void *p, size_t len);
/* Waits ns nanoseconds (busy: a sleep's wake-up costs more than the wait). */
void ac_nvm_spin_ns(uint64_t ns);

#endif
