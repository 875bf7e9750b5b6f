/* Cleaning of the tuple store's log (tier tuples). Removed records leave
 * dead bytes in the tuple store's segments; without cleaning the log grows
 * with every spill of an item that was fetched, updated or deleted since
 * (under churn several GiB a minute for a few hundred MiB of live data). A
 * thread watches the store (ac_tuple_gc_pick, every CHECK_MS): while the log
 * holds more than twice its live bytes plus two segments, it takes the segment
 * with the fewest live bytes, moves each live record to the head of the log
 * under its key's item lock and then punches the empty segment out of the
 * file for reuse (ac_tuple_gc_release).
 *
 * Why the item lock: a request for a key holds it from its index lookup
 * (ac_cold_find) to its last use of the location it found (read, remove), so
 * a record it is using is never moved or punched under it. A record whose
 * key is locked right now is left for a later pass. A record that no longer
 * parses (damaged) has no key to lock: it is moved as it is, and a request
 * still answers its checksum error. */
#include "memcached.h"
#include "cold_gc.h"
#include "store/record.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK_MS 20

static struct {
    struct ac_tuple_store *store;
    void (*tick)(void);
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool started, stop;
} gc = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER };

size_t ac_cold_gc_segment_bytes(size_t maxbytes, size_t item_size_max) {
    size_t want = maxbytes / 4, seg = 1u << 20;
    while (seg < want && seg < AC_TUPLE_SEG_DEFAULT)
        seg <<= 1;
    /* a record is the item plus its header; four of the largest fit */
    while (seg < 4 * (item_size_max + AC_RECORD_HDR + KEY_MAX_LENGTH))
        seg <<= 1;
    return seg;
}

static bool stopping(void) {
    pthread_mutex_lock(&gc.lock);
    bool s = gc.stop;
    pthread_mutex_unlock(&gc.lock);
    return s;
}

/* Moves one live record if its key can be locked now; false: left for later. */
static bool move_one(const struct ac_tuple_ref *ref, char *buf) {
    if (ac_tuple_get(gc.store, &ref->loc, buf) != 0)
        return false;
    struct ac_record r;
    if (ac_record_parse(buf, ref->loc.len, &r) != AC_REC_OK || r.len != ref->loc.len)
        return ac_tuple_relocate(gc.store, ref->fp, &ref->loc, buf) >= 0;
    void *lk = item_trylock(hash(r.key, r.nkey));
    if (lk == NULL)
        return false;
    /* relocate checks under the store lock that the record is still live at
     * loc: the bytes read above are then its bytes (a segment being cleaned is
     * never written) */
    int rc = ac_tuple_relocate(gc.store, ref->fp, &ref->loc, buf);
    item_trylock_unlock(lk);
    return rc >= 0;
}

/* One pass over a segment; true when it was released. */
static bool clean_segment(uint32_t seg) {
    struct ac_tuple_ref *refs = NULL;
    long n = ac_tuple_gc_list(gc.store, seg, &refs);
    if (n < 0)
        return false;
    char *buf = NULL;
    size_t cap = 0;
    for (long i = 0; i < n && !stopping(); i++) {
        if (refs[i].loc.len > cap) {
            char *b = realloc(buf, refs[i].loc.len);
            if (b == NULL)
                break;
            buf = b;
            cap = refs[i].loc.len;
        }
        move_one(&refs[i], buf);
    }
    free(buf);
    free(refs);
    return ac_tuple_gc_release(gc.store, seg);
}

static void *gc_thread(void *arg) {
    (void)arg;
    pthread_mutex_lock(&gc.lock);
    while (!gc.stop) {
        pthread_mutex_unlock(&gc.lock);
        uint32_t seg;
        if (gc.tick != NULL)
            gc.tick();
        bool again = ac_tuple_gc_pick(gc.store, &seg) && clean_segment(seg);
        pthread_mutex_lock(&gc.lock);
        if (again || gc.stop)
            continue;                /* released one: look again at once */
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += CHECK_MS * 1000000L;
        if (t.tv_nsec >= 1000000000L) {
            t.tv_sec++;
            t.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&gc.wake, &gc.lock, &t);
    }
    pthread_mutex_unlock(&gc.lock);
    return NULL;
}

int ac_cold_gc_start(struct ac_tuple_store *store, void (*tick)(void)) {
    gc.store = store;
    gc.tick = tick;
    gc.stop = false;
    int rc = pthread_create(&gc.thread, NULL, gc_thread, NULL);
    if (rc != 0) {
        fprintf(stderr, "memcached-ac: tuples: cannot start the cold store's cleaning thread: %s\n", strerror(rc));
        return -1;
    }
    gc.started = true;
    return 0;
}

void ac_cold_gc_stop(void) {
    if (!gc.started)
        return;
    pthread_mutex_lock(&gc.lock);
    gc.stop = true;
    pthread_cond_signal(&gc.wake);
    pthread_mutex_unlock(&gc.lock);
    pthread_join(gc.thread, NULL);
    gc.started = false;
}
