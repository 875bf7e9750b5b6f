/* memcached text/meta protocol client backend; see ycsb_net.h. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include "ycsb_net.h"
#include "ycsb_record.h"
#include "ycsb_run.h"

#define TIMEOUT_MS 30000
#define MAX_LINE 8192

enum { EXP_GET, EXP_SET };

struct expect {
    size_t req;
    int kind;
    int last;      /* the request is complete after this response */
};

struct conn {
    int fd;
    char *rbuf;
    size_t rlen, rcap;
    char *wbuf;
    size_t wlen, wcap, woff;
    struct expect *exp;
    size_t nexp, expcap, exphead;
};

struct tctx {
    const struct ycsb_net *cfg;
    struct conn *c;
    unsigned nconn;
    char err[768];
};

int ycsb_net_parse_server(struct ycsb_net *n, const char *hp, char *err, size_t errlen)
{
    const char *colon, *host = hp;
    size_t hlen;
    if (hp[0] == '[') {
        const char *close = strchr(hp, ']');
        if (close == NULL || close[1] != ':')
            goto bad;
        host = hp + 1;
        hlen = (size_t)(close - host);
        colon = close + 1;
    } else {
        colon = strrchr(hp, ':');
        if (colon == NULL)
            goto bad;
        hlen = (size_t)(colon - hp);
    }
    const char *port = colon + 1;
    char *end;
    long p = strtol(port, &end, 10);
    if (hlen == 0 || hlen >= sizeof(n->host) || *port == '\0' || *end != '\0' || p < 1 ||
        p > 65535)
        goto bad;
    memcpy(n->host, host, hlen);
    n->host[hlen] = '\0';
    snprintf(n->port, sizeof(n->port), "%ld", p);
    return 0;
bad:
    snprintf(err, errlen, "--server '%s': expected host:port with a port from 1 to 65535 "
             "(IPv6: [addr]:port)", hp);
    return -1;
}

static int dial(const struct ycsb_net *cfg, int nonblock, char *err, size_t errlen)
{
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(cfg->host, cfg->port, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "cannot resolve %s: %s", cfg->host, gai_strerror(rc));
        return -1;
    }
    int fd = -1, saved = 0;
    for (struct addrinfo *a = res; a != NULL; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd < 0)
            continue;
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
            break;
        saved = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        snprintf(err, errlen, "cannot connect to %s:%s: %s", cfg->host, cfg->port,
                 strerror(saved ? saved : ECONNREFUSED));
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (nonblock)
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    else {
        struct timeval tv = {TIMEOUT_MS / 1000, 0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    }
    return fd;
}

static void net_thread_fini(void *p)
{
    struct tctx *t = p;
    if (t == NULL)
        return;
    for (unsigned i = 0; i < t->nconn; i++) {
        if (t->c[i].fd >= 0)
            close(t->c[i].fd);
        free(t->c[i].rbuf);
        free(t->c[i].wbuf);
        free(t->c[i].exp);
    }
    free(t->c);
    free(t);
}

static int net_thread_init(void *backend, unsigned index, void **out, char *err, size_t errlen)
{
    (void)index;
    const struct ycsb_net *cfg = backend;
    struct tctx *t = calloc(1, sizeof(*t));
    if (t == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    t->cfg = cfg;
    t->c = calloc(cfg->conns, sizeof(*t->c));
    if (t->c == NULL) {
        free(t);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (unsigned i = 0; i < cfg->conns; i++)
        t->c[i].fd = -1;
    t->nconn = cfg->conns;
    for (unsigned i = 0; i < cfg->conns; i++) {
        t->c[i].fd = dial(cfg, 1, err, errlen);
        if (t->c[i].fd < 0) {
            net_thread_fini(t);
            return -1;
        }
    }
    *out = t;
    return 0;
}

static int grow(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 4096;
    while (c < need)
        c *= 2;
    char *b = realloc(*buf, c);
    if (b == NULL)
        return -1;
    *buf = b;
    *cap = c;
    return 0;
}

static int wappend(struct conn *c, const char *s, size_t n)
{
    if (grow(&c->wbuf, &c->wcap, c->wlen + n) != 0)
        return -1;
    memcpy(c->wbuf + c->wlen, s, n);
    c->wlen += n;
    return 0;
}

static int expect_push(struct conn *c, size_t req, int kind, int last)
{
    if (c->nexp == c->expcap) {
        size_t cap = c->expcap ? c->expcap * 2 : 16;
        struct expect *e = realloc(c->exp, cap * sizeof(*e));
        if (e == NULL)
            return -1;
        c->exp = e;
        c->expcap = cap;
    }
    c->exp[c->nexp].req = req;
    c->exp[c->nexp].kind = kind;
    c->exp[c->nexp].last = last;
    c->nexp++;
    return 0;
}

static int queue_get(struct conn *c, int meta, const struct ycsb_req *q)
{
    char line[YCSB_KEY_MAX + 16];
    int n = meta ? snprintf(line, sizeof(line), "mg %.*s v\r\n", (int)q->keylen, q->key)
                 : snprintf(line, sizeof(line), "get %.*s\r\n", (int)q->keylen, q->key);
    return wappend(c, line, (size_t)n);
}

static int queue_set(struct conn *c, int meta, const struct ycsb_req *q)
{
    char line[YCSB_KEY_MAX + 48];
    int n = meta ? snprintf(line, sizeof(line), "ms %.*s %zu\r\n", (int)q->keylen, q->key, q->vlen)
                 : snprintf(line, sizeof(line), "set %.*s 0 0 %zu\r\n", (int)q->keylen, q->key,
                            q->vlen);
    if (wappend(c, line, (size_t)n) != 0 || wappend(c, q->value, q->vlen) != 0)
        return -1;
    return wappend(c, "\r\n", 2);
}

static int starts(const char *line, size_t n, const char *word)
{
    size_t w = strlen(word);
    return n >= w && memcmp(line, word, w) == 0 && (n == w || line[w] == ' ');
}

static int is_op_error(const char *line, size_t n)
{
    return starts(line, n, "ERROR") || starts(line, n, "CLIENT_ERROR") ||
           starts(line, n, "SERVER_ERROR") || starts(line, n, "NOT_STORED") ||
           starts(line, n, "EXISTS") || starts(line, n, "NOT_FOUND") || starts(line, n, "NS") ||
           starts(line, n, "EX") || starts(line, n, "NF");
}

/* parse one response at rbuf[*pos]; 1 = parsed, 0 = need more, -1 = fatal */
static int parse_one(struct tctx *t, struct conn *c, size_t *pos, int kind, int *status,
                     int *hit)
{
    const char *b = c->rbuf + *pos;
    size_t avail = c->rlen - *pos;
    const char *nl = memchr(b, '\n', avail);
    if (nl == NULL) {
        if (avail > MAX_LINE) {
            snprintf(t->err, sizeof(t->err), "response line longer than %d bytes", MAX_LINE);
            return -1;
        }
        return 0;
    }
    size_t linelen = (size_t)(nl - b) + 1;
    size_t n = linelen >= 2 && b[linelen - 2] == '\r' ? linelen - 2 : linelen - 1;
    *status = YCSB_OK;
    *hit = 0;
    if (is_op_error(b, n)) {
        *status = YCSB_ERR_OP;
        *pos += linelen;
        return 1;
    }
    if (kind == EXP_SET) {
        if (starts(b, n, "STORED") || starts(b, n, "HD")) {
            *pos += linelen;
            return 1;
        }
    } else if (starts(b, n, "END") || starts(b, n, "EN")) {
        *pos += linelen;
        return 1;
    } else if (starts(b, n, "VALUE") || starts(b, n, "VA") || starts(b, n, "HD")) {
        size_t bytes = 0;
        int have_value = !starts(b, n, "HD");
        if (have_value) {
            /* VALUE <key> <flags> <bytes> [cas]  |  VA <bytes> [flags] */
            char tmp[512];
            size_t m = n < sizeof(tmp) - 1 ? n : sizeof(tmp) - 1;
            memcpy(tmp, b, m);
            tmp[m] = '\0';
            char *save = NULL, *tok = strtok_r(tmp, " ", &save);
            int field = starts(b, n, "VALUE") ? 3 : 1;
            for (int i = 0; i < field && tok != NULL; i++)
                tok = strtok_r(NULL, " ", &save);
            char *end = NULL;
            unsigned long long v = tok ? strtoull(tok, &end, 10) : 0;
            if (tok == NULL || *end != '\0') {
                snprintf(t->err, sizeof(t->err), "malformed value line '%.100s'", tmp);
                return -1;
            }
            bytes = (size_t)v;
        }
        size_t trailer = starts(b, n, "VALUE") ? 5 : 0;   /* "END\r\n" */
        size_t need = linelen + (have_value ? bytes + 2 : 0) + trailer;
        if (avail < need)
            return 0;
        if (have_value && memcmp(b + linelen + bytes, "\r\n", 2) != 0) {
            snprintf(t->err, sizeof(t->err), "value of %zu bytes not followed by CRLF", bytes);
            return -1;
        }
        if (trailer && memcmp(b + need - 5, "END\r\n", 5) != 0) {
            snprintf(t->err, sizeof(t->err), "get answered more than one value");
            return -1;
        }
        *hit = 1;
        *pos += need;
        return 1;
    }
    snprintf(t->err, sizeof(t->err), "unexpected response to %s: '%.*s'",
             kind == EXP_SET ? "a store" : "a get", (int)(n < 100 ? n : 100), b);
    return -1;
}

static int net_execute(void *p, struct ycsb_req *reqs, size_t n)
{
    struct tctx *t = p;
    int meta = t->cfg->meta;
    for (unsigned i = 0; i < t->nconn; i++) {
        t->c[i].wlen = t->c[i].woff = 0;
        t->c[i].nexp = t->c[i].exphead = 0;
    }
    for (size_t i = 0; i < n; i++) {
        struct conn *c = &t->c[i % t->nconn];
        struct ycsb_req *q = &reqs[i];
        int rc = 0;
        q->status = YCSB_OK;
        q->hit = 0;
        if (q->op == YCSB_OP_READ || q->op == YCSB_OP_RMW)
            rc |= queue_get(c, meta, q) | expect_push(c, i, EXP_GET, q->op == YCSB_OP_READ);
        if (q->op != YCSB_OP_READ)
            rc |= queue_set(c, meta, q) | expect_push(c, i, EXP_SET, 1);
        if (rc != 0) {
            snprintf(t->err, sizeof(t->err), "out of memory for the request buffer");
            return YCSB_ERR_FATAL;
        }
    }
    struct pollfd *pf = calloc(t->nconn, sizeof(*pf));
    if (pf == NULL) {
        snprintf(t->err, sizeof(t->err), "out of memory");
        return YCSB_ERR_FATAL;
    }
    int rc = YCSB_OK;
    for (;;) {
        unsigned active = 0;
        for (unsigned i = 0; i < t->nconn; i++) {
            struct conn *c = &t->c[i];
            pf[i].fd = c->fd;
            pf[i].events = 0;
            pf[i].revents = 0;
            if (c->woff < c->wlen)
                pf[i].events |= POLLOUT;
            if (c->exphead < c->nexp)
                pf[i].events |= POLLIN;
            if (pf[i].events)
                active++;
            else
                pf[i].fd = -1;
        }
        if (active == 0)
            break;
        int pr = poll(pf, t->nconn, TIMEOUT_MS);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0) {
            snprintf(t->err, sizeof(t->err), pr == 0 ? "no response from %s:%s within 30 s"
                     : "poll failed talking to %s:%s", t->cfg->host, t->cfg->port);
            rc = YCSB_ERR_FATAL;
            break;
        }
        for (unsigned i = 0; i < t->nconn && rc == YCSB_OK; i++) {
            struct conn *c = &t->c[i];
            if (pf[i].revents & POLLOUT) {
                ssize_t w = send(c->fd, c->wbuf + c->woff, c->wlen - c->woff, MSG_NOSIGNAL);
                if (w < 0 && errno != EAGAIN && errno != EINTR) {
                    snprintf(t->err, sizeof(t->err), "send to %s:%s: %s", t->cfg->host,
                             t->cfg->port, strerror(errno));
                    rc = YCSB_ERR_FATAL;
                } else if (w > 0)
                    c->woff += (size_t)w;
            }
            if (rc == YCSB_OK && (pf[i].revents & (POLLIN | POLLHUP | POLLERR))) {
                if (grow(&c->rbuf, &c->rcap, c->rlen + 65536) != 0) {
                    snprintf(t->err, sizeof(t->err), "out of memory for responses");
                    rc = YCSB_ERR_FATAL;
                    break;
                }
                ssize_t r = recv(c->fd, c->rbuf + c->rlen, c->rcap - c->rlen, 0);
                if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
                    snprintf(t->err, sizeof(t->err), "connection to %s:%s %s", t->cfg->host,
                             t->cfg->port, r == 0 ? "closed by the server" : strerror(errno));
                    rc = YCSB_ERR_FATAL;
                    break;
                }
                if (r > 0)
                    c->rlen += (size_t)r;
                size_t pos = 0;
                while (c->exphead < c->nexp) {
                    struct expect *e = &c->exp[c->exphead];
                    int st, hit;
                    int pr1 = parse_one(t, c, &pos, e->kind, &st, &hit);
                    if (pr1 < 0) {
                        rc = YCSB_ERR_FATAL;
                        break;
                    }
                    if (pr1 == 0)
                        break;
                    struct ycsb_req *q = &reqs[e->req];
                    if (e->kind == EXP_GET)
                        q->hit = hit;
                    if (st != YCSB_OK)
                        q->status = st;
                    if (e->last)
                        q->done_ns = ycsb_now_ns();
                    c->exphead++;
                }
                memmove(c->rbuf, c->rbuf + pos, c->rlen - pos);
                c->rlen -= pos;
            }
        }
        if (rc != YCSB_OK)
            break;
    }
    free(pf);
    return rc;
}

static int one(struct tctx *t, int op, const char *key, size_t klen, const char *v, size_t vlen,
               int *hit)
{
    struct ycsb_req q;
    memset(&q, 0, sizeof(q));
    q.op = op;
    q.key = key;
    q.keylen = klen;
    q.value = v;
    q.vlen = vlen;
    int rc = net_execute(t, &q, 1);
    if (rc != YCSB_OK)
        return rc;
    if (hit)
        *hit = q.hit;
    return q.status;
}

static int net_read(void *t, const char *key, size_t klen, int *hit)
{
    return one(t, YCSB_OP_READ, key, klen, NULL, 0, hit);
}

static int net_update(void *t, const char *key, size_t klen, const char *v, size_t vlen)
{
    return one(t, YCSB_OP_UPDATE, key, klen, v, vlen, NULL);
}

static int net_insert(void *t, const char *key, size_t klen, const char *v, size_t vlen)
{
    return one(t, YCSB_OP_INSERT, key, klen, v, vlen, NULL);
}

static const char *net_error(void *t)
{
    return ((struct tctx *)t)->err;
}

/* "stats[ group]" -> members of an object `key`; 1 ok, 0 not supported, -1 fail */
static int stats_group(int fd, const char *cmd, const char *key, struct ycsb_json *out, char *err,
                       size_t errlen)
{
    char req[64];
    int n = snprintf(req, sizeof(req), "%s\r\n", cmd);
    if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
        snprintf(err, errlen, "sending '%s' failed: %s", cmd, strerror(errno));
        return -1;
    }
    size_t cap = 65536, len = 0;
    char *buf = malloc(cap);
    if (buf == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (;;) {
        if (len >= 5 && (memcmp(buf + len - 5, "END\r\n", 5) == 0))
            break;
        if (len >= 2 && strncmp(buf, "STAT ", len < 5 ? len : 5) != 0 &&
            memcmp(buf + len - 2, "\r\n", 2) == 0)
            break;   /* a one-line answer: ERROR, CLIENT_ERROR ... */
        if (len + 4096 > cap) {
            char *b = realloc(buf, cap * 2);
            if (b == NULL) {
                free(buf);
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            buf = b;
            cap *= 2;
        }
        ssize_t r = recv(fd, buf + len, cap - len - 1, 0);
        if (r <= 0) {
            snprintf(err, errlen, "reading the answer to '%s': %s", cmd,
                     r == 0 ? "connection closed" : strerror(errno));
            free(buf);
            return -1;
        }
        len += (size_t)r;
    }
    buf[len] = '\0';
    if (strncmp(buf, "STAT ", 5) != 0 && strncmp(buf, "END", 3) != 0) {
        free(buf);
        return 0;   /* ERROR / CLIENT_ERROR: the server has no such group */
    }
    ycsb_json_begin_object(out, key);
    char *save = NULL;
    for (char *line = strtok_r(buf, "\r\n", &save); line; line = strtok_r(NULL, "\r\n", &save)) {
        if (strncmp(line, "STAT ", 5) != 0)
            continue;
        char *name = line + 5, *val = strchr(name, ' ');
        if (val == NULL)
            continue;
        *val++ = '\0';
        char *end;
        errno = 0;
        unsigned long long u = strtoull(val, &end, 10);
        if (*val >= '0' && *val <= '9' && *end == '\0' && errno == 0) {
            ycsb_json_u64(out, name, u);
            continue;
        }
        double d = strtod(val, &end);
        if (*val != '\0' && *end == '\0' && (*val == '-' || (*val >= '0' && *val <= '9')))
            ycsb_json_double(out, name, d);
        else
            ycsb_json_str(out, name, val);
    }
    ycsb_json_end_object(out);
    free(buf);
    return 1;
}

static int net_server_stats(void *backend, struct ycsb_json *out, char *err, size_t errlen)
{
    const struct ycsb_net *cfg = backend;
    int fd = dial(cfg, 0, err, errlen);
    if (fd < 0)
        return -1;
    int rc = stats_group(fd, "stats", "stats", out, err, errlen);
    if (rc >= 0) {
        int ac = stats_group(fd, "stats anticache", "anticache", out, err, errlen);
        if (ac >= 0)
            ycsb_json_bool(out, "anticache_supported", ac == 1);
        rc = ac;
    }
    close(fd);
    return rc < 0 ? -1 : 0;
}

const struct ycsb_backend_ops ycsb_net_ops = {
    .name = "memcached-net",
    .thread_init = net_thread_init,
    .thread_fini = net_thread_fini,
    .read = net_read,
    .update = net_update,
    .insert = net_insert,
    .execute = net_execute,
    .error = net_error,
    .server_stats = net_server_stats,
};
