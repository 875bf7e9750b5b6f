"""-m is the budget for items and book-keeping (equal provisioning). The block
buffer is charged at start; the evicted table holds spilled items only, grows
with them and is charged as it grows: the slab allocator's limit
(`item_memory_limit`) follows -m minus everything charged, within a quarter
slab page, and the slab memory is brought under it (pages moved to the pool
and freed). `cache_memlimit N` sets the budget, not the slab limit.
"""
from __future__ import annotations

import json
import subprocess
import time

import pytest

from mc_helpers import BIN, MiB, ROOT

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


@pytest.mark.parametrize("engine", ["sync", "threads", "aio", "uring"])
def test_each_engine_stays_in_a_tight_memory_group(tmp_path, engine):
    """The spill writes' page cache must stay reclaimable: a memory group of twice -m (lru, 20k
    records of 1 KB, -m 12) holds the run under every engine. Buffered writes through io_uring are
    not held back by the kernel's dirty-page limits and once filled such a group with dirty pages
    until it was OOM-killed; the uring engine now writes them with pwrite (store/io_uring.c)."""
    out = tmp_path / "driver.json"
    opts = (f"ac_policy=lru,ac_io={engine},ac_spill_dir={tmp_path}/spill,hashpower=16,"
            f"ac_driver={ROOT / 'experiments' / 'workloads' / 'readonly'},ac_driver_out={out},"
            "ac_driver_set=recordcount=20000,ac_driver_set=operationcount=20000,"
            "ac_driver_set=warmupoperations=10000,ac_driver_set=requestdistribution=truezipf")
    r = subprocess.run([str(ROOT / "cgroups" / "acg"), "run", "--name", f"test-budget-{engine}",
                        "--memory", str(24 * MiB + 256 * 1024), "--", str(BIN), "-u", "root", "-t", "1", "-m", "12",
                        "-o", opts], capture_output=True, text=True, timeout=300)
    group = json.loads(r.stdout)
    assert r.returncode == 0 and group["oom_kills"] == 0 and group["exit_status"] == 0, (group, r.stderr[-2000:])
    d = json.loads(out.read_text())
    a, reads = d["server"]["anticache"], d["run"]["reads"]
    assert a["io_engine"] == engine and a["lost_items"] == 0 and a["refused_items"] == 0
    assert reads["total"] == 20000 and reads["miss"] == 0 and reads["disk_hit"] > 1000, reads
