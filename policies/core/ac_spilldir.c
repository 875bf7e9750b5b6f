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
 * ours: nobody else can add, remove or rename entries inside it.
 * Uses: ac_registry (the files every tier keeps). */
#include "ac_spilldir.h"
#include "ac_options.h"
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A file a tier of ours creates in the directory (each tier declares its
 * files: struct ac_tier files). */
struct find_name { const char *name; bool found; };

static void match_name(const char *ours, void *arg) {
    struct find_name *f = arg;
    f->found |= strcmp(f->name, ours) == 0;
}

static bool is_our_file(const char *name) {
    struct find_name f = { name, false };
    ac_all_tier_files(match_name, &f);
    return f.found;
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

/* One of our file names: removed if a killed run left it. */
struct leftover { const char *dir; int fd, rc; };

static void remove_leftover(const char *name, void *arg) {
    struct leftover *l = arg;
    if (l->rc != 0)
        return;
    if (unlinkat(l->fd, name, 0) == 0) {
        fprintf(stderr, "memcached-ac: removed %s/%s, left by an earlier run\n", l->dir, name);
    } else if (errno != ENOENT) {
        fprintf(stderr, "memcached-ac: cannot remove %s/%s, left by an earlier run: %s\n",
                l->dir, name, strerror(errno));
        l->rc = -1;
    }
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
    struct leftover l = { dir, fd, 0 };
    ac_all_tier_files(remove_leftover, &l);
    return l.rc;
}

static void remove_ours(const char *name, void *arg) {
    char path[PATH_MAX];
    if (snprintf(path, sizeof(path), "%s/%s", (const char *)arg, name) < (int)sizeof(path))
        unlink(path);
}

/* At exit memcached's threads still run: a tier may create a file just after
 * the names were unlinked (the tuples store's index grows through
 * cold.idx.new, renamed over cold.idx). So the directory is emptied again
 * while rmdir finds it not empty, for up to about half a second. */
void ac_spilldir_remove(const char *dir) {
    for (int tries = 0; tries < 50; tries++) {
        ac_all_tier_files(remove_ours, (void *)dir);
        if (rmdir(dir) == 0 || errno != ENOTEMPTY)
            return;
        usleep(10000);
    }
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
