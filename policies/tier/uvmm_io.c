/* Tier "uvmm": its page file. Page i of the region lives at slot i (offset
 * i * 4096) of ac_spill_dir/uvmm.pages, so the book-keeping holds no location,
 * only the stored length and a checksum (struct uvmm_page). A page is written
 * compressed when the codec shrinks it (ac_uvmm_compress, lz4 by default: the
 * ICDE 2015 paper's UVMM compressed its swap units with lz4, §VI-B4), padded
 * to the file's direct-I/O unit, and read back the same way: what lz4 saves is
 * I/O, not file space. Every transfer goes through the I/O engine
 * (store/io_engine.h: -o ac_io, and ac_fault's injected errors); the evictor
 * sends a round's writes together (uvmm_evict.c). The file is sparse: slots
 * never written take no space. */
#include "memcached.h"
#include "ac_tier.h"
#include "uvmm.h"
#include "store/compress.h"
#include "store/crc32c.h"
#include "store/spill_file.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define UVMM_FILE_NAME "uvmm.pages"

int uvmm_file_open(const char *dir, char *err, size_t errlen) {
    snprintf(uv.path, sizeof(uv.path), "%s/%s", dir, UVMM_FILE_NAME);
    int fd = spill_file_create(uv.path);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create the page file %s: %s", uv.path, strerror(errno));
        uv.path[0] = '\0';
        return -1;
    }
    /* direct I/O where the file system has it: the page file's transfers stay
     * out of the page cache, which the cgroup would charge beside the region */
    int dfd = open(uv.path, O_RDWR | O_DIRECT | O_NOFOLLOW | O_CLOEXEC);
    unsigned align = dfd >= 0 ? ac_io_direct_align(dfd) : 0;
    if (align > 0 && align <= UVMM_PAGE) {
        close(fd);
        uv.file = dfd;
        uv.align = align;
        ac_io_direct_file(1);
    } else {
        if (dfd >= 0)
            close(dfd);
        uv.file = fd;
        uv.align = 0;
        spill_file_random(fd);
    }
    return 0;
}

void uvmm_file_close(void) {
    if (uv.file >= 0) {
        close(uv.file);
        if (uv.align > 0)
            ac_io_direct_file(-1);
        uv.file = -1;
    }
    if (uv.path[0] != '\0') {
        unlink(uv.path);
        uv.path[0] = '\0';
    }
}

int uvmm_file_fd(void) {
    return uv.file;
}

static size_t padded(size_t n) {
    return uv.align > 0 ? (size_t)ac_io_align_up(n, uv.align) : n;
}

const void *uvmm_page_prepare(const void *src, char *out, struct uvmm_page *meta, size_t *len) {
    size_t cap = ac_compress_bound((int)uv.opt.compress, UVMM_PAGE);
    size_t n = cap > 0 && cap <= uvmm_out_bytes() ? ac_compress((int)uv.opt.compress, src, UVMM_PAGE, out, cap) : 0;
    meta->crc = ac_crc32c(0, src, UVMM_PAGE);
    if (n == 0 || padded(n) >= UVMM_PAGE) {   /* no gain in what is written: the page itself */
        meta->stored = UVMM_PAGE;
        *len = UVMM_PAGE;
        return src;
    }
    *len = padded(n);
    memset(out + n, 0, *len - n);
    meta->stored = (uint16_t)n;
    return out;
}

size_t uvmm_out_bytes(void) {
    /* the codec's bound for a page (lz4: 4096 + 32), whole units of the file's alignment */
    size_t bound = ac_compress_bound((int)uv.opt.compress, UVMM_PAGE);
    size_t unit = uv.align > 0 ? uv.align : 512;
    return bound > 0 ? (bound + unit - 1) / unit * unit : unit;
}

void uvmm_page_written(size_t len) {
    __atomic_add_fetch(&uv.c.bytes_written, len, __ATOMIC_RELAXED);
    __atomic_add_fetch(&uv.c.page_bytes_written, UVMM_PAGE, __ATOMIC_RELAXED);
}

int uvmm_page_read(size_t p, void *dst, const struct uvmm_page *meta) {
    static __thread _Alignas(UVMM_PAGE) char in[2 * UVMM_PAGE];
    size_t n = meta->stored, len = padded(n);
    if (n == 0 || n > UVMM_PAGE || len > sizeof(in))
        return -EBADMSG;
    int rc = ac_io_rw(uv.file, n == UVMM_PAGE ? dst : in, NULL, len, (uint64_t)p * UVMM_PAGE);
    if (rc != 0)
        return rc;
    __atomic_add_fetch(&uv.c.bytes_read, len, __ATOMIC_RELAXED);
    if (n < UVMM_PAGE && ac_decompress((int)uv.opt.compress, in, n, dst, UVMM_PAGE) != 0)
        return -EBADMSG;
    return ac_crc32c(0, dst, UVMM_PAGE) == meta->crc ? 0 : -EBADMSG;
}

int uvmm_slots_read(size_t first, size_t n, char *raw, const struct uvmm_page *metas) {
    if (n == 0)
        return 0;
    size_t last = metas[n - 1].stored;
    if (last == 0 || last > UVMM_PAGE)
        return -EBADMSG;
    /* whole slots but the last, of which only what was written (the file may end there) */
    size_t len = (n - 1) * UVMM_PAGE + padded(last);
    int rc = ac_io_rw(uv.file, raw, NULL, len, (uint64_t)first * UVMM_PAGE);
    if (rc == 0)
        __atomic_add_fetch(&uv.c.bytes_read, len, __ATOMIC_RELAXED);
    return rc;
}

const void *uvmm_slot_page(const char *slot, char *tmp, const struct uvmm_page *meta) {
    size_t n = meta->stored;
    const void *page = slot;
    if (n == 0 || n > UVMM_PAGE)
        return NULL;
    if (n < UVMM_PAGE) {
        if (ac_decompress((int)uv.opt.compress, slot, n, tmp, UVMM_PAGE) != 0)
            return NULL;
        page = tmp;
    }
    return ac_crc32c(0, page, UVMM_PAGE) == meta->crc ? page : NULL;
}
