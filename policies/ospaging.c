/* Policy "ospaging": the operating system pages instead of the store
 * (Zhang et al., ICDE 2015, §III-B "OS paging": the data set lives in virtual
 * memory larger than RAM and the kernel's page replacement moves cold pages
 * to disk; Stoica & Ailamaki, DaMoN 2013, use the same baseline).
 *
 * memcached-ac never evicts and never spills: -m is sized above the data, the
 * slab allocator carves its pages from one mapping of -m bytes, and the memory
 * limit of the cgroup makes the kernel page that mapping out:
 *   ac_os_backing=anon  MAP_PRIVATE|MAP_ANONYMOUS: pages go to swap;
 *   ac_os_backing=file  MAP_SHARED of ac_spill_dir/ospaging.mem (-m bytes):
 *                       the page cache writes dirty pages back to the file
 *                       and drops clean ones; no swap is needed.
 * Transparent huge pages are disabled on the mapping (MADV_NOHUGEPAGE) so the
 * kernel pages it in 4 KiB units, and MADV_RANDOM turns off the read-around
 * of file faults (swap-in readahead is vm.page-cluster, set by the harness). pick_victims returns nothing: when -m is
 * exhausted a store fails (SERVER_ERROR out of memory), nothing is lost.
 * A read is a disk hit when its thread took a major fault while serving it
 * (ac_core.c). The file is removed at exit; the mapping is left to exit. */
#include "memcached.h"
#include "ac_internal.h"
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

static int map_file(size_t len) {
    snprintf(file_path, sizeof(file_path), "%s/%s", ac.dir, OS_FILE_NAME);
    int fd = spill_file_create(file_path);
    if (fd < 0) {
        fprintf(stderr, "memcached-ac: ospaging: cannot create %s: %s\n", file_path, strerror(errno));
        file_path[0] = '\0';
        return -1;
    }
    if (ftruncate(fd, (off_t)len) != 0) {
        fprintf(stderr, "memcached-ac: ospaging: cannot size %s to %zu bytes: %s\n", file_path, len, strerror(errno));
        close(fd);
        return -1;
    }
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);             /* the mapping keeps the file open */
    if (p == MAP_FAILED) {
        fprintf(stderr, "memcached-ac: ospaging: mmap of %s (%zu bytes) failed: %s\n", file_path, len, strerror(errno));
        return -1;
    }
    ac_slab_base = p;
    return 0;
}

void *ac_map_anon(size_t len, const char *who) {
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "memcached-ac: %s: anonymous mapping of %zu bytes failed: %s\n", who, len, strerror(errno));
        return NULL;
    }
    madvise(p, len, MADV_NOHUGEPAGE);     /* best effort: the kernel pages it in 4 KiB units */
    return p;
}

static int map_anon(size_t len) {
    ac_slab_base = ac_map_anon(len, "ospaging");
    return ac_slab_base != NULL ? 0 : -1;
}

static void os_shutdown(void) {
    if (file_backed && file_path[0] != '\0') {
        unlink(file_path);
        file_path[0] = '\0';
    }
}

static int os_init(const struct ac_options *o) {
    map_bytes = ac.item_limit;
    file_backed = o->os_file;
    if ((file_backed ? map_file(map_bytes) : map_anon(map_bytes)) != 0) {
        os_shutdown();
        return -1;
    }
    /* best effort: 4 KiB paging (ac_map_anon does it for anon), and no
     * read-around on a fault: a file mapping otherwise reads the file's
     * readahead window (128 KiB) per fault, which vm.page-cluster does not
     * govern, and thrashes the page cache under the cgroup limit (measured:
     * 101 GB read for 60000 reads of a 39 MB mapping) */
    if (file_backed)
        madvise(ac_slab_base, map_bytes, MADV_NOHUGEPAGE);
    if (madvise(ac_slab_base, map_bytes, MADV_RANDOM) != 0)
        fprintf(stderr, "memcached-ac: ospaging: madvise(MADV_RANDOM) failed: %s\n", strerror(errno));
    return 0;
}

void ac_paged_no_op(item *it) {
    (void)it;
}

int ac_paged_no_victims(unsigned int clsid, item **out, int max) {
    (void)clsid;
    (void)out;
    (void)max;
    return 0;              /* the kernel pages; memcached-ac never evicts */
}

static size_t os_metadata_bytes(void) {
    return 0;
}

static void os_stats(ADD_STAT add_stats, void *c) {
    APPEND_STAT("os_backing", "%s", file_backed ? "file" : "anon");
    APPEND_STAT("os_mapping_bytes", "%zu", map_bytes);
    APPEND_STAT("os_file", "%s", file_backed ? file_path : "");
}

const struct ac_policy_ops ac_policy_ospaging = {
    .name = "ospaging",
    .summary = "no eviction: slab memory in one mapping, the kernel pages it (swap or file)",
    .init = os_init,
    .on_insert = ac_paged_no_op,
    .on_access = ac_paged_no_op,
    .on_remove = ac_paged_no_op,
    .pick_victims = ac_paged_no_victims,
    .metadata_bytes = os_metadata_bytes,
    .stats = os_stats,
    .shutdown = os_shutdown,
    .kernel_paged = true,
};
