"""The loss against OPT, decomposed into what exact LRU loses, what memory overhead costs and
what the policy's choices cost.

With C = the OPT capacity (the memory budget in objects) and R = the items the approach
really held in RAM (measured):

    loss = [OPT(C) − LRU(C)] + [LRU(C) − LRU(R)] + [LRU(R) − approach]
           loss_lru_pp         loss_overhead_pp    loss_policy_pp

all as hit rates of the same scored reads, in percentage points. LRU(x) is exact LRU with x
objects of capacity on the same history (write-allocating, harness/README.md), read off one
stack-distance histogram; a fractional R (a time average) interpolates linearly between the
integer capacities around it. The three parts add up to `loss_pp` exactly (they telescope).
loss_overhead_pp is negative when the approach held more than C items (a policy whose
book-keeping is smaller than memcached's slab overhead assumed by the footprint).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

PARTS = ("loss_lru_pp", "loss_overhead_pp", "loss_policy_pp")


def lru_hits(hist: np.ndarray, capacity: float) -> float:
    """Scored LRU hits at `capacity` objects (hist[d] = scored reads at stack distance d)."""
    if capacity <= 0:
        return 0.0
    cum = np.cumsum(hist, dtype=np.float64)
    if len(cum) == 0:
        return 0.0
    lo = math.floor(capacity)
    frac = capacity - lo

    def at(c: int) -> float:            # hits with c objects = reads at distance < c
        return 0.0 if c <= 0 else float(cum[min(c, len(cum)) - 1])

    return at(lo) + frac * (at(lo + 1) - at(lo))


def decompose(opt_hits: int, hist: np.ndarray, capacity: int, resident: float | None, hit_rate: float | None,
              reads: int) -> dict[str, Any]:
    """The decomposition columns of one cell (None where an input is missing)."""
    out: dict[str, Any] = {"lru_c_hit_rate": None, "lru_r_hit_rate": None, "resident_items_avg": resident,
                           **{p: None for p in PARTS}}
    if reads <= 0:
        return out
    opt = opt_hits / reads
    lru_c = lru_hits(hist, capacity) / reads
    out["lru_c_hit_rate"] = lru_c
    if resident is None or hit_rate is None:
        return out
    lru_r = lru_hits(hist, resident) / reads
    out["lru_r_hit_rate"] = lru_r
    out["loss_lru_pp"] = 100.0 * (opt - lru_c)
    out["loss_overhead_pp"] = 100.0 * (lru_c - lru_r)
    out["loss_policy_pp"] = 100.0 * (lru_r - hit_rate)
    return out
