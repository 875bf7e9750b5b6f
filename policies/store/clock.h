/* The monotonic clock in nanoseconds, for every file that times something
 * (rounds, waits, back-offs, emulated latencies). No memcached dependency. */
#ifndef AC_CLOCK_H
#define AC_CLOCK_H
#include <stdint.h>
#include <time.h>

static inline uint64_t ac_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif
