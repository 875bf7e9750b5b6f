/* The NVM region's index and chunk allocator (nvm_store.h). */
#define _GNU_SOURCE
#include "nvm_store.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define LINE 64u
#define MIN_CHUNK 64u
#define MAX_CLASSES 128
#define SLOT_EMPTY 0u
#define SLOT_LIVE 1u

struct slot {
    uint64_t fp;
    uint64_t off;               /* the record's byte offset in the region */
    uint32_t len;
    uint32_t state;
};

struct ac_nvm_store {
    pthread_mutex_t lock;
    int fd;
    char *base;
    size_t region;
    char backing[256];
    struct slot *slots;         /* in the region, at offset 0 */
    uint64_t mask;              /* slots - 1 */
    uint64_t live_slots;
    uint64_t area, area_end;    /* the record area: [area, area_end) */
    uint64_t bump;              /* next uncarved byte of the area */
    uint64_t chunk[MAX_CLASSES];     /* chunk size of each class */
    uint64_t free_head[MAX_CLASSES]; /* offset of the first free chunk; 0: none */
    int nclasses;
    struct ac_nvm_stats st;
};

/* Cache lines an operation touched, read and written, and its accesses (runs
 * of contiguous lines: a record, a probe sequence with its writes and shifts,
 * a free-list link). */
struct touch { uint64_t r, w, a; };

static void count(struct ac_nvm_store *s, const struct touch *t, struct ac_nvm_cost *cost) {
    __atomic_add_fetch(&s->st.lines_read, t->r, __ATOMIC_RELAXED);
    __atomic_add_fetch(&s->st.lines_written, t->w, __ATOMIC_RELAXED);
    __atomic_add_fetch(&s->st.accesses, t->a, __ATOMIC_RELAXED);
    cost->lines += t->r + t->w;
    cost->accesses += t->a;
}

static uint64_t mix(uint64_t x) {        /* the fingerprint spread over the slots (splitmix64's finaliser) */
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static uint64_t slot_off(const struct ac_nvm_store *s, uint64_t i) {
    return (uint64_t)((const char *)&s->slots[i] - s->base);
}

static uint64_t slot_lines(const struct ac_nvm_store *s, uint64_t i) {
    return ac_nvm_lines(slot_off(s, i), sizeof(struct slot));
}

static int class_of(const struct ac_nvm_store *s, uint64_t len) {
    for (int c = 0; c < s->nclasses; c++)
        if (s->chunk[c] >= len)
            return c;
    return -1;
}

static void init_classes(struct ac_nvm_store *s) {
    uint64_t size = MIN_CHUNK, area = s->area_end - s->area;
    int n = 0;
    while (n < MAX_CLASSES && size <= area) {
        s->chunk[n++] = size;
        uint64_t next = (size * 5 / 4 + LINE - 1) / LINE * LINE;
        size = next > size ? next : size + LINE;
    }
    s->nclasses = n;
}

static int map_region(struct ac_nvm_store *s, const char *path, size_t region_bytes, char *err, size_t errlen) {
    if (path == NULL) {
        s->fd = memfd_create("ac-nvm", MFD_CLOEXEC);
        if (s->fd < 0 || ftruncate(s->fd, (off_t)region_bytes) != 0) {
            snprintf(err, errlen, "cannot make the NVM region (memfd of %zu bytes): %s", region_bytes, strerror(errno));
            return -1;
        }
        s->region = region_bytes;
        snprintf(s->backing, sizeof(s->backing), "memfd");
    } else {
        s->fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (s->fd < 0 || fstat(s->fd, &st) != 0) {
            snprintf(err, errlen, "ac_nvm_file %s: cannot open it: %s (give an existing regular file, allocated in "
                     "full outside the server's cgroup, e.g. on /dev/shm with fallocate)", path, strerror(errno));
            return -1;
        }
        if (!S_ISREG(st.st_mode) || st.st_size <= 0) {
            snprintf(err, errlen, "ac_nvm_file %s: not a regular file with a size (accepted: a regular file "
                     "allocated in full, e.g. `fallocate -l 1G /dev/shm/nvm`)", path);
            return -1;
        }
        if ((uint64_t)st.st_blocks * 512u < (uint64_t)st.st_size) {
            snprintf(err, errlen, "ac_nvm_file %s: %llu of its %llu bytes are allocated; allocate it in full first "
                     "(fallocate, outside the server's cgroup) so that touching it charges no new memory to the "
                     "server", path, (unsigned long long)st.st_blocks * 512u, (unsigned long long)st.st_size);
            return -1;
        }
        s->region = (size_t)st.st_size;
        snprintf(s->backing, sizeof(s->backing), "%s", path);
    }
    s->base = mmap(NULL, s->region, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
    if (s->base == MAP_FAILED) {
        s->base = NULL;
        snprintf(err, errlen, "cannot map the NVM region (%zu bytes of %s): %s", s->region, s->backing,
                 strerror(errno));
        return -1;
    }
    return 0;
}

struct ac_nvm_store *ac_nvm_open(const char *path, size_t region_bytes, size_t slots, char *err, size_t errlen) {
    struct ac_nvm_store *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->fd = -1;
    pthread_mutex_init(&s->lock, NULL);
    if (map_region(s, path, region_bytes, err, errlen) != 0) {
        ac_nvm_close(s);
        return NULL;
    }
    if (slots == 0) {
        slots = 1024;
        while (slots < s->region / 512)
            slots *= 2;
    }
    if ((slots & (slots - 1)) != 0 || slots * sizeof(struct slot) > s->region / 4) {
        snprintf(err, errlen, "NVM region of %zu bytes: an index of %zu slots (%zu bytes) does not fit in a quarter "
                 "of it (slots: a power of two; give a larger region or fewer slots)", s->region, slots,
                 slots * sizeof(struct slot));
        ac_nvm_close(s);
        return NULL;
    }
    s->slots = (struct slot *)(void *)s->base;
    s->mask = slots - 1;
    /* a new memfd reads as zeros and its pages are made as the slots are used:
     * not written here (a memset would make the whole index resident at once);
     * a file may hold an earlier run's index, so it is cleared (its pages exist) */
    if (path != NULL)
        memset(s->slots, 0, slots * sizeof(struct slot));
    s->area = (slots * sizeof(struct slot) + LINE - 1) / LINE * LINE;
    s->area_end = s->region / LINE * LINE;
    s->bump = s->area;
    init_classes(s);
    s->st.region_bytes = s->region;
    s->st.index_slots = slots;
    s->st.index_bytes = slots * sizeof(struct slot);
    s->st.area_bytes = s->area_end - s->area;
    return s;
}

void *ac_nvm_area(struct ac_nvm_store *s, size_t *len) {
    *len = s->area_end - s->area;
    return s->base + s->area;
}

const char *ac_nvm_backing(struct ac_nvm_store *s) {
    return s->backing;
}

/* A chunk of class c, or 0 (none left). Under lock. */
static uint64_t chunk_alloc(struct ac_nvm_store *s, int c, struct touch *t) {
    uint64_t off = s->free_head[c];
    if (off != 0) {
        memcpy(&s->free_head[c], s->base + off, sizeof(uint64_t));   /* the link kept in the chunk */
        t->r++;
        t->a++;
        s->st.free_chunk_bytes -= s->chunk[c];
        return off;
    }
    if (s->area_end - s->bump < s->chunk[c])
        return 0;
    off = s->bump;
    s->bump += s->chunk[c];
    s->st.carved_bytes += s->chunk[c];
    return off;
}

static void chunk_free(struct ac_nvm_store *s, int c, uint64_t off, struct touch *t) {
    memcpy(s->base + off, &s->free_head[c], sizeof(uint64_t));
    t->w++;
    t->a++;
    s->free_head[c] = off;
    s->st.free_chunk_bytes += s->chunk[c];
}

static struct ac_loc loc_of(uint64_t off, uint32_t len) {
    return (struct ac_loc){ .block = (uint32_t)(off >> 32), .offset = (uint32_t)off, .len = len };
}

static uint64_t off_of(const struct ac_loc *loc) {
    return ((uint64_t)loc->block << 32) | loc->offset;
}

int ac_nvm_put(struct ac_nvm_store *s, uint64_t fp, const void *rec, size_t len, struct ac_loc *loc,
               struct ac_nvm_cost *cost) {
    int c = class_of(s, len);
    if (c < 0 || len > UINT32_MAX)
        return -EFBIG;
    struct touch t = { 0, 0, 0 };
    pthread_mutex_lock(&s->lock);
    uint64_t off = (s->live_slots + 1) * 4 > (s->mask + 1) * 3 ? 0 : chunk_alloc(s, c, &t);
    if (off == 0) {
        int rc = (s->live_slots + 1) * 4 > (s->mask + 1) * 3 ? -ENOBUFS : -ENOSPC;
        s->st.full++;
        pthread_mutex_unlock(&s->lock);
        count(s, &t, cost);
        return rc;
    }
    s->live_slots++;                            /* the slot is taken below */
    pthread_mutex_unlock(&s->lock);
    memcpy(s->base + off, rec, len);            /* nobody else knows the chunk yet */
    t.w += ac_nvm_lines(off, len);
    t.a++;
    pthread_mutex_lock(&s->lock);
    t.a++;                                      /* the probe sequence and the slot written */
    uint64_t i = mix(fp) & s->mask;
    while (s->slots[i].state != SLOT_EMPTY) {
        t.r += slot_lines(s, i);
        i = (i + 1) & s->mask;
    }
    s->slots[i] = (struct slot){ .fp = fp, .off = off, .len = (uint32_t)len, .state = SLOT_LIVE };
    t.r += slot_lines(s, i);
    t.w += slot_lines(s, i);
    s->st.records++;
    s->st.live_bytes += len;
    s->st.chunk_bytes += s->chunk[c];
    s->st.puts++;
    s->st.put_bytes += len;
    pthread_mutex_unlock(&s->lock);
    count(s, &t, cost);
    *loc = loc_of(off, (uint32_t)len);
    return 0;
}

/* fp's probe sequence from slot *i on: advances *i to the next slot holding fp
 * (true), or stops at the first empty slot (false); counts the lines read.
 * Under lock. */
static bool probe_next(struct ac_nvm_store *s, uint64_t fp, uint64_t *i, struct touch *t) {
    for (;; *i = (*i + 1) & s->mask) {
        t->r += slot_lines(s, *i);
        if (s->slots[*i].state == SLOT_EMPTY)
            return false;
        if (s->slots[*i].fp == fp)
            return true;
    }
}

int ac_nvm_find(struct ac_nvm_store *s, uint64_t fp, struct ac_loc *out, int max, struct ac_nvm_cost *cost) {
    struct touch t = { 0, 0, 1 };
    int found = 0;
    pthread_mutex_lock(&s->lock);
    for (uint64_t i = mix(fp) & s->mask; probe_next(s, fp, &i, &t); i = (i + 1) & s->mask) {
        if (found < max)
            out[found] = loc_of(s->slots[i].off, s->slots[i].len);
        found++;
    }
    pthread_mutex_unlock(&s->lock);
    count(s, &t, cost);
    return found;
}

int ac_nvm_get(struct ac_nvm_store *s, const struct ac_loc *loc, void *buf, struct ac_nvm_cost *cost) {
    uint64_t off = off_of(loc);
    if (off < s->area || off >= s->area_end || loc->len > s->area_end - off)
        return -EINVAL;
    memcpy(buf, s->base + off, loc->len);
    struct touch t = { ac_nvm_lines(off, loc->len), 0, 1 };
    __atomic_add_fetch(&s->st.gets, 1, __ATOMIC_RELAXED);
    count(s, &t, cost);
    return 0;
}

/* Backward-shift deletion of slot i (Algorithm R): the entries after it in
 * its run move back when their home slot does not lie cyclically in (i, j]. */
static void slot_delete(struct ac_nvm_store *s, uint64_t i, struct touch *t) {
    for (uint64_t j = (i + 1) & s->mask;; j = (j + 1) & s->mask) {
        t->r += slot_lines(s, j);
        if (s->slots[j].state == SLOT_EMPTY)
            break;
        uint64_t home = mix(s->slots[j].fp) & s->mask;
        bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
        if (stays)
            continue;
        s->slots[i] = s->slots[j];
        t->w += slot_lines(s, i);
        i = j;
    }
    s->slots[i].state = SLOT_EMPTY;
    t->w += slot_lines(s, i);
}

int ac_nvm_remove(struct ac_nvm_store *s, uint64_t fp, const struct ac_loc *loc, struct ac_nvm_cost *cost) {
    uint64_t off = off_of(loc);
    struct touch t = { 0, 0, 1 };                /* the probe sequence and its shifts */
    int done = 0;
    pthread_mutex_lock(&s->lock);
    for (uint64_t i = mix(fp) & s->mask; probe_next(s, fp, &i, &t); i = (i + 1) & s->mask) {
        const struct slot *e = &s->slots[i];
        if (e->off == off && e->len == loc->len) {
            int c = class_of(s, e->len);
            slot_delete(s, i, &t);
            chunk_free(s, c, off, &t);
            s->live_slots--;
            s->st.records--;
            s->st.live_bytes -= loc->len;
            s->st.chunk_bytes -= s->chunk[c];
            s->st.drops++;
            done = 1;
            break;
        }
    }
    pthread_mutex_unlock(&s->lock);
    count(s, &t, cost);
    return done;
}

void ac_nvm_stats(struct ac_nvm_store *s, struct ac_nvm_stats *out) {
    pthread_mutex_lock(&s->lock);
    *out = s->st;
    out->lines_read = __atomic_load_n(&s->st.lines_read, __ATOMIC_RELAXED);
    out->lines_written = __atomic_load_n(&s->st.lines_written, __ATOMIC_RELAXED);
    out->accesses = __atomic_load_n(&s->st.accesses, __ATOMIC_RELAXED);
    out->gets = __atomic_load_n(&s->st.gets, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&s->lock);
}

void ac_nvm_close(struct ac_nvm_store *s) {
    if (s == NULL)
        return;
    if (s->base != NULL)
        munmap(s->base, s->region);
    pthread_mutex_destroy(&s->lock);
    if (s->fd >= 0)
        close(s->fd);
    free(s);
}
