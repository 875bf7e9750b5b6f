/* A blocking client of memcached's text protocol for tier remote: set, get
 * and delete of binary values on another server (RAM-DUR's tier below local
 * memory: Sciascia & Pedone keep what one server's memory cannot hold in the
 * memory of the others). One server, a few connections (a pool: a caller takes
 * any free one), each with a send and receive timeout; a connection that
 * failed is closed and opened again on its next use, and the server is passed
 * over for a while (retry_ns). A reply that is not the
 * protocol's (a wrong length, a missing terminator, an unknown line) is an
 * error, -EPROTO, never data. No memcached dependency. */
#ifndef AC_REMOTE_CLIENT_H
#define AC_REMOTE_CLIENT_H
#include <stddef.h>
#include <stdint.h>

struct ac_remote;

struct ac_remote_stats {
    uint64_t sets, gets, deletes;        /* requests answered */
    uint64_t bytes_sent, bytes_received; /* values only */
    uint64_t failures;                   /* requests that failed: connection, timeout, garbage */
    uint64_t garbage;                    /* of those, replies outside the protocol */
    uint64_t reconnects;
    uint64_t skipped;                    /* requests not sent: the server failed less than retry_ns ago */
};

/* "host:port" (a numeric IPv4 address or a name); conns connections at most;
 * timeout_ms for each send and receive; after a failure the server's requests
 * fail at once (-EHOSTDOWN, counted as skipped) for retry_ns, then one tries
 * again. NULL with a message in err when the address does not parse (nothing
 * is connected yet). */
struct ac_remote *ac_remote_new(const char *addr, int conns, int timeout_ms, uint64_t retry_ns, char *err,
                                size_t errlen);
void ac_remote_free(struct ac_remote *r);
const char *ac_remote_addr(const struct ac_remote *r);
/* 0 stored; -ENOSPC the server is out of memory; -EPROTO garbage; -errno. */
int ac_remote_set(struct ac_remote *r, const char *key, const void *val, size_t len);
/* The same in two steps, so that one thread has a set in flight on several
 * servers at once: send takes a connection and sends (0, or -errno with
 * nothing held), wait reads the answer and gives the connection back (set's
 * result). A thread with sends to several servers in flight must have sent
 * them in ascending order of the servers (a fixed order: no two threads each
 * hold a connection the other waits for). */
struct ac_remote_pending {
    struct ac_remote *r;
    void *conn;
    size_t len;
};
int ac_remote_set_send(struct ac_remote *r, const char *key, const void *val, size_t len,
                       struct ac_remote_pending *p);
int ac_remote_set_wait(struct ac_remote_pending *p);
/* The value's length (copied into buf when it fits cap); -ENOENT not there;
 * -EMSGSIZE larger than cap; -EPROTO garbage; -errno. */
long ac_remote_get(struct ac_remote *r, const char *key, void *buf, size_t cap);
/* 0 deleted or not there; -EPROTO; -errno. */
int ac_remote_delete(struct ac_remote *r, const char *key);
/* A delete sent with noreply (the server answers nothing): 0 sent, -errno. */
int ac_remote_delete_noreply(struct ac_remote *r, const char *key);
/* Connects one connection now: 0 or -errno (a check at start). */
int ac_remote_ping(struct ac_remote *r);
void ac_remote_get_stats(struct ac_remote *r, struct ac_remote_stats *out);

#endif
