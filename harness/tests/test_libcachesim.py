"""Cross-checks against libCacheSim (the `libcachesim` Python package, a test dependency only).

One generated trace (acbench make-trace: Zipf 0.9 over 6000 objects plus 20 % one-hit wonders,
every object 1000 bytes) is replayed through memcached-ac in-process with one driver thread (the
file's order) and through libCacheSim's implementation of the same policy at the server's measured
resident capacity. Capacity is counted in objects: with one object size, libCacheSim's byte
capacity resident x 1000 (object metadata not counted) holds exactly `resident` objects, while
the server's bytes per item (header, key, slab chunk: item_footprint) are not libCacheSim's; with
varying sizes the two byte accountings differ and no capacity makes them the same cache.
The server spills in 4 KiB blocks without lazy compaction (test_server_lru.py): its capacity moves
by a few items around the resident count it reports at the end. Its hits are RAM hits (a spilled
item read back is a miss for the policy, `disk_hit`); every request is a get, a miss refilled.

A spilled item read back is the policy's miss: the core links it (on_insert) and hands the read
to the policy's on_fetched, not on_access (policies/core/ac_policy.h). Each policy has its bound on
|server − libCacheSim| in hit-rate percentage points, set from what was measured on this trace:
  lru      1 pp (measured 0.000 pp: the same hits at the same capacity);
  sieve    0.1 pp (measured +0.002 pp: one hit; the rest of the bound is the few items the
           server's capacity moves by). SIEVE (NSDI 2024, Algorithm 1) inserts a missed object
           unvisited, as the server now does with a read-back. The model sieve_hits() gives
           libCacheSim's hits exactly, and with a read-back entering visited (the server's
           behaviour while the read-back went to on_access) +0.385 pp more: the server must be
           within 0.1 pp of the first and farther from the second (+1.41 pp was measured that way
           with 100k requests over 10k objects);
  s3fifo   0.6 pp (measured +0.458 pp; +0.493 pp while a read-back raised its frequency to 1).
           Not bisected: it is not the promotion threshold (ac_s3fifo_promote=2, libCacheSim's
           move_to_main_threshold, gives +0.453 pp); the server takes victims in batches for its
           4 KiB blocks and offers the ones the core left again, libCacheSim evicts one at a time;
  wtinylfu 2.2 pp (measured −1.820 pp, the same while a read-back counted as a hit as well).
           libCacheSim's WTinyLFU is another design of the sketch: it counts a request only on
           a hit in main or an insert (not on a window hit), counts a candidate once more as it
           leaves the window, and uses a counting Bloom filter sized for main that decays after
           32 x main's size in bytes of counted requests (never, here); the server counts every
           request once in a 4-row count-min sketch of 4-bit counters (no halving within this
           trace: ac_wtlfu_sample 32 and 100 give the same hits).
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from acbench import maketrace, opt, traceio

lcs = pytest.importorskip("libcachesim", reason="libcachesim (pip install libcachesim) is a test dependency")

TOP = Path(os.environ.get("TOP", Path(__file__).resolve().parents[2]))
SERVER = TOP / "build" / "bin" / "memcached-ac"
SIZE = 1000
PARAMS = maketrace.TraceParams(requests=60000, objects=6000, theta=0.9, one_hit=0.2, size=SIZE, seed=5)
# policy -> (libCacheSim's class name, bound in pp); add a policy by listing it here
CROSSCHECK = {"lru": ("LRU", 1.0), "sieve": ("Sieve", 0.1), "s3fifo": ("S3FIFO", 0.6), "wtinylfu": ("WTinyLFU", 2.2)}


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    t = tmp_path_factory.mktemp("lcs") / "t.og"
    maketrace.write(t, PARAMS)
    return t


def server_policies() -> set[str]:
    out = subprocess.run([str(SERVER), "-o", "ac_list"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return {p["name"] for p in json.loads(out.stdout)["policies"]}


def replay(trace: Path, policy: str) -> tuple[int, int, int]:
    """(RAM hits, gets, resident items at the end) of the trace through the server."""
    opts = [f"ac_policy={policy}", "ac_block_size=4096", "ac_compact_fill=0",
            f"ac_spill_dir={trace.parent / ('spill-' + policy)}", f"ac_driver_trace={trace}", "ac_driver_set=threads=1"]
    p = subprocess.run([str(SERVER), "-u", "root", "-t", "1", "-m", "8", "-o", ",".join(opts)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    reads = r["run"]["reads"]
    assert reads["miss"] == r["trace"]["objects"] and reads["refill_errors"] == 0   # only cold misses: nothing lost
    return reads["hit"], reads["total"], int(r["server"]["anticache"]["resident_items"])


def lcs_hits(trace: Path, cls: str, capacity: int) -> int:
    """Hits of libCacheSim's `cls` with room for `capacity` objects of SIZE bytes."""
    cache = getattr(lcs, cls)(cache_size=capacity * SIZE)
    miss_ratio, _ = cache.process_trace(lcs.TraceReader(str(trace), lcs.TraceType.ORACLE_GENERAL_TRACE))
    return round(PARAMS.requests * (1 - miss_ratio))


def sieve_hits(keys: np.ndarray, cap: int, refetch_visited: bool) -> int:
    """SIEVE (NSDI 2024, Algorithm 1) over `cap` objects: a FIFO with a visited bit per object and
    one hand moving from the tail towards the head. refetch_visited: an object requested again
    after its eviction enters visited (a read-back counted as a hit, which the server must not
    do); otherwise unvisited, as the paper inserts a miss."""
    newer: dict[int, int | None] = {}   # towards the head
    older: dict[int, int | None] = {}   # towards the tail
    visited: dict[int, bool] = {}
    seen: set[int] = set()
    head = tail = hand = None
    hits = 0
    for k in keys.tolist():
        if k in visited:
            visited[k] = True
            hits += 1
            continue
        if len(visited) >= cap:
            h = hand if hand is not None else tail
            while visited[h]:
                visited[h] = False
                h = newer[h] if newer[h] is not None else tail
            hand = newer[h]
            o, n = older.pop(h), newer.pop(h)
            del visited[h]
            if o is not None:
                newer[o] = n
            else:
                tail = n
            if n is not None:
                older[n] = o
            else:
                head = o
        visited[k] = refetch_visited and k in seen
        seen.add(k)
        older[k], newer[k] = head, None
        if head is not None:
            newer[head] = k
        head = k
        if tail is None:
            tail = k
    return hits


@pytest.mark.parametrize("policy", list(CROSSCHECK))
def test_server_policy_against_libcachesim(trace: Path, policy: str) -> None:
    if policy not in server_policies():
        pytest.skip(f"memcached-ac -o ac_list has no policy {policy!r} (yet): nothing to cross-check")
    cls, bound = CROSSCHECK[policy]
    hits, gets, resident = replay(trace, policy)
    assert gets == PARAMS.requests
    ref = lcs_hits(trace, cls, resident)
    diff_pp = 100 * (hits - ref) / gets
    print(f"\n{policy}: server {hits / gets:.4f}, libCacheSim {cls} {ref / gets:.4f} at {resident} objects: "
          f"{diff_pp:+.3f} pp")
    assert abs(diff_pp) <= bound, (policy, hits, ref, resident)
    if policy == "sieve":
        keys = traceio.read_oracle(trace)["key"]
        plain, refetch = (sieve_hits(keys, resident, v) for v in (False, True))
        print(f"SIEVE model: {plain / gets:.4f} (missed objects unvisited), {refetch / gets:.4f} (read back visited)")
        assert plain == ref                                  # the model is libCacheSim's SIEVE
        assert abs(plain - hits) <= 0.001 * gets             # and the server's hits
        assert abs(refetch - hits) > abs(plain - hits)       # a read-back does not enter visited


def test_opt_and_lru_reference_equal_libcachesim_belady_and_lru(trace: Path) -> None:
    """acbench opt (libacopt): OPT with demand fetching (every miss enters) is libCacheSim's Belady,
    its stack-distance LRU libCacheSim's LRU, hit for hit, at capacities from tiny to everything."""
    caps = [10, 500, 3000, 20000]
    rep = opt.analyse(trace, capacities=caps, byte_capacities=[])
    assert rep["scored_reads"] == PARAMS.requests
    for row in rep["objects"]:
        c = row["capacity"]
        assert row["opt_demand"]["hits"] == lcs_hits(trace, "Belady", c), c
        assert row["lru"]["hits"] == lcs_hits(trace, "LRU", c), c


def test_variable_sizes_pfoo_l_bounds_libcachesim_and_byte_lru_agrees(tmp_path: Path) -> None:
    """Sizes 100 B .. 4 KB: exact OPT is NP-hard, so PFOO-L's hits (an upper bound on every policy's)
    must be at least libCacheSim's BeladySize and LRU at each byte capacity, and the byte-capacity
    LRU the harness's tests use (conftest.lru_bytes_hits) is libCacheSim's LRU hit for hit.
    (libCacheSim's BeladySize came out above acbench's size-aware Belady: 16847 vs 15576 hits at
    200 KB; both are feasible policies, neither is OPT.)"""
    from conftest import lru_bytes_hits
    p = maketrace.TraceParams(requests=30000, objects=3000, theta=0.9, one_hit=0.2, size=100, size_max=4000, seed=7)
    t = tmp_path / "v.og"
    maketrace.write(t, p)
    recs = traceio.read_oracle(t)
    caps = [200_000, 1_000_000, 3_000_000]
    rep = opt.analyse(t, capacities=[], byte_capacities=caps)
    for c, b in zip(caps, rep["bytes"]):
        hits = {}
        for cls in ("BeladySize", "LRU"):
            cache = getattr(lcs, cls)(cache_size=c)
            mr, _ = cache.process_trace(lcs.TraceReader(str(t), lcs.TraceType.ORACLE_GENERAL_TRACE))
            hits[cls] = round(p.requests * (1 - mr))
        assert b["size_belady"]["hits"] <= b["pfoo_l"]["hits"] and hits["BeladySize"] <= b["pfoo_l"]["hits"], (c, b, hits)
        assert hits["LRU"] == lru_bytes_hits(recs["key"].tolist(), recs["size"].tolist(), c), c
