"""OPT against brute force on every short trace.

Traces are canonicalised by first occurrence (the first key seen is 0, the next
new key 1, ...: restricted growth strings), since hit counts do not depend on
key names; every trace of length 1..10 over at most 4 keys is one of these up
to renaming. The brute force is a dynamic programme over cache contents (a
4-bit mask) that tries every admission/eviction choice at every miss,
vectorised with numpy over all traces of one length; evicting at any other
moment never helps, so this is the true optimum. The C core is called through
the binding once per (length, capacity set, variant)."""
from __future__ import annotations

import numpy as np
import pytest

from acbench import core

MAX_LEN, MAX_KEYS, CAPS = 10, 4, [1, 2, 3]


def canonical_traces(length: int) -> np.ndarray:
    rows = [[0]]
    for _ in range(length - 1):
        rows = [r + [k] for r in rows for k in range(min(max(r) + 2, MAX_KEYS))]
    return np.array(rows, dtype=np.int64)


def stirling2(n: int, k: int) -> int:
    if n == k:
        return 1
    if k == 0 or k > n:
        return 0
    return k * stirling2(n - 1, k) + stirling2(n - 1, k - 1)


def brute_force(traces: np.ndarray, cap: int, bypass: bool) -> np.ndarray:
    t, length = traces.shape
    best = np.full((t, 16), -1, dtype=np.int64)
    best[:, 0] = 0
    for j in range(length):
        r = traces[:, j]
        new = np.full((t, 16), -1, dtype=np.int64)
        for m in range(16):
            size = bin(m).count("1")
            if size > cap:
                continue
            for rv in range(MAX_KEYS):
                sel = (r == rv) & (best[:, m] >= 0)
                if not sel.any():
                    continue
                b = 1 << rv
                if m & b:                                      # hit
                    new[:, m] = np.maximum(new[:, m], np.where(sel, best[:, m] + 1, -1))
                    continue
                v = np.where(sel, best[:, m], -1)              # miss: every choice
                targets = [m | b] if size < cap else [(m & ~(1 << e)) | b for e in range(MAX_KEYS) if m >> e & 1]
                if bypass:
                    targets.append(m)                          # do not admit
                for tg in targets:
                    new[:, tg] = np.maximum(new[:, tg], v)
        best = new
    return best.max(axis=1)


def test_enumeration_is_complete() -> None:
    for length in range(1, MAX_LEN + 1):
        expect = sum(stirling2(length, k) for k in range(1, MAX_KEYS + 1))
        assert len(canonical_traces(length)) == expect
    assert sum(len(canonical_traces(n)) for n in range(1, MAX_LEN + 1)) == 58_769


@pytest.mark.parametrize("length", range(1, MAX_LEN + 1))
def test_opt_equals_brute_force(length: int) -> None:
    traces = canonical_traces(length)
    demand = core.opt_batch(traces, CAPS, bypass=False)
    bypass = core.opt_batch(traces, CAPS, bypass=True)
    for k, cap in enumerate(CAPS):
        np.testing.assert_array_equal(bypass[:, k], brute_force(traces, cap, bypass=True))
        np.testing.assert_array_equal(demand[:, k], brute_force(traces, cap, bypass=False))
    assert (demand <= bypass).all()
    if length >= 5:   # the variants really differ on some traces
        assert (demand < bypass).any()


def test_batch_of_unequal_traces() -> None:
    traces = [[0, 1, 0], [0, 1, 2, 0, 1, 2], [5]]
    np.testing.assert_array_equal(core.opt_batch(traces, [1, 2], bypass=True), [[1, 1], [1, 2], [0, 0]])
    np.testing.assert_array_equal(core.opt_batch(traces, [1, 2], bypass=False), [[0, 1], [0, 2], [0, 0]])
    with pytest.raises(core.CoreError, match="^capacity must be at least 1 object, got 0$"):
        core.opt_batch(traces, [0], bypass=True)
