/* Test-only entry points of policies (policies/tests/): never called by the
 * server. */
#ifndef AC_TEST_HOOKS_H
#define AC_TEST_HOOKS_H
#include <stddef.h>
#include <stdint.h>

/* alru: replaces the clock source (before init; a scripted clock) */
void ac_alru_set_clock(uint32_t (*now)(void));
/* vma: starts a new epoch now, as its reset thread does every ac_vma_reset */
void ac_vma_reset_now(void);
/* wtinylfu: the frequency sketch's estimate of a key */
unsigned ac_wtinylfu_estimate(const char *key, size_t nkey);

#endif
