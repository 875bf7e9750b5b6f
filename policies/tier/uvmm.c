/* Tier "uvmm": a user-space virtual memory manager pages the slab memory
 * (Zhang et al. ICDE 2015 §VI, the paper's own approach). Items keep real
 * pointers: the slab memory is one anonymous region this tier owns, and the
 * hardware's address translation tells it which page is missing, through
 * userfaultfd (MISSING and write-protect faults, served by the tier's fault
 * thread while the faulting thread waits). Nothing of the region reaches the
 * kernel's swap: the cell's cgroup gives the process none, and only this
 * pager moves pages.
 *
 *  - Book-keeping by page (struct uvmm_page, 8 bytes): a state, access marks,
 *    the stored length and a CRC32C of the page; page i lives at slot i of
 *    the page file (uvmm_io.c), so no location is kept.
 *  - Data swapping by page: a fault on an evicted page reads its slot (lz4 by
 *    default), checks it, and places it with UFFDIO_COPY; a first touch maps
 *    zeros. With ac_uvmm_clean=1 a fetched page is placed write-protected (it
 *    is clean): its first write takes a write-protect fault that marks it
 *    dirty, and a page whose disk copy is still valid is dropped without a
 *    write. Off by default: memcached writes an item's header (its reference
 *    count) on every read, so most fetched pages are written soon after and
 *    the fault costs more than the write it saves (policies/README.md).
 *  - Eviction off the request path (uvmm_evict.c), by the access marks the
 *    request path sets per page (uvmm_touched: the items' accesses aggregated
 *    per page, the paper's "access logging" that "only switches some bits in
 *    the memory").
 *  - Disk hits attributed exactly: the fault message carries the faulting
 *    thread's id (UFFD_FEATURE_THREAD_ID), and each fetch is counted for that
 *    thread; thread_page_ins gives a thread its count, from which the core
 *    counts a read as a disk hit when it rose while the read was served
 *    (ac_hooks.c). Fetches for threads that never ask (memcached's own
 *    background threads) are the rows' unattributed faults.
 *  - A page that cannot be read back (an I/O error, a checksum that does not
 *    match) is never placed: the faulting thread keeps waiting while the read
 *    is retried every 250 ms (uvmm_unreadable_pages, uvmm_read_errors,
 *    uvmm_checksum_errors), so no request sees wrong bytes.
 * The page file is removed at exit; a crashed run's is removed at the next
 * start (ac_spilldir.c, by its name in .files). */
#include "memcached.h"
#include "ac_tier.h"
#include "ac_services.h"
#include "uvmm.h"
#include "store/compress.h"
#include "store/clock.h"
#include "store/lathist.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct uvmm uv = {
    .uffd = -1, .file = -1,
    .lock = PTHREAD_MUTEX_INITIALIZER, .room = PTHREAD_COND_INITIALIZER, .work = PTHREAD_COND_INITIALIZER,
};

/* --- fetches per thread -------------------------------------------------- */

#define TID_SLOTS 1024
struct tid_slot {
    int tid;
    uint64_t fetched;
};
static struct tid_slot tids[TID_SLOTS];
static __thread struct tid_slot *my_slot;

static struct tid_slot *slot_of(int tid) {
    for (unsigned i = 0, h = (unsigned)tid * 2654435761u; i < TID_SLOTS; i++) {
        struct tid_slot *s = &tids[(h + i) % TID_SLOTS];
        int t = __atomic_load_n(&s->tid, __ATOMIC_ACQUIRE);
        if (t == tid)
            return s;
        if (t == 0 && __atomic_compare_exchange_n(&s->tid, &t, tid, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return s;
        if (t == tid)
            return s;
    }
    return NULL;
}

uint64_t uvmm_thread_page_ins(void) {
    if (my_slot == NULL)
        my_slot = slot_of((int)syscall(SYS_gettid));
    return my_slot != NULL ? __atomic_load_n(&my_slot->fetched, __ATOMIC_RELAXED) : 0;
}

/* --- the region ---------------------------------------------------------- */

static size_t region_len;

int uvmm_protect(size_t p, bool wp) {
    struct uffdio_writeprotect w = {
        .range = { .start = (uintptr_t)(uv.base + p * UVMM_PAGE), .len = UVMM_PAGE },
        .mode = wp ? UFFDIO_WRITEPROTECT_MODE_WP : 0,
    };
    return ioctl(uv.uffd, UFFDIO_WRITEPROTECT, &w) == 0 ? 0 : -errno;
}

void uvmm_wake(size_t p) {
    struct uffdio_range r = { .start = (uintptr_t)(uv.base + p * UVMM_PAGE), .len = UVMM_PAGE };
    ioctl(uv.uffd, UFFDIO_WAKE, &r);
}

int uvmm_place(size_t p, const void *src, bool wp) {
    struct uffdio_copy c = {
        .dst = (uintptr_t)(uv.base + p * UVMM_PAGE), .src = (uintptr_t)src, .len = UVMM_PAGE,
        .mode = wp ? UFFDIO_COPY_MODE_WP : 0,
    };
    while (ioctl(uv.uffd, UFFDIO_COPY, &c) != 0) {
        if (errno != EAGAIN)
            return -errno;
        c.copy = 0;
    }
    return 0;
}

/* The region's pages that the n bytes at addr cover: false when none do. */
static bool pages_of(const void *addr, size_t n, size_t *first, size_t *last) {
    uintptr_t a = (uintptr_t)addr, b = (uintptr_t)uv.base;
    if (n == 0 || a < b || a - b >= region_len)
        return false;
    *first = (a - b) / UVMM_PAGE;
    *last = (a - b + n - 1) / UVMM_PAGE;
    if (*last >= uv.npages)
        *last = uv.npages - 1;
    return true;
}

void uvmm_touched(const void *addr, size_t n) {
    size_t first, last;
    if (!pages_of(addr, n, &first, &last))
        return;
    for (size_t p = first; p <= last; p++) {
        uint8_t *r = &uv.pages[p].ref, v = __atomic_load_n(r, __ATOMIC_RELAXED);
        uint8_t want = uv.opt.evict == UVMM_HINTS ? (v < 3 ? (uint8_t)(v + 1) : 3) : 1;
        if (v != want)
            __atomic_store_n(r, want, __ATOMIC_RELAXED);
        if (uv.stamp != NULL)
            __atomic_store_n(&uv.stamp[p], __atomic_add_fetch(&uv.clock, 1, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
        if (uv.ra != NULL && __atomic_load_n(&uv.ra[p], __ATOMIC_RELAXED)
                && __atomic_exchange_n(&uv.ra[p], 0, __ATOMIC_RELAXED))
            __atomic_add_fetch(&uv.c.ra_used, 1, __ATOMIC_RELAXED);
        if (uv.on_touch != NULL)
            uv.on_touch(p);
    }
}

size_t uvmm_low_water(void) {
    return uv.opt.low_water != 0 ? (size_t)uv.opt.low_water : (size_t)uv.opt.batch / 2;
}

/* --- the fault thread ---------------------------------------------------- */

static struct ac_lathist fetch_hist;      /* read, check, place */
static pthread_t faulter;
static bool faulter_running;
static int stop_pipe[2] = { -1, -1 };
/* pages whose read failed: retried, their faulting threads still waiting */
#define PENDING_MAX 256
static struct { size_t p; int tid; } pending[PENDING_MAX];
static int npending;

static void remember_unreadable(size_t p, int tid) {
    for (int i = 0; i < npending; i++)
        if (pending[i].p == p)
            return;
    if (npending < PENDING_MAX) {
        pending[npending].p = p;
        pending[npending].tid = tid;
        npending++;
    }
}

/* Makes page p (NEVER or EVICTED, lock held) resident for thread tid (slot:
 * its counter, or NULL: looked up), reading into buf (a page, aligned); the
 * lock is released on return. 1: this call placed it; 0: it was placed by
 * another meanwhile (the lock is let go while the region is at its cap);
 * -errno after putting the state back. */
static int bring_in(size_t p, int tid, struct tid_slot *slot, char *buf) {
    static const _Alignas(UVMM_PAGE) char zeros[UVMM_PAGE];
    size_t half = uvmm_low_water();
    while (uv.resident >= uv.cap && !uv.stop) {
        uv.c.waits_for_room++;
        pthread_cond_signal(&uv.work);
        struct timespec ts = uvmm_deadline(100000000);
        if (pthread_cond_timedwait(&uv.room, &uv.lock, &ts) == ETIMEDOUT && uv.c.write_errors > 0)
            break;                       /* the evictor cannot write: over the cap rather than stuck */
    }
    uint8_t was = uv.pages[p].state;
    if (was != UVMM_NEVER && was != UVMM_EVICTED) {
        /* brought in by another while this one waited for room (and maybe on
         * its way out again): nothing to place; who waited on it is woken by
         * that one's copy, or faults again */
        pthread_mutex_unlock(&uv.lock);
        return 0;
    }
    bool fetch = was == UVMM_EVICTED;
    struct uvmm_page meta = uv.pages[p];
    uv.pages[p].state = UVMM_FETCHING;
    uv.resident++;
    if (uv.resident + half >= uv.cap)
        pthread_cond_signal(&uv.work);
    pthread_mutex_unlock(&uv.lock);

    uint64_t t0 = ac_now_ns();
    int rc = fetch ? uvmm_page_read(p, buf, &meta) : 0;
    bool clean = fetch && uv.opt.clean;
    if (rc == 0)
        rc = uvmm_place(p, fetch ? buf : zeros, clean);
    pthread_mutex_lock(&uv.lock);
    if (rc != 0) {
        uv.pages[p].state = was;
        uv.resident--;
        if (rc == -EBADMSG)
            uv.c.checksum_errors++;
        else
            uv.c.read_errors++;
        pthread_mutex_unlock(&uv.lock);
        return rc;
    }
    uv.pages[p].state = clean ? UVMM_CLEAN : UVMM_DIRTY;
    uv.pages[p].ref = 1;
    uvmm_evict_resident(p);
    if (fetch)
        uv.c.fetches++;
    else
        uv.c.zero_fills++;
    pthread_mutex_unlock(&uv.lock);
    if (fetch) {
        ac_lathist_add(&fetch_hist, ac_now_ns() - t0);
        struct tid_slot *s = slot != NULL ? slot : slot_of(tid);
        if (s != NULL)
            __atomic_add_fetch(&s->fetched, 1, __ATOMIC_RELAXED);
        else
            __atomic_add_fetch(&uv.c.fetches_unattributed, 1, __ATOMIC_RELAXED);
    }
    return 1;
}

static _Alignas(UVMM_PAGE) char fault_buf[UVMM_PAGE];     /* the fault thread's */

static void serve(uintptr_t addr, bool wp, int tid) {
    uintptr_t b = (uintptr_t)uv.base;
    if (addr < b || addr - b >= region_len)
        return;
    size_t p = (addr - b) / UVMM_PAGE;
    pthread_mutex_lock(&uv.lock);
    uint8_t s = uv.pages[p].state;
    if (s == UVMM_EVICTING || s == UVMM_FETCHING) {
        uv.c.stale_faults++;             /* the evictor or the fetch wakes it when done */
    } else if (s == UVMM_CLEAN || s == UVMM_DIRTY) {
        if (wp) {
            if (s == UVMM_CLEAN) {
                uv.pages[p].state = UVMM_DIRTY;
                uv.c.wp_faults++;
            }
            uvmm_protect(p, false);      /* under the lock: the evictor sees DIRTY only once writable */
        } else {
            uv.c.stale_faults++;
            uvmm_wake(p);
        }
    } else {
        bool fetch = s == UVMM_EVICTED;
        int rc = bring_in(p, tid, NULL, fault_buf);   /* releases the lock */
        if (rc == 0)
            uvmm_wake(p);                /* placed by another: the waiter may have missed its wake-up */
        if (rc == 1 && fetch)
            uvmm_readahead(p);
        if (rc < 0) {
            static bool said;
            if (!said) {
                said = true;
                fprintf(stderr, "memcached-ac: uvmm: page %zu cannot be read back from %s: %s; the thread"
                        " that needs it waits while the read is retried\n", p, uv.path,
                        rc == -EBADMSG ? "its checksum does not match" : strerror(-rc));
            }
            remember_unreadable(p, tid);
        }
        return;
    }
    pthread_mutex_unlock(&uv.lock);
}

static void retry_unreadable(void) {
    int n = npending;
    npending = 0;
    for (int i = 0; i < n; i++) {
        size_t p = pending[i].p;
        pthread_mutex_lock(&uv.lock);
        uint8_t s = uv.pages[p].state;
        if (s == UVMM_EVICTED || s == UVMM_NEVER) {
            int rc = bring_in(p, pending[i].tid, NULL, fault_buf);   /* releases the lock */
            if (rc < 0)
                remember_unreadable(p, pending[i].tid);
            else if (rc == 0)
                uvmm_wake(p);
        } else {
            pthread_mutex_unlock(&uv.lock);
            uvmm_wake(p);                /* placed meanwhile (a check-mode worker): its waiter goes on */
        }
    }
}

static void *fault_main(void *arg) {
    (void)arg;
    struct uffd_msg msgs[16];
    for (;;) {
        struct pollfd fds[2] = { { .fd = uv.uffd, .events = POLLIN }, { .fd = stop_pipe[0], .events = POLLIN } };
        int r = poll(fds, 2, npending > 0 ? 250 : -1);
        if (r < 0 && errno != EINTR)
            break;
        if (fds[1].revents != 0)
            break;
        if (r == 0) {
            retry_unreadable();
            continue;
        }
        ssize_t n = read(uv.uffd, msgs, sizeof(msgs));
        if (n <= 0)
            continue;                    /* EAGAIN: taken already */
        for (ssize_t i = 0; i < n / (ssize_t)sizeof(msgs[0]); i++) {
            if (msgs[i].event != UFFD_EVENT_PAGEFAULT)
                continue;
            serve((uintptr_t)msgs[i].arg.pagefault.address, (msgs[i].arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP) != 0,
                  (int)msgs[i].arg.pagefault.feat.ptid);
        }
    }
    return NULL;
}

/* --- check mode: the worker brings a page in itself ---------------------- */

static bool uvmm_checking(void) {
    return uv.opt.mode == UVMM_MODE_CHECK;
}

/* vmcache's way (Leis et al., SIGMOD 2023): the state word of each page is
 * read before the access, and a page not in memory is read in by the thread
 * that needs it, without a fault or a switch to the fault thread. The fault
 * path stays as the safety net for accesses the item path does not check (the
 * slab allocator's free lists, LRU neighbours) and for pages in flight. */
static void uvmm_check(const void *addr, size_t n) {
    static __thread _Alignas(UVMM_PAGE) char buf[UVMM_PAGE];
    size_t first, last;
    if (!pages_of(addr, n, &first, &last))
        return;
    for (size_t p = first; p <= last; p++) {
        uint8_t s = __atomic_load_n(&uv.pages[p].state, __ATOMIC_ACQUIRE);
        if (s != UVMM_EVICTED)
            continue;                    /* resident, in flight (the fault path waits), or never touched */
        if (my_slot == NULL)
            my_slot = slot_of((int)syscall(SYS_gettid));
        pthread_mutex_lock(&uv.lock);
        if (uv.pages[p].state != UVMM_EVICTED) {
            pthread_mutex_unlock(&uv.lock);
            continue;
        }
        int rc = bring_in(p, 0, my_slot, buf);   /* releases the lock */
        if (rc == 1)
            __atomic_add_fetch(&uv.c.checked_fetches, 1, __ATOMIC_RELAXED);
        else
            uvmm_wake(p);    /* not placed: who faulted on it while it was in flight faults again (the fault path) */
    }
}

/* --- the tier ------------------------------------------------------------ */

static const struct ac_word evict_words[] = {
    { "clock", "second chance over the pages' access marks", UVMM_CLOCK, NULL },
    { "hints", "clock whose marks count accesses (up to 3), one taken off per pass", UVMM_HINTS, NULL },
    { "fifo", "the page resident longest", UVMM_FIFO, NULL },
    { "random", "a resident page at random", UVMM_RANDOM, NULL },
    { "lru", "the least recently accessed of 32 resident pages after the hand (sampled LRU)", UVMM_LRU, NULL },
    { NULL, NULL, 0, NULL },
};

static const struct ac_word codec_words[] = {
    { "none", "pages written as they are", AC_CODEC_NONE, NULL },
    { "lz4", "liblz4, fast", AC_CODEC_LZ4, NULL },
    { "zstd", "libzstd level 1, smaller", AC_CODEC_ZSTD, NULL },
    { NULL, NULL, 0, NULL },
};

static const struct ac_word bool_words[] = {
    { "0", NULL, 0, NULL },
    { "1", NULL, 1, NULL },
    { NULL, NULL, 0, NULL },
};

static const struct ac_word mode_words[] = {
    { "uffd", "a missing page is a fault, served by the fault thread (the paper's UVMM)", UVMM_MODE_UFFD, NULL },
    { "check", "the item path checks each page's state and reads a missing one itself (vmcache)",
      UVMM_MODE_CHECK, NULL },
    { NULL, NULL, 0, NULL },
};

static const struct ac_opt uvmm_opts[] = {
    { .key = "ac_uvmm_mode", .type = AC_T_ENUM, AC_FIELD(struct uvmm_options, mode), .words = mode_words,
      .def = "uffd", .def_is_value = true, .help = "how a missing page is found: by its fault, or by a check" },
    { .key = "ac_uvmm_memory", .type = AC_T_SIZE, AC_FIELD(struct uvmm_options, memory), .min = 64 * AC_KIB,
      .max = AC_NOMAX, .def = "what the cgroup allows",
      .help = "resident bytes of the slab region (default: the cgroup's limit less what else the process holds)" },
    { .key = "ac_uvmm_evict", .type = AC_T_ENUM, AC_FIELD(struct uvmm_options, evict), .words = evict_words,
      .def = "clock", .def_is_value = true, .help = "which resident page is written out first" },
    { .key = "ac_uvmm_compress", .type = AC_T_ENUM, AC_FIELD(struct uvmm_options, compress), .words = codec_words,
      .def = "lz4", .def_is_value = true, .help = "compress each page written (kept as is when it would not shrink)" },
    { .key = "ac_uvmm_clean", .type = AC_T_ENUM, AC_FIELD(struct uvmm_options, clean), .words = bool_words,
      .def = "0", .def_is_value = true,
      .help = "1 = a fetched page stays write-protected until written, and is dropped unwritten if it was not"
              " (each first write costs a fault; memcached writes an item's header on every read)" },
    { .key = "ac_uvmm_batch", .type = AC_T_COUNT, AC_FIELD(struct uvmm_options, batch), .min = 2, .max = 4096,
      .noun = "a count of pages", .def = "64", .def_is_value = true,
      .help = "pages the evictor writes out per round (the watermarks: cap - batch/2 wakes it, it stops at cap - batch)" },
};
static const struct ac_opt_table uvmm_options = AC_OPT_TABLE("tier uvmm", uvmm_opts, &uv.opt);

int uvmm_open(const char *dir, size_t maxbytes, char *err, size_t errlen) {
    (void)maxbytes;
    int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        snprintf(err, errlen, "userfaultfd is not available here: %s (the kernel needs CONFIG_USERFAULTFD;"
                 " without CAP_SYS_PTRACE, vm.unprivileged_userfaultfd=1)", strerror(errno));
        return -1;
    }
    struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_THREAD_ID | UFFD_FEATURE_PAGEFAULT_FLAG_WP };
    if (ioctl(fd, UFFDIO_API, &api) != 0) {
        snprintf(err, errlen, "userfaultfd does not offer thread ids and write-protect faults on anonymous"
                 " memory here: %s (Linux 5.7 or later)", strerror(errno));
        close(fd);
        return -1;
    }
    uv.uffd = fd;
    if (uv.opt.memory != 0) {
        uv.cap = (size_t)(uv.opt.memory / UVMM_PAGE);
    } else {
        uint64_t limit, usage;
        char path[1400];
        if (ac_cgroup_memory(&limit, &usage, path, sizeof(path)) != 0 || limit == UINT64_MAX) {
            snprintf(err, errlen, "the cgroup %s has no memory limit to page under; give the resident memory with"
                     " ac_uvmm_memory=SIZE (tier emt: ac_emt_cache=SIZE)", path);
            close(fd);
            uv.uffd = -1;
            return -1;
        }
        uv.cap = uvmm_cap_now();
    }
    if (pipe2(stop_pipe, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        close(fd);
        uv.uffd = -1;
        return -1;
    }
    if (uvmm_file_open(dir, err, errlen) != 0) {
        close(fd);
        uv.uffd = -1;
        return -1;
    }
    return 0;
}

void uvmm_close(void) {
    if (faulter_running) {
        if (write(stop_pipe[1], "x", 1) != 1)
            perror("memcached-ac: uvmm: stopping the fault thread");
        pthread_join(faulter, NULL);
        faulter_running = false;
    }
    uvmm_evictor_stop();
    uvmm_readahead_free();
    for (int i = 0; i < 2; i++) {
        if (stop_pipe[i] >= 0)
            close(stop_pipe[i]);
        stop_pipe[i] = -1;
    }
    uvmm_file_close();
    if (uv.uffd >= 0)
        close(uv.uffd);
    uv.uffd = -1;
}

static void *uvmm_map(size_t len, bool random) {
    (void)random;                        /* no read-around: a fault brings one page */
    len = (len + UVMM_PAGE - 1) / UVMM_PAGE * UVMM_PAGE;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "memcached-ac: uvmm: anonymous mapping of %zu bytes failed: %s\n", len, strerror(errno));
        return NULL;
    }
    madvise(p, len, MADV_NOHUGEPAGE);    /* faults and evictions by 4 KiB pages */
    uv.npages = len / UVMM_PAGE;
    uv.pages = calloc(uv.npages, sizeof(*uv.pages));
    uv.fifo = uv.opt.evict == UVMM_FIFO ? calloc(uv.npages, sizeof(*uv.fifo)) : NULL;
    uv.stamp = uv.opt.evict == UVMM_LRU ? calloc(uv.npages, sizeof(*uv.stamp)) : NULL;
    uv.pin = uv.opt.pins ? calloc(uv.npages, 1) : NULL;
    char err[256];
    if (uv.pages == NULL || (uv.opt.evict == UVMM_FIFO && uv.fifo == NULL)
            || (uv.opt.evict == UVMM_LRU && uv.stamp == NULL) || (uv.opt.pins && uv.pin == NULL)
            || uvmm_readahead_init(err, sizeof(err)) != 0) {
        fprintf(stderr, "memcached-ac: uvmm: no memory for the book-keeping of %zu pages\n", uv.npages);
        munmap(p, len);
        return NULL;
    }
    struct uffdio_register reg = {
        .range = { .start = (uintptr_t)p, .len = len },
        .mode = UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_WP,
    };
    if (ioctl(uv.uffd, UFFDIO_REGISTER, &reg) != 0) {
        fprintf(stderr, "memcached-ac: uvmm: registering the region with userfaultfd failed: %s\n", strerror(errno));
        munmap(p, len);
        return NULL;
    }
    uv.base = p;
    region_len = len;
    int rc = pthread_create(&faulter, NULL, fault_main, NULL);
    if (rc != 0) {
        fprintf(stderr, "memcached-ac: uvmm: cannot start the fault thread: %s\n", strerror(rc));
        return NULL;
    }
    faulter_running = true;
    if (uvmm_evictor_start(err, sizeof(err)) != 0) {
        fprintf(stderr, "memcached-ac: uvmm: %s\n", err);
        return NULL;
    }
    return p;
}

size_t uvmm_fixed_bytes(size_t maxbytes) {
    (void)maxbytes;
    return 0;              /* the page table lives beside -m, under the cgroup's limit (uvmm_cap_now) */
}

size_t uvmm_charged_bytes(void) {
    return 0;
}

static size_t book_bytes(void) {
    return uv.npages * (sizeof(struct uvmm_page) + (uv.fifo != NULL ? sizeof(uint32_t) : 0)
                        + (uv.stamp != NULL ? sizeof(uint32_t) : 0) + (uv.ra != NULL ? 1 : 0)
                        + (uv.pin != NULL ? 1 : 0));
}

void uvmm_get_stats(struct ac_tier_stats *out) {
    pthread_mutex_lock(&uv.lock);
    *out = (struct ac_tier_stats){
        .table_bytes = book_bytes(),
        .bytes_written = __atomic_load_n(&uv.c.bytes_written, __ATOMIC_RELAXED),
        .record_reads = uv.c.fetches,
        .io_errors = uv.c.read_errors + uv.c.write_errors + uv.c.checksum_errors,
    };
    pthread_mutex_unlock(&uv.lock);
}

#define U(x) ((unsigned long long)(x))

void uvmm_stats(ADD_STAT add_stats, void *c) {
    pthread_mutex_lock(&uv.lock);
    struct uvmm_counters k = uv.c;
    size_t resident = uv.resident, cap = uv.cap, evicted = 0;
    for (size_t p = 0; p < uv.npages; p++)
        evicted += uv.pages[p].state == UVMM_EVICTED;
    int unreadable = npending;
    pthread_mutex_unlock(&uv.lock);
    APPEND_STAT("uvmm_mode", "%s", mode_words[uv.opt.mode].word);
    APPEND_STAT("uvmm_evict", "%s", evict_words[uv.opt.evict].word);
    APPEND_STAT("uvmm_compress", "%s", ac_codec_name((int)uv.opt.compress));
    APPEND_STAT("uvmm_pages", "%llu", U(uv.npages));
    APPEND_STAT("uvmm_resident_pages", "%llu", U(resident));
    APPEND_STAT("uvmm_evicted_pages", "%llu", U(evicted));
    APPEND_STAT("uvmm_cap_pages", "%llu", U(cap));
    APPEND_STAT("uvmm_book_bytes", "%llu", U(book_bytes()));
    APPEND_STAT("uvmm_book_bytes_per_page", "%llu", U(uv.npages > 0 ? book_bytes() / uv.npages : 0));
    APPEND_STAT("uvmm_fetches", "%llu", U(k.fetches));
    APPEND_STAT("uvmm_fetches_unattributed", "%llu", U(k.fetches_unattributed));
    APPEND_STAT("uvmm_checked_fetches", "%llu", U(k.checked_fetches));
    APPEND_STAT("uvmm_zero_fills", "%llu", U(k.zero_fills));
    APPEND_STAT("uvmm_wp_faults", "%llu", U(k.wp_faults));
    APPEND_STAT("uvmm_stale_faults", "%llu", U(k.stale_faults));
    APPEND_STAT("uvmm_waits_for_room", "%llu", U(k.waits_for_room));
    APPEND_STAT("uvmm_evictions", "%llu", U(k.evictions));
    APPEND_STAT("uvmm_evictions_clean", "%llu", U(k.evictions_clean));
    APPEND_STAT("uvmm_bytes_written", "%llu", U(k.bytes_written));
    APPEND_STAT("uvmm_page_bytes_written", "%llu", U(k.page_bytes_written));
    APPEND_STAT("uvmm_bytes_read", "%llu", U(k.bytes_read));
    APPEND_STAT("uvmm_write_errors", "%llu", U(k.write_errors));
    APPEND_STAT("uvmm_read_errors", "%llu", U(k.read_errors));
    APPEND_STAT("uvmm_checksum_errors", "%llu", U(k.checksum_errors));
    APPEND_STAT("uvmm_unreadable_pages", "%d", unreadable);
    APPEND_STAT("uvmm_low_water_pages", "%llu", U(uvmm_low_water()));
    APPEND_STAT("uvmm_evict_pages", "%llu", U(uv.opt.batch));
    APPEND_STAT("uvmm_readahead_min", "%llu", U(uv.opt.ra_max > 0 ? uv.opt.ra_min : 0));
    APPEND_STAT("uvmm_readahead_max", "%llu", U(uv.opt.ra_max));
    APPEND_STAT("uvmm_readahead_streams", "%llu", U(uv.opt.ra_max > 0 ? uv.opt.ra_streams : 0));
    APPEND_STAT("uvmm_readahead_faults", "%llu", U(k.ra_faults));
    APPEND_STAT("uvmm_readahead_pages", "%llu", U(k.ra_pages));
    APPEND_STAT("uvmm_readahead_used", "%llu", U(k.ra_used));
    APPEND_STAT("uvmm_readahead_wasted", "%llu", U(k.ra_wasted));
    APPEND_STAT("uvmm_pinned_pages", "%llu", U(__atomic_load_n(&uv.pinned, __ATOMIC_RELAXED)));
    APPEND_STAT("uvmm_pin_skips", "%llu", U(k.pin_skips));
    APPEND_STAT("uvmm_pin_overrides", "%llu", U(k.pin_overrides));
    APPEND_STAT("uvmm_fetch_ns_p50", "%llu", U(ac_lathist_quantile(&fetch_hist, 0.50)));
    APPEND_STAT("uvmm_fetch_ns_p99", "%llu", U(ac_lathist_quantile(&fetch_hist, 0.99)));
}

const char *const uvmm_files[] = { "uvmm.pages", NULL };

const struct ac_page_ops uvmm_page = {
    .map = uvmm_map, .thread_page_ins = uvmm_thread_page_ins, .touched = uvmm_touched,
    .checking = uvmm_checking, .check = uvmm_check,
};

const struct ac_tier ac_tier_uvmm = {
    .name = "uvmm",
    .summary = "our user-space pager: the slab memory in one region paged by userfaultfd to a page file",
    .caps = AC_CAP_PAGE | AC_CAP_FILES,
    .files = uvmm_files,
    .options = { &uvmm_options, &ac_io_options },
    .page = &uvmm_page,
    .fixed_bytes = uvmm_fixed_bytes,
    .open = uvmm_open,
    .close = uvmm_close,
    .charged_bytes = uvmm_charged_bytes,
    .get_stats = uvmm_get_stats,
    .stats = uvmm_stats,
};
