/* The one way a store creates a file in the spill directory: a new file
 * (O_EXCL: an existing one is an error, never reused), never through a
 * symlink (O_NOFOLLOW), mode 0600, not inherited by children. The directory
 * was checked and cleared of our leftovers before (ac_spilldir.c). */
#ifndef AC_SPILL_FILE_H
#define AC_SPILL_FILE_H
#include <fcntl.h>

static inline int spill_file_create(const char *path) {
    return open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

#endif
