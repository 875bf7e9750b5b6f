"""Shared helpers: naive reference simulators used by several tests. The tests work on the
checkout that holds them (acbench's home, paths.py), wherever pytest was started."""
from __future__ import annotations

import os
from collections import OrderedDict
from pathlib import Path
from typing import Sequence

import numpy as np
import pytest

from acbench import testlock
from acbench.traceio import READ_OPS

os.environ.setdefault("ACBENCH_HOME", str(Path(__file__).resolve().parents[2]))


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "machine: the module runs real cells (cgroups, vm.page-cluster, swap, zram, "
                                       "/var/tmp): one such module at a time under pytest-xdist (machine_state_lock)")


@pytest.fixture(scope="module", autouse=True)
def machine_state_lock(request, tmp_path_factory):
    """A module marked `machine` (pytestmark) runs holding an exclusive lock on a file in the run's
    temporary root, shared by the xdist workers (`make -C harness test`: -n 2 --dist loadfile, so a
    module stays on one worker): real cells change machine-wide state (vm.page-cluster saved and
    restored around each paging cell, swap areas, zram devices) and tests check that it is left as it
    was (/var/tmp, swap, devices), which a cell of the other worker would upset. Module-scoped, so
    the lock is held before the module's own run fixtures start their cells; the other modules
    (models, parsers, simulators) run beside it."""
    marks = getattr(request.module, "pytestmark", [])
    if not any(m.name == "machine" for m in (marks if isinstance(marks, list) else [marks])):
        yield
        return
    with testlock.machine_state_lock(tmp_path_factory):
        yield


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
