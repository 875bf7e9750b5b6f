"""Stack-distance LRU equals a naive LRU simulator, for every capacity."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from acbench import core, traceio
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
