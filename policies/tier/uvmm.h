/* What the files of tier "uvmm" share (uvmm.c: the region, its faults and the
 * tier's descriptor; uvmm_evict.c: the evictor; uvmm_io.c: the page file).
 * Nothing outside tier/uvmm*.c includes it. */
#ifndef AC_UVMM_H
#define AC_UVMM_H
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define UVMM_PAGE 4096u

/* A page's state. Changed under uvmm.lock only; read without it where a stale
 * value is harmless (the clock hand's first look, statistics). */
enum uvmm_state {
    UVMM_NEVER = 0,      /* never touched: a fault maps zeros */
    UVMM_DIRTY,          /* resident, differs from its disk copy (or has none) */
    UVMM_CLEAN,          /* resident, write-protected, its disk copy is valid */
    UVMM_EVICTING,       /* the evictor is writing it out: faults on it wait for its wake-up */
    UVMM_EVICTED,        /* on disk only: a fault fetches it */
    UVMM_FETCHING,       /* a fault thread is reading it: other faults on it wait for the copy */
};

/* Book-keeping of one page, 8 bytes: no location (page i lives at slot i of
 * the page file), the stored length and the page's checksum. */
struct uvmm_page {
    uint8_t state;
    uint8_t ref;         /* access marks (clock: 0/1; hints: 0..3) */
    uint16_t stored;     /* bytes of its disk copy (UVMM_PAGE: stored as is) */
    uint32_t crc;        /* CRC32C of the page's 4096 bytes */
};

enum uvmm_mode { UVMM_MODE_UFFD = 0, UVMM_MODE_CHECK = 1 };
enum uvmm_evict_kind { UVMM_CLOCK = 0, UVMM_HINTS = 1, UVMM_FIFO = 2, UVMM_RANDOM = 3, UVMM_LRU = 4 };

struct uvmm_options {
    uint64_t memory;     /* ac_uvmm_memory: resident bytes of the region (0: what the cgroup allows) */
    unsigned evict;      /* ac_uvmm_evict */
    unsigned compress;   /* ac_uvmm_compress: an AC_CODEC_* */
    uint64_t batch;      /* ac_uvmm_batch: pages per eviction round */
    unsigned clean;      /* ac_uvmm_clean: fetched pages write-protected until written (1) */
    unsigned mode;       /* ac_uvmm_mode: UVMM_MODE_* */
    /* tier emt (EMT, Meyer et al.): free pages at which the evictor starts
     * (0: batch / 2, uvmm's watermark), and the read-ahead window's least and
     * largest size in pages (ra_max 0: no read-ahead) */
    uint64_t low_water;
    uint64_t ra_min, ra_max;
    uint64_t ra_streams;  /* read-ahead windows kept (1: EMT's single window) */
    unsigned pins;        /* tier emt's colours: pages may be pinned (uv.pin) */
};

struct uvmm_counters {
    uint64_t fetches, fetches_unattributed, zero_fills, wp_faults, stale_faults;
    uint64_t checked_fetches;    /* check mode: fetches a worker made itself after its check */
    uint64_t evictions, evictions_clean, write_errors, read_errors, checksum_errors;
    uint64_t bytes_written, bytes_read, page_bytes_written;
    uint64_t waits_for_room;
    /* read-ahead: faults that read ahead, pages read ahead, of them touched
     * before their eviction (used) and evicted untouched (wasted) */
    uint64_t ra_faults, ra_pages, ra_used, ra_wasted;
    /* pins: pinned pages the evictor passed over, and pinned pages it wrote
     * out all the same because no other resident page could go */
    uint64_t pin_skips, pin_overrides;
    uint64_t fault_hist[40];     /* fetch service times: bucket b holds [2^b, 2^(b+1)) ns */
};

struct uvmm {
    struct uvmm_options opt;
    char *base;
    size_t npages;
    struct uvmm_page *pages;
    uint32_t *fifo;              /* fifo: pages in the order they became resident (a ring) */
    uint32_t *stamp;             /* lru: each page's last access (a counter, wrapping) */
    uint32_t clock;              /* lru: the access counter (atomic) */
    uint8_t *ra;                 /* read-ahead on: 1 = read ahead, not touched since */
    uint8_t *pin;                /* pins on: 1 = pinned, the evictor passes over it (atomic bytes) */
    size_t pinned;               /* pages pinned now (atomic; set by tier emt's colour rounds) */
    void (*on_touch)(size_t p);  /* tier emt's colours: each page an access touched (set before serving) */
    size_t fifo_head, fifo_tail;
    pthread_mutex_t lock;        /* states, resident, cap */
    pthread_cond_t room;         /* resident fell below cap (fault threads wait on it) */
    pthread_cond_t work;         /* the evictor's wake-up */
    size_t resident;             /* pages mapped (DIRTY, CLEAN, EVICTING) */
    size_t cap;                  /* resident pages allowed */
    int uffd;
    int file;                    /* the page file, O_DIRECT when the file system allows */
    unsigned align;              /* its direct-I/O alignment (0: buffered) */
    char path[1200];
    bool stop;
    struct uvmm_counters c;      /* under lock, or atomics */
};

extern struct uvmm uv;

/* uvmm_io.c: the page file. */
int uvmm_file_open(const char *dir, char *err, size_t errlen);
void uvmm_file_close(void);
/* What the write of a page (src: 4096 bytes, page-aligned, write-protected)
 * to its slot sends: its bytes compressed per the options into out
 * (uvmm_out_bytes(), aligned to the file's unit) and padded to that unit, or
 * the page itself when that would not be smaller. meta gets the stored
 * length and the CRC; *len the bytes to write. uvmm_page_written counts one
 * that completed. */
const void *uvmm_page_prepare(const void *src, char *out, struct uvmm_page *meta, size_t *len);
size_t uvmm_out_bytes(void);
void uvmm_page_written(size_t len);
int uvmm_file_fd(void);
/* Reads page p back into dst (4096 bytes, aligned), checked against meta:
 * 0, -errno, or -EBADMSG (the checksum does not match). */
int uvmm_page_read(size_t p, void *dst, const struct uvmm_page *meta);

/* uvmm_evict.c: the evictor thread. */
int uvmm_evictor_start(char *err, size_t errlen);
void uvmm_evictor_stop(void);
/* A page became resident (uv.lock held): the strategy learns of it. */
void uvmm_evict_resident(size_t p);
/* The cap in pages the options and the cgroup give now (auto: refreshed). */
size_t uvmm_cap_now(void);

/* An absolute CLOCK_REALTIME time ns from now, for pthread_cond_timedwait. */
static inline struct timespec uvmm_deadline(long ns) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += ns;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    return ts;
}

/* uvmm.c: the tier's entry points, which tier emt (emt.c) shares. */
struct ac_tier_stats;
struct ac_page_ops;
extern const struct ac_page_ops uvmm_page;
extern const char *const uvmm_files[];          /* the page file's name in the spill directory */
int uvmm_open(const char *dir, size_t maxbytes, char *err, size_t errlen);
void uvmm_close(void);
size_t uvmm_fixed_bytes(size_t maxbytes);
size_t uvmm_charged_bytes(void);
void uvmm_get_stats(struct ac_tier_stats *out);
void uvmm_stats(ADD_STAT add_stats, void *c);     /* (memcached.h is included first) */

/* uvmm.c: the fetches the pager made for the calling thread (its page-ins), and
 * the access marks of the pages n bytes at addr cover (the item path's hook). */
uint64_t uvmm_thread_page_ins(void);
void uvmm_touched(const void *addr, size_t n);

/* uvmm.c: the fault service, for the evictor and the read-ahead. */
void uvmm_wake(size_t p);
int uvmm_protect(size_t p, bool wp);
/* Maps src at page p (write-protected when wp); wakes the page's waiters. */
int uvmm_place(size_t p, const void *src, bool wp);
/* Free pages at which the evictor is woken. */
size_t uvmm_low_water(void);

/* uvmm_io.c: n consecutive slots from page first into raw (n pages,
 * aligned), each as its metas[i] says it was stored: 0 or -errno. */
int uvmm_slots_read(size_t first, size_t n, char *raw, const struct uvmm_page *metas);
/* The page in slot (read by uvmm_slots_read) checked against meta: the page
 * itself, or decompressed into tmp (a page); NULL when it does not check. */
const void *uvmm_slot_page(const char *slot, char *tmp, const struct uvmm_page *meta);

/* uvmm_readahead.c: EMT's dynamic read-ahead, after the fault thread fetched
 * page p; and its buffers. */
int uvmm_readahead_init(char *err, size_t errlen);
void uvmm_readahead(size_t p);
void uvmm_readahead_free(void);

#endif
