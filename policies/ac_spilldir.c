/* The spill directory: checked, made private and cleared of a crashed run's
 * files before any store opens a file in it; removed again at exit.
 *
 * Refused: a symlink, anything but a directory, a directory owned by another
 * user than the server's (the effective uid after -u), one that is group- or
 * world-writable (another user could plant or swap files in it), one holding a
 * file that is not ours. Accepted and reused: a directory of ours holding our
 * own files only (left by a server that was killed): those files are removed
 * by their exact names, then the stores create new ones with
 * O_CREAT|O_EXCL|O_NOFOLLOW and mode 0600 (store/spill_file.h).
 *
 * The check runs on a descriptor opened with O_NOFOLLOW|O_DIRECTORY, so what
 * is checked is what the path named then. After it the directory is 0700 and
 * ours: nobody else can add, remove or rename entries inside it. */
#include "ac_spilldir.h"
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Every file a store of ours creates in the directory. */
static const char *const our_files[] = {
    "blocks.dat",                  /* block store (lru, alru) */
    "cold.dat", "cold.idx", "cold.idx.new",   /* tuple store (logging) */
    "ospaging.mem",                /* ospaging, ac_os_backing=file */
};
#define N_OUR_FILES (sizeof(our_files) / sizeof(our_files[0]))

static bool is_our_file(const char *name) {
    for (size_t i = 0; i < N_OUR_FILES; i++)
        if (strcmp(name, our_files[i]) == 0)
            return true;
    return false;
}

/* Opens dir (not following a symlink) and checks what it is. */
static int open_checked(const char *dir) {
    struct stat st;
    if (lstat(dir, &st) != 0) {
        fprintf(stderr, "memcached-ac: cannot stat ac_spill_dir %s: %s\n", dir, strerror(errno));
        return -1;
    }
    if (S_ISLNK(st.st_mode)) {
        fprintf(stderr, "memcached-ac: ac_spill_dir %s is a symbolic link; give the directory itself\n", dir);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "memcached-ac: ac_spill_dir %s exists and is not a directory\n", dir);
        return -1;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "memcached-ac: cannot open ac_spill_dir %s: %s\n", dir, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || st.st_uid != geteuid()) {
        fprintf(stderr, "memcached-ac: ac_spill_dir %s is owned by uid %u, not by the server's user"
                " (uid %u); use a directory of that user\n", dir, (unsigned)st.st_uid, (unsigned)geteuid());
        close(fd);
        return -1;
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        fprintf(stderr, "memcached-ac: ac_spill_dir %s is group- or world-writable (mode %04o);"
                " use a directory only its owner can write (e.g. chmod 0700)\n",
                dir, (unsigned)(st.st_mode & 07777));
        close(fd);
        return -1;
    }
    return fd;
}

/* Refuses a foreign file, then removes our own leftovers by name. */
static int clear_leftovers(const char *dir, int fd) {
    int dup_fd = dup(fd);
    DIR *d = dup_fd < 0 ? NULL : fdopendir(dup_fd);
    if (d == NULL) {
        fprintf(stderr, "memcached-ac: cannot read ac_spill_dir %s: %s\n", dir, strerror(errno));
        if (dup_fd >= 0)
            close(dup_fd);
        return -1;
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (!is_our_file(de->d_name)) {
            fprintf(stderr, "memcached-ac: ac_spill_dir %s holds \"%s\", which is not a memcached-ac"
                    " spill file; use an empty or new directory\n", dir, de->d_name);
            closedir(d);
            return -1;
        }
    }
    closedir(d);
    for (size_t i = 0; i < N_OUR_FILES; i++) {
        if (unlinkat(fd, our_files[i], 0) == 0) {
            fprintf(stderr, "memcached-ac: removed %s/%s, left by an earlier run\n", dir, our_files[i]);
        } else if (errno != ENOENT) {
            fprintf(stderr, "memcached-ac: cannot remove %s/%s, left by an earlier run: %s\n",
                    dir, our_files[i], strerror(errno));
            return -1;
        }
    }
    return 0;
}

void ac_spilldir_remove(const char *dir) {
    char path[PATH_MAX];
    for (size_t i = 0; i < N_OUR_FILES; i++) {
        if (snprintf(path, sizeof(path), "%s/%s", dir, our_files[i]) < (int)sizeof(path))
            unlink(path);
    }
    rmdir(dir);
}

int ac_spilldir_prepare(const char *dir) {
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "memcached-ac: cannot create ac_spill_dir %s: %s\n", dir, strerror(errno));
        return -1;
    }
    int fd = open_checked(dir);
    if (fd < 0)
        return -1;
    int rc = clear_leftovers(dir, fd);
    if (rc == 0 && fchmod(fd, 0700) != 0) {
        fprintf(stderr, "memcached-ac: cannot chmod 0700 %s: %s\n", dir, strerror(errno));
        rc = -1;
    }
    close(fd);
    return rc;
}
