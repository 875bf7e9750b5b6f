"""PFOO-L is a lower bound on the misses of every simulated policy; exact
PFOO-L values on hand-computed traces; size-aware Belady against a Python
re-implementation of the same rules."""
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
