/* Tier "remote": the tier below local memory is other servers' memory
 * (Sciascia & Pedone, RAM-DUR: the data fits the servers' aggregate memory,
 * not any one server's; "network access is much faster than a local disk
 * access"). Spilled records go to memcached servers named by -o ac_remote
 * (HOST:PORT, several joined by '+'), each record to ac_remote_copies of them,
 * partitioned by its sequence number: copy j on server (h(seq) + j) mod N.
 * Book-keeping: H-Store's evicted table (store/evicted.h, charged against -m),
 * fingerprint -> {sequence number, length}; a record's key on the servers is
 * "acr<instance>:<seq>", the instance drawn at start so that servers shared by
 * several clients never mix their records. A read tries the copies in turn: a
 * server that fails (refused, timed out, closed, a reply outside the protocol)
 * or hands back bytes that are not the record (wrong length, a record that does
 * not check: store/record.h) is counted and the next copy is read; only when
 * no copy answers is the read an error (-EIO), never wrong data. A put succeeds
 * when one copy is stored (fewer than ac_remote_copies: counted as degraded),
 * the copies' sets in flight together; a drop's deletes are not waited for
 * (noreply);
 * a server out of memory (memcached -M) is a full device. The remote servers
 * should run with -M (refuse rather than evict): an evicted record is a lost
 * item, found missing on its read and counted. */
#include "memcached.h"
#include "ac_tier.h"
#include "ac_options.h"
#include "store/evicted.h"
#include "store/keys.h"
#include "store/record.h"
#include "store/remote_client.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define U(x) (unsigned long long)(x)
#define MAX_SERVERS 16
#define SEQ_OFF_BITS 24          /* a sequence number in ac_loc: block = seq >> 24, offset = seq & (2^24 - 1) */

struct remote_options {
    char servers[1024];          /* ac_remote */
    uint64_t copies;             /* ac_remote_copies (0: 2, or 1 with one server) */
    uint64_t timeout_ns;         /* ac_remote_timeout */
    uint64_t conns;              /* ac_remote_conns */
    uint64_t retry_ns;           /* ac_remote_retry */
};
static struct remote_options opt;

static struct ac_evicted table;
static struct ac_remote *servers[MAX_SERVERS];
static int nservers, copies;
static uint64_t instance;        /* the prefix of our keys */
static uint64_t next_seq;        /* atomic */
static uint64_t degraded_puts, read_fallbacks, bad_records, missing, unreadable;   /* atomic */

#define COUNT(x) __atomic_add_fetch(&(x), 1, __ATOMIC_RELAXED)

static unsigned bits_for(size_t v) {
    unsigned n = 1;
    while (n < 64 && (v >> n) != 0)
        n++;
    return n;
}

static size_t remote_fixed_bytes(size_t maxbytes) {
    (void)maxbytes;
    return 0;                    /* the evicted table grows with the spilled items: charged_bytes */
}

static void remote_close(void) {
    for (int i = 0; i < nservers; i++)
        ac_remote_free(servers[i]);
    nservers = 0;
    ac_evicted_destroy(&table);
}

static int remote_open(const char *dir, size_t maxbytes, char *err, size_t errlen) {
    (void)dir;
    (void)maxbytes;
    if (opt.servers[0] == '\0') {
        snprintf(err, errlen, "tier remote needs its servers: -o ac_remote=HOST:PORT[+HOST:PORT...] (memcached"
                 " servers, started with -M so that they refuse rather than evict)");
        return -1;
    }
    char list[sizeof(opt.servers)];
    snprintf(list, sizeof(list), "%s", opt.servers);
    for (char *save = NULL, *a = strtok_r(list, "+", &save); a != NULL; a = strtok_r(NULL, "+", &save)) {
        if (nservers == MAX_SERVERS) {
            snprintf(err, errlen, "ac_remote: at most %d servers", MAX_SERVERS);
            remote_close();
            return -1;
        }
        int timeout_ms = (int)(opt.timeout_ns / 1000000u);
        servers[nservers] = ac_remote_new(a, (int)opt.conns, timeout_ms > 0 ? timeout_ms : 1, opt.retry_ns, err, errlen);
        if (servers[nservers] == NULL) {
            remote_close();
            return -1;
        }
        int rc = ac_remote_ping(servers[nservers++]);
        if (rc != 0) {
            snprintf(err, errlen, "ac_remote: cannot connect to %s: %s", a, strerror(-rc));
            remote_close();
            return -1;
        }
    }
    copies = opt.copies != 0 ? (int)opt.copies : (nservers > 1 ? 2 : 1);
    if (copies > nservers) {
        snprintf(err, errlen, "ac_remote_copies=%d but ac_remote names %d server%s: at most one copy per server",
                 copies, nservers, nservers == 1 ? "" : "s");
        remote_close();
        return -1;
    }
    unsigned len_bits = bits_for(ac_record_size(KEY_MAX_LENGTH, (size_t)settings.item_size_max + 2));
    if (ac_evicted_init(&table, 0, SEQ_OFF_BITS, len_bits) != 0) {
        snprintf(err, errlen, "the evicted table cannot hold records of items of up to %d bytes (-I) beside a"
                 " sequence number in 64 bits; lower -I", settings.item_size_max);
        remote_close();
        return -1;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    instance = ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20);
    return 0;
}

static uint64_t seq_of(const struct ac_loc *loc) {
    return ((uint64_t)loc->block << SEQ_OFF_BITS) | loc->offset;
}

static void key_of(uint64_t seq, char *key, size_t n) {
    snprintf(key, n, "acr%016llx:%llx", U(instance), U(seq));
}

/* The server of copy j of record seq. */
static int server_index(uint64_t seq, int j) {
    uint64_t base = ((seq * 0x9E3779B97F4A7C15ULL) >> 32) % (uint64_t)nservers;
    return (int)((base + (uint64_t)j) % (uint64_t)nservers);
}

static struct ac_remote *server_of(uint64_t seq, int j) {
    return servers[server_index(seq, j)];
}

static int remote_put(uint64_t fp, const void *rec, size_t len, struct ac_loc *loc) {
    uint64_t seq = __atomic_fetch_add(&next_seq, 1, __ATOMIC_RELAXED);
    if ((seq >> SEQ_OFF_BITS) > ac_evicted_max_block(&table))
        return AC_TIER_NO_ROOM;
    char key[64];
    key_of(seq, key, sizeof(key));
    /* every copy's set in flight at once, sent in ascending server order (remote_client.h) */
    int idx[MAX_SERVERS], sent[MAX_SERVERS];
    struct ac_remote_pending pend[MAX_SERVERS];
    for (int j = 0; j < copies; j++)
        idx[j] = server_index(seq, j);
    for (int a = 1; a < copies; a++)
        for (int b = a; b > 0 && idx[b - 1] > idx[b]; b--) {
            int t = idx[b];
            idx[b] = idx[b - 1];
            idx[b - 1] = t;
        }
    int stored = 0, first = 0;
    for (int j = 0; j < copies; j++) {
        sent[j] = ac_remote_set_send(servers[idx[j]], key, rec, len, &pend[j]);
        if (sent[j] != 0 && first == 0)
            first = sent[j];
    }
    for (int j = 0; j < copies; j++) {
        if (sent[j] != 0)
            continue;
        int rc = ac_remote_set_wait(&pend[j]);
        if (rc == 0)
            stored++;
        else if (first == 0)
            first = rc;
    }
    if (stored == 0)             /* out of memory everywhere: a full device; anything else: a failed write */
        return first == -ENOSPC || first == -EFBIG ? -ENOSPC : -EIO;
    if (stored < copies)
        COUNT(degraded_puts);
    *loc = (struct ac_loc){ .block = (uint32_t)(seq >> SEQ_OFF_BITS),
                            .offset = (uint32_t)(seq & ((1u << SEQ_OFF_BITS) - 1)), .len = (uint32_t)len };
    if (ac_evicted_insert(&table, fp, loc) != 0) {
        for (int j = 0; j < copies; j++)
            (void)ac_remote_delete(server_of(seq, j), key);
        return AC_TIER_NO_ROOM;
    }
    return 0;
}

static int remote_find(uint64_t fp, struct ac_loc *out, int max) {
    return ac_evicted_count(&table) == 0 ? 0 : ac_evicted_find(&table, fp, out, max);
}

static bool remote_maybe(uint64_t fp) {
    return ac_evicted_count(&table) > 0 && ac_evicted_find(&table, fp, NULL, 0) > 0;
}

static int remote_read(const struct ac_loc *loc, void *buf) {
    uint64_t seq = seq_of(loc);
    char key[64];
    key_of(seq, key, sizeof(key));
    for (int j = 0; j < copies; j++) {
        if (j > 0)
            COUNT(read_fallbacks);
        long n = ac_remote_get(server_of(seq, j), key, buf, loc->len);
        if (n == -ENOENT) {
            COUNT(missing);
            continue;
        }
        if (n == -EMSGSIZE)
            COUNT(bad_records);  /* longer than the record: not it */
        if (n < 0)
            continue;            /* the client counted a failure */
        struct ac_record r;
        if ((size_t)n != loc->len || ac_record_parse(buf, (size_t)n, &r) != AC_REC_OK) {
            COUNT(bad_records);
            continue;
        }
        return 0;
    }
    COUNT(unreadable);
    return -EIO;
}

static int remote_drop(uint64_t fp, const struct ac_loc *loc) {
    if (!ac_evicted_remove(&table, fp, loc))
        return -1;
    char key[64];
    uint64_t seq = seq_of(loc);
    key_of(seq, key, sizeof(key));
    /* not waited for (noreply): a copy left on a failed server is garbage there, not a loss */
    for (int j = 0; j < copies; j++)
        (void)ac_remote_delete_noreply(server_of(seq, j), key);
    return 0;
}

static size_t remote_charged_bytes(void) {
    return ac_evicted_bytes(&table);
}

static void sum_stats(struct ac_remote_stats *t) {
    memset(t, 0, sizeof(*t));
    for (int i = 0; i < nservers; i++) {
        struct ac_remote_stats s;
        ac_remote_get_stats(servers[i], &s);
        t->sets += s.sets;
        t->gets += s.gets;
        t->deletes += s.deletes;
        t->bytes_sent += s.bytes_sent;
        t->bytes_received += s.bytes_received;
        t->failures += s.failures;
        t->garbage += s.garbage;
        t->reconnects += s.reconnects;
        t->skipped += s.skipped;
    }
}

static void remote_get_stats(struct ac_tier_stats *out) {
    struct ac_remote_stats t;
    sum_stats(&t);
    *out = (struct ac_tier_stats){
        .spilled = ac_evicted_count(&table), .table_bytes = ac_evicted_bytes(&table),
        .bytes_written = t.bytes_sent, .record_reads = t.gets,
        .io_errors = __atomic_load_n(&unreadable, __ATOMIC_RELAXED),
    };
}

static void remote_stats(ADD_STAT add_stats, void *c) {
    struct ac_remote_stats t;
    sum_stats(&t);
    APPEND_STAT("remote_servers", "%d", nservers);
    APPEND_STAT("remote_copies", "%d", copies);
    APPEND_STAT("remote_sets", "%llu", U(t.sets));
    APPEND_STAT("remote_gets", "%llu", U(t.gets));
    APPEND_STAT("remote_deletes", "%llu", U(t.deletes));
    APPEND_STAT("remote_bytes_sent", "%llu", U(t.bytes_sent));
    APPEND_STAT("remote_bytes_received", "%llu", U(t.bytes_received));
    APPEND_STAT("remote_failures", "%llu", U(t.failures));
    APPEND_STAT("remote_garbage", "%llu", U(t.garbage));
    APPEND_STAT("remote_reconnects", "%llu", U(t.reconnects));
    APPEND_STAT("remote_skipped", "%llu", U(t.skipped));
    APPEND_STAT("remote_degraded_puts", "%llu", U(__atomic_load_n(&degraded_puts, __ATOMIC_RELAXED)));
    APPEND_STAT("remote_read_fallbacks", "%llu", U(__atomic_load_n(&read_fallbacks, __ATOMIC_RELAXED)));
    APPEND_STAT("remote_bad_records", "%llu", U(__atomic_load_n(&bad_records, __ATOMIC_RELAXED)));
    APPEND_STAT("remote_missing", "%llu", U(__atomic_load_n(&missing, __ATOMIC_RELAXED)));
    APPEND_STAT("remote_unreadable", "%llu", U(__atomic_load_n(&unreadable, __ATOMIC_RELAXED)));
}

/* ac_remote: HOST:PORT joined by '+' (a comma would end the -o option). */
static int parse_servers(void *values, const struct ac_opt *o, const char *v) {
    struct remote_options *p = values;
    if (v[0] == '\0' || strlen(v) >= sizeof(p->servers) || strchr(v, ':') == NULL)
        return ac_opt_refuse(o, v);
    snprintf(p->servers, sizeof(p->servers), "%s", v);
    return 0;
}

static const struct ac_opt remote_opts[] = {
    { .key = "ac_remote", .type = AC_T_CUSTOM, AC_FIELD(struct remote_options, servers), .parse = parse_servers,
      .what = "memcached servers as HOST:PORT, several joined by '+' (e.g. 127.0.0.1:11311+127.0.0.1:11312),"
              " at most 16, under 1024 characters",
      .def = "none (required)",
      .help = "the servers whose memory holds the spilled records (run them with -M: refuse, never evict)" },
    { .key = "ac_remote_copies", .type = AC_T_COUNT, AC_FIELD(struct remote_options, copies), .min = 1,
      .max = MAX_SERVERS, .noun = "a count of copies", .note = "(at most the servers named)",
      .def = "2, or 1 with one server",
      .help = "servers each spilled record is stored on (a read falls back to the next copy)" },
    { .key = "ac_remote_timeout", .type = AC_T_DURATION, AC_FIELD(struct remote_options, timeout_ns),
      .min = 1000000ULL, .max = 60 * AC_SEC, .units = AC_U_S | AC_U_MS, .note = "(e.g. 500ms)",
      .def = "1s", .def_is_value = true,
      .help = "a remote server's time to answer a send or a receive before it counts as failed" },
    { .key = "ac_remote_retry", .type = AC_T_DURATION, AC_FIELD(struct remote_options, retry_ns),
      .min = 0, .max = 3600 * AC_SEC, .units = AC_U_S | AC_U_MS, .note = "(e.g. 1s; 0: never passed over)",
      .def = "1s", .def_is_value = true,
      .help = "after a failure a remote server is passed over this long (its requests fail at once), then tried again" },
    { .key = "ac_remote_conns", .type = AC_T_COUNT, AC_FIELD(struct remote_options, conns), .min = 1, .max = 64,
      .noun = "a count of connections",
      .def = "8", .def_is_value = true,
      .help = "connections to each remote server (a request takes a free one)" },
};
static const struct ac_opt_table remote_options = AC_OPT_TABLE("tier remote", remote_opts, &opt);

static const char *const remote_files[] = { NULL };

static const struct ac_spill_ops remote_spill = {
    .put = remote_put,
    .find = remote_find,
    .peek = remote_find,
    .maybe = remote_maybe,
    .read = remote_read,
    .drop = remote_drop,
};

const struct ac_tier ac_tier_remote = {
    .name = "remote",
    .summary = "RAM-DUR: records in other memcached servers' memory, partitioned and copied, an evicted table here",
    .caps = AC_CAP_SPILL,
    .files = remote_files,
    .options = { &remote_options, &ac_record_options },
    .fixed_bytes = remote_fixed_bytes,
    .open = remote_open,
    .close = remote_close,
    .charged_bytes = remote_charged_bytes,
    .get_stats = remote_get_stats,
    .stats = remote_stats,
    .spill = &remote_spill,
};
