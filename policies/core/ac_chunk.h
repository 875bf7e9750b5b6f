/* The chunks of a chunked item, read and written without misaligned accesses.
 *
 * memcached keeps the first item_chunk of a chunked item inside the header
 * item, right after its key, CAS and client flags (ITEM_schunk): at any
 * offset, unless built with NEED_ALIGN (x86-64 builds are not). The chunks
 * after it are slab chunks of their own and aligned. Going through an
 * item_chunk pointer to the first one is a misaligned access (undefined
 * behaviour; UBSan's alignment check stops the fuzz harness, fuzz/README.md),
 * so its fields are copied with memcpy here; a chunk is a plain address.
 * memcached.h must be included first. */
#ifndef AC_CHUNK_H
#define AC_CHUNK_H
#include <stddef.h>
#include <string.h>

static inline char *ac_chunk_first(item *it) {
    return ITEM_schunk(it);
}

static inline char *ac_chunk_next(const char *ch) {
    item_chunk *next;
    memcpy(&next, ch + offsetof(item_chunk, next), sizeof(next));
    return (char *)next;
}

static inline int ac_chunk_used(const char *ch) {
    int used;
    memcpy(&used, ch + offsetof(item_chunk, used), sizeof(used));
    return used;
}

static inline int ac_chunk_size(const char *ch) {
    int size;
    memcpy(&size, ch + offsetof(item_chunk, size), sizeof(size));
    return size;
}

static inline void ac_chunk_set_used(char *ch, int used) {
    memcpy(ch + offsetof(item_chunk, used), &used, sizeof(used));
}

static inline char *ac_chunk_data(char *ch) {
    return ch + offsetof(item_chunk, data);
}

#endif
