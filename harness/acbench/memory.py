"""Memory arithmetic of a cell (equal provisioning).

    D          = recordcount × item footprint (bytes a record takes in memcached's slabs)
    budget     = ceil(M/D × D / MiB) MiB                -> what OPT gets
    limit      = budget + allowance                     -> cgroup memory limit
    capacity   = floor(budget / footprint)              -> OPT's cache size in objects
    swap       = 0 (memsw = limit) for user-space approaches; paging approaches get swap

[memory] provisioning = "equal" (the default): every approach of a cell runs under the same limit,
the paper's rule (the same physical memory for all). The allowance is what stock memcached needs
beside its items (calibrate.py, approach `memcached-static`, ×1.15); what an approach needs beyond
that comes out of the same limit, so it holds fewer items:

    -m (user-space) = min(budget, ⌊(limit − needs) / MiB⌋)   needs = ⌈1.15 × its own overhead⌉
                      (the budget when needs ≤ allowance + 64 KiB: stock memcached's, to the noise)

One exception, named: an approach whose classifier the paper runs offline (logging-buffer, as the
paper's Table II charges Siberia) gets what it needs beyond stock memcached beside the limit
(offline_bytes) and -m = stock memcached's less its spill room.

"own" (the rule before equal provisioning): each approach gets its own allowance on top of the
budget (its ×1.15 overhead + [memory] allowance_margin) and -m = the budget. A fixed allowance
([memory] allowance = SIZE) is the same limit for every approach and -m = the budget in both.

Nothing else is sized: a spilling approach's evicted table grows and shrinks with the spilled
items (at most 24 B each) and the server charges it against -m as it grows.

A paging approach keeps every item in its address space: -m = ceil(1.1 × D / MiB) + 1, the
cgroup limit is the same as the others' and the rest goes to swap (`[memory] swap`, default
D + 10 %); a file-backed one (`ospaging-file`) gets no swap (memsw = limit). Its item pages take
whatever the limit leaves.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from acbench.approaches import Approach

MIB = 1 << 20
# equal provisioning: needs this close to stock memcached's allowance count as the same (memcached-static's
# calibrated need and memcached's, both stock memcached, differed by 4.7 KB at 20k records; rounded down,
# that cost memcached-static 1 of its 12 MiB in one CI run)
SAME_NEEDS = 64 << 10
# memcached refuses -m below twice its item size limit (-I, 1 MiB by default)
MIN_ITEM_MB = 2
MIN_HASHPOWER = 16  # memcached's default
HASH_BUCKET_BYTES = 8


def hashpower_for(items: int) -> int:
    """Smallest hash power whose table never expands for `items` (memcached grows past 1.5 × 2^hp)."""
    hp = MIN_HASHPOWER
    while items > (3 << hp) // 2:
        hp += 1
    return hp


def hash_bytes(items: int) -> int:
    return HASH_BUCKET_BYTES << hashpower_for(items)


@dataclass(frozen=True)
class MemoryPlan:
    data_bytes: int        # D
    item_mb: int           # memcached-ac -m
    limit_bytes: int       # cgroup memory limit
    swap_bytes: int        # cgroup swap allowance (0: memsw = limit)
    allowance_bytes: int
    opt_capacity: int      # objects
    hashpower: int
    item_budget_bytes: int = 0      # ceil(M/D × D / MiB) MiB: what OPT gets; limit = this + allowance
    allowance_source: str = "spec"  # "spec" ([memory] allowance = SIZE) or "calibrated:<fit>" (calibrate.py)
    provisioning: str = "equal"     # [memory] provisioning: "equal" (one limit per cell) or "own"
    needs_bytes: int | None = None  # equal, user-space: what the approach needs beside its items (⌈1.15 × overhead⌉)
    offline_bytes: int = 0          # equal: granted beside the common limit (an offline classifier: logging-buffer)

    def as_row(self) -> dict[str, int | str]:
        return {"data_bytes": self.data_bytes, "item_memory_bytes": self.item_mb * MIB,
                "item_budget_bytes": self.item_budget_bytes,
                "cgroup_limit_bytes": self.limit_bytes, "cgroup_swap_bytes": self.swap_bytes,
                "allowance_bytes": self.allowance_bytes, "allowance_source": self.allowance_source,
                "opt_capacity": self.opt_capacity, "hashpower": self.hashpower,
                "provisioning": self.provisioning, "approach_needs_bytes": self.needs_bytes,
                "offline_bytes": self.offline_bytes}


def allowance(base_rss: int, recordcount: int, margin: int) -> int:
    """The small-scale estimate (empty-server RSS + hash table + margin): calibrate.py's probes run
    under item budget + this + an extra, the plan uses the calibrated allowance."""
    return base_rss + hash_bytes(recordcount) + margin


def plan(approach: Approach, recordcount: int, footprint: int, ratio: float, allowance_bytes: int,
         swap: int | None = None, allowance_source: str = "spec", provisioning: str = "equal",
         needs_bytes: int | None = None, offline_bytes: int = 0) -> MemoryPlan:
    """needs_bytes (user-space approaches): what the approach needs beside its items; -m is what the
    limit (budget + allowance) leaves after it, at most the budget. None: -m = the budget.
    offline_bytes: added to the limit beside that (what an offline classifier needs)."""
    if recordcount < 1 or footprint < 1:
        raise ValueError("recordcount and footprint must be >= 1")
    if not 0 < ratio:
        raise ValueError(f"memory ratio must be > 0, got {ratio}")
    data = recordcount * footprint
    target = math.ceil(ratio * data / MIB)      # M in whole MiB, rounded up
    if target < MIN_ITEM_MB:
        raise ValueError(f"memory ratio {ratio:g} of {data} bytes of data ({recordcount} records x {footprint} B)"
                         f" gives -m {target} MiB; memcached-ac needs at least {MIN_ITEM_MB} MiB:"
                         f" raise recordcount or mem_ratio")
    limit = target * MIB + allowance_bytes
    if approach.pages:
        item_mb = math.ceil(data * 1.1 / MIB) + 1
        if approach.swap:
            swap_bytes = swap if swap is not None else math.ceil(data * 1.1)
        else:
            swap_bytes = 0      # a file-backed mapping: the page cache writes back, memsw = limit
        needs_bytes = None      # its item pages take whatever the limit leaves
    else:
        swap_bytes = 0
        # whole MiB (memcached's -m and slab page), rounded down: -m never takes more than the limit
        # leaves beside the needs. Rounded to the nearest before: logging at 200k records, M/D 1/2,
        # was given -m 110 where 109.5 MiB were left and was OOM-killed in 3 of 3 runs
        # (experiments/scaling.toml). An approach that needs what stock memcached needs, to the
        # calibration's noise (SAME_NEEDS), gets the whole budget, as the reference does
        if needs_bytes is None or needs_bytes <= allowance_bytes + SAME_NEEDS:
            item_mb = target
        else:
            item_mb = min(target, math.floor((limit - needs_bytes) / MIB))
        if item_mb < MIN_ITEM_MB:
            raise ValueError(f"{approach.name} needs {needs_bytes / MIB:.1f} MiB beside its items, which leaves"
                             f" {max(0, limit - needs_bytes) / MIB:.1f} MiB of the cell's {limit / MIB:.1f} MiB limit"
                             f" for -m; memcached-ac needs at least {MIN_ITEM_MB} MiB: raise recordcount or mem_ratio")
    capacity = target * MIB // footprint
    return MemoryPlan(data, item_mb, limit + offline_bytes, swap_bytes, allowance_bytes, capacity,
                      hashpower_for(recordcount), target * MIB, allowance_source, provisioning, needs_bytes,
                      offline_bytes)
