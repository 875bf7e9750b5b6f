#!/usr/bin/env python3
"""Regenerates fuzz/corpus/protocol from memcached's own tests (t/*.t).

Usage: make-corpus.py UPSTREAM_T_DIR OUT_DIR   (make -C fuzz corpus)

From every test script it takes the request strings written to the server
(`print $sock "..."`), in order, and joins them into one session per script
(each input of fuzz_protocol is one connection). Perl variables that name a
key or a number are replaced by fixed values; a string that still holds a
variable (a value whose length is computed) is left out. Commands that end
the run or do not end (`shutdown`, `watch`) and TLS/proxy/SASL scripts are
left out. Added: requests on the keys the harness prefills (k0..), so that
the first inputs already fetch spilled items, and a few binary-protocol
requests built here after t/binary.t. Sessions are cut at 600 bytes.
"""
import hashlib
import os
import re
import struct
import sys

SKIP_SCRIPTS = re.compile(r"ssl|tls|proxy|sasl|restart|daemonize|misbehave|shutdown|dash-M|maxconns|conn-limits|idle-timeout")
SKIP_CMDS = re.compile(r"(^|\n)(shutdown|refresh_certs|misbehave|debugtime)\b|watch")
VARS = {  # Perl variable -> fixed text
    "key": "k7", "k": "k8", "tesuto": "k9", "_": "3", "i": "4", "expire": "10",
    "cas": "1", "badcas": "2", "result[0]": "1", "len": "2", "size": "2",
}
MAX_SESSION = 600


def perl_unescape(s):
    out, i = [], 0
    esc = {"r": "\r", "n": "\n", "t": "\t", "0": "\0", "\\": "\\", '"': '"', "$": "$", "@": "@"}
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            out.append(esc.get(s[i + 1], s[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def substitute(s):
    def repl(m):
        name = m.group(1) or m.group(2)
        return VARS.get(name, m.group(0))
    # ${name}, $name, $name[0]
    s = re.sub(r"\$\{(\w+)\}|\$(\w+(?:\[\d\])?)", repl, s)
    return None if re.search(r"(?<!\\)\$[\w{]", s) else s


def requests(path):
    text = open(path, encoding="latin-1").read()
    for m in re.finditer(r'print\s+\$\w+\s+"((?:[^"\\]|\\.)*)"', text):
        s = substitute(m.group(1))
        if s is None:
            continue
        s = perl_unescape(s)
        if SKIP_CMDS.search(s):
            continue
        yield s


def fix_lengths(s):
    """A storage command's <bytes> is made to match the data line after it."""
    def repl(m):
        return "%s%d%s\r\n%s\r\n" % (m.group(1), len(m.group(4)), m.group(3), m.group(4))
    return re.sub(r"((?:set|add|replace|append|prepend|cas) \S+ \d+ -?\d+ )(\d+)([^\r\n]*)\r\n([^\r\n]*)\r\n",
                  repl, s)


def binary(opcode, key=b"", extras=b"", value=b"", opaque=0, cas=0):
    body = extras + key + value
    return struct.pack(">BBHBBHIIQ", 0x80, opcode, len(key), len(extras), 0, 0, len(body), opaque, cas) + body


def binary_seeds():
    flags_exp = struct.pack(">II", 0xdeadbeef, 0)
    return {
        "bin-get": binary(0x00, b"k1"),
        "bin-getk-getq-noop": binary(0x0c, b"k2") + binary(0x09, b"k3", opaque=7) + binary(0x0a),
        "bin-set-get": binary(0x01, b"k4", flags_exp, b"binvalue") + binary(0x00, b"k4"),
        "bin-add-replace": binary(0x02, b"k5", flags_exp, b"a") + binary(0x03, b"k6", flags_exp, b"r"),
        "bin-delete": binary(0x04, b"k10"),
        "bin-incr-decr": binary(0x05, b"bnum", struct.pack(">QQI", 1, 10, 0)) +
                         binary(0x06, b"bnum", struct.pack(">QQI", 3, 0, 0)),
        "bin-append-prepend": binary(0x0e, b"k11", b"", b"tail") + binary(0x0f, b"k12", b"", b"head"),
        "bin-touch-gat": binary(0x1c, b"k13", struct.pack(">I", 100)) + binary(0x1d, b"k14", struct.pack(">I", 0)) +
                         binary(0x23, b"k15", struct.pack(">I", 0)) + binary(0x1e, b"k16", struct.pack(">I", 0)),
        "bin-stat-anticache": binary(0x10, b"anticache"),
        "bin-version-stat": binary(0x0b) + binary(0x10),
        "bin-cas": binary(0x01, b"k17", flags_exp, b"x", cas=1),
        "bin-flush-quiet": binary(0x18, extras=struct.pack(">I", 0)) + binary(0x0a),
        "bin-verbosity": binary(0x1b, extras=struct.pack(">I", 0)),
    }


KEY_SEEDS = {
    "k-get": "get k1 k2 k3 k100 k2000\r\n",
    "k-gets-gat": "gets k20\r\ngat 100 k21 k22\r\ngats 0 k23\r\n",
    "k-touch-delete": "touch k30 0\r\ndelete k31\r\nget k31\r\n",
    "k-append": "append k40 0 0 3\r\nabc\r\nprepend k41 0 0 3\r\nxyz\r\nget k40 k41\r\n",
    "k-incr": "set k50 0 0 2\r\n10\r\nincr k50 5\r\ndecr k50 100\r\nincr k51 1\r\n",
    "k-cas": "gets k60\r\ncas k60 0 0 1 1\r\nx\r\n",
    "k-replace-add": "replace k70 0 0 2\r\nab\r\nadd k71 0 0 2\r\ncd\r\nset k72 5 0 1 noreply\r\nz\r\nget k70 k71 k72\r\n",
    "k-mg": "mg k80 v t f c s k\r\nmg k81 v q\r\nmg k82 k O123 q\r\nmn\r\n",
    "k-ms": "ms k90 3 T0 F5\r\nabc\r\nms k91 2 MA\r\nzz\r\nms k92 2 I\r\nqq\r\n",
    "k-md-ma": "md k100 q\r\nma k101 N0 J13 v\r\nmd k102 I T30\r\nmg k102 v c\r\nmn\r\n",
    "k-me": "me k110\r\n",
    "k-stats": "stats anticache\r\nstats\r\nstats slabs\r\nstats items\r\nstats sizes\r\n",
    "k-slabs": "slabs reassign 12 13\r\nslabs automove 1\r\nlru_crawler crawl all\r\nget k130\r\n",
    "k-big": "set k140 0 0 2000\r\n" + "b" * 2000 + "\r\nget k140\r\n",
}


def main():
    tdir, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        os.remove(os.path.join(out, f))
    seeds = {}
    for name in sorted(os.listdir(tdir)):
        if not name.endswith(".t") or SKIP_SCRIPTS.search(name):
            continue
        cur, part = "", 0
        for r in requests(os.path.join(tdir, name)):
            r = fix_lengths(r)
            if cur and len(cur) + len(r) > MAX_SESSION:
                seeds["t-%s-%d" % (name[:-2], part)] = cur
                cur, part = "", part + 1
            cur += r
            if part >= 2:
                break
        if cur and part < 2:
            seeds["t-%s-%d" % (name[:-2], part)] = cur
    seen, n, total = set(), 0, 0
    items = [(k, v.encode("latin-1")) for k, v in seeds.items()] + \
            [(k, v.encode()) for k, v in KEY_SEEDS.items()] + list(binary_seeds().items())
    for k, data in items:
        h = hashlib.sha1(data).hexdigest()
        if h in seen or not data:
            continue
        seen.add(h)
        with open(os.path.join(out, k), "wb") as fh:
            fh.write(data)
        n += 1
        total += len(data)
    print("make-corpus: %d inputs, %d bytes in %s" % (n, total, out))


if __name__ == "__main__":
    main()
