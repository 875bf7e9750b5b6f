/* DRAM latency measured, and the busy wait (nvm_delay.h). */
#define _GNU_SOURCE
#include "nvm_delay.h"
#include "clock.h"
#include <time.h>

void ac_nvm_spin_ns(uint64_t ns) {
    if (ns == 0)
        return;
    uint64_t end = ac_now_ns() + ns;
    while (ac_now_ns() < end)
        __asm__ __volatile__("" ::: "memory");
}

#define CHASE_MAX (64u << 20)
#define CHASE_MIN (16u << 20)
#define STEPS 400000u

double ac_nvm_dram_ns(void *p, size_t len) {
    if (len < CHASE_MIN)
        return 0;
    size_t bytes = len < CHASE_MAX ? len : CHASE_MAX;
    uint64_t lines = 1;
    while (lines * 2 * 64 <= bytes)
        lines *= 2;
    /* line i points at line (a*i + c) mod lines: a full cycle for a = 1 mod 4
     * and c odd (Hull-Dobell), a stride no prefetcher follows */
    const uint64_t a = 6364136223846793005ULL, c = 1442695040888963407ULL;
    char *base = p;
    for (uint64_t i = 0; i < lines; i++)
        *(char **)(void *)(base + i * 64) = base + ((a * i + c) & (lines - 1)) * 64;
    char *q = base;
    for (unsigned i = 0; i < STEPS / 4; i++)       /* warm the page tables */
        q = *(char **)(void *)q;
    uint64_t t0 = ac_now_ns();
    for (unsigned i = 0; i < STEPS; i++)
        q = *(char **)(void *)q;
    uint64_t t1 = ac_now_ns();
    __asm__ __volatile__("" : : "r"(q) : "memory");
    return (double)(t1 - t0) / STEPS;
}
