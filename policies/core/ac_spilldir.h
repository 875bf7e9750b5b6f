/* The spill directory (ac_spilldir.c): checked and cleared before the stores
 * create their files in it (store/spill_file.h). */
#ifndef AC_SPILLDIR_H
#define AC_SPILLDIR_H

/* Creates dir (0700) or checks an existing one: refuses a symlink, a
 * non-directory, another user's directory, a group- or world-writable one and
 * one holding a file that is not ours; removes our own leftovers by name and
 * makes it 0700. 0, or -1 after printing why to stderr. */
int ac_spilldir_prepare(const char *dir);

/* At exit: removes our files (by name) and the directory, nothing else. The
 * stores stay open: memcached's threads (workers, the slab mover, cleaning)
 * may still use them while exit handlers run, so nothing is closed or freed;
 * the process's end does that. */
void ac_spilldir_remove(const char *dir);


#endif
