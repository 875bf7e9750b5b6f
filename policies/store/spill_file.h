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
#include <stddef.h>
#include <stdint.h>
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

static inline int spill_file_write(int fd, const void *buf, size_t len, uint64_t off) {
    return ac_io_rw(fd, NULL, buf, len, off);
}

#endif
