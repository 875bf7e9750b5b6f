/* Block store (H-Store anti-caching, DeBrabant et al. VLDB 2013 §3.2): records of
 * spilled items are packed into an open block in memory; a full block is written
 * to the spill file with one sequential write. Blocks live in extents of the file
 * (block_size each; a record larger than a block gets an extent of its own), and
 * an extent is reused, and its disk space punched out, once no record in it is
 * live. With tuple-merge, a block whose live bytes fall below compact_fill of its
 * length is reported for a whole-block merge (the paper's lazy compaction).
 *
 * Writes: by the thread that closes the block (flush), or, with a write queue
 * (set_writer), by a writer thread of the store. A closed block is then sealed:
 * its extent is taken, its buffer stays readable in memory until the writer
 * has written it, and the flush returns at once; when queue blocks are sealed
 * already, the flush waits for the writer at most wait_ns, then fails with
 * -ETIMEDOUT (the caller refuses what needed the room, counted). A failed
 * background write keeps the block in memory, is retried, and the next flush
 * returns its error once. */
#define _GNU_SOURCE
#include "block_store.h"
#include "spill_file.h"
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { B_FREE = 0, B_OPEN, B_WRITTEN, B_SEALED };
#define NO_BLOCK UINT32_MAX

struct block {
    uint64_t file_off;
    uint64_t live_bytes;
    uint32_t len;       /* bytes of records in the block */
    uint32_t cap;       /* extent size on disk */
    uint32_t live;      /* live records */
    uint32_t next_free; /* free-id list link */
    uint32_t gen;       /* moves on each time the id is taken again (get_start's token) */
    uint8_t state;
    uint8_t merging;
    char *mem;          /* B_SEALED: its bytes, until written */
};

struct ac_store {
    int fd;
    struct spill_reader rd;       /* reads of records and blocks (direct I/O when on) */
    char path[4096];
    size_t block_size;
    double fill;
    pthread_mutex_t lock;
    struct block *blocks;
    uint32_t nblocks, cap_blocks, free_ids;
    uint64_t *free_ext;           /* reusable extents of block_size bytes */
    size_t n_free_ext, cap_free_ext;
    uint64_t file_end;
    uint32_t open_id;
    char *buf;
    size_t buf_len, buf_cap;
    struct ac_store_stats st;
    /* the writer (set_writer; queue_max 0: none, flush writes) */
    unsigned queue_max;
    uint64_t wait_ns;
    uint32_t *queue;              /* sealed block ids, oldest first, queue_max at most */
    unsigned q_head, q_len;
    char *spare;                  /* a written block's buffer, kept for the next open block */
    size_t std_cap;               /* an ordinary block buffer's size */
    int write_err;                /* a background write failed: the next flush returns it */
    bool stopping, writer_started;
    pthread_t writer;
    pthread_cond_t work, room;
};

/* A block buffer of at least len bytes, aligned and rounded up for direct
 * writes (*cap: its size). */
static char *buf_alloc(size_t len, size_t *cap) {
    size_t n = (len + AC_IO_BUF_ALIGN - 1) / AC_IO_BUF_ALIGN * AC_IO_BUF_ALIGN;
    void *p = NULL;
    if (posix_memalign(&p, AC_IO_BUF_ALIGN, n) != 0)
        return NULL;
    *cap = n;
    return p;
}

static struct ac_store *bs_open(const char *dir, size_t block_size, double fill, char *err, size_t errlen) {
    struct ac_store *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(s->path, sizeof(s->path), "%s/blocks.dat", dir);
    s->fd = spill_file_create(s->path);
    if (s->fd < 0) {
        snprintf(err, errlen, "cannot create %s: %s", s->path, strerror(errno));
        free(s);
        return NULL;
    }
    spill_file_random(s->fd);
    spill_reader_open(&s->rd, s->fd, s->path, true);
    s->block_size = block_size;
    s->fill = fill;
    s->open_id = NO_BLOCK;
    s->free_ids = NO_BLOCK;
    s->buf = buf_alloc(block_size, &s->buf_cap);
    s->std_cap = s->buf_cap;
    if (s->buf == NULL) {
        snprintf(err, errlen, "cannot allocate a %zu-byte block buffer", block_size);
        spill_reader_close(&s->rd, s->fd);
        close(s->fd);
        unlink(s->path);
        free(s);
        return NULL;
    }
    pthread_mutex_init(&s->lock, NULL);
    return s;
}

static uint32_t new_block_id(struct ac_store *s) {
    if (s->free_ids != NO_BLOCK) {
        uint32_t id = s->free_ids;
        s->free_ids = s->blocks[id].next_free;
        s->blocks[id].gen++;             /* another incarnation: earlier reads of it are stale */
        return id;
    }
    if (s->nblocks == s->cap_blocks) {
        uint32_t ncap = s->cap_blocks ? s->cap_blocks * 2 : 64;
        struct block *nb = realloc(s->blocks, ncap * sizeof(*nb));
        if (nb == NULL)
            return NO_BLOCK;
        s->blocks = nb;
        s->cap_blocks = ncap;
    }
    s->blocks[s->nblocks].gen = 0;
    return s->nblocks++;
}

static int bs_put(struct ac_store *s, const void *rec, size_t len, struct ac_loc *loc) {
    pthread_mutex_lock(&s->lock);
    if (s->open_id == NO_BLOCK) {
        uint32_t id = new_block_id(s);
        if (id == NO_BLOCK) {
            pthread_mutex_unlock(&s->lock);
            return -ENOMEM;
        }
        uint32_t gen = s->blocks[id].gen;    /* new_block_id moved it on */
        memset(&s->blocks[id], 0, sizeof(s->blocks[id]));
        s->blocks[id].gen = gen;
        s->blocks[id].state = B_OPEN;
        s->open_id = id;
        s->buf_len = 0;
    }
    if (s->buf_len > 0 && s->buf_len + len > s->block_size) {
        pthread_mutex_unlock(&s->lock);
        return AC_STORE_FULL;
    }
    if (len > s->buf_cap) {          /* a record larger than a block: a block of its own (buf is empty) */
        size_t ncap;
        char *nb = buf_alloc(len, &ncap);
        if (nb == NULL) {
            pthread_mutex_unlock(&s->lock);
            return -ENOMEM;
        }
        free(s->buf);
        s->buf = nb;
        s->buf_cap = ncap;
    }
    struct block *b = &s->blocks[s->open_id];
    memcpy(s->buf + s->buf_len, rec, len);
    loc->block = s->open_id;
    loc->offset = (uint32_t)s->buf_len;
    loc->len = (uint32_t)len;
    s->buf_len += len;
    b->len = (uint32_t)s->buf_len;
    b->live++;
    b->live_bytes += len;
    s->st.live_records++;
    s->st.live_bytes += len;
    s->st.open_bytes = s->buf_len;
    pthread_mutex_unlock(&s->lock);
    return AC_STORE_OK;
}

static uint32_t round_up(size_t n, size_t to) {
    return (uint32_t)((n + to - 1) / to * to);
}

/* An extent for len bytes: a free one of block_size, or a new one at the end
 * of the file (*reused says which). */
static uint64_t take_extent(struct ac_store *s, size_t len, uint32_t *cap, bool *reused) {
    if (len <= s->block_size && s->n_free_ext > 0) {
        *cap = (uint32_t)s->block_size;
        *reused = true;
        return s->free_ext[--s->n_free_ext];
    }
    *cap = len <= s->block_size ? (uint32_t)s->block_size : round_up(len, 4096);
    *reused = false;
    uint64_t off = s->file_end;
    s->file_end += *cap;
    return off;
}

/* Lock held: the bytes of block b when they are in memory (the open block's
 * buffer, a sealed block's until written), else NULL (read from the file). */
static const char *in_memory(const struct ac_store *s, const struct block *b) {
    return b->state == B_OPEN ? s->buf : b->state == B_SEALED ? b->mem : NULL;
}

static int seal_locked(struct ac_store *s);

/* Lock held: whether the open block has something to write. One with no live
 * record starts afresh instead. */
static bool open_block_to_write(struct ac_store *s) {
    if (s->open_id == NO_BLOCK || s->buf_len == 0)
        return false;
    struct block *b = &s->blocks[s->open_id];
    if (b->live == 0) {            /* every record already dead: nothing to write */
        s->buf_len = 0;
        b->len = 0;
        b->gen++;                  /* its offsets are taken again */
        s->st.open_bytes = 0;
        return false;
    }
    return true;
}

/* Called with the lock held. The block keeps its data in memory if the write fails. */
static int flush_locked(struct ac_store *s) {
    if (!open_block_to_write(s))
        return 0;
    if (s->queue_max > 0)
        return seal_locked(s);
    struct block *b = &s->blocks[s->open_id];
    bool reused;
    uint32_t cap;
    uint64_t off = take_extent(s, s->buf_len, &cap, &reused);
    int rc = spill_reader_write(&s->rd, s->fd, s->buf, s->buf_len, off, cap);
    if (rc != 0) {
        s->st.io_errors++;
        if (reused)
            s->free_ext[s->n_free_ext++] = off;
        else if (ftruncate(s->fd, (off_t)(s->file_end -= cap)) != 0)
            s->st.io_errors++;
        return rc;
    }
    b->file_off = off;
    b->cap = cap;
    b->len = (uint32_t)s->buf_len;
    b->state = B_WRITTEN;
    s->st.blocks_written++;
    s->st.bytes_written += s->buf_len;
    s->st.bytes_on_disk += cap;
    s->open_id = NO_BLOCK;
    s->buf_len = 0;
    s->st.open_bytes = 0;
    if (s->buf_cap > s->block_size + AC_IO_BUF_ALIGN) {   /* give back an oversized buffer */
        size_t ncap;
        char *nb = buf_alloc(s->block_size, &ncap);
        if (nb != NULL) {
            free(s->buf);
            s->buf = nb;
            s->buf_cap = ncap;
        }
    }
    return 0;
}

/* --- the writer ---------------------------------------------------------- */
static void free_block_locked(struct ac_store *s, uint32_t id);

static void add_ns(struct timespec *t, uint64_t ns) {
    t->tv_sec += (time_t)(ns / 1000000000u);
    t->tv_nsec += (long)(ns % 1000000000u);
    if (t->tv_nsec >= 1000000000L) {
        t->tv_sec++;
        t->tv_nsec -= 1000000000L;
    }
}

static uint64_t elapsed_ns(const struct timespec *from) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)((now.tv_sec - from->tv_sec) * 1000000000LL + (now.tv_nsec - from->tv_nsec));
}

/* Closes the open block into the queue (lock held): waits for room at most
 * wait_ns; reports a failed background write once. */
static int seal_locked(struct ac_store *s) {
    if (s->write_err != 0) {
        int rc = s->write_err;
        s->write_err = 0;
        return rc;
    }
    if (s->q_len >= s->queue_max) {
        struct timespec start, deadline;
        clock_gettime(CLOCK_MONOTONIC, &start);
        deadline = start;
        add_ns(&deadline, s->wait_ns);
        s->st.write_waits++;
        while (s->q_len >= s->queue_max && s->write_err == 0)
            if (pthread_cond_timedwait(&s->room, &s->lock, &deadline) == ETIMEDOUT)
                break;
        s->st.write_wait_ns += elapsed_ns(&start);
        if (s->write_err != 0) {
            int rc = s->write_err;
            s->write_err = 0;
            return rc;
        }
        if (s->q_len >= s->queue_max) {
            s->st.write_timeouts++;
            return -ETIMEDOUT;
        }
        /* the lock was let go while waiting: the open block may have changed */
        if (!open_block_to_write(s))
            return 0;
    }
    /* the next open block's buffer first: nothing is sealed without one */
    char *next = s->spare;
    size_t next_cap = s->std_cap;
    if (next == NULL && (next = buf_alloc(s->block_size, &next_cap)) == NULL)
        return -ENOMEM;
    s->spare = NULL;
    uint32_t id = s->open_id;
    struct block *b = &s->blocks[id];
    bool reused;
    uint32_t cap;
    b->file_off = take_extent(s, s->buf_len, &cap, &reused);
    b->cap = cap;
    b->len = (uint32_t)s->buf_len;
    b->state = B_SEALED;
    b->mem = s->buf;
    s->queue[(s->q_head + s->q_len) % s->queue_max] = id;
    s->q_len++;
    s->st.bytes_on_disk += cap;
    s->st.sealed_blocks = s->q_len;
    s->buf = next;
    s->buf_cap = next_cap;
    s->open_id = NO_BLOCK;
    s->buf_len = 0;
    s->st.open_bytes = 0;
    pthread_cond_signal(&s->work);
    return 0;
}

/* A sealed block's buffer after it was written or died: kept as the spare
 * when it has the ordinary size. */
static void recycle_locked(struct ac_store *s, struct block *b) {
    if (s->spare == NULL && b->len <= s->block_size && b->mem != NULL)
        s->spare = b->mem;      /* oversized ones (a record larger than a block) are given back */
    else
        free(b->mem);
    b->mem = NULL;
}

static void *writer_main(void *arg) {
    struct ac_store *s = arg;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (s->q_len == 0 && !s->stopping)
            pthread_cond_wait(&s->work, &s->lock);
        if (s->stopping)
            break;                          /* closing: the files go anyway */
        uint32_t id = s->queue[s->q_head];
        struct block *b = &s->blocks[id];
        int rc = 0;
        bool wrote = false;
        if (b->live > 0) {
            char *mem = b->mem;
            size_t len = b->len, cap = b->cap;
            uint64_t off = b->file_off;
            /* no lock held across the write: fetches copy from mem meanwhile;
             * the block cannot be freed before it is popped below */
            pthread_mutex_unlock(&s->lock);
            rc = spill_reader_write(&s->rd, s->fd, mem, len, off, cap);
            pthread_mutex_lock(&s->lock);
            wrote = rc == 0;
            b = &s->blocks[id];             /* puts may have grown the array meanwhile */
        }
        if (rc != 0) {
            /* kept in memory, readable; said at the next flush; retried soon */
            s->st.io_errors++;
            s->write_err = rc;
            pthread_cond_broadcast(&s->room);
            struct timespec t;
            clock_gettime(CLOCK_MONOTONIC, &t);
            add_ns(&t, 100000000u);
            while (!s->stopping && pthread_cond_timedwait(&s->work, &s->lock, &t) != ETIMEDOUT)
                ;
            continue;
        }
        s->q_head = (s->q_head + 1) % s->queue_max;
        s->q_len--;
        s->st.sealed_blocks = s->q_len;
        if (wrote) {
            s->st.blocks_written++;
            s->st.bytes_written += b->len;
        }
        recycle_locked(s, b);
        if (b->live == 0)
            free_block_locked(s, id);        /* died while sealed (maybe never written) */
        else
            b->state = B_WRITTEN;
        pthread_cond_broadcast(&s->room);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* A write queue of queue blocks and a writer thread (0: flush writes, as
 * before); a flush waits for room at most wait_ns. Once, before any put. */
static int bs_set_writer(struct ac_store *s, unsigned queue, uint64_t wait_ns) {
    if (queue == 0)
        return 0;
    s->queue = calloc(queue, sizeof(*s->queue));
    if (s->queue == NULL)
        return -ENOMEM;
    s->queue_max = queue;
    s->wait_ns = wait_ns;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->work, &ca);
    pthread_cond_init(&s->room, &ca);
    pthread_condattr_destroy(&ca);
    int rc = pthread_create(&s->writer, NULL, writer_main, s);
    if (rc != 0) {
        s->queue_max = 0;
        free(s->queue);
        s->queue = NULL;
        return -rc;
    }
    s->writer_started = true;
    return 0;
}

static int bs_flush(struct ac_store *s) {
    pthread_mutex_lock(&s->lock);
    int rc = flush_locked(s);
    pthread_mutex_unlock(&s->lock);
    return rc;
}

static int bs_get(struct ac_store *s, const struct ac_loc *loc, void *buf) {
    pthread_mutex_lock(&s->lock);
    if (loc->block >= s->nblocks || s->blocks[loc->block].state == B_FREE) {
        pthread_mutex_unlock(&s->lock);
        return -EINVAL;
    }
    struct block *b = &s->blocks[loc->block];
    const char *mem = in_memory(s, b);
    if (mem != NULL) {
        memcpy(buf, mem + loc->offset, loc->len);
        pthread_mutex_unlock(&s->lock);
        return 0;
    }
    uint64_t off = b->file_off + loc->offset;
    pthread_mutex_unlock(&s->lock);
    /* The block cannot be freed while this record is live (the caller holds it). */
    int rc = spill_reader_read(&s->rd, buf, loc->len, off);
    pthread_mutex_lock(&s->lock);
    if (rc != 0)
        s->st.io_errors++;
    s->st.record_reads++;
    s->st.bytes_read += loc->len;
    pthread_mutex_unlock(&s->lock);
    return rc;
}

/* The incarnation of loc's block, taken while the caller knows the record is
 * live at loc (the key's lock held, the entry found): get_start and get_valid
 * check against it. */
static uint64_t bs_get_token(struct ac_store *s, const struct ac_loc *loc) {
    pthread_mutex_lock(&s->lock);
    uint64_t t = loc->block < s->nblocks ? s->blocks[loc->block].gen : UINT64_MAX;
    pthread_mutex_unlock(&s->lock);
    return t;
}

/* The read of the record at loc goes out on ring r (req: the caller's, its
 * buffer buf of ac_io_span_cap(loc->len) bytes aligned to AC_IO_BUF_ALIGN; the
 * record lands at buf + req->skip, which a direct read widens) and the caller
 * goes on. token: get_token's,
 * taken while the record was live there; a block taken again since is not
 * read (-ESTALE). 1: no read needed (the record is in the open block: copied
 * into buf). 0: submitted. -errno: not submitted (the caller reads as usual).
 * Nothing is held while the read is in flight: the block may be freed and its
 * extent reused meanwhile, which get_valid then tells. */
static int bs_get_start(struct ac_store *s, const struct ac_loc *loc, void *buf, struct ac_io_ring *r,
                        struct ac_io_req *req, uint64_t token) {
    pthread_mutex_lock(&s->lock);
    struct block *b = loc->block < s->nblocks ? &s->blocks[loc->block] : NULL;
    if (b == NULL || b->state == B_FREE || b->gen != (uint32_t)token ||
            (uint64_t)loc->offset + loc->len > (b->state == B_OPEN ? s->buf_len : b->len)) {
        pthread_mutex_unlock(&s->lock);
        return -ESTALE;
    }
    const char *mem = in_memory(s, b);
    if (mem != NULL) {
        memcpy(buf, mem + loc->offset, loc->len);
        req->skip = 0;
        pthread_mutex_unlock(&s->lock);
        return 1;
    }
    req->fd = s->rd.fd;
    req->write = false;
    req->buf = buf;
    req->len = loc->len;
    req->off = b->file_off + loc->offset;
    ac_io_widen(req, s->rd.align);
    s->st.record_reads++;
    s->st.bytes_read += loc->len;
    pthread_mutex_unlock(&s->lock);
    return ac_io_submit(r, req);
}

/* The bytes get_start read for loc are the record's: its block is the same
 * incarnation (not freed and taken again since). The caller holds what keeps
 * the record live now (the key's lock, the entry still in the table). */
static bool bs_get_valid(struct ac_store *s, const struct ac_loc *loc, uint64_t token) {
    pthread_mutex_lock(&s->lock);
    bool ok = loc->block < s->nblocks && s->blocks[loc->block].state != B_FREE &&
              s->blocks[loc->block].gen == (uint32_t)token;
    pthread_mutex_unlock(&s->lock);
    return ok;
}

static void free_block_locked(struct ac_store *s, uint32_t id) {
    struct block *b = &s->blocks[id];
    if (b->cap == s->block_size) {
        if (s->n_free_ext == s->cap_free_ext) {
            size_t ncap = s->cap_free_ext ? s->cap_free_ext * 2 : 64;
            uint64_t *nf = realloc(s->free_ext, ncap * sizeof(*nf));
            if (nf != NULL) {
                s->free_ext = nf;
                s->cap_free_ext = ncap;
            }
        }
        if (s->n_free_ext < s->cap_free_ext)
            s->free_ext[s->n_free_ext++] = b->file_off;
    }
    /* Give the disk space back; the extent reads as zeros until reused. */
    (void)fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)b->file_off, b->cap);
    s->st.bytes_on_disk -= b->cap;
    b->state = B_FREE;
    if (!b->merging) {       /* a block being merged keeps its id until merge_done */
        b->next_free = s->free_ids;
        s->free_ids = id;
    }
}

static int bs_invalidate(struct ac_store *s, const struct ac_loc *loc) {
    int merge = 0;
    pthread_mutex_lock(&s->lock);
    struct block *b = &s->blocks[loc->block];
    b->live--;
    b->live_bytes -= loc->len;
    s->st.live_records--;
    s->st.live_bytes -= loc->len;
    if (b->state == B_OPEN) {
        if (b->live == 0) {        /* nothing live in the open block: start it afresh */
            s->buf_len = 0;
            b->len = 0;
            b->gen++;              /* its offsets are taken again */
            s->st.open_bytes = 0;
        }
    } else if (b->live == 0) {
        if (b->state != B_SEALED)          /* a sealed one: the writer frees it, unwritten */
            free_block_locked(s, loc->block);
    } else if (!b->merging && (double)b->live_bytes < s->fill * (double)b->len) {
        b->merging = 1;
        merge = 1;
        s->st.merges_triggered++;
    }
    pthread_mutex_unlock(&s->lock);
    return merge;
}

static ssize_t bs_read_block(struct ac_store *s, uint32_t id, void **out) {
    pthread_mutex_lock(&s->lock);
    if (id >= s->nblocks || s->blocks[id].state == B_FREE) {
        pthread_mutex_unlock(&s->lock);
        return -EINVAL;
    }
    struct block *b = &s->blocks[id];
    size_t len = b->len;
    char *buf = malloc(len ? len : 1);
    if (buf == NULL) {
        pthread_mutex_unlock(&s->lock);
        return -ENOMEM;
    }
    const char *mem = in_memory(s, b);
    if (mem != NULL) {
        memcpy(buf, mem, len);
        pthread_mutex_unlock(&s->lock);
        *out = buf;
        return (ssize_t)len;
    }
    uint64_t off = b->file_off;
    /* Not held across the read (fetches of other records go on). The caller
     * claimed the block (begin_merge), so its id is not taken again; if every
     * record in it dies meanwhile its extent may be reused, and then the bytes
     * read are not the block's: it must still be written after the read. */
    pthread_mutex_unlock(&s->lock);
    int rc = spill_reader_read(&s->rd, buf, len, off);
    pthread_mutex_lock(&s->lock);
    if (rc != 0)
        s->st.io_errors++;
    else if (s->blocks[id].state != B_WRITTEN)
        rc = -ESTALE;                  /* freed while it was read: nothing left to merge */
    s->st.block_reads++;
    s->st.bytes_read += len;
    pthread_mutex_unlock(&s->lock);
    if (rc != 0) {
        free(buf);
        return rc;
    }
    *out = buf;
    return (ssize_t)len;
}

static int bs_begin_merge(struct ac_store *s, uint32_t id) {
    int mine = 0;
    pthread_mutex_lock(&s->lock);
    if (id < s->nblocks && s->blocks[id].state != B_FREE && !s->blocks[id].merging) {
        s->blocks[id].merging = 1;
        mine = 1;
    }
    pthread_mutex_unlock(&s->lock);
    return mine;
}

static void bs_merge_done(struct ac_store *s, uint32_t id) {
    pthread_mutex_lock(&s->lock);
    if (id < s->nblocks && s->blocks[id].merging) {
        s->blocks[id].merging = 0;
        if (s->blocks[id].state == B_FREE) {
            s->blocks[id].next_free = s->free_ids;
            s->free_ids = id;
        }
    }
    pthread_mutex_unlock(&s->lock);
}

static void bs_stats(struct ac_store *s, struct ac_store_stats *out) {
    pthread_mutex_lock(&s->lock);
    *out = s->st;
    pthread_mutex_unlock(&s->lock);
}

static void bs_close(struct ac_store *s) {
    if (s->writer_started) {
        pthread_mutex_lock(&s->lock);
        s->stopping = true;
        pthread_cond_broadcast(&s->work);
        pthread_mutex_unlock(&s->lock);
        pthread_join(s->writer, NULL);
        for (unsigned i = 0; i < s->q_len; i++)
            free(s->blocks[s->queue[(s->q_head + i) % s->queue_max]].mem);
        pthread_cond_destroy(&s->work);
        pthread_cond_destroy(&s->room);
    }
    free(s->queue);
    free(s->spare);
    spill_reader_close(&s->rd, s->fd);
    close(s->fd);
    unlink(s->path);
    free(s->blocks);
    free(s->free_ext);
    free(s->buf);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

const struct ac_store_ops ac_block_store_ops = {
    .name = "block",
    .open = bs_open,
    .put = bs_put,
    .flush = bs_flush,
    .set_writer = bs_set_writer,
    .get = bs_get,
    .get_token = bs_get_token,
    .get_start = bs_get_start,
    .get_valid = bs_get_valid,
    .invalidate = bs_invalidate,
    .read_block = bs_read_block,
    .begin_merge = bs_begin_merge,
    .merge_done = bs_merge_done,
    .stats = bs_stats,
    .close = bs_close,
};
