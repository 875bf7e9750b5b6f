/* Policy "vma": access tracking by virtual-memory protection (Zhang et al.,
 * ICDE 2015, §IV-B "VMA protection", Table II and Fig 2; the access observer
 * of their reference [38]), over any spilling tier.
 *
 * Tracking. The slab pages come from one anonymous mapping of vma's
 * (ac_page_source: memcached stays in its malloc mode, so the budget still
 * moves, pages are borrowed and released), cut into granules of
 * ac_vma_granule bytes (a multiple of the OS page). Every ac_vma_reset (1 s,
 * the paper's flag reset interval) a thread starts a new epoch and protects
 * the whole mapping (PROT_NONE). The first access to a granule after that
 * faults: the SIGSEGV handler stores the epoch in the granule's slot and opens
 * the granule again (PROT_READ|PROT_WRITE), so the rest of the epoch's
 * accesses to it cost nothing. Each open granule is a VMA of its own until the
 * next reset (the kernel's vm_area_struct, 176 bytes in Table II); a start
 * that could need more VMAs than vm.max_map_count allows is refused. Faults
 * outside the mapping go to the handler installed before (or kill the process
 * as they would have).
 *
 * Eviction (ours; the paper measures only the tracking): not recently used at
 * granule granularity. Each victim of a class is the resident item, among
 * ac_vma_samples random chunks of the class, whose granule was accessed the
 * most epochs ago. Reading a candidate to check it does not count as an access
 * (the granule is protected again after); the spill's own copy of a victim
 * does, and so do memcached's background threads (LRU crawler, maintainer),
 * like any access.
 *
 * The kernel does not fault on a process's behalf: a send or receive that
 * touches a protected page fails with EFAULT. So vma runs only with the
 * in-process driver (-o ac_driver=FILE), where every access to item memory is
 * the process's own. */
#include "memcached.h"
#include "ac_policy.h"
#include "ac_services.h"
#include "page_source.h"
#include "test_hooks.h"
#include "victim_checks.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* VMAs left to the rest of the process (libraries, thread stacks, malloc) */
#define MAP_COUNT_RESERVE 4096
/* granules a victim check may open (an item header across two of them, a chunk and its head) */
#define QUIET_MAX 8

struct vma_options {
    uint64_t reset_ns;                /* ac_vma_reset */
    uint64_t granule;                 /* ac_vma_granule */
    unsigned samples;                 /* ac_vma_samples */
};
static struct vma_options opt;

static char *base;
static size_t len, granule, ngranules;
static uint32_t *seen;                /* per granule: the epoch of its last access (0: none yet) */
static uint32_t epoch = 1;
static struct sigaction previous;
static bool handler_installed;
static pthread_t reset_thread;
static bool reset_running, stopping;
static pthread_mutex_t stop_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stop_cond = PTHREAD_COND_INITIALIZER;

/* a victim check in progress on this thread: the granules its reads opened
 * (written by the fault handler: volatile, and fenced around the reads) */
static __thread volatile struct { bool on; int n; size_t g[QUIET_MAX]; } quiet;

static struct {
    uint64_t faults, resets, open_all, samples, victims;
} st;
static uint64_t rng = 0x9E3779B97F4A7C15ULL;   /* xorshift64*, used under the spill lock */

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define BUMP(x) __atomic_add_fetch(&(x), 1, __ATOMIC_RELAXED)

static void chain(int sig, siginfo_t *si, void *ctx) {
    if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction != NULL) {
        previous.sa_sigaction(sig, si, ctx);
    } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN && previous.sa_handler != NULL) {
        previous.sa_handler(sig);
    } else {
        /* as without us: the default action ends the process, for a fault (the
         * access is repeated) and for a SIGSEGV another process sent (raised
         * again: pending until the handler returns) */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof(dfl));
        dfl.sa_handler = SIG_DFL;
        sigaction(SIGSEGV, &dfl, NULL);
        raise(SIGSEGV);
    }
}

static void on_fault(int sig, siginfo_t *si, void *ctx) {
    char *a = si->si_addr;
    if (si->si_code != SEGV_ACCERR || base == NULL || a < base || a >= base + len) {
        chain(sig, si, ctx);
        return;
    }
    int saved = errno;
    size_t g = (size_t)(a - base) / granule;
    BUMP(st.faults);
    if (mprotect(base + g * granule, granule, PROT_READ | PROT_WRITE) != 0) {
        /* no VMA left for the split (vm.max_map_count): open everything until the next reset */
        if (mprotect(base, len, PROT_READ | PROT_WRITE) != 0) {
            static const char msg[] = "memcached-ac: vma: cannot open the protected slab memory after a fault\n";
            ssize_t w = write(STDERR_FILENO, msg, sizeof(msg) - 1);
            (void)w;
            abort();
        }
        BUMP(st.open_all);
    }
    /* the epoch is read after the granule is open: a reset in between (epoch
     * moved on, everything protected again) is recorded as the new epoch, and
     * the granule faults again; never an open granule recorded in the old one */
    if (!quiet.on)
        __atomic_store_n(&seen[g], __atomic_load_n(&epoch, __ATOMIC_SEQ_CST), __ATOMIC_RELAXED);
    else if (quiet.n < QUIET_MAX)
        quiet.g[quiet.n++] = g;
    errno = saved;
}

/* A new epoch: everything protected again, the next access of each granule is seen. */
static void reset_epoch(void) {
    uint32_t e = __atomic_load_n(&epoch, __ATOMIC_SEQ_CST) + 1;
    __atomic_store_n(&epoch, e == 0 ? 1 : e, __ATOMIC_SEQ_CST);    /* before the protection */
    if (mprotect(base, len, PROT_NONE) == 0)
        BUMP(st.resets);
}

void ac_vma_reset_now(void) {
    reset_epoch();
}

static void *reset_main(void *arg) {
    (void)arg;
    pthread_mutex_lock(&stop_lock);
    while (!stopping) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        uint64_t ns = (uint64_t)until.tv_nsec + opt.reset_ns % 1000000000ULL;
        until.tv_sec += (time_t)(opt.reset_ns / 1000000000ULL + ns / 1000000000ULL);
        until.tv_nsec = (long)(ns % 1000000000ULL);
        if (pthread_cond_timedwait(&stop_cond, &stop_lock, &until) == ETIMEDOUT && !stopping)
            reset_epoch();
    }
    pthread_mutex_unlock(&stop_lock);
    return NULL;
}

static size_t granules_for(size_t bytes, size_t g) {
    return (bytes + g - 1) / g;
}

static size_t vma_fixed_bytes(size_t maxbytes) {
    return granules_for(maxbytes + ac_slab_headroom(), (size_t)opt.granule) * sizeof(uint32_t);
}

static long max_map_count(void) {
    long n = 65530;                   /* the kernel's default (DEFAULT_MAX_MAP_COUNT) */
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    if (f != NULL) {
        if (fscanf(f, "%ld", &n) != 1)
            n = 65530;
        fclose(f);
    }
    return n;
}

static void vma_shutdown(void) {
    if (reset_running) {
        pthread_mutex_lock(&stop_lock);
        stopping = true;
        pthread_cond_signal(&stop_cond);
        pthread_mutex_unlock(&stop_lock);
        pthread_join(reset_thread, NULL);
        reset_running = false;
    }
    if (base != NULL)
        mprotect(base, len, PROT_READ | PROT_WRITE);
    if (handler_installed) {
        sigaction(SIGSEGV, &previous, NULL);
        handler_installed = false;
    }
}

static int vma_init(void) {
    if (!ac_in_process()) {
        fprintf(stderr, "memcached-ac: ac_policy=vma protects the slab memory (PROT_NONE) to see accesses, and the"
                " kernel cannot read or write protected pages for a socket (EFAULT): it runs only with the"
                " in-process driver (-o ac_driver=FILE)\n");
        return -1;
    }
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || opt.granule % (uint64_t)page != 0) {
        fprintf(stderr, "memcached-ac: ac_vma_granule must be a multiple of the page size (%ld bytes), got %llu bytes\n",
                page, (unsigned long long)opt.granule);
        return -1;
    }
    granule = (size_t)opt.granule;
    ngranules = granules_for(ac_slab_limit() + ac_slab_headroom(), granule);
    len = ngranules * granule;
    long maps = max_map_count(), room = maps - MAP_COUNT_RESERVE > 0 ? maps - MAP_COUNT_RESERVE : 1;
    if ((long)ngranules > room) {
        size_t need = granules_for(granules_for(len, (size_t)room), (size_t)page) * (size_t)page;
        fprintf(stderr, "memcached-ac: ac_policy=vma: the slab memory (%zu bytes) is %zu granules of %zu bytes, each"
                " of which can become a mapping of its own: more than vm.max_map_count (%ld) less %d for the rest"
                " of the process; set ac_vma_granule to %zu or more, or raise vm.max_map_count\n",
                len, ngranules, granule, maps, MAP_COUNT_RESERVE, need);
        return -1;
    }
    seen = calloc(ngranules, sizeof(uint32_t));
    if (seen == NULL) {
        fprintf(stderr, "memcached-ac: vma: cannot allocate %zu granule slots\n", ngranules);
        return -1;
    }
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "memcached-ac: vma: an anonymous mapping of %zu bytes for the slab memory failed: %s\n",
                len, strerror(errno));
        free(seen);
        seen = NULL;
        return -1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, &previous) != 0) {
        fprintf(stderr, "memcached-ac: vma: cannot install the SIGSEGV handler: %s\n", strerror(errno));
        return -1;
    }
    handler_installed = true;
    base = p;
    if (mprotect(base, len, PROT_NONE) != 0) {
        fprintf(stderr, "memcached-ac: vma: mprotect of the slab memory failed: %s\n", strerror(errno));
        vma_shutdown();
        return -1;
    }
    stopping = false;
    if (pthread_create(&reset_thread, NULL, reset_main, NULL) != 0) {
        fprintf(stderr, "memcached-ac: vma: cannot start the reset thread\n");
        vma_shutdown();
        return -1;
    }
    reset_running = true;
    ac_page_source(base, len);
    return 0;
}

/* Epochs since the granule of p was last accessed (the current epoch: 0). */
static uint32_t age_of(const void *p) {
    size_t g = (size_t)((const char *)p - base) / granule;
    return __atomic_load_n(&epoch, __ATOMIC_RELAXED) - __atomic_load_n(&seen[g], __ATOMIC_RELAXED);
}

static bool in_mapping(const void *p) {
    return (const char *)p >= base && (const char *)p < base + len;
}

/* Reads of a candidate that do not count as accesses: what they opened is protected again. */
static void quiet_begin(void) {
    quiet.n = 0;
    quiet.on = true;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);     /* the candidate's reads come after */
}

static void quiet_end(void) {
    __atomic_signal_fence(__ATOMIC_SEQ_CST);     /* ... and before */
    for (int i = 0; i < quiet.n; i++)
        mprotect(base + quiet.g[i] * granule, granule, PROT_NONE);
    quiet.on = false;
    quiet.n = 0;
}

static uint64_t next_rand(void) {
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1DULL;
}

/* The resident item a sampled chunk stands for (a chunk of a chunked item: its
 * header), or NULL; read quietly. */
static item *candidate(void *chunk, unsigned int clsid, item **out, int n) {
    item *it = chunk;
    quiet_begin();
    if ((it->it_flags & (ITEM_CHUNK | ITEM_SLABBED)) == ITEM_CHUNK)
        it = ((item_chunk *)chunk)->head;
    if (it != NULL && (!in_mapping(it) || !ac_is_resident(it, clsid) || ac_chosen(it, out, n)))
        it = NULL;
    quiet_end();
    return it;
}

static int vma_pick_victims(unsigned int clsid, item **out, int max) {
    if (clsid >= MAX_NUMBER_OF_SLAB_CLASSES || base == NULL)
        return 0;
    int n = 0;
    while (n < max) {
        item *best = NULL;
        uint32_t best_age = 0;
        unsigned got = 0;
        for (unsigned tries = 0; got < opt.samples && tries < 4 * opt.samples; tries++) {
            void *c = slabs_chunk_sample(clsid, next_rand());
            if (c == NULL)
                return n;
            BUMP(st.samples);
            item *it = in_mapping(c) ? candidate(c, clsid, out, n) : NULL;
            if (it == NULL)
                continue;
            got++;
            uint32_t age = age_of(it);
            if (best == NULL || age > best_age) {
                best = it;
                best_age = age;
            }
        }
        if (best == NULL)
            break;
        out[n++] = best;
    }
    st.victims += (uint64_t)n;
    return n;
}

static size_t vma_metadata_bytes(void) {
    return ngranules * sizeof(uint32_t);   /* the epoch slots; the kernel's VMAs are not ours to count */
}

static void vma_stats(ADD_STAT add_stats, void *c) {
    uint64_t carved, reused, released;
    ac_page_source_stats(&carved, &reused, &released);
    APPEND_STAT("vma_pages_carved", "%llu", (unsigned long long)carved);
    APPEND_STAT("vma_pages_reused", "%llu", (unsigned long long)reused);
    APPEND_STAT("vma_pages_released", "%llu", (unsigned long long)released);
    APPEND_STAT("vma_granule_bytes", "%zu", granule);
    APPEND_STAT("vma_granules", "%zu", ngranules);
    APPEND_STAT("vma_reset_ns", "%llu", (unsigned long long)opt.reset_ns);
    APPEND_STAT("vma_epoch", "%u", (unsigned)__atomic_load_n(&epoch, __ATOMIC_RELAXED));
    APPEND_STAT("vma_faults", "%llu", (unsigned long long)LOAD(st.faults));
    APPEND_STAT("vma_resets", "%llu", (unsigned long long)LOAD(st.resets));
    APPEND_STAT("vma_open_all", "%llu", (unsigned long long)LOAD(st.open_all));
    APPEND_STAT("vma_sampled", "%llu", (unsigned long long)LOAD(st.samples));
    APPEND_STAT("vma_victims", "%llu", (unsigned long long)LOAD(st.victims));
}

static void vma_no_op(item *it) {
    (void)it;          /* accesses are seen by the fault handler */
}

static const struct ac_opt vma_opts[] = {
    { .key = "ac_vma_reset", .type = AC_T_DURATION, AC_FIELD(struct vma_options, reset_ns), .min = AC_SEC / 1000,
      .max = 3600 * AC_SEC, .units = AC_U_S | AC_U_MS, .note = "(the paper: 1s)",
      .def = "1s", .def_is_value = true,
      .help = "how often every granule is protected again (a new epoch)" },
    { .key = "ac_vma_granule", .type = AC_T_SIZE, AC_FIELD(struct vma_options, granule), .min = 4 * AC_KIB,
      .max = 1024 * AC_KIB * AC_KIB, .noun = "a size", .note = "(a multiple of the page size, e.g. 64K)",
      .def = "4k", .def_is_value = true, .bookkeeping = true,
      .help = "bytes protected and tracked as one (a multiple of the page size)" },
    { .key = "ac_vma_samples", .type = AC_T_COUNT, AC_FIELD(struct vma_options, samples), .min = 1, .max = 64,
      .noun = "an integer", .def = "5", .def_is_value = true,
      .help = "chunks sampled per victim (the least recently accessed granule wins)" },
};
static const struct ac_opt_table vma_options = AC_OPT_TABLE("policy vma", vma_opts, &opt);

const struct ac_policy_ops ac_policy_vma = {
    .name = "vma",
    .summary = "VMA protection: mprotect and a SIGSEGV handler see each granule's first access per epoch"
               " (in-process driver only)",
    .default_tier = "blocks",
    .tier_shapes = AC_CAP_SPILL,
    .options = { &vma_options },
    .in_process_only = true,
    .fetch_on_read = true,
    .fixed_bytes = vma_fixed_bytes,
    .init = vma_init,
    .on_insert = vma_no_op,
    .on_access = vma_no_op,
    .on_remove = vma_no_op,
    .pick_victims = vma_pick_victims,
    .metadata_bytes = vma_metadata_bytes,
    .stats = vma_stats,
    .shutdown = vma_shutdown,
    .page_alloc = ac_page_source_alloc,
    .page_release = ac_page_source_release,
};
