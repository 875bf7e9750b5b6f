/* Tiers "swap" and "mmapfile": the operating system pages (Zhang et al., ICDE
 * 2015, §III-B "OS paging": the data set lives in virtual memory larger than
 * RAM and the kernel's page replacement moves cold pages to disk; Stoica &
 * Ailamaki, DaMoN 2013, use the same baseline). Nothing is spilled: the tier
 * provides the slab memory, one mapping the cgroup's memory limit makes the
 * kernel page:
 *   swap      MAP_PRIVATE|MAP_ANONYMOUS: pages go to swap;
 *   mmapfile  MAP_SHARED of ac_spill_dir/ospaging.mem: the page cache writes
 *             dirty pages back to the file and drops clean ones; no swap.
 * Book-keeping and access tracking are the kernel's (page tables, its LRU
 * lists), so nothing is charged. Transparent huge pages are off on the
 * mapping (MADV_NOHUGEPAGE: 4 KiB paging) and MADV_RANDOM turns off the
 * read-around of file faults (swap-in readahead is vm.page-cluster, set by
 * the harness). Both are paging tiers (ac_tier.h): the pages a thread waited
 * for are its major faults (getrusage RUSAGE_THREAD), from which the core
 * counts a read as a disk hit when they rose while it was served
 * (ac_hooks.c). The file is removed at exit; the mapping is left to exit. */
#include "memcached.h"
#include "ac_tier.h"
#include "store/spill_file.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#define OS_FILE_NAME "ospaging.mem"

static size_t map_bytes;
static bool file_backed;
static char file_path[1200];

static int kernel_open(const char *dir, size_t maxbytes, char *err, size_t errlen) {
    (void)maxbytes;
    (void)err;
    (void)errlen;
    if (file_backed)
        snprintf(file_path, sizeof(file_path), "%s/%s", dir, OS_FILE_NAME);
    return 0;
}

static int swap_open(const char *dir, size_t maxbytes, char *err, size_t errlen) {
    file_backed = false;
    return kernel_open(dir, maxbytes, err, errlen);
}

static int mmapfile_open(const char *dir, size_t maxbytes, char *err, size_t errlen) {
    file_backed = true;
    return kernel_open(dir, maxbytes, err, errlen);
}

static void kernel_close(void) {
    if (file_backed && file_path[0] != '\0') {
        unlink(file_path);
        file_path[0] = '\0';
    }
}

/* Best effort: 4 KiB paging, and (random) no read-around on a fault: a file
 * mapping otherwise reads the file's readahead window (128 KiB) per fault,
 * which vm.page-cluster does not govern, and thrashes the page cache under
 * the cgroup limit (measured: 101 GB read for 60000 reads of a 39 MB mapping). */
static void *advise(void *p, size_t len, bool random, const char *who) {
    madvise(p, len, MADV_NOHUGEPAGE);
    map_bytes = len;
    if (random && madvise(p, len, MADV_RANDOM) != 0)
        fprintf(stderr, "memcached-ac: %s: madvise(MADV_RANDOM) failed: %s\n", who, strerror(errno));
    return p;
}

static void *swap_map(size_t len, bool random) {
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "memcached-ac: swap: anonymous mapping of %zu bytes failed: %s\n", len, strerror(errno));
        return NULL;
    }
    return advise(p, len, random, "swap");
}

static void *mmapfile_map(size_t len, bool random) {
    int fd = spill_file_create(file_path);
    if (fd < 0) {
        fprintf(stderr, "memcached-ac: mmapfile: cannot create %s: %s\n", file_path, strerror(errno));
        file_path[0] = '\0';
        return NULL;
    }
    if (ftruncate(fd, (off_t)len) != 0) {
        fprintf(stderr, "memcached-ac: mmapfile: cannot size %s to %zu bytes: %s\n", file_path, len, strerror(errno));
        close(fd);
        return NULL;
    }
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);             /* the mapping keeps the file open */
    if (p == MAP_FAILED) {
        fprintf(stderr, "memcached-ac: mmapfile: mmap of %s (%zu bytes) failed: %s\n", file_path, len, strerror(errno));
        return NULL;
    }
    return advise(p, len, random, "mmapfile");
}

static size_t kernel_fixed_bytes(size_t maxbytes) {
    (void)maxbytes;
    return 0;
}

static size_t kernel_charged_bytes(void) {
    return 0;
}

static void kernel_get_stats(struct ac_tier_stats *out) {
    *out = (struct ac_tier_stats){ 0 };
}

static void kernel_stats(ADD_STAT add_stats, void *c) {
    APPEND_STAT("os_backing", "%s", file_backed ? "file" : "anon");
    APPEND_STAT("os_mapping_bytes", "%zu", map_bytes);
    APPEND_STAT("os_file", "%s", file_backed ? file_path : "");
}

/* The pages this thread waited for: its major faults. */
static uint64_t thread_major_faults(void) {
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) != 0)
        return 0;
    return (uint64_t)ru.ru_majflt;
}

static const char *const no_files[] = { NULL };
static const char *const mmapfile_files[] = { OS_FILE_NAME, NULL };

static const struct ac_page_ops swap_page = { .map = swap_map, .thread_page_ins = thread_major_faults };
static const struct ac_page_ops mmapfile_page = { .map = mmapfile_map, .thread_page_ins = thread_major_faults };

const struct ac_tier ac_tier_swap = {
    .name = "swap",
    .summary = "the kernel pages the slab memory, one anonymous mapping, to swap",
    .caps = AC_CAP_PAGE | AC_CAP_ANON,
    .files = no_files,
    .page = &swap_page,
    .fixed_bytes = kernel_fixed_bytes,
    .open = swap_open,
    .close = kernel_close,
    .charged_bytes = kernel_charged_bytes,
    .get_stats = kernel_get_stats,
    .stats = kernel_stats,
};

const struct ac_tier ac_tier_mmapfile = {
    .name = "mmapfile",
    .summary = "the kernel pages the slab memory, a shared mapping of a file in the spill directory",
    .caps = AC_CAP_PAGE | AC_CAP_FILES,
    .files = mmapfile_files,
    .page = &mmapfile_page,
    .fixed_bytes = kernel_fixed_bytes,
    .open = mmapfile_open,
    .close = kernel_close,
    .charged_bytes = kernel_charged_bytes,
    .get_stats = kernel_get_stats,
    .stats = kernel_stats,
};
