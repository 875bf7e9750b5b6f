/* CounterGenerator + AcknowledgedCounterGenerator (YCSB 0.17), thread-safe.
 *
 * Inserts take next(); once the store acknowledged the insert, ack(v) marks
 * v's slot in a 2^20 window; whoever gets the try-lock advances `limit` over
 * the contiguous run of acknowledged slots.  Readers choose keys <= last(), so
 * they never ask for a key whose insert has not completed. */
#include <stdlib.h>
#include "ycsb_gen.h"

#define WINDOW_MASK ((int64_t)YCSB_ACK_WINDOW - 1)

int ycsb_ackcounter_init(struct ycsb_ackcounter *c, int64_t start)
{
    c->counter = start;
    c->limit = start - 1;
    c->window = calloc(YCSB_ACK_WINDOW, 1);
    if (c->window == NULL)
        return -1;
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c->window);
        c->window = NULL;
        return -1;
    }
    return 0;
}

void ycsb_ackcounter_destroy(struct ycsb_ackcounter *c)
{
    if (c->window != NULL) {
        pthread_mutex_destroy(&c->lock);
        free(c->window);
        c->window = NULL;
    }
}

int64_t ycsb_ackcounter_next(struct ycsb_ackcounter *c)
{
    return __atomic_fetch_add(&c->counter, 1, __ATOMIC_RELAXED);
}

int64_t ycsb_ackcounter_last(const struct ycsb_ackcounter *c)
{
    return __atomic_load_n(&c->limit, __ATOMIC_ACQUIRE);
}

int ycsb_ackcounter_ack(struct ycsb_ackcounter *c, int64_t value)
{
    size_t slot = (size_t)(value & WINDOW_MASK);
    if (__atomic_load_n(&c->window[slot], __ATOMIC_ACQUIRE))
        return -1;
    __atomic_store_n(&c->window[slot], 1, __ATOMIC_RELEASE);
    if (pthread_mutex_trylock(&c->lock) == 0) {
        int64_t index = __atomic_load_n(&c->limit, __ATOMIC_RELAXED) + 1;
        /* at most one window's worth of contiguous acknowledged slots */
        for (int64_t n = 0; n < (int64_t)YCSB_ACK_WINDOW; n++, index++) {
            size_t s = (size_t)(index & WINDOW_MASK);
            if (!__atomic_load_n(&c->window[s], __ATOMIC_ACQUIRE))
                break;
            __atomic_store_n(&c->window[s], 0, __ATOMIC_RELEASE);
        }
        __atomic_store_n(&c->limit, index - 1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&c->lock);
    }
    return 0;
}
