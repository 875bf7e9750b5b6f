/* The tuple store of tuple_store.h: an append-only log of records in
 * segments, an on-disk open-addressing index by fingerprint, tokens per
 * segment for reads in flight, and the cleaner's moves. */
#define _GNU_SOURCE
#include "tuple_store.h"
#include "spill_file.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SLOT 24                 /* u64 fp, u64 offset, u32 len, u32 state */
#define WINDOW 64               /* slots read per probe step */
#define INITIAL_SLOTS 4096
enum { S_EMPTY = 0, S_LIVE = 1, S_DEAD = 2 };

struct slot { uint64_t fp, off; uint32_t len, state; };

/* The log is cut into segments of seg_bytes: records are appended to the head
 * segment; a record that does not fit its rest starts the next one (a free
 * segment if there is one, else a new one at the end of the file). Cleaning
 * (ac_tuple_gc_*) moves a segment's live records to the head and punches the
 * segment out of the file, which makes it free. */
struct seg {
    uint64_t fill;              /* bytes appended to it (0: free or never used) */
    uint64_t live;              /* bytes of its live records */
    uint64_t gen;               /* moves on each time it is punched out (reads in flight check it) */
};

struct ac_tuple_store {
    pthread_mutex_t lock;
    int dat, idx;
    struct spill_reader rd;     /* record reads of dat (direct I/O when on) */
    char dat_path[4200], idx_path[4200], new_path[4200];
    uint64_t nslots;            /* power of two */
    uint64_t used;              /* live + dead slots */
    uint64_t seg_bytes;
    struct seg *segs;           /* nseg segments of the file */
    uint32_t nseg, cap_seg, head;
    uint32_t *free_segs;        /* punched out, reusable */
    uint32_t nfree;
    struct ac_tuple_stats st;
};

static void put64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint64_t get64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}
static void put32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void encode(unsigned char *p, const struct slot *s) {
    put64(p, s->fp); put64(p + 8, s->off); put32(p + 16, s->len); put32(p + 20, s->state);
}
static void decode(const unsigned char *p, struct slot *s) {
    s->fp = get64(p); s->off = get64(p + 8); s->len = get32(p + 16); s->state = get32(p + 20);
}

/* The home slot of a fingerprint: its high bits (the low bits of FNV-1a are
 * weaker), mixed. */
static uint64_t home(uint64_t fp, uint64_t nslots) {
    uint64_t h = fp * 0x9E3779B97F4A7C15ULL;
    return (h >> 20) & (nslots - 1);
}

/* Reads WINDOW slots from slot i (wrapping); returns how many were read or -errno. */
static int read_window(struct ac_tuple_store *s, int fd, uint64_t nslots, uint64_t i, unsigned char *buf) {
    uint64_t n = nslots - i < WINDOW ? nslots - i : WINDOW;
    int rc = spill_file_read(fd, buf, n * SLOT, i * SLOT);
    s->st.index_reads++;
    return rc < 0 ? rc : (int)n;
}

static int write_slot(struct ac_tuple_store *s, int fd, uint64_t i, const struct slot *sl) {
    unsigned char b[SLOT];
    encode(b, sl);
    s->st.index_writes++;
    return spill_file_write(fd, b, SLOT, i * SLOT);
}

/* Inserts into the index file fd of nslots slots: the first empty or dead
 * slot on fp's probe sequence. 1 if an empty slot was used, 0 a dead one, -errno. */
static int index_insert(struct ac_tuple_store *s, int fd, uint64_t nslots, const struct slot *sl) {
    unsigned char buf[WINDOW * SLOT];
    uint64_t i = home(sl->fp, nslots);
    for (uint64_t seen = 0; seen < nslots;) {
        int n = read_window(s, fd, nslots, i, buf);
        if (n < 0)
            return n;
        for (int k = 0; k < n; k++) {
            struct slot cur;
            decode(buf + (size_t)k * SLOT, &cur);
            if (cur.state != S_LIVE) {
                int rc = write_slot(s, fd, i + (uint64_t)k, sl);
                return rc < 0 ? rc : cur.state == S_EMPTY;
            }
        }
        seen += (uint64_t)n;
        i = (i + (uint64_t)n) & (nslots - 1);
    }
    return -ENOSPC;
}

static int create_index(const char *path, uint64_t nslots, char *err, size_t errlen) {
    int fd = spill_file_create(path);
    if (fd < 0) {
        if (err) snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
        return -errno;
    }
    spill_file_random(fd);             /* probes land where the hash puts them */
    /* a sparse file of zero slots (S_EMPTY = 0) */
    if (ftruncate(fd, (off_t)(nslots * SLOT)) != 0) {
        int e = errno;
        if (err) snprintf(err, errlen, "cannot size %s: %s", path, strerror(e));
        close(fd);
        unlink(path);
        return -e;
    }
    return fd;
}

/* Doubles the index: live slots are rehashed into a new file that replaces it. */
static int grow(struct ac_tuple_store *s) {
    uint64_t nn = s->nslots * 2;
    int fd = create_index(s->new_path, nn, NULL, 0);
    if (fd < 0)
        return fd;
    unsigned char buf[WINDOW * SLOT];
    uint64_t live = 0;
    int rc = 0;
    for (uint64_t i = 0; i < s->nslots && rc >= 0; i += WINDOW) {
        int n = read_window(s, s->idx, s->nslots, i, buf);
        if (n < 0) {
            rc = n;
            break;
        }
        for (int k = 0; k < n && rc >= 0; k++) {
            struct slot cur;
            decode(buf + (size_t)k * SLOT, &cur);
            if (cur.state == S_LIVE) {
                rc = index_insert(s, fd, nn, &cur);
                live++;
            }
        }
    }
    if (rc < 0 || rename(s->new_path, s->idx_path) != 0) {
        if (rc >= 0)
            rc = -errno;
        close(fd);
        unlink(s->new_path);
        return rc;
    }
    close(s->idx);
    s->idx = fd;
    s->nslots = nn;
    s->used = live;
    s->st.index_grows++;
    return 0;
}

/* Appends len bytes at the head (a new head when they do not fit). The
 * record's bytes count as live in its segment. Lock held. 0 or -errno. */
static int append(struct ac_tuple_store *s, const void *rec, size_t len, uint64_t *offp) {
    if (len > s->seg_bytes)
        return -EFBIG;
    if (s->nseg == 0 || s->segs[s->head].fill + len > s->seg_bytes) {
        uint32_t next;
        if (s->nfree > 0) {
            next = s->free_segs[--s->nfree];
        } else {
            if (s->nseg == s->cap_seg) {
                uint32_t cap = s->cap_seg ? s->cap_seg * 2 : 64;
                struct seg *g = realloc(s->segs, cap * sizeof(*g));
                uint32_t *f = g == NULL ? NULL : realloc(s->free_segs, cap * sizeof(*f));
                if (g != NULL)
                    s->segs = g;
                if (f == NULL)
                    return -ENOMEM;
                s->free_segs = f;
                s->cap_seg = cap;
            }
            next = s->nseg++;
            s->segs[next] = (struct seg){ 0, 0, 0 };
        }
        s->head = next;
    }
    struct seg *g = &s->segs[s->head];
    uint64_t off = (uint64_t)s->head * s->seg_bytes + g->fill;
    int rc = spill_file_write(s->dat, rec, len, off);
    if (rc != 0)
        return rc;          /* bytes written in part are overwritten by the next append */
    g->fill += len;
    g->live += len;
    *offp = off;
    return 0;
}

struct ac_tuple_store *ac_tuple_open(const char *dir, size_t seg_bytes, char *err, size_t errlen) {
    if (seg_bytes == 0)
        seg_bytes = AC_TUPLE_SEG_DEFAULT;
    struct ac_tuple_store *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->seg_bytes = seg_bytes;
    snprintf(s->dat_path, sizeof(s->dat_path), "%s/cold.dat", dir);
    snprintf(s->idx_path, sizeof(s->idx_path), "%s/cold.idx", dir);
    snprintf(s->new_path, sizeof(s->new_path), "%s/cold.idx.new", dir);
    s->dat = spill_file_create(s->dat_path);
    if (s->dat < 0) {
        snprintf(err, errlen, "cannot create %s: %s", s->dat_path, strerror(errno));
        free(s);
        return NULL;
    }
    spill_file_random(s->dat);
    spill_reader_open(&s->rd, s->dat, s->dat_path, false);
    s->nslots = INITIAL_SLOTS;
    s->idx = create_index(s->idx_path, s->nslots, err, errlen);
    if (s->idx < 0) {
        spill_reader_close(&s->rd, s->dat);
        close(s->dat);
        unlink(s->dat_path);
        free(s);
        return NULL;
    }
    pthread_mutex_init(&s->lock, NULL);
    return s;
}

int ac_tuple_put(struct ac_tuple_store *s, uint64_t fp, const void *rec, size_t len, struct ac_loc *loc) {
    if (len == 0 || len > UINT32_MAX)
        return -EINVAL;
    pthread_mutex_lock(&s->lock);
    int rc = 0;
    if ((s->used + 1) * 10 > s->nslots * 6) {
        rc = grow(s);          /* on failure the old index stays while it has room */
        if (rc < 0 && s->used + 2 >= s->nslots) {
            s->st.io_errors++;
            pthread_mutex_unlock(&s->lock);
            return rc;
        }
    }
    uint64_t off;
    rc = append(s, rec, len, &off);
    if (rc == 0) {
        struct slot sl = { fp, off, (uint32_t)len, S_LIVE };
        rc = index_insert(s, s->idx, s->nslots, &sl);
        if (rc >= 0) {
            s->used += (uint64_t)rc;    /* an empty slot taken; a dead one was counted */
            rc = 0;
        } else {
            s->segs[off / s->seg_bytes].live -= len;   /* written, never indexed: dead */
        }
    }
    if (rc != 0) {
        if (rc != -EFBIG)          /* a record larger than a segment: refused, not an I/O error */
            s->st.io_errors++;
    } else {
        loc->block = (uint32_t)(off >> 32);
        loc->offset = (uint32_t)off;
        loc->len = (uint32_t)len;
        s->st.records++;
        s->st.live_bytes += len;
        s->st.puts++;
        s->st.put_bytes += len;
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

static uint64_t loc_off(const struct ac_loc *loc) {
    return (uint64_t)loc->block << 32 | loc->offset;
}

/* Walks fp's probe sequence up to the first empty slot; fn sees each live
 * slot of fp and returns nonzero to stop. Returns 0 or -errno. */
static int probe(struct ac_tuple_store *s, uint64_t fp,
                 int (*fn)(struct ac_tuple_store *, uint64_t, struct slot *, void *), void *arg) {
    unsigned char buf[WINDOW * SLOT];
    uint64_t i = home(fp, s->nslots);
    for (uint64_t seen = 0; seen < s->nslots;) {
        int n = read_window(s, s->idx, s->nslots, i, buf);
        if (n < 0)
            return n;
        for (int k = 0; k < n; k++) {
            struct slot cur;
            decode(buf + (size_t)k * SLOT, &cur);
            if (cur.state == S_EMPTY)
                return 0;
            if (cur.state == S_LIVE && cur.fp == fp) {
                int r = fn(s, i + (uint64_t)k, &cur, arg);
                if (r != 0)
                    return r < 0 ? r : 0;
            }
        }
        seen += (uint64_t)n;
        i = (i + (uint64_t)n) & (s->nslots - 1);
    }
    return 0;
}

struct find_arg { struct ac_loc *out; int max, n; };

static int find_fn(struct ac_tuple_store *s, uint64_t i, struct slot *sl, void *arg) {
    (void)s; (void)i;
    struct find_arg *a = arg;
    if (a->n < a->max) {
        a->out[a->n].block = (uint32_t)(sl->off >> 32);
        a->out[a->n].offset = (uint32_t)sl->off;
        a->out[a->n].len = sl->len;
    }
    a->n++;
    return 0;
}

int ac_tuple_find(struct ac_tuple_store *s, uint64_t fp, struct ac_loc *out, int max) {
    struct find_arg a = { out, max, 0 };
    pthread_mutex_lock(&s->lock);
    int rc = probe(s, fp, find_fn, &a);
    if (rc < 0)
        s->st.io_errors++;
    pthread_mutex_unlock(&s->lock);
    return rc < 0 ? rc : a.n;
}

/* Not under the store's lock: the caller holds what keeps the record where it
 * is (a request its key's item lock, from lookup to read: the cleaner moves a
 * record only under that lock, and punches a segment only once nothing live
 * is left in it; the cleaner itself for its own moves). */
int ac_tuple_get(struct ac_tuple_store *s, const struct ac_loc *loc, void *buf) {
    int rc = spill_reader_read(&s->rd, buf, loc->len, loc_off(loc));
    pthread_mutex_lock(&s->lock);
    s->st.gets++;
    if (rc < 0)
        s->st.io_errors++;
    pthread_mutex_unlock(&s->lock);
    return rc;
}

/* Reads in flight (core/ac_prefetch.c through tier tuples): the segment's
 * incarnation, taken while the record is known live at loc (key lock held). */
uint64_t ac_tuple_token(struct ac_tuple_store *s, const struct ac_loc *loc) {
    pthread_mutex_lock(&s->lock);
    uint64_t seg = loc_off(loc) / s->seg_bytes;
    uint64_t t = seg < s->nseg ? s->segs[seg].gen : UINT64_MAX;
    pthread_mutex_unlock(&s->lock);
    return t;
}

int ac_tuple_get_start(struct ac_tuple_store *s, const struct ac_loc *loc, void *buf, struct ac_io_ring *r,
                       struct ac_io_req *req, uint64_t token) {
    uint64_t off = loc_off(loc), seg = off / s->seg_bytes;
    pthread_mutex_lock(&s->lock);
    if (seg >= s->nseg || s->segs[seg].gen != token || off % s->seg_bytes + loc->len > s->segs[seg].fill) {
        pthread_mutex_unlock(&s->lock);
        return -ESTALE;
    }
    s->st.gets++;
    pthread_mutex_unlock(&s->lock);
    *req = (struct ac_io_req){ .fd = s->rd.fd, .buf = buf, .len = loc->len, .off = off, .data = req->data };
    ac_io_widen(req, s->rd.align);
    return ac_io_submit(r, req);
}

bool ac_tuple_get_valid(struct ac_tuple_store *s, const struct ac_loc *loc, uint64_t token) {
    uint64_t seg = loc_off(loc) / s->seg_bytes;
    pthread_mutex_lock(&s->lock);
    bool ok = seg < s->nseg && s->segs[seg].gen == token;
    pthread_mutex_unlock(&s->lock);
    return ok;
}

struct remove_arg { uint64_t off; uint32_t len; int done; };

static int remove_fn(struct ac_tuple_store *s, uint64_t i, struct slot *sl, void *arg) {
    struct remove_arg *a = arg;
    if (sl->off != a->off || sl->len != a->len)
        return 0;
    struct slot dead = *sl;
    dead.state = S_DEAD;
    int rc = write_slot(s, s->idx, i, &dead);
    if (rc < 0)
        return rc;
    a->done = 1;
    return 1;
}

int ac_tuple_remove(struct ac_tuple_store *s, uint64_t fp, const struct ac_loc *loc) {
    struct remove_arg a = { loc_off(loc), loc->len, 0 };
    pthread_mutex_lock(&s->lock);
    int rc = probe(s, fp, remove_fn, &a);
    if (rc < 0) {
        s->st.io_errors++;
    } else if (a.done) {
        s->st.records--;
        s->st.live_bytes -= loc->len;
        s->st.removes++;
        s->segs[loc_off(loc) / s->seg_bytes].live -= loc->len;
    }
    pthread_mutex_unlock(&s->lock);
    return rc < 0 ? rc : a.done;
}

long ac_tuple_foreach(struct ac_tuple_store *s, void (*fn)(uint64_t fp, void *arg), void *arg) {
    unsigned char buf[WINDOW * SLOT];
    long count = 0;
    pthread_mutex_lock(&s->lock);
    for (uint64_t i = 0; i < s->nslots; i += WINDOW) {
        int n = read_window(s, s->idx, s->nslots, i, buf);
        if (n < 0) {
            s->st.io_errors++;
            pthread_mutex_unlock(&s->lock);
            return n;
        }
        for (int k = 0; k < n; k++) {
            struct slot cur;
            decode(buf + (size_t)k * SLOT, &cur);
            if (cur.state == S_LIVE) {
                fn(cur.fp, arg);
                count++;
            }
        }
    }
    pthread_mutex_unlock(&s->lock);
    return count;
}

/* Cleaning (log-structured: Rosenblum & Ousterhout's segment cleaning, greedy
 * choice of the segment with the fewest live bytes). */
bool ac_tuple_gc_pick(struct ac_tuple_store *s, uint32_t *segp) {
    pthread_mutex_lock(&s->lock);
    uint64_t on_disk = 0;
    uint32_t best = UINT32_MAX;
    for (uint32_t i = 0; i < s->nseg; i++) {
        on_disk += s->segs[i].fill;
        if (s->segs[i].fill == 0 || i == s->head || s->segs[i].live == s->segs[i].fill)
            continue;
        if (best == UINT32_MAX || s->segs[i].live < s->segs[best].live)
            best = i;
    }
    bool due = best != UINT32_MAX && on_disk > 2 * s->st.live_bytes + 2 * s->seg_bytes;
    pthread_mutex_unlock(&s->lock);
    *segp = best;
    return due;
}

long ac_tuple_gc_list(struct ac_tuple_store *s, uint32_t seg, struct ac_tuple_ref **out) {
    unsigned char buf[WINDOW * SLOT];
    uint64_t lo = (uint64_t)seg * s->seg_bytes, hi = lo + s->seg_bytes;
    size_t n = 0, cap = 0;
    struct ac_tuple_ref *refs = NULL;
    pthread_mutex_lock(&s->lock);
    for (uint64_t i = 0; i < s->nslots; i += WINDOW) {
        int k = read_window(s, s->idx, s->nslots, i, buf);
        if (k < 0) {
            s->st.io_errors++;
            pthread_mutex_unlock(&s->lock);
            free(refs);
            return k;
        }
        for (int j = 0; j < k; j++) {
            struct slot cur;
            decode(buf + (size_t)j * SLOT, &cur);
            if (cur.state != S_LIVE || cur.off < lo || cur.off >= hi)
                continue;
            if (n == cap) {
                cap = cap ? cap * 2 : 256;
                struct ac_tuple_ref *r = realloc(refs, cap * sizeof(*r));
                if (r == NULL) {
                    pthread_mutex_unlock(&s->lock);
                    free(refs);
                    return -ENOMEM;
                }
                refs = r;
            }
            refs[n].fp = cur.fp;
            refs[n].loc = (struct ac_loc){ (uint32_t)(cur.off >> 32), (uint32_t)cur.off, cur.len };
            n++;
        }
    }
    pthread_mutex_unlock(&s->lock);
    *out = refs;
    return (long)n;
}

struct find_slot_arg { uint64_t off; uint32_t len; uint64_t at; int found; };

static int find_slot_fn(struct ac_tuple_store *s, uint64_t i, struct slot *sl, void *arg) {
    (void)s;
    struct find_slot_arg *a = arg;
    if (sl->off != a->off || sl->len != a->len)
        return 0;
    a->at = i;
    a->found = 1;
    return 1;
}

int ac_tuple_relocate(struct ac_tuple_store *s, uint64_t fp, const struct ac_loc *loc, const void *rec) {
    struct find_slot_arg a = { loc_off(loc), loc->len, 0, 0 };
    pthread_mutex_lock(&s->lock);
    int rc = probe(s, fp, find_slot_fn, &a);
    uint64_t off;
    if (rc == 0 && a.found && (rc = append(s, rec, loc->len, &off)) == 0) {
        struct slot moved = { fp, off, loc->len, S_LIVE };
        rc = write_slot(s, s->idx, a.at, &moved);
        if (rc == 0) {
            s->segs[a.off / s->seg_bytes].live -= loc->len;
            s->st.gc_moved_records++;
            s->st.gc_moved_bytes += loc->len;
        } else {
            s->segs[off / s->seg_bytes].live -= loc->len;   /* the copy is dead, the original live */
        }
    }
    if (rc < 0)
        s->st.io_errors++;
    pthread_mutex_unlock(&s->lock);
    return rc < 0 ? rc : a.found;
}

bool ac_tuple_gc_release(struct ac_tuple_store *s, uint32_t seg) {
    pthread_mutex_lock(&s->lock);
    bool ok = seg < s->nseg && seg != s->head && s->segs[seg].fill != 0 && s->segs[seg].live == 0;
    if (ok) {
        /* give the blocks back to the file system; if it cannot punch holes
         * the segment is still reused, its blocks overwritten */
        if (fallocate(s->dat, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                      (off_t)((uint64_t)seg * s->seg_bytes), (off_t)s->seg_bytes) != 0)
            s->st.gc_punch_failures++;
        s->segs[seg].fill = 0;
        s->segs[seg].gen++;            /* reads sent before this are of another incarnation */
        s->free_segs[s->nfree++] = seg;
        s->st.gc_segments++;
    }
    pthread_mutex_unlock(&s->lock);
    return ok;
}

void ac_tuple_stats(struct ac_tuple_store *s, struct ac_tuple_stats *out) {
    pthread_mutex_lock(&s->lock);
    *out = s->st;
    out->file_bytes = 0;
    for (uint32_t i = 0; i < s->nseg; i++)
        out->file_bytes += s->segs[i].fill;
    out->seg_bytes = s->seg_bytes;
    out->segments = s->nseg - s->nfree;
    out->index_slots = s->nslots;
    out->index_bytes = s->nslots * SLOT;
    pthread_mutex_unlock(&s->lock);
}

void ac_tuple_close(struct ac_tuple_store *s) {
    if (s == NULL)
        return;
    spill_reader_close(&s->rd, s->dat);
    close(s->dat);
    close(s->idx);
    unlink(s->dat_path);
    unlink(s->idx_path);
    unlink(s->new_path);
    pthread_mutex_destroy(&s->lock);
    free(s->segs);
    free(s->free_segs);
    free(s);
}
