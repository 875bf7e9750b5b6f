"""Exact hit counting: mem_hits / disk_hits / misses in `stats anticache` against
counts the test predicts itself.

Prediction for test_reverse_read (N same-size keys written once, no reads in
between, so the slab class's LRU order is the insertion order):
  * spilling takes the LRU tail, so after the writes the resident keys are
    exactly the newest R = resident_items ones, and every other key is a stub
    (R + stub_items == N);
  * reading in reverse insertion order first touches those R keys: R memory hits,
    no allocation, so nothing is spilled meanwhile (mem_hits == R, disk_hits == 0
    at that point, asserted exactly);
  * every later key was spilled; fetching it needs a slot, and ac_alloc
    spills from the LRU tail, which now holds keys already read (each read moved
    its key to the MRU end and it is never read again), so an unread key is never
    spilled again;
  * an unread key is brought back without a disk hit of its own only by a
    whole-block merge (lazy compaction under tuple-merge, or every fetch under
    ac_merge=block). Merged keys go to the LRU end (H-Store: they were not
    asked for), so a merged key read before the next spill round is a memory
    hit and one the round reaches first is spilled again and fetched later:
    R <= mem_hits <= R + merged_items, disk_hits == N - mem_hits. With
    ac_compact_fill=0 no block is merged: mem_hits == R and disk_hits == N - R,
    exactly.
"""
from __future__ import annotations

import random

import pytest

from mc_helpers import MiB

VSIZE = 1024


def val(i: int) -> bytes:
    return (b"%07d|" % i) * (VSIZE // 8)


def fill(cli, keys, first=0):
    for s in range(0, len(keys), 256):
        batch = {k: val(first + s + j) for j, k in enumerate(keys[s:s + 256])}
        failed = cli.set_many(batch, noreply=False)
        assert not failed, f"set_many failed for {failed[:5]}"


@pytest.mark.parametrize("variant,ac", [
    ("no-compaction", {"ac_compact_fill": "0"}),
    ("default", {}),
    ("block-merge", {"ac_merge": "block"}),
])
def test_reverse_read(server, variant, ac):
    srv = server(mem=16, ac=ac)
    cli = srv.client()
    n = 4 * 16 * MiB // VSIZE                       # 4x memory of values
    keys = [f"h{i:06d}" for i in range(n)]
    fill(cli, keys)

    st = srv.settled()
    r, stubs = st["resident_items"], st["stub_items"]
    assert st["mem_hits"] == st["disk_hits"] == st["misses"] == 0
    assert st["spilled_items"] > 0 and 0 < r < n
    assert r + stubs == n, f"resident {r} + stubs {stubs} != {n} keys written"
    assert st["lost_items"] == 0

    def read(ks):
        for s in range(0, len(ks), 200):
            batch = ks[s:s + 200]
            got = cli.get_many(batch)
            for k in batch:
                i = int(k[1:])
                assert k in got, f"{k} missing"
                assert got[k] == (val(i), 0), f"{k}: wrong value"

    rev = keys[::-1]
    read(rev[:r])
    st1 = srv.ac()
    assert (st1["mem_hits"], st1["disk_hits"]) == (r, 0), \
        "the newest resident_items keys must be exactly the resident ones"
    assert st1["spilled_items"] == st["spilled_items"], "reading resident keys spilled something"

    read(rev[r:])
    st2 = srv.ac()
    merged = st2["merged_items"] - st["merged_items"]
    assert st2["mem_hits"] + st2["disk_hits"] == n
    assert r <= st2["mem_hits"] <= r + merged, (variant, r, merged, st2["mem_hits"], st2["disk_hits"])
    assert st2["fetched_items"] == st2["disk_hits"]     # one fetch per disk hit, no others
    print(f"\nreverse read [{variant}]: N={n} R={r} merged={merged} mem_hits={st2['mem_hits']} "
          f"disk_hits={st2['disk_hits']}")
    # the bytes the core asked the tier for: one record per fetch (header 36 + key 7 + value and
    # \r\n), and whole blocks only when blocks were merged
    asked = st2["record_read_bytes"] - st["record_read_bytes"]
    blocks = st2["block_read_bytes"] - st["block_read_bytes"]
    if variant == "no-compaction":
        assert merged == 0 and st2["merged_blocks"] == 0
        assert (st2["mem_hits"], st2["disk_hits"]) == (r, n - r)
        assert asked == st2["fetched_items"] * (36 + 7 + VSIZE + 2) and blocks == 0
    else:
        assert merged > 0, "expected whole-block merges"
        assert blocks > 0

    # absent keys: misses, and no hit of either kind
    absent = [f"absent{i}" for i in range(137)]
    for s in range(0, len(absent), 50):
        assert cli.get_many(absent[s:s + 50]) == {}
    st3 = srv.ac()
    assert st3["misses"] == 137
    assert (st3["mem_hits"], st3["disk_hits"]) == (st2["mem_hits"], st2["disk_hits"])
    assert st3["lost_items"] == 0 and st3["io_errors"] == 0 and st3["checksum_errors"] == 0


def test_every_access_command_counts(server):
    """get, multi-get, gets, gat, gats, touch, mg (with and without v), binary get,
    gat and touch each count one hit per found key (memory or disk, checked per
    request against fetched_items) and one miss per absent key; mg with the
    no-update flag u and the non-access commands count no hit."""
    srv = server(mem=16)
    cli = srv.client()
    raw = srv.raw()
    braw = srv.raw()        # memcached picks the protocol per connection: binary only here
    rng = random.Random(7)
    n = 40 * MiB // 2048
    keys = [f"a{i:06d}" for i in range(n)]
    values = {}
    for s in range(0, n, 256):
        batch = {}
        for k in keys[s:s + 256]:
            values[k] = rng.randbytes(rng.randint(1000, 3000))
            batch[k] = values[k]
        assert not cli.set_many(batch, noreply=False)
    st = srv.ac()
    assert st["stub_items"] > n // 3

    hits = misses = 0
    seen_disk = set()

    def pick(present_p=0.85):
        if rng.random() < present_p:
            return keys[rng.randrange(n)], True
        return f"nokey{rng.randrange(10**6)}", False

    ops = ["get", "mget", "gets", "gat", "gats", "touch", "mg", "mg-hd", "mg-u",
           "bget", "bgat", "btouch", "append", "incr-missing", "set-over", "delete-absent"]
    prev = srv.ac()
    for step in range(1500):
        op = ops[step % len(ops)] if step < len(ops) * 4 else rng.choice(ops)
        exp_hits = exp_miss = 0
        access = True
        if op in ("get", "gets", "gat", "gats"):
            k, present = pick()
            vals, err = raw.get(k, cmd=op, exptime=0 if op.startswith("gat") else None)
            assert err is None, err
            assert (k in vals) == present
            if present:
                assert vals[k][0] == values[k]
            exp_hits, exp_miss = (1, 0) if present else (0, 1)
        elif op == "mget":
            ks = [pick() for _ in range(3)]
            vals, err = raw.get(*[k for k, _ in ks])
            assert err is None, err
            for k, present in ks:
                assert (k in vals) == present
                if present:
                    assert vals[k][0] == values[k]
                exp_hits += present
                exp_miss += not present
        elif op == "touch":
            k, present = pick()
            assert raw.call(f"touch {k} 0".encode()) == (b"TOUCHED" if present else b"NOT_FOUND")
            exp_hits, exp_miss = (1, 0) if present else (0, 1)
        elif op in ("mg", "mg-hd", "mg-u"):
            k, present = pick()
            flags = {"mg": "v", "mg-hd": "", "mg-u": "u v"}[op]
            line, data = raw.mg(k, flags)
            if present:
                assert line.split()[0] == (b"HD" if op == "mg-hd" else b"VA"), line
                if data is not None:
                    assert data == values[k]
            else:
                assert line == b"EN", line
            if op == "mg-u":
                access = False
                exp_miss = not present      # a miss is a miss, with or without u
            else:
                exp_hits, exp_miss = (1, 0) if present else (0, 1)
        elif op in ("bget", "bgat", "btouch"):
            k, present = pick()
            opcode, extras = {"bget": (0x00, b""), "bgat": (0x1D, b"\0\0\0\0"),
                              "btouch": (0x1C, b"\0\0\0\0")}[op]
            status, _ex, data = braw.binary(opcode, k, extras)
            assert status == (0 if present else 1), (op, k, status)
            if present and op != "btouch":
                assert data == values[k]
            exp_hits, exp_miss = (1, 0) if present else (0, 1)
        elif op == "append":                 # non-access lookups: no hit counted
            k, _ = pick(1.0)
            access = False
            assert raw.store("append", k, b"+") == b"STORED"
            values[k] += b"+"
        elif op == "incr-missing":
            access = False
            assert raw.call(f"incr nokey{step} 1".encode()) == b"NOT_FOUND"
        elif op == "set-over":
            k, _ = pick(1.0)
            access = False
            values[k] = rng.randbytes(rng.randint(1000, 3000))
            assert raw.store("set", k, values[k]) == b"STORED"
        elif op == "delete-absent":
            access = False
            assert raw.call(f"delete nokey{step}".encode()) == b"NOT_FOUND"
        hits += exp_hits
        misses += exp_miss
        cur = srv.ac()
        d = {f: cur[f] - prev[f] for f in ("mem_hits", "disk_hits", "misses", "fetched_items")}
        assert d["mem_hits"] + d["disk_hits"] == exp_hits, (step, op, d)
        assert d["misses"] == exp_miss, (step, op, d)
        if access:
            assert d["disk_hits"] == d["fetched_items"], (step, op, d)
            if d["disk_hits"]:
                seen_disk.add(op)
        else:
            assert d["disk_hits"] == 0 and d["mem_hits"] == 0, (step, op, d)
        prev = cur

    st = srv.ac()
    assert st["mem_hits"] + st["disk_hits"] == hits
    assert st["misses"] == misses
    # every access command was seen fetching a spilled key at least once
    assert seen_disk >= {"get", "mget", "gets", "gat", "gats", "touch", "mg", "mg-hd",
                         "bget", "bgat", "btouch"}, seen_disk
    assert st["lost_items"] == 0 and st["io_errors"] == 0
