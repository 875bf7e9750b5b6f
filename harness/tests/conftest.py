"""Shared helpers: naive reference simulators used by several tests. The tests work on the
checkout that holds them (acbench's home, paths.py), wherever pytest was started."""
from __future__ import annotations

import os
from collections import OrderedDict
from pathlib import Path
from typing import Sequence

import numpy as np

from acbench.traceio import READ_OPS

os.environ.setdefault("ACBENCH_HOME", str(Path(__file__).resolve().parents[2]))


def lru_hits(keys: Sequence[int], cap: int, ops: Sequence[int] | None = None, score_from: int = 0) -> int:
    """Naive LRU with `cap` objects (an OrderedDict as the recency list). With `ops` (ACTRACE op
    codes) every request is an access (write-allocate) but only reads at index >= score_from
    count as hits."""
    cache: OrderedDict[int, None] = OrderedDict()
    hits = 0
    for i, k in enumerate(keys):
        if k in cache:
            hits += ops is None or (i >= score_from and ops[i] in READ_OPS)
            cache.move_to_end(k)
        else:
            cache[k] = None
            if len(cache) > cap:
                cache.popitem(last=False)
    return hits


def lru_bytes_hits(keys: Sequence[int], sizes: Sequence[int], cap: int, ops: Sequence[int] | None = None,
                   score_from: int = 0) -> int:
    """Naive LRU with a byte capacity; an object larger than the cache is not kept. With `ops`
    (ACTRACE op codes) every request is an access (write-allocate) but only reads at index >=
    score_from count as hits."""
    cache: OrderedDict[int, int] = OrderedDict()
    used = hits = 0
    for i, (k, s) in enumerate(zip(keys, sizes)):
        if k in cache:
            hits += ops is None or (i >= score_from and ops[i] in READ_OPS)
            used -= cache.pop(k)
        if s > cap:
            continue
        cache[k] = s
        used += s
        while used > cap:
            used -= cache.popitem(last=False)[1]
    return hits


def zipf_keys(rng: np.random.Generator, n: int, keys: int, theta: float) -> np.ndarray:
    p = 1.0 / np.arange(1, keys + 1) ** theta
    return rng.choice(keys, size=n, p=p / p.sum()).astype(np.uint64) * 7919 + 3
