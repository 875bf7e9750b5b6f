"""Stack-distance LRU equals a naive LRU simulator, for every capacity; with writes
(write-allocate) and score_from too."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from acbench import core, opt, traceio
from acbench.cli import app
from conftest import lru_hits, zipf_keys


def lru_curve(keys: np.ndarray) -> tuple[np.ndarray, int]:
    with core.Trace.from_records(traceio.actrace_records(keys), "actrace") as t, core.NextUse(t) as nu:
        return np.cumsum(nu.lru_hist()), nu.distinct


@pytest.mark.parametrize("seed,n,keys,theta", [(1, 3000, 50, 0.0), (2, 3000, 400, 0.99), (3, 2000, 2000, 1.2),
                                               (4, 500, 3, 0.5)])
def test_stack_distances_match_naive_lru(seed: int, n: int, keys: int, theta: float) -> None:
    trace = zipf_keys(np.random.default_rng(seed), n, keys, theta)
    curve, distinct = lru_curve(trace)
    assert distinct == len(set(trace.tolist()))
    assert len(curve) == distinct
    caps = sorted({1, 2, 3, 7, distinct // 3 or 1, distinct // 2 or 1, max(distinct - 1, 1), distinct})
    for c in caps:
        assert int(curve[min(c, distinct) - 1]) == lru_hits(trace.tolist(), c), c
    assert int(curve[-1]) == n - distinct        # everything fits: only cold misses


def test_curve_file_and_capacities_beyond_distinct(tmp_path: Path) -> None:
    keys = [1, 2, 3, 1, 2, 3, 4, 1]
    path = tmp_path / "t.actrace"
    traceio.write_actrace(path, traceio.actrace_records(keys))
    curve = tmp_path / "curve.csv"
    res = CliRunner().invoke(app, ["opt", str(path), "-c", "3,1000", "--lru-curve", str(curve)])
    assert res.exit_code == 0, res.output
    df = pd.read_csv(curve)
    assert df["capacity"].tolist() == [1, 2, 3, 4]
    assert df["hits"].tolist() == [lru_hits(keys, c) for c in (1, 2, 3, 4)] == [0, 0, 3, 4]
    assert df["hit_rate"].tolist() == [0.0, 0.0, 0.375, 0.5]


@pytest.mark.parametrize("seed,n,keys,theta,write_share", [
    (11, 3000, 60, 0.0, 0.5), (12, 3000, 400, 0.99, 0.05), (13, 2000, 1500, 1.2, 0.3), (14, 600, 4, 0.5, 0.9)])
def test_write_allocating_lru_matches_naive(seed: int, n: int, keys: int, theta: float, write_share: float) -> None:
    rng = np.random.default_rng(seed)
    trace = zipf_keys(rng, n, keys, theta).tolist()
    ops = np.where(rng.random(n) < write_share, rng.choice([1, 2, 3], n), 0).tolist()
    for score_from in (0, n // 3, n - 1, n):
        w = opt.window_opt(traceio.actrace_records(trace, 1, ops), score_from, [])
        hist = w["lru_hist"]
        distinct = len(set(trace))
        assert len(hist) == w["distinct_keys"] == distinct
        assert w["scored_reads"] == sum(1 for o in ops[score_from:] if o in traceio.READ_OPS)
        assert w["scored_reads"] + w["scored_writes"] == n - score_from
        for c in sorted({1, 2, 3, 5, distinct // 4 or 1, distinct // 2 or 1, max(distinct - 1, 1), distinct}):
            assert int(hist[:c].sum()) == lru_hits(trace, c, ops, score_from), (score_from, c)
        # everything fits: every scored read of a key seen before hits
        assert int(hist.sum()) == w["scored_reads"] - w["cold_misses"]


def test_lru_writes_by_hand() -> None:
    # a b c a with ops read, update, read, read and capacity 2: the update of b is an
    # access, so a is the least recent when c comes in: the final read of a misses
    # (distance 2); reads-only would see a c a (distance 1: a hit at capacity 2)
    recs = traceio.actrace_records([1, 2, 3, 1], 1, [0, 1, 0, 0])
    assert opt.window_opt(recs, 0, [])["lru_hist"].tolist() == [0, 0, 1]
    assert opt.window_opt(recs, 0, [], reads_only=True)["lru_hist"].tolist() == [0, 1]
    assert lru_hits([1, 2, 3, 1], 2, [0, 1, 0, 0], 0) == 0
