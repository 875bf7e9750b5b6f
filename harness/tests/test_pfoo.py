"""PFOO-L is a lower bound on the misses of every simulated policy; exact
PFOO-L values on hand-computed traces; size-aware Belady against a Python
re-implementation of the same rules; the same with writes (write-allocate) and
score_from."""
from __future__ import annotations

import heapq

import numpy as np
import pytest


from acbench import core, traceio
from conftest import lru_bytes_hits, zipf_keys


def size_belady_reference(keys: list[int], sizes: list[int], cap: int) -> int:
    nxt = traceio.next_access(keys).tolist()
    cached: dict[int, int] = {}          # position of next request -> size
    used = hits = 0
    for i, (s, t) in enumerate(zip(sizes, nxt)):
        if i in cached:
            hits += 1
            used -= cached.pop(i)
        if t < 0 or s > cap:
            continue
        while used + s > cap:
            far = max(cached)
            if t > far:
                break
            used -= cached.pop(far)
        if used + s <= cap:
            cached[t] = s
            used += s
    return hits


def run(keys: list[int], sizes: list[int], byte_caps: list[int], unit_caps: list[int]) -> dict[str, list[int]]:
    recs = traceio.actrace_records(keys, sizes)
    with core.Trace.from_records(recs, "actrace") as t, core.NextUse(t) as nu:
        hist = nu.lru_hist()
        return {
            "pfoo": nu.pfoo_l(byte_caps), "sb": nu.size_belady(byte_caps),
            "demand": nu.opt(unit_caps, False), "bypass": nu.opt(unit_caps, True),
            "lru": [int(hist[:c].sum()) for c in unit_caps],
        }


def test_pfoo_hand_computed() -> None:
    # intervals (0,2) cost 2*10 = 20 and (1,3) cost 2*20 = 40; budget = capacity * 4
    r = run([1, 2, 1, 2], [10, 20, 10, 20], [4, 5, 14, 15, 1000], [1])
    assert r["pfoo"] == [0, 1, 1, 2, 2]
    # size-aware Belady: below 10 bytes nothing fits; from 10 key 1 (size 10); at 1000 both
    assert r["sb"] == [0, 0, 1, 1, 2]


@pytest.mark.parametrize("seed", range(8))
def test_pfoo_below_every_policy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 1500
    keys = zipf_keys(rng, n, int(rng.integers(20, 300)), float(rng.choice([0.0, 0.8, 1.1])))
    per_key = {k: int(rng.integers(1, 100)) for k in set(keys.tolist())}
    sizes = [per_key[k] if rng.random() > 0.1 else int(rng.integers(1, 100)) for k in keys.tolist()]
    max_size = max(sizes)
    byte_caps = [max_size * u for u in (1, 3, 10, 40)] + [137, 2500]
    unit_caps = [b // max_size for b in byte_caps if b >= max_size]
    r = run(keys.tolist(), sizes, byte_caps, unit_caps)
    for k, b in enumerate(byte_caps):
        floor = n - r["pfoo"][k]                           # PFOO-L's lower bound on misses
        assert floor <= n - r["sb"][k]
        assert floor <= n - lru_bytes_hits(keys.tolist(), sizes, b)
        assert r["sb"][k] == size_belady_reference(keys.tolist(), sizes, b)
    # unit-capacity policies with c objects fit in c * max_size bytes
    for k, c in enumerate(unit_caps):
        floor = n - r["pfoo"][k]
        assert floor <= n - r["bypass"][k] <= n - r["demand"][k]
        assert floor <= n - r["lru"][k]


def test_unit_sizes_size_belady_is_min_bypass() -> None:
    keys = zipf_keys(np.random.default_rng(9), 4000, 300, 0.9).tolist()
    caps = [1, 5, 30, 299, 1000]
    r = run(keys, [1] * len(keys), caps, caps)
    assert r["sb"] == r["bypass"]
    assert all(p >= b for p, b in zip(r["pfoo"], r["bypass"]))


def useful_next(keys: list[int], ops: list[int], score_from: int) -> list[int]:
    """Next request of the same key if it is a scored read, else -1."""
    nxt = traceio.next_access(keys).tolist()
    return [t if t >= 0 and t >= score_from and ops[t] in traceio.READ_OPS else -1 for t in nxt]


def size_belady_writes_reference(keys: list[int], sizes: list[int], ops: list[int], cap: int,
                                 score_from: int) -> int:
    """size_belady_reference with write-allocate: a write is placed even when its next use is
    the farthest (victims farthest first), unless it is larger than the cache."""
    nxt = useful_next(keys, ops, score_from)
    cached: dict[int, int] = {}
    used = hits = 0
    for i, (s, t, op) in enumerate(zip(sizes, nxt, ops)):
        if i in cached:
            hits += 1
            used -= cached.pop(i)
        forced = op != traceio.OPS["read"]
        if (t < 0 and not forced) or s > cap:
            continue
        far_t = t if t >= 0 else 1 << 62
        while used + s > cap:
            far = max(cached)
            if far_t > far and not forced:
                break
            used -= cached.pop(far)
        if used + s <= cap and t >= 0:
            cached[t] = s
            used += s
    return hits


def run_writes(keys: list[int], sizes: list[int], ops: list[int], score_from: int, byte_caps: list[int],
               unit_caps: list[int]) -> dict[str, object]:
    recs = traceio.actrace_records(keys, sizes, ops)
    with core.Trace.from_records(recs, "actrace") as t, core.NextUse(t, score_from=score_from) as nu:
        return {"pfoo": nu.pfoo_l(byte_caps), "sb": nu.size_belady(byte_caps),
                "bypass": nu.opt(unit_caps, True), "reads": nu.scored_reads}


def test_pfoo_with_writes_by_hand() -> None:
    # a(10) b(20) a b with ops read, update, read, read: only intervals ending at reads count:
    # (0,2) cost 20, (1,3) cost 40 (b's update at 1 starts it); score_from 3 leaves only (1,3)
    r = run_writes([1, 2, 1, 2], [10, 20, 10, 20], [0, 1, 0, 0], 0, [4, 5, 14, 15, 1000], [1])
    assert r["pfoo"] == [0, 1, 1, 2, 2]
    # size-aware Belady: below 10 bytes nothing fits; at 14 and 15 the 20-byte update of b
    # cannot be placed at all (written around) and only a hits; at 1000 both hit
    assert r["sb"] == [0, 0, 1, 1, 2]
    r = run_writes([1, 2, 1, 2], [10, 20, 10, 20], [0, 1, 0, 0], 3, [5, 10, 1000], [1])
    assert r["pfoo"] == [0, 1, 1] and r["reads"] == 1


@pytest.mark.parametrize("seed", range(6))
def test_pfoo_below_every_write_allocating_policy(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    n = 1200
    keys = zipf_keys(rng, n, int(rng.integers(20, 200)), float(rng.choice([0.0, 0.8, 1.1]))).tolist()
    per_key = {k: int(rng.integers(1, 100)) for k in set(keys)}
    sizes = [per_key[k] for k in keys]
    ops = np.where(rng.random(n) < 0.3, rng.choice([1, 2, 3], n), 0).tolist()
    score_from = int(rng.integers(0, n // 2))
    byte_caps = [99 * u for u in (1, 3, 10, 40)] + [137, 2500]
    unit_caps = [b // 99 for b in byte_caps if b >= 99]
    r = run_writes(keys, sizes, ops, score_from, byte_caps, unit_caps)
    reads = r["reads"]
    for k, b in enumerate(byte_caps):
        floor = reads - r["pfoo"][k]
        assert r["sb"][k] == size_belady_writes_reference(keys, sizes, ops, b, score_from)
        assert floor <= reads - r["sb"][k]
        assert floor <= reads - lru_bytes_hits(keys, sizes, b, ops, score_from)
    for k, c in enumerate(unit_caps):       # c objects of at most 99 bytes fit in c * 99 bytes
        assert reads - r["pfoo"][k] <= reads - r["bypass"][k]


def test_unit_sizes_size_belady_is_min_bypass_with_writes() -> None:
    rng = np.random.default_rng(21)
    keys = zipf_keys(rng, 4000, 300, 0.9).tolist()
    ops = np.where(rng.random(4000) < 0.4, rng.choice([1, 2, 3], 4000), 0).tolist()
    caps = [1, 5, 30, 299, 1000]
    for score_from in (0, 1500):
        r = run_writes(keys, [1] * len(keys), ops, score_from, caps, caps)
        assert r["sb"] == r["bypass"]
        assert all(p >= b for p, b in zip(r["pfoo"], r["bypass"]))
