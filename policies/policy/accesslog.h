/* Access logging for the classifier (Siberia, Levandoski et al. ICDE 2013 §II-B:
 * record accesses are logged, sampled, and classified offline). Each thread
 * that logs gets its own single-producer single-consumer ring of
 * {fingerprint, size, reference} entries, allocated on its first append; a full ring
 * drops the entry and counts it, so a worker never blocks or waits -- unless
 * the log is lossless (ac_log_set_lossless: the warm-up history of
 * ac_log_offline), when the worker waits until the consumer made room and
 * counts the wait. One consumer (the classifier thread) drains all rings. Sampling: an access is
 * logged with probability `sample` (a per-thread xorshift generator; 1.0 logs
 * every access). No memcached dependency. */
#ifndef AC_ACCESSLOG_H
#define AC_ACCESSLOG_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AC_LOG_MAX_RINGS 256

struct ac_log_entry {
    uint64_t fp;
    uint32_t size;
    uint32_t ref;             /* the logger's own 32-bit reference to the record (0: none) */
};

struct ac_log_ring {
    uint64_t head;            /* written by the producer */
    char pad1[56];
    uint64_t tail;            /* written by the consumer */
    char pad2[56];
    uint64_t drops;           /* producer */
    uint64_t waits, wait_ns;  /* producer: appends that waited for room (lossless), and how long */
    struct ac_log_entry e[];  /* capacity entries */
};

struct ac_access_log {
    struct ac_log_ring *rings[AC_LOG_MAX_RINGS];
    unsigned nrings;          /* atomic */
    uint64_t capacity;        /* entries per ring, power of two */
    uint64_t threshold;       /* sample * 2^64 (UINT64_MAX: every access) */
    uint64_t gen;             /* tells a re-initialised log from the one a thread's ring belonged to */
    uint64_t unringed;        /* appends of threads beyond AC_LOG_MAX_RINGS (dropped) */
    bool lossless;            /* atomic: a full ring makes its producer wait, not drop */
};

/* capacity: entries per ring (rounded up to a power of two, >= 16);
 * sample in (0, 1]. 0, or -1 on bad arguments. */
int ac_log_init(struct ac_access_log *l, size_t capacity, double sample);
void ac_log_destroy(struct ac_access_log *l);
/* Bytes of one ring. */
size_t ac_log_ring_bytes(size_t capacity);
/* Bytes of the rings allocated so far. */
size_t ac_log_bytes(const struct ac_access_log *l);
/* Producer side, in two steps so that a caller computes fp and size only for
 * the sampled accesses: this thread's sampling draw, then the unconditional
 * record. Lock-free; never blocks unless the log is lossless and the ring full. */
bool ac_log_draw(const struct ac_access_log *l);
static inline bool ac_log_sampled(const struct ac_access_log *l) {
    return l->threshold == UINT64_MAX || ac_log_draw(l);   /* every access: no draw */
}
void ac_log_record(struct ac_access_log *l, uint64_t fp, uint32_t size);
/* The same with a reference the consumer gets back (effpaging: where the item is). */
void ac_log_record_ref(struct ac_access_log *l, uint64_t fp, uint32_t size, uint32_t ref);
/* Consumer side: hands up to max entries (over all rings) to fn; returns how many. */
size_t ac_log_drain(struct ac_access_log *l, void (*fn)(const struct ac_log_entry *e, void *arg),
                    void *arg, size_t max);
/* Entries dropped because a ring was full (or no ring could be had). */
uint64_t ac_log_drops(const struct ac_access_log *l);
/* Lossless or not (the default): while it is, a producer whose ring is full
 * spins, then yields, then sleeps until the consumer has drained room, instead
 * of dropping. The consumer must keep draining meanwhile, and take no lock a
 * producer may hold while it appends. A producer that waits when it is turned
 * off drops, as without it. */
void ac_log_set_lossless(struct ac_access_log *l, bool on);
/* Appends that waited for room, and the nanoseconds they waited in all. */
uint64_t ac_log_waits(const struct ac_access_log *l, uint64_t *wait_ns);

#endif
