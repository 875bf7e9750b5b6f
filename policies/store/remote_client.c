/* memcached's text protocol over a pool of blocking connections (remote_client.h). */
#define _GNU_SOURCE
#include "remote_client.h"
#include "clock.h"
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 64
#define LINE_MAX_LEN 512

struct conn {
    pthread_mutex_t lock;
    int fd;                      /* -1: not connected */
    char buf[4096];              /* bytes received, not consumed: [pos, end) */
    size_t pos, end;
};

struct ac_remote {
    char addr[128];
    struct sockaddr_storage sa;
    socklen_t salen;
    int timeout_ms;
    uint64_t retry_ns;           /* after a failure the server is passed over this long */
    uint64_t down_until;         /* CLOCK_MONOTONIC ns; 0: up (atomic) */
    int n;
    unsigned next;               /* where the next acquire starts looking (atomic) */
    struct conn conns[MAX_CONNS];
    struct ac_remote_stats st;   /* atomic counters */
};

#define COUNT(r, f, v) __atomic_add_fetch(&(r)->st.f, (v), __ATOMIC_RELAXED)

/* A server that failed is passed over until retry_ns has gone by: on a
 * network a dead host costs a connect timeout per request otherwise. */
static void mark_down(struct ac_remote *r) {
    __atomic_store_n(&r->down_until, ac_now_ns() + r->retry_ns, __ATOMIC_RELAXED);
}

struct ac_remote *ac_remote_new(const char *addr, int conns, int timeout_ms, uint64_t retry_ns, char *err,
                                size_t errlen) {
    const char *colon = strrchr(addr, ':');
    if (colon == NULL || colon == addr || colon[1] == '\0' || (size_t)(colon - addr) >= 100) {
        snprintf(err, errlen, "remote server \"%s\": not HOST:PORT", addr);
        return NULL;
    }
    char host[128], *end;
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = '\0';
    long port = strtol(colon + 1, &end, 10);
    if (*end != '\0' || port < 1 || port > 65535) {
        snprintf(err, errlen, "remote server \"%s\": the port must be a number from 1 to 65535", addr);
        return NULL;
    }
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res = NULL;
    int rc = getaddrinfo(host, colon + 1, &hints, &res);
    if (rc != 0 || res == NULL) {
        snprintf(err, errlen, "remote server \"%s\": cannot resolve %s: %s", addr, host, gai_strerror(rc));
        return NULL;
    }
    struct ac_remote *r = calloc(1, sizeof(*r));
    if (r == NULL) {
        freeaddrinfo(res);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(r->addr, sizeof(r->addr), "%s", addr);
    memcpy(&r->sa, res->ai_addr, res->ai_addrlen);
    r->salen = res->ai_addrlen;
    freeaddrinfo(res);
    r->timeout_ms = timeout_ms;
    r->retry_ns = retry_ns;
    r->n = conns < 1 ? 1 : conns > MAX_CONNS ? MAX_CONNS : conns;
    for (int i = 0; i < r->n; i++) {
        pthread_mutex_init(&r->conns[i].lock, NULL);
        r->conns[i].fd = -1;
    }
    return r;
}

static void drop_conn(struct conn *c) {
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->pos = c->end = 0;
}

void ac_remote_free(struct ac_remote *r) {
    if (r == NULL)
        return;
    for (int i = 0; i < r->n; i++) {
        drop_conn(&r->conns[i]);
        pthread_mutex_destroy(&r->conns[i].lock);
    }
    free(r);
}

const char *ac_remote_addr(const struct ac_remote *r) {
    return r->addr;
}

static int open_conn(struct ac_remote *r, struct conn *c) {
    int fd = socket(r->sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    struct timeval tv = { .tv_sec = r->timeout_ms / 1000, .tv_usec = (r->timeout_ms % 1000) * 1000 };
    int one = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));   /* bounds connect() too */
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(fd, (struct sockaddr *)&r->sa, r->salen) != 0) {
        int e = errno == EINPROGRESS ? ETIMEDOUT : errno;
        close(fd);
        return -e;
    }
    c->fd = fd;
    c->pos = c->end = 0;
    return 0;
}

/* A connection of the pool, locked and connected; NULL with *rc set. */
static struct conn *acquire(struct ac_remote *r, int *rc) {
    uint64_t down = __atomic_load_n(&r->down_until, __ATOMIC_RELAXED);
    if (down != 0 && ac_now_ns() < down) {
        COUNT(r, skipped, 1);
        *rc = -EHOSTDOWN;
        return NULL;
    }
    unsigned start = __atomic_fetch_add(&r->next, 1, __ATOMIC_RELAXED);
    struct conn *c = NULL;
    for (int i = 0; i < r->n && c == NULL; i++) {
        struct conn *x = &r->conns[(start + (unsigned)i) % (unsigned)r->n];
        if (pthread_mutex_trylock(&x->lock) == 0)
            c = x;
    }
    if (c == NULL) {
        c = &r->conns[start % (unsigned)r->n];
        pthread_mutex_lock(&c->lock);
    }
    if (c->fd < 0) {
        *rc = open_conn(r, c);
        if (*rc != 0) {
            COUNT(r, failures, 1);
            mark_down(r);
            pthread_mutex_unlock(&c->lock);
            return NULL;
        }
        COUNT(r, reconnects, 1);
        __atomic_store_n(&r->down_until, 0, __ATOMIC_RELAXED);
    }
    *rc = 0;
    return c;
}

/* Ends a request: a failed one closes its connection (its stream is out of step). */
static int release(struct ac_remote *r, struct conn *c, int rc) {
    if (rc < 0 && rc != -ENOENT && rc != -ENOSPC && rc != -EMSGSIZE && rc != -EFBIG) {
        drop_conn(c);
        COUNT(r, failures, 1);
        mark_down(r);
        if (rc == -EPROTO)
            COUNT(r, garbage, 1);
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

static int send_all(struct conn *c, struct iovec *iov, int n) {
    while (n > 0) {
        struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)n };
        ssize_t k = sendmsg(c->fd, &m, MSG_NOSIGNAL);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
        }
        while (n > 0 && (size_t)k >= iov->iov_len) {
            k -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + k;
            iov->iov_len -= (size_t)k;
        }
    }
    return 0;
}

static int fill(struct conn *c) {
    if (c->pos == c->end)
        c->pos = c->end = 0;
    if (c->end == sizeof(c->buf))
        return -EPROTO;
    for (;;) {
        ssize_t k = recv(c->fd, c->buf + c->end, sizeof(c->buf) - c->end, 0);
        if (k > 0) {
            c->end += (size_t)k;
            return 0;
        }
        if (k == 0)
            return -ECONNRESET;
        if (errno != EINTR)
            return errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
    }
}

/* The next line without its \r\n into line (NUL-terminated); -EPROTO when it
 * is longer than LINE_MAX_LEN or not ended by \r\n. */
static int read_line(struct conn *c, char *line) {
    for (;;) {
        char *nl = memchr(c->buf + c->pos, '\n', c->end - c->pos);
        if (nl != NULL) {
            size_t n = (size_t)(nl - (c->buf + c->pos));
            if (n == 0 || n > LINE_MAX_LEN || nl[-1] != '\r')
                return -EPROTO;
            memcpy(line, c->buf + c->pos, n - 1);
            line[n - 1] = '\0';
            c->pos += n + 1;
            return 0;
        }
        if (c->end - c->pos > LINE_MAX_LEN)
            return -EPROTO;
        if (c->pos > 0 && c->end == sizeof(c->buf)) {
            memmove(c->buf, c->buf + c->pos, c->end - c->pos);
            c->end -= c->pos;
            c->pos = 0;
        }
        int rc = fill(c);
        if (rc != 0)
            return rc;
    }
}

/* Exactly n bytes into dst (NULL: skipped). */
static int read_exact(struct conn *c, char *dst, size_t n) {
    while (n > 0) {
        if (c->pos == c->end) {
            int rc = fill(c);
            if (rc != 0)
                return rc;
        }
        size_t k = c->end - c->pos < n ? c->end - c->pos : n;
        if (dst != NULL) {
            memcpy(dst, c->buf + c->pos, k);
            dst += k;
        }
        c->pos += k;
        n -= k;
    }
    return 0;
}

int ac_remote_set_send(struct ac_remote *r, const char *key, const void *val, size_t len,
                       struct ac_remote_pending *p) {
    int rc;
    struct conn *c = acquire(r, &rc);
    if (c == NULL)
        return rc;
    char head[320];
    int hn = snprintf(head, sizeof(head), "set %s 0 0 %zu\r\n", key, len);
    struct iovec iov[3] = { { head, (size_t)hn }, { (void *)(uintptr_t)val, len }, { (void *)"\r\n", 2 } };
    rc = send_all(c, iov, 3);
    if (rc != 0)
        return release(r, c, rc);
    *p = (struct ac_remote_pending){ .r = r, .conn = c, .len = len };
    return 0;
}

int ac_remote_set_wait(struct ac_remote_pending *p) {
    struct ac_remote *r = p->r;
    struct conn *c = p->conn;
    char line[LINE_MAX_LEN + 1];
    int rc = read_line(c, line);
    if (rc == 0) {
        if (strcmp(line, "STORED") == 0) {
            COUNT(r, sets, 1);
            COUNT(r, bytes_sent, p->len);
        } else if (strncmp(line, "SERVER_ERROR out of memory", 26) == 0) {
            rc = -ENOSPC;
        } else if (strncmp(line, "SERVER_ERROR object too large", 29) == 0) {
            rc = -EFBIG;
            drop_conn(c);        /* the server swallows the value it refused: resynchronise */
        } else {
            rc = -EPROTO;
        }
    }
    return release(r, c, rc);
}

int ac_remote_set(struct ac_remote *r, const char *key, const void *val, size_t len) {
    struct ac_remote_pending p;
    int rc = ac_remote_set_send(r, key, val, len, &p);
    return rc != 0 ? rc : ac_remote_set_wait(&p);
}

long ac_remote_get(struct ac_remote *r, const char *key, void *buf, size_t cap) {
    int rc;
    struct conn *c = acquire(r, &rc);
    if (c == NULL)
        return rc;
    char head[300], line[LINE_MAX_LEN + 1];
    int hn = snprintf(head, sizeof(head), "get %s\r\n", key);
    struct iovec iov[1] = { { head, (size_t)hn } };
    long got = -ENOENT;
    rc = send_all(c, iov, 1);
    if (rc == 0)
        rc = read_line(c, line);
    if (rc == 0 && strncmp(line, "VALUE ", 6) == 0) {
        /* VALUE <key> <flags> <bytes>: the key must be ours */
        size_t kl = strlen(key);
        char *p = line + 6, *end;
        if (strncmp(p, key, kl) != 0 || p[kl] != ' ') {
            rc = -EPROTO;
        } else {
            p += kl + 1;
            (void)strtoul(p, &end, 10);                         /* the flags */
            bool flags_ok = end != p && *end == ' ';
            char *num = end + 1;
            unsigned long long n = flags_ok ? strtoull(num, &end, 10) : 0;
            if (!flags_ok || end == num || *end != '\0' || n > (1ULL << 31)) {
                rc = -EPROTO;
            } else if (n > cap) {
                rc = read_exact(c, NULL, (size_t)n);
                got = -EMSGSIZE;
            } else {
                rc = read_exact(c, buf, (size_t)n);
                got = (long)n;
            }
            char crlf[2];
            if (rc == 0)
                rc = read_exact(c, crlf, 2);
            if (rc == 0 && memcmp(crlf, "\r\n", 2) != 0)
                rc = -EPROTO;
            if (rc == 0)
                rc = read_line(c, line);
            if (rc == 0 && strcmp(line, "END") != 0)
                rc = -EPROTO;
        }
    } else if (rc == 0 && strcmp(line, "END") != 0) {
        rc = -EPROTO;
    }
    if (rc == 0) {
        COUNT(r, gets, 1);
        if (got > 0)
            COUNT(r, bytes_received, (uint64_t)got);
        rc = got < 0 ? (int)got : 0;
    }
    rc = release(r, c, rc);
    return rc < 0 ? rc : got;
}

int ac_remote_delete(struct ac_remote *r, const char *key) {
    int rc;
    struct conn *c = acquire(r, &rc);
    if (c == NULL)
        return rc;
    char head[300], line[LINE_MAX_LEN + 1];
    int hn = snprintf(head, sizeof(head), "delete %s\r\n", key);
    struct iovec iov[1] = { { head, (size_t)hn } };
    rc = send_all(c, iov, 1);
    if (rc == 0)
        rc = read_line(c, line);
    if (rc == 0 && strcmp(line, "DELETED") != 0 && strcmp(line, "NOT_FOUND") != 0)
        rc = -EPROTO;
    if (rc == 0)
        COUNT(r, deletes, 1);
    return release(r, c, rc);
}

int ac_remote_delete_noreply(struct ac_remote *r, const char *key) {
    int rc;
    struct conn *c = acquire(r, &rc);
    if (c == NULL)
        return rc;
    char head[300];
    int hn = snprintf(head, sizeof(head), "delete %s noreply\r\n", key);
    struct iovec iov[1] = { { head, (size_t)hn } };
    rc = send_all(c, iov, 1);
    if (rc == 0)
        COUNT(r, deletes, 1);
    return release(r, c, rc);
}

int ac_remote_ping(struct ac_remote *r) {
    int rc;
    struct conn *c = acquire(r, &rc);
    if (c == NULL)
        return rc;
    pthread_mutex_unlock(&c->lock);
    return 0;
}

void ac_remote_get_stats(struct ac_remote *r, struct ac_remote_stats *out) {
    out->sets = __atomic_load_n(&r->st.sets, __ATOMIC_RELAXED);
    out->gets = __atomic_load_n(&r->st.gets, __ATOMIC_RELAXED);
    out->deletes = __atomic_load_n(&r->st.deletes, __ATOMIC_RELAXED);
    out->bytes_sent = __atomic_load_n(&r->st.bytes_sent, __ATOMIC_RELAXED);
    out->bytes_received = __atomic_load_n(&r->st.bytes_received, __ATOMIC_RELAXED);
    out->failures = __atomic_load_n(&r->st.failures, __ATOMIC_RELAXED);
    out->garbage = __atomic_load_n(&r->st.garbage, __ATOMIC_RELAXED);
    out->reconnects = __atomic_load_n(&r->st.reconnects, __ATOMIC_RELAXED);
    out->skipped = __atomic_load_n(&r->st.skipped, __ATOMIC_RELAXED);
}
