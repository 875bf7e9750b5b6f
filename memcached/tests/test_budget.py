"""-m is the budget for items and book-keeping (equal provisioning). The block
buffer is charged at start; the evicted table holds spilled items only, grows
with them and is charged as it grows: the slab allocator's limit
(`item_memory_limit`) follows -m minus everything charged, within a quarter
slab page, and the slab memory is brought under it (pages moved to the pool
and freed). `cache_memlimit N` sets the budget, not the slab limit.
"""
from __future__ import annotations

import time

from mc_helpers import MiB

QUARTER_PAGE = MiB // 4


def charged(st) -> int:
    return st["block_size"] + st["evicted_table_bytes"]


def wait_limit_follows(srv, budget: int, timeout: float = 10):
    """The room thread looks every 100 ms; returns the stats once the limit is
    budget - charged within a quarter page."""
    deadline = time.monotonic() + timeout
    while True:
        st = srv.ac()
        if abs(st["item_memory_limit"] - (budget - charged(st))) < QUARTER_PAGE:
            return st
        assert time.monotonic() < deadline, st
        time.sleep(0.05)


def slab_bytes(srv) -> int:
    return int(srv.stats("slabs")["total_malloced"])


def test_evicted_table_is_charged_as_it_grows(server):
    srv = server(mem=32, ac={"ac_policy": "lru"})
    st0 = srv.ac()
    assert st0["block_size"] == MiB
    assert st0["stub_items"] == 0 and st0["evicted_table_bytes"] < 64 * 1024   # stripe headers only
    assert st0["item_memory_limit"] == 32 * MiB - MiB                          # the block buffer
    cli = srv.client()
    v = b"x" * 200
    n = 400_000                                       # ~100 MB of items for a 32 MB budget
    for s in range(0, n, 1000):
        assert not cli.set_many({f"b{i:07d}": v for i in range(s, s + 1000)}, noreply=False)
    st = wait_limit_follows(srv, 32 * MiB)
    stubs = st["stub_items"]
    assert stubs > 250_000
    # the table: spilled items only, <= 24 bytes each
    assert float(st["evicted_bytes_per_item"]) <= 24.0
    assert st["evicted_table_bytes"] <= 24 * stubs
    assert st["evicted_table_bytes"] > 4 * MiB         # so the limit moved by several pages
    assert st["item_memory_limit"] < 31 * MiB - 4 * MiB
    # the slab memory is brought under the limit (borrowed pages aside)
    deadline = time.monotonic() + 20
    while slab_bytes(srv) > st["item_memory_limit"] + st["pages_owed"] * MiB:
        assert time.monotonic() < deadline, (slab_bytes(srv), srv.ac())
        time.sleep(0.1)
    assert srv.ac()["pages_repaid"] >= 4
    # nothing lost: a sample of every 97th key, byte-exact
    keys = [f"b{i:07d}" for i in range(0, n, 97)]
    got = {}
    for s in range(0, len(keys), 200):
        got.update(cli.get_many(keys[s:s + 200]))
    assert got == {k: (v, 0) for k in keys}
    # the table shrinks when items come back (deletes of spilled keys), and the limit rises
    for s in range(0, n // 2, 1000):
        for i in range(s, s + 1000):
            cli.delete(f"b{i:07d}", noreply=True)
    st2 = wait_limit_follows(srv, 32 * MiB)
    assert st2["stub_items"] < stubs and st2["evicted_table_bytes"] < st["evicted_table_bytes"]
    assert st2["item_memory_limit"] > st["item_memory_limit"]
    assert st2["lost_items"] == 0 and st2["refused_items"] == 0


def test_cache_memlimit_sets_the_budget(server):
    srv = server(mem=32, ac={"ac_policy": "lru"})
    raw = srv.raw()
    assert raw.call(b"cache_memlimit 16") == b"OK"
    st = srv.ac()
    assert st["item_memory_limit"] == 16 * MiB - charged(st)
    assert int(srv.stats("settings")["maxbytes"]) == 16 * MiB
    assert int(srv.stats(None)["limit_maxbytes"]) == 16 * MiB
    assert raw.call(b"cache_memlimit 32") == b"OK"
    st = srv.ac()
    assert st["item_memory_limit"] == 32 * MiB - charged(st)
