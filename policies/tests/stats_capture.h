/* memcached's append_stat for the policies' unit tests: a policy's stats()
 * lines are collected as "name=value " into last_stats (cleared by the test). */
#ifndef AC_STATS_CAPTURE_H
#define AC_STATS_CAPTURE_H
/* memcached.h (the tests' stand-in) must be included first. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static char last_stats[2048];

void append_stat(const char *name, ADD_STAT f, void *c, const char *fmt, ...) {
    (void)f;
    (void)c;
    size_t n = strlen(last_stats);
    n += (size_t)snprintf(last_stats + n, sizeof(last_stats) - n, "%s=", name);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_stats + n, sizeof(last_stats) - n, fmt, ap);
    va_end(ap);
    strncat(last_stats, " ", sizeof(last_stats) - strlen(last_stats) - 1);
}

#endif
