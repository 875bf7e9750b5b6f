/* libFuzzer target: arbitrary bytes to memcached-ac's text, meta and binary
 * protocol, with an anti-caching policy spilling and fetching all along.
 *
 * LLVMFuzzerInitialize runs the real server (memcached.c's main(), renamed
 * memcached_main by the build) in a thread: a unix socket in a private
 * directory, -m AC_FUZZ_MEM (8 MB), 2 worker threads, -o ac_policy=
 * AC_FUZZ_POLICY (lru) with the spill directory next to the socket, and
 * slab_chunk_max=AC_FUZZ_CHUNK (2048: values above 2 KB are chunked items, so
 * a 4 KB input reaches the chunked paths of spill and fetch). Before the
 * first input it stores about three times -m of values, so items are spilled
 * from the start:
 *   k0 .. k<N-1>   1 KB, every 8th 2.5-4 KB; the corpus and dictionary use
 *                  these keys, the inputs read, modify and delete them freely;
 *   <PRIV>0 ..     the harness's own keys (PRIV below): written and read back
 *                  only by the harness, every few thousand inputs (a batch),
 *                  with client flags of all 32 bits (priv_flags), and checked
 *                  byte for byte, flags too -- a wrong value, or a miss that
 *                  no flush explains, is a finding. A key an input names is
 *                  not checked until the harness writes it again.
 * Each input is one connection: connect, write the bytes, shutdown(SHUT_WR),
 * read until the server closes. No answer for HANG_MS is a finding (abort).
 * Text, meta and binary commands share the socket (the first byte decides).
 * At exit one more batch runs, then `stats anticache` must show spilled items,
 * fetched (or read-through) items, no lost item and no refused allocation
 * (refused_timeout/io_error/table_full: the store always has room here; the
 * wait is ac_alloc_wait=1s); the counts are printed as "fuzz_protocol: end: ...".
 *
 * Inputs containing "watch" are rejected: a watcher connection streams log
 * lines until the client closes it, which this one-shot client never does.
 * So are `lru_crawler crawl` and `metadump` of a class list (upstream bugs, below).
 * After each input the harness undoes what would spoil the rest of the run:
 * verbosity (2 logs every later command to stderr) and cache_memlimit (back
 * to -m, ac_set_budget: the item memory is what the book-keeping leaves).
 * flush_all is off (-F) unless AC_FUZZ_FLUSH=1: inputs flush often, and after
 * a flush nothing is spilled any more; with AC_FUZZ_FLUSH=1 a batch first
 * fills the memory again when an input flushed.
 * Environment: AC_FUZZ_POLICY, AC_FUZZ_FLUSH, AC_FUZZ_MEM (megabytes),
 * AC_FUZZ_CHUNK (slab_chunk_max), AC_FUZZ_OPTS (more -o suboptions),
 * AC_FUZZ_BATCH (inputs between batches, default 2000), AC_FUZZ_STATS (print
 * all of `stats anticache` at the end), TMPDIR (where the private directory goes). */
#include "memcached.h"
#include "ac_hooks.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int memcached_main(int argc, char **argv);

#define HANG_MS 15000
#define NPRIV 3000
#define PRIV "acfz-priv-"          /* an input naming PRIV<n> voids the checks of key n */
#define BATCH_KEYS 48

static char dir[160], sockpath[200], policy[32];
static int mem_mb = 8, nkeys;
static unsigned long n_inputs, n_batches, n_checked, n_errors_seen;
static unsigned batch_every = 2000;
static bool flush_allowed;          /* AC_FUZZ_FLUSH=1: no -F */
static size_t start_maxbytes;
static rel_time_t filled_oldest_live;
static uint64_t filled_oldest_cas;
static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static int hconn = -1;             /* the harness's own connection */
static pthread_t server_tid;
static volatile bool stopping;

/* what the harness knows of each private key */
enum { P_UNKNOWN, P_PRESENT };
static struct priv {
    int state;
    unsigned gen;
    rel_time_t wtime;               /* memcached's clock after the write */
    uint64_t oldest_cas;            /* settings.oldest_cas then */
} priv[NPRIV];

static uint64_t rnd(void) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return rng;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz_protocol: FINDING: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    abort();      /* libFuzzer keeps the input that was running */
}

static void rm_rf(const char *path) {
    char cmd[400];
    if (path[0] == '\0' || strncmp(path, "/", 1) != 0)
        return;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
    if (system(cmd) != 0)
        fprintf(stderr, "fuzz_protocol: could not remove %s\n", path);
}

static void cleanup(void) {
    if (hconn >= 0)
        close(hconn);
    rm_rf(dir);
}

static int connect_server(void) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        die("socket: %s", strerror(errno));
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sockpath);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

struct buf { char *p; size_t n, cap; };

static void buf_add(struct buf *b, const char *p, size_t n) {
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (b->p == NULL)
            abort();
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
    b->p[b->n] = '\0';
}

/* When a harness request's answer is complete: */
typedef bool (*done_fn)(const struct buf *b, unsigned arg);

static bool lines_done(const struct buf *b, unsigned n) {   /* n one-line replies */
    unsigned seen = 0;
    for (const char *q = b->p; (q = strstr(q, "\r\n")) != NULL; q += 2)
        if (++seen >= n)
            return true;
    return false;
}

static bool tail_done(const struct buf *b, unsigned what) { /* stats: END, mn: MN */
    const char *t = what ? "MN\r\n" : "END\r\n";
    size_t n = strlen(t);
    return b->n >= n && memcmp(b->p + b->n - n, t, n) == 0;
}

/* a `get` answer: VALUE blocks (walked by their lengths), then END or an error line */
static bool get_done(const struct buf *b, unsigned unused) {
    (void)unused;
    const char *p = b->p, *end = b->p + b->n;
    for (;;) {
        const char *e = memmem(p, (size_t)(end - p), "\r\n", 2);
        if (e == NULL)
            return false;
        if (strncmp(p, "VALUE ", 6) != 0)
            return true;                      /* END, or an error ends the answer */
        const char *sp = e;
        while (sp > p && sp[-1] != ' ')
            sp--;
        unsigned long len = strtoul(sp, NULL, 10);
        if ((size_t)(end - (e + 2)) < len + 2)
            return false;
        p = e + 2 + len + 2;
    }
}

/* Nanoseconds this process's threads have spent runnable but waiting for a
 * CPU (the second field of /proc/self/task/N/schedstat), summed; *ran: the
 * nanoseconds they ran (the first field), summed. */
static uint64_t runqueue_wait_ns(uint64_t *ran) {
    uint64_t sum = 0;
    *ran = 0;
    DIR *d = opendir("/proc/self/task");
    if (d == NULL)
        return 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char path[300], line[128];
        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat", de->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        unsigned long long run, wait;
        if (fgets(line, sizeof(line), f) != NULL && sscanf(line, "%llu %llu", &run, &wait) == 2) {
            sum += wait;
            *ran += run;
        }
        fclose(f);
    }
    closedir(d);
    return sum;
}

/* Microseconds some task of the machine was stalled on I/O or on memory
 * (pressure stall information, /proc/pressure/{io,memory}: "some ...
 * total=N"), summed; 0 without PSI. */
static uint64_t system_stall_us(void) {
    static const char *const files[] = { "/proc/pressure/io", "/proc/pressure/memory" };
    uint64_t sum = 0;
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        FILE *f = fopen(files[i], "r");
        if (f == NULL)
            continue;
        char line[256];
        const char *t;
        if (fgets(line, sizeof(line), f) != NULL && strncmp(line, "some ", 5) == 0
                && (t = strstr(line, "total=")) != NULL)
            sum += strtoull(t + 6, NULL, 10);
        fclose(f);
    }
    return sum;
}

static void event_fatal(int err) {
    die("libevent reported a misuse (error %d; its message is above)", err);
}

/* Before a hang is reported: every thread's stack (the server's workers, its
 * LRU and anti-caching threads) from gdb, when the machine has it, so that
 * a hang that does not replay alone still shows where the server waited. */
static void dump_threads(void) {
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "command -v gdb >/dev/null && gdb -p %d -batch -nx -q "
             "-ex 'thread apply all bt' </dev/null 1>&2", (int)getpid());
    fprintf(stderr, "fuzz_protocol: the threads' stacks at the hang:\n");
    if (system(cmd) != 0)
        fprintf(stderr, "fuzz_protocol: (no stacks: gdb is missing or could not attach)\n");
}

/* A silence of HANG_MS is a hang unless the machine was the cause meanwhile:
 * this process starved of CPU (its threads spent a good part of the window
 * waiting to run: a loaded machine, or the run niced beside a build), or
 * tasks stalled on I/O or memory for a good part of it (PSI: swap-off of a
 * test's swap file, a flood of writeback). Then the wait goes on, up to
 * STARVED_WINDOWS more windows. (Both protocol runs of a long run reported
 * 15 s silences in the same second under such load; neither input replays
 * slowly: 13 and 28 ms.) A process that ran for more than half of a silent
 * window was not starved, whatever its threads waited: a thread spinning
 * without answering (the busy loop of finding 12) also waits for the CPU
 * beside another run, which once hid a silence until libFuzzer's timeout
 * ended the run without stacks (the long run of this harness's finding 13). */
#define STARVED_WINDOWS 20

/* Writes all of data, reading what arrives meanwhile (kept in *out when
 * given). half_close (a fuzz input): then shuts the writing side and reads
 * until the server closes; returns 0. Otherwise reads until done(out, arg);
 * returns -1 when the connection failed. Dies when the server does not answer. */
static int exchange(int fd, const char *data, size_t size, bool half_close, struct buf *out,
                    done_fn done, unsigned arg) {
    size_t off = 0;
    bool wr_done = size == 0;
    if (wr_done && half_close)
        shutdown(fd, SHUT_WR);
    char rb[65536];
    int starved = 0;
    uint64_t ran, waited = runqueue_wait_ns(&ran), stalled = system_stall_us();
    for (;;) {
        struct pollfd p = { .fd = fd, .events = POLLIN | (wr_done ? 0 : POLLOUT) };
        int r = poll(&p, 1, HANG_MS);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0) {
            uint64_t ran_now, now = runqueue_wait_ns(&ran_now), stall = system_stall_us();
            bool was_starved = (now - waited > (uint64_t)HANG_MS * 1000000u / 4
                                || stall - stalled > (uint64_t)HANG_MS * 1000u / 4)
                && ran_now - ran < (uint64_t)HANG_MS * 1000000u / 2;
            if (ran_now - ran >= (uint64_t)HANG_MS * 1000000u / 2)
                fprintf(stderr, "fuzz_protocol: silent for %d ms while the process ran %llu ms: not starved\n",
                        HANG_MS, (unsigned long long)((ran_now - ran) / 1000000u));
            waited = now;
            ran = ran_now;
            stalled = stall;
            if (was_starved && ++starved <= STARVED_WINDOWS)
                continue;
        }
        if (r == 0) {
            dump_threads();
            die("no answer from the server for %d ms (%s; %zu of %zu bytes written)", HANG_MS,
                half_close ? "fuzz input" : "harness request", off, size);
        }
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t n = recv(fd, rb, sizeof(rb), MSG_DONTWAIT);
            if (n < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            if (n <= 0)
                return half_close ? 0 : -1;
            if (out != NULL) {
                buf_add(out, rb, (size_t)n);
                if (done != NULL && done(out, arg))
                    return 0;
            }
            continue;
        }
        if (!wr_done && p.revents & POLLOUT) {
            ssize_t n = send(fd, data + off, size - off, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            if (n < 0)
                return half_close ? 0 : -1;   /* the server closed first: fine for an input */
            off += (size_t)n;
            if (off == size) {
                wr_done = true;
                if (half_close)
                    shutdown(fd, SHUT_WR);
            }
        }
    }
}

static int harness_conn(void) {
    if (hconn < 0 && (hconn = connect_server()) < 0)
        die("cannot connect to the server: %s", strerror(errno));
    return hconn;
}

/* Sends cmd, reads its whole answer into out. */
static void request(const char *cmd, size_t len, struct buf *out, done_fn done, unsigned arg) {
    out->n = 0;
    buf_add(out, "", 0);
    if (exchange(harness_conn(), cmd, len, false, out, done, arg) != 0) {
        close(hconn);      /* e.g. an input changed something that closed it; once more */
        hconn = -1;
        out->n = 0;
        buf_add(out, "", 0);
        if (exchange(harness_conn(), cmd, len, false, out, done, arg) != 0)
            die("the harness connection failed twice");
    }
}

/* 700..3999 bytes: above slab_chunk_max (2048) an item is chunked */
static size_t priv_value(unsigned i, unsigned gen, char *v) {
    size_t len = 700 + (i * 37u + gen * 11u) % 3300u;
    int h = snprintf(v, len + 1, "%s%u:%u:", PRIV, i, gen);
    for (size_t j = (size_t)h; j < len; j++)
        v[j] = (char)('a' + (i * 7u + gen * 13u + j) % 26u);
    v[len] = '\0';
    return len;
}

/* The client flags of a private key's generation: all 32 bits in use and
 * never 0, so that a value read back proves its flags came back with it
 * (through a spill, a parked get and a fetch) */
static unsigned priv_flags(unsigned i, unsigned gen) {
    return (i * 2654435761u) ^ (gen * 40503u) ^ 0x80000001u;
}

/* 1000 bytes, every 8th key 2500..3999 (chunked) */
static size_t key_value(int i, unsigned gen, char *v) {
    size_t len = i % 8 == 7 ? 2500 + (size_t)(i * 131 + (int)gen) % 1500 : 1000;
    int h = snprintf(v, len + 1, "v:k%d:%u:", i, gen);
    memset(v + h, 'x' + (int)(gen % 3u), len - (size_t)h);
    v[len] = '\0';
    return len;
}

/* One pipelined batch of sets; count replies; returns the replies. */
static void write_batch(const int *idx, int n, bool private, unsigned gen, struct buf *cmd, struct buf *out) {
    char v[8192], line[128];
    cmd->n = 0;
    for (int j = 0; j < n; j++) {
        size_t len = private ? priv_value((unsigned)idx[j], gen, v) : key_value(idx[j], gen, v);
        int h = private ? snprintf(line, sizeof(line), "set %s%d %u 0 %zu\r\n", PRIV, idx[j],
                                   priv_flags((unsigned)idx[j], gen), len)
                        : snprintf(line, sizeof(line), "set k%d 0 0 %zu\r\n", idx[j], len);
        buf_add(cmd, line, (size_t)h);
        buf_add(cmd, v, len);
        buf_add(cmd, "\r\n", 2);
    }
    request(cmd->p, cmd->n, out, lines_done, (unsigned)n);
    if (!private)
        return;
    char *p = out->p;
    for (int j = 0; j < n; j++) {
        char *e = strstr(p, "\r\n");
        struct priv *s = &priv[idx[j]];
        if (e != NULL && strncmp(p, "STORED\r\n", 8) == 0) {
            s->state = P_PRESENT;
            s->gen = gen;
            s->wtime = current_time;
            s->oldest_cas = settings.oldest_cas;
        } else {
            s->state = P_UNKNOWN;     /* a refused set drops the old value too */
            n_errors_seen++;
        }
        p = e ? e + 2 : p + strlen(p);
    }
}

static bool flushed_since(const struct priv *s) {
    rel_time_t ol = settings.oldest_live;
    return (ol != 0 && ol >= s->wtime) || settings.oldest_cas != s->oldest_cas;
}

/* Reads n keys with one `get`, checks the private ones. */
static void read_batch(const int *idx, int n, bool private, struct buf *cmd, struct buf *out) {
    char line[64], v[8192];
    cmd->n = 0;
    buf_add(cmd, "get", 3);
    for (int j = 0; j < n; j++) {
        int h = private ? snprintf(line, sizeof(line), " %s%d", PRIV, idx[j])
                        : snprintf(line, sizeof(line), " k%d", idx[j]);
        buf_add(cmd, line, (size_t)h);
    }
    buf_add(cmd, "\r\n", 2);
    request(cmd->p, cmd->n, out, get_done, 0);
    bool found[BATCH_KEYS] = { false };
    char *p = out->p;
    while (strncmp(p, "VALUE ", 6) == 0) {
        char *data = strstr(p, "\r\n");
        char *sp = data;
        while (sp[-1] != ' ')
            sp--;
        size_t len = strtoul(sp, NULL, 10);
        data += 2;
        if (private) {
            int i;
            unsigned flags;
            size_t len2;
            if (sscanf(p, "VALUE " PRIV "%d %u %zu", &i, &flags, &len2) != 3 || i < 0 || i >= NPRIV || len2 != len)
                die("a harness read got a malformed reply: %.120s", p);
            struct priv *s = &priv[i];
            if (s->state == P_PRESENT) {
                size_t want = priv_value((unsigned)i, s->gen, v);
                unsigned want_flags = priv_flags((unsigned)i, s->gen);
                if (want != len || memcmp(v, data, len) != 0 || flags != want_flags)
                    die("%s%d: got %zu bytes \"%.40s...\" (flags %u), expected generation %u: %zu bytes"
                        " \"%.40s...\" (flags %u)", PRIV, i, len, data, flags, s->gen, want, v, want_flags);
                n_checked++;
            }
            for (int j = 0; j < n; j++)
                if (idx[j] == i)
                    found[j] = true;
        }
        p = data + len + 2;
    }
    if (strcmp(p, "END\r\n") != 0) {
        /* an error line ends the answer; the keys after the failing one were not looked up */
        if (strstr(p, "checksum") != NULL || strstr(p, "reading a spilled item failed") != NULL)
            die("a harness read got: %.200s", p);
        if (strncmp(p, "SERVER_ERROR out of memory", 26) != 0)
            die("a harness read got an unexpected reply: %.200s", p);
        n_errors_seen++;
        return;
    }
    if (!private)
        return;
    for (int j = 0; j < n; j++) {
        struct priv *s = &priv[idx[j]];
        if (!found[j] && s->state == P_PRESENT) {
            if (!flushed_since(s))
                die("%s%d (generation %u, stored at %u) is gone: no flush since (oldest_live %u, now %u)",
                    PRIV, idx[j], s->gen, (unsigned)s->wtime, (unsigned)settings.oldest_live,
                    (unsigned)current_time);
            s->state = P_UNKNOWN;
        }
    }
}

/* Writes and reads random keys of both kinds: spills and fetches go on. */
static void prefill(void);

static void batch(void) {
    static struct buf cmd, out;
    static unsigned gen = 1;
    int idx[BATCH_KEYS];
    gen++;
    if (flush_allowed && (settings.oldest_live != filled_oldest_live || settings.oldest_cas != filled_oldest_cas))
        prefill();     /* an input flushed: fill memory again, or nothing more is spilled */
    for (int j = 0; j < BATCH_KEYS; j++)
        idx[j] = (int)(rnd() % NPRIV);
    write_batch(idx, BATCH_KEYS / 2, true, gen, &cmd, &out);
    for (int j = 0; j < BATCH_KEYS; j++)
        idx[j] = (int)(rnd() % (uint64_t)nkeys);
    write_batch(idx, BATCH_KEYS / 2, false, gen, &cmd, &out);
    for (int r = 0; r < 2; r++) {
        for (int j = 0; j < BATCH_KEYS; j++)
            idx[j] = (int)(rnd() % NPRIV);
        read_batch(idx, BATCH_KEYS, true, &cmd, &out);
    }
    for (int j = 0; j < BATCH_KEYS; j++)
        idx[j] = (int)(rnd() % (uint64_t)nkeys);
    read_batch(idx, BATCH_KEYS, false, &cmd, &out);
    n_batches++;
}

static unsigned long long stat_of(const char *stats, const char *name) {
    char pat[64];
    snprintf(pat, sizeof(pat), "STAT %s ", name);
    const char *p = strstr(stats, pat);
    return p ? strtoull(p + strlen(pat), NULL, 10) : 0;
}

/* atexit, registered once the server runs (so before ac_shutdown's turn) */
static void end_check(void) {
    static struct buf out;
    batch();
    request("stats anticache\r\n", 17, &out, tail_done, 0);
    unsigned long long spilled = stat_of(out.p, "spilled_items"), fetched = stat_of(out.p, "fetched_items"),
        through = stat_of(out.p, "read_through_items"), lost = stat_of(out.p, "lost_items"),
        refused = stat_of(out.p, "refused_items"), r_time = stat_of(out.p, "refused_timeout"),
        r_disk = stat_of(out.p, "refused_disk_full"), r_io = stat_of(out.p, "refused_io_error"),
        r_table = stat_of(out.p, "refused_table_full");
    printf("fuzz_protocol: end: policy=%s%s inputs=%lu batches=%lu spilled=%llu fetched=%llu read_through=%llu "
           "refused=%llu(timeout %llu disk %llu io %llu table %llu) lost=%llu verified=%lu harness_errors=%lu\n", policy, flush_allowed ? "+flush" : "", n_inputs, n_batches, spilled,
           fetched, through, refused, r_time, r_disk, r_io, r_table, lost, n_checked, n_errors_seen);
    if (getenv("AC_FUZZ_STATS") != NULL)
        printf("%s", out.p);              /* the whole `stats anticache` */
    fflush(stdout);
    /* policies/README.md: nothing lost; no allocation refused while the store has room */
    if (spilled == 0 || fetched + through == 0 || lost != 0 || n_checked == 0 || r_time + r_io + r_table != 0) {
        fprintf(stderr, "fuzz_protocol: FINDING: at exit: %s\n%s",
                lost != 0 ? "items were lost" : r_time + r_io + r_table != 0 ? "allocations were refused"
                : "no spilling/fetching happened (or nothing was verified)", out.p);
        cleanup();
        _exit(1);
    }
    /* Stop the server as memcached stops gracefully (SIGUSR1: its threads are
     * stopped and joined), so that exit's handlers -- ac_shutdown closing the
     * spill store -- run after them, as in production's graceful stop. */
    close(hconn);
    hconn = -1;
    stopping = true;
    kill(getpid(), SIGUSR1);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 60;
    if (pthread_timedjoin_np(server_tid, NULL, &until) != 0) {
        fprintf(stderr, "fuzz_protocol: FINDING: the server did not stop within 60 s of SIGUSR1\n");
        cleanup();
        _exit(1);
    }
}

static void *server_thread(void *arg) {
    char **argv = arg;
    int argc = 0;
    while (argv[argc] != NULL)
        argc++;
    int rc = memcached_main(argc, argv);
    if (stopping)
        return NULL;
    fprintf(stderr, "fuzz_protocol: the server stopped (memcached_main returned %d)\n", rc);
    cleanup();
    _exit(rc == 0 ? 1 : rc);
}

static void prefill(void) {
    static struct buf cmd, out;
    char v[8192], line[128];
    /* about 3x -m: ~1.3 KB on average (k*), ~2.3 KB (private keys) */
    nkeys = (mem_mb * 3 * 1024 * 1024 - NPRIV * 2350) / 1300;
    for (int base = 0; base < nkeys; base += 256) {
        cmd.n = 0;
        for (int i = base; i < base + 256 && i < nkeys; i++) {
            size_t len = key_value(i, 0, v);
            int h = snprintf(line, sizeof(line), "set k%d 0 0 %zu noreply\r\n", i, len);
            buf_add(&cmd, line, (size_t)h);
            buf_add(&cmd, v, len);
            buf_add(&cmd, "\r\n", 2);
        }
        buf_add(&cmd, "mn\r\n", 4);
        request(cmd.p, cmd.n, &out, tail_done, 1);
    }
    int idx[64];
    for (int base = 0; base < NPRIV; base += 64) {
        int n = 0;
        for (int i = base; i < base + 64 && i < NPRIV; i++)
            idx[n++] = i;
        write_batch(idx, n, true, 1, &cmd, &out);
    }
    request("stats anticache\r\n", 17, &out, tail_done, 0);
    if (start_maxbytes == 0) {
        start_maxbytes = settings.maxbytes;
        fprintf(stderr, "fuzz_protocol: prefilled %d + %d keys: spilled_items %llu\n", nkeys, NPRIV,
                stat_of(out.p, "spilled_items"));
    }
    filled_oldest_live = settings.oldest_live;
    filled_oldest_cas = settings.oldest_cas;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc; (void)argv;
    const char *e = getenv("AC_FUZZ_POLICY");
    snprintf(policy, sizeof(policy), "%s", e && *e ? e : "lru");
    if ((e = getenv("AC_FUZZ_MEM")) && atoi(e) > 0)
        mem_mb = atoi(e);
    if ((e = getenv("AC_FUZZ_BATCH")) && atoi(e) > 0)
        batch_every = (unsigned)atoi(e);
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/acfuzz.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL || strlen(dir) + 6 >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
        fprintf(stderr, "fuzz_protocol: cannot make a private directory (%s): %s\n", dir, strerror(errno));
        exit(1);
    }
    atexit(cleanup);
    snprintf(sockpath, sizeof(sockpath), "%s/sock", dir);
    static char opts[1024], mem[16];
    const char *extra = getenv("AC_FUZZ_OPTS");
    flush_allowed = (e = getenv("AC_FUZZ_FLUSH")) && strcmp(e, "1") == 0;
    const char *chunk = getenv("AC_FUZZ_CHUNK");
    snprintf(opts, sizeof(opts), "ac_policy=%s,ac_spill_dir=%s/spill,ac_alloc_wait=1s,slab_chunk_max=%s%s%s",
             policy, dir, chunk && *chunk ? chunk : "2048", extra && *extra ? "," : "", extra && *extra ? extra : "");
    snprintf(mem, sizeof(mem), "%d", mem_mb);
    static char *args[16];
    int n = 0;
    args[n++] = "memcached-ac";
    args[n++] = "-s"; args[n++] = sockpath;
    args[n++] = "-m"; args[n++] = mem;
    args[n++] = "-t"; args[n++] = "2";
    args[n++] = "-c"; args[n++] = "256";
    if (geteuid() == 0) {
        args[n++] = "-u"; args[n++] = "root";
    }
    if (!flush_allowed)
        args[n++] = "-F";
    args[n++] = "-o"; args[n++] = opts;
    args[n] = NULL;
    /* libevent's debug mode: an event re-initialised or added while it is
     * pending (a connection's event reused by a new connection on the same
     * fd before it was deleted) is reported at the call, with its stack,
     * instead of corrupting the fd's event list. */
    event_enable_debug_mode();
    event_set_fatal_callback(event_fatal);
    if (pthread_create(&server_tid, NULL, server_thread, args) != 0) {
        fprintf(stderr, "fuzz_protocol: cannot start the server thread\n");
        exit(1);
    }
    for (int i = 0; (hconn = connect_server()) < 0; i++) {
        if (i > 600) {
            fprintf(stderr, "fuzz_protocol: the server did not come up on %s\n", sockpath);
            exit(1);
        }
        usleep(50000);
    }
    rng ^= (uint64_t)time(NULL);
    prefill();
    atexit(end_check);
    return 0;
}

/* The harness's own looks at an input: not instrumented, and no memmem (which
 * libFuzzer hooks), or the fuzzer would learn these words from the harness. */
__attribute__((no_sanitize("coverage")))
static bool contains(const uint8_t *data, size_t size, const char *word) {
    size_t n = strlen(word);
    for (size_t i = 0; i + n <= size; i++) {
        size_t j = 0;
        while (j < n && data[i + j] == (uint8_t)word[j])
            j++;
        if (j == n)
            return true;
    }
    return false;
}

/* A private key an input names (the fuzzer may learn one from the key
 * comparisons of memcached's hash lookups) is no longer checked until the
 * harness writes it again. */
__attribute__((no_sanitize("coverage")))
static void void_named_keys(const uint8_t *data, size_t size) {
    size_t n = strlen(PRIV);
    for (size_t i = 0; i + n < size; i++) {
        size_t j = 0;
        while (j < n && data[i + j] == (uint8_t)PRIV[j])
            j++;
        if (j < n)
            continue;
        unsigned long k = 0;
        size_t d = i + n;
        while (d < size && d < i + n + 6 && data[d] >= '0' && data[d] <= '9')
            k = k * 10 + (unsigned long)(data[d++] - '0');
        if (d > i + n && k < NPRIV)
            priv[k].state = P_UNKNOWN;
    }
}

/* `lru_crawler crawl IDS` or `lru_crawler metadump IDS` that starts no class
 * is mishandled by memcached 1.6.18 (crawler.c, lru_crawler_start): the
 * module is set up before any class is known to start and is never torn
 * down when none does.
 * - crawl: crawler_expired_init's ~137 KB calloc leaks; a long run reached
 *   libFuzzer's 2 GB RSS limit on it (96 % of the live heap, 10,169 calls in
 *   707,736 inputs).
 * - metadump: the connection stays registered as the crawler's client after
 *   the command answered NOTSTARTED and the connection closed. The next crawl
 *   that runs releases that stale client: it writes to whatever socket has
 *   the fd now and redispatches the connection there, and the worker
 *   re-initialises the new connection's pending event, which corrupts
 *   libevent's list for the fd; the worker then spins in libevent at 100 %
 *   CPU and that connection is never served (a 15 s silence; libevent's
 *   debug mode, on here, reports it at conn_worker_readd).
 * `all` always starts a class here (memory is full) and `metadump hash`
 * always walks the hash table, so those stay in; any other class list is
 * rejected. */
__attribute__((no_sanitize("coverage")))
static bool crawler_not_started(const uint8_t *data, size_t size) {
    static const char *const words[] = { "crawl ", "metadump " };
    for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
        size_t n = strlen(words[w]);
        for (size_t i = 0; i + n <= size; i++) {
            if (memcmp(data + i, words[w], n) != 0)
                continue;
            size_t a = i + n;
            while (a < size && data[a] == ' ')
                a++;
            size_t e = a;
            while (e < size && data[e] != ' ' && data[e] != '\r' && data[e] != '\n')
                e++;
            bool all = e - a == 3 && memcmp(data + a, "all", 3) == 0;
            bool hash = e - a == 4 && memcmp(data + a, "hash", 4) == 0;
            if (!all && !hash)
                return true;
        }
    }
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (contains(data, size, "watch") || crawler_not_started(data, size))
        return -1;
    void_named_keys(data, size);
    int fd = connect_server();
    if (fd < 0)
        die("cannot connect to the server: %s", strerror(errno));
    exchange(fd, (const char *)data, size, true, NULL, NULL, 0);
    close(fd);
    /* settings an input may change that would spoil the rest of the run:
     * verbosity; the crawler's sleep (`lru_crawler sleep 1000000` made every
     * later `lru_crawler metadump hash` take 65 s: a sleep per 1000 of the
     * 65,536 buckets; finding 13) and its per-class limit; the budget */
    settings.verbose = 0;
    settings.lru_crawler_sleep = 100;               /* memcached.c's defaults */
    settings.lru_crawler_tocrawl = 0;
    if (settings.maxbytes != start_maxbytes)        /* cache_memlimit: back to -m */
        ac_set_budget(start_maxbytes);
    if (++n_inputs % batch_every == 0)
        batch();
    return 0;
}
