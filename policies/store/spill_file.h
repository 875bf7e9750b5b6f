/* The spill files of the stores: how one is created, and whole-range reads and
 * writes of it.
 *
 * The one way a store creates a file in the spill directory: a new file
 * (O_EXCL: an existing one is an error, never reused), never through a
 * symlink (O_NOFOLLOW), mode 0600, not inherited by children. The directory
 * was checked and cleared of our leftovers before (ac_spilldir.c). */
#ifndef AC_SPILL_FILE_H
#define AC_SPILL_FILE_H
#include "io_engine.h"
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static inline int spill_file_create(const char *path) {
    return open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

/* A store's file of records read where they lie: no readahead around a read
 * (with the kernel's default window a 1.2 KB record fetched cost ~8 KiB read
 * from disk). A whole-block read is one pread of the block and stays whole.
 * Advice only: a file system that ignores it still works. */
static inline void spill_file_random(int fd) {
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
}

/* Whole-range reads and writes through the I/O engine in use (io_engine.h,
 * -o ac_io): 0, -errno, or -EIO when a transfer makes no progress (a read at
 * the end of the file). */
static inline int spill_file_read(int fd, void *buf, size_t len, uint64_t off) {
    return ac_io_rw(fd, buf, NULL, len, off);
}

/* How a store reads the records of one of its files: through fd, opened with
 * O_DIRECT when align > 0 (ac_io_direct: -o ac_io_direct), else the store's own
 * descriptor through the page cache. */
struct spill_reader {
    int fd;
    unsigned align;
};

/* Opens the reader of the file at path, which the store created as fd (writable:
 * it may also write with spill_reader_write). Direct I/O off, or a file system
 * without it (tmpfs): the reader is fd itself. */
static inline void spill_reader_open(struct spill_reader *r, int fd, const char *path, bool writable) {
    r->fd = fd;
    r->align = 0;
    if (!ac_io_direct())
        return;
    int dfd = open(path, (writable ? O_RDWR : O_RDONLY) | O_DIRECT | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return;
    unsigned align = ac_io_direct_align(dfd);
    if (align == 0) {
        close(dfd);
        return;
    }
    r->fd = dfd;
    r->align = align;
    ac_io_direct_file(1);
}

/* Closes the reader's own descriptor (not fd, the store's). */
static inline void spill_reader_close(struct spill_reader *r, int fd) {
    if (r->fd >= 0 && r->fd != fd) {
        close(r->fd);
        ac_io_direct_file(-1);
    }
    r->fd = fd;
    r->align = 0;
}

static inline int spill_reader_read(const struct spill_reader *r, void *buf, size_t len, uint64_t off) {
    return r->align > 0 ? ac_io_read_direct(r->fd, buf, len, off, r->align) : ac_io_rw(r->fd, buf, NULL, len, off);
}

/* Writes len bytes of buf at off: with direct I/O when the reader has it, off is
 * a multiple of its unit and the range may be padded to the next one (cap: the
 * bytes the caller owns at off; buf: aligned to AC_IO_BUF_ALIGN, room for the
 * padding, which is zeroed), else through fd. Direct writes leave no copy in
 * the page cache for the direct reads to flush first. */
static inline int spill_reader_write(const struct spill_reader *r, int fd, char *buf, size_t len, uint64_t off,
                                     size_t cap) {
    size_t padded = r->align > 0 ? (size_t)ac_io_align_up(len, r->align) : 0;
    if (r->align == 0 || off % r->align != 0 || padded > cap)
        return ac_io_rw(fd, NULL, buf, len, off);
    memset(buf + len, 0, padded - len);
    return ac_io_write_direct(r->fd, buf, padded, off, r->align);
}

static inline int spill_file_write(int fd, const void *buf, size_t len, uint64_t off) {
    return ac_io_rw(fd, NULL, buf, len, off);
}

#endif
