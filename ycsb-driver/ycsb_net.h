/* Network backend: any memcached-compatible server over TCP.
 *
 * Protocol text: read = "get <key>" (hit = a VALUE came back), update and
 * insert = "set <key> 0 0 <len>".  Protocol meta: "mg <key> v" (hit = VA) and
 * "ms <key> <len>".  Each driver thread opens `conns` connections; with
 * ycsb_run's batch = conns * depth, every execute() spreads the batch over
 * the connections round-robin, `depth` requests pipelined on each, waits for
 * all responses (poll, non-blocking sockets), then returns.  A read-modify-
 * write is a get followed by a set on one connection.
 *
 * Responses: STORED/HD = ok, VALUE/VA = hit, END/EN = miss; NOT_STORED, NS,
 * EXISTS, NOT_FOUND, ERROR, CLIENT_ERROR, SERVER_ERROR = this op failed
 * (YCSB_ERR_OP); anything else, a closed connection, or no answer within
 * 30 s = YCSB_ERR_FATAL.
 *
 * server_stats: on a separate connection after the run, "stats" (all STAT
 * lines, numbers as JSON numbers, as "stats") and "stats anticache" (as
 * "anticache", only if the server answers it; memcached-ac does). */
#ifndef YCSB_NET_H
#define YCSB_NET_H

#include <stddef.h>
#include "ycsb_backend.h"

struct ycsb_net {
    char host[256];
    char port[16];
    unsigned conns;   /* connections per driver thread, >= 1 */
    unsigned depth;   /* requests in flight per connection, >= 1 */
    int meta;         /* 0: text protocol, 1: meta protocol */
};

extern const struct ycsb_backend_ops ycsb_net_ops;

/* "host:port" or "[v6addr]:port" -> n->host, n->port.  0, or -1 with err. */
int ycsb_net_parse_server(struct ycsb_net *n, const char *hostport, char *err, size_t errlen);

#endif
