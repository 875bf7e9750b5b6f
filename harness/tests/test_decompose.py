"""The loss decomposition (acbench/decompose.py) and the report/baseline commands around it."""
from __future__ import annotations

import math
from pathlib import Path
import random

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from acbench import compare, decompose
from acbench.cli import app


def naive_lru_hits(trace: list[int], cap: int) -> int:
    stack: list[int] = []
    hits = 0
    for k in trace:
        if k in stack:
            hits += 1
            stack.remove(k)
        elif len(stack) == cap:
            stack.pop()
        stack.insert(0, k)
    return hits


def stack_hist(trace: list[int]) -> np.ndarray:
    """hist[d] = requests at LRU stack distance d (0 = most recent), cold misses left out."""
    stack: list[int] = []
    hist = np.zeros(len(set(trace)) + 1, dtype=np.uint64)
    for k in trace:
        if k in stack:
            hist[stack.index(k)] += 1
            stack.remove(k)
        stack.insert(0, k)
    return hist


@pytest.fixture(scope="module")
def trace() -> list[int]:
    rnd = random.Random(7)
    weights = [1 / (r + 1) for r in range(50)]
    return rnd.choices(range(50), weights, k=3000)


def test_lru_hits_from_hist_equal_naive_lru(trace: list[int]) -> None:
    hist = stack_hist(trace)
    for cap in (1, 2, 5, 10, 25, 49, 50, 80):
        assert decompose.lru_hits(hist, cap) == naive_lru_hits(trace, cap)
    assert decompose.lru_hits(hist, 0) == 0


def test_fractional_residency_interpolates(trace: list[int]) -> None:
    hist = stack_hist(trace)
    lo, hi = decompose.lru_hits(hist, 10), decompose.lru_hits(hist, 11)
    assert decompose.lru_hits(hist, 10.25) == pytest.approx(lo + 0.25 * (hi - lo), abs=1e-9)


def test_parts_add_up_to_the_loss_exactly(trace: list[int]) -> None:
    hist = stack_hist(trace)
    reads = len(trace)
    for opt_hits, cap, resident, hit_rate in ((2500, 10, 8.5, 0.61), (2400, 20, 23.0, 0.7), (2900, 5, 1.0, 0.1)):
        d = decompose.decompose(opt_hits, hist, cap, resident, hit_rate, reads)
        loss = 100 * (opt_hits / reads - hit_rate)
        assert math.isclose(sum(d[p] for p in decompose.PARTS), loss, rel_tol=0, abs_tol=1e-9)
        assert d["loss_lru_pp"] == pytest.approx(100 * (opt_hits - naive_lru_hits(trace, cap)) / reads)
    # more items held than the budget: the overhead part is negative
    d = decompose.decompose(2500, hist, 10, 20.0, 0.6, reads)
    assert d["loss_overhead_pp"] < 0


def test_exact_lru_with_zero_overhead_has_only_the_lru_part(trace: list[int]) -> None:
    hist = stack_hist(trace)
    cap = 12
    approach = naive_lru_hits(trace, cap) / len(trace)     # an approach that is exact LRU ...
    d = decompose.decompose(2800, hist, cap, float(cap), approach, len(trace))   # ... holding C items
    assert d["loss_overhead_pp"] == 0
    assert d["loss_policy_pp"] == 0
    assert d["loss_lru_pp"] == pytest.approx(100 * (2800 / len(trace) - approach))


def test_missing_inputs_give_none_not_numbers() -> None:
    hist = np.array([3, 2, 1], dtype=np.uint64)
    d = decompose.decompose(5, hist, 2, None, 0.5, 10)
    assert d["lru_c_hit_rate"] == pytest.approx(0.5)
    assert all(d[p] is None for p in decompose.PARTS)
    d = decompose.decompose(5, hist, 2, 2.0, 0.5, 0)     # no scored reads
    assert d["lru_c_hit_rate"] is None and all(d[p] is None for p in decompose.PARTS)


def _rows(hits: list[int]) -> pd.DataFrame:
    return pd.DataFrame({"cell_id": ["a", "b"], "hits": hits, "reads_total": [100, 100], "status": ["ok", "ok"],
                         "hit_rate": [h / 100 for h in hits]})


def test_baseline_from_runs_exact_where_equal_spread_elsewhere() -> None:
    runs = [_rows([50, 70]), _rows([50, 72]), _rows([50, 69])]
    b = compare.baseline_from_runs(runs, deterministic=lambda cell: True)
    hits = b[b["metric"] == "hits"].set_index("cell_id")
    assert hits.loc["a", "kind"] == "exact" and hits.loc["a", "value"] == 50
    assert hits.loc["b", "kind"] == "abs" and hits.loc["b", "value"] == 70
    assert hits.loc["b", "tolerance"] == pytest.approx(compare.SPREAD_FACTOR * 2)
    # a timing-dependent cell that agreed in every run gets the floor, not an exact check;
    # a structural metric (the same request count in every run) stays exact
    t = compare.baseline_from_runs(runs).set_index(["cell_id", "metric"])
    assert t.loc[("a", "hits"), "kind"] == "abs"
    # hits are a share of the reads: the hit rate's floor in counts (0.002 x 100 reads)
    assert t.loc[("a", "hits"), "tolerance"] == pytest.approx(compare.FLOOR_ABS["hit_rate"] * 100)
    assert t.loc[("a", "reads_total"), "kind"] == "exact"
    assert "throughput_ops_s" not in set(b["metric"])
    with pytest.raises(compare.CompareError, match="at least 2 runs"):
        compare.baseline_from_runs(runs[:1])
    with pytest.raises(compare.CompareError, match="cell b is missing"):
        compare.baseline_from_runs([runs[0], runs[1].iloc[:1]])


def test_refloor_raises_narrow_timing_dependent_checks_only() -> None:
    """A baseline made with the old floors: disk hits of a timing-dependent cell checked to 0.2 % of
    themselves (3.7 of 1,853) get the hit rate's floor in counts (0.2 % of 9,992 reads); a loss part
    its 0.5 pp floor; exact checks and wider tolerances stay."""
    cols = compare.BASELINE_COLUMNS
    old = pd.DataFrame([["w", "reads_total", 9992.0, "exact", 0.0], ["w", "disk_hits", 1853.0, "abs", 3.706],
                        ["w", "hits", 8139.0, "abs", 30.0], ["w", "loss_policy_pp", 2.94, "abs", 0.249],
                        ["w", "hit_rate", 0.81, "abs", 0.002], ["x", "hits", 500.0, "exact", 0.0]], columns=cols)
    r = compare.refloor(old).set_index(["cell_id", "metric"])
    assert r.loc[("w", "disk_hits"), "tolerance"] == pytest.approx(0.002 * 9992)
    assert r.loc[("w", "hits"), "tolerance"] == 30.0
    assert r.loc[("w", "loss_policy_pp"), "tolerance"] == 0.5
    assert r.loc[("w", "hit_rate"), "tolerance"] == 0.002
    assert (r.loc[("x", "hits"), "kind"], r.loc[("x", "hits"), "tolerance"]) == ("exact", 0.0)
    assert (r.loc[("w", "reads_total"), "kind"], r.loc[("w", "reads_total"), "tolerance"]) == ("exact", 0.0)


def test_widen_never_narrows_the_old_tolerances() -> None:
    cols = compare.BASELINE_COLUMNS
    old = pd.DataFrame([["a", "hits", 100.0, "abs", 30.0], ["b", "hits", 50.0, "exact", 0.0],
                        ["c", "hits", 10.0, "abs", 2.0], ["d", "hits", 7.0, "abs", 1.0]], columns=cols)
    new = pd.DataFrame([["a", "hits", 110.0, "abs", 12.0], ["b", "hits", 50.0, "exact", 0.0],
                        ["c", "hits", 11.0, "abs", 6.0], ["d", "hits", 7.0, "exact", 0.0],
                        ["e", "hits", 3.0, "abs", 1.0]], columns=cols)
    w = compare.widen(new, old).set_index("cell_id")
    # the new median with the old, wider tolerance; exact where both were; the new, wider one kept;
    # an exact check the old baseline had as a spread stays a spread; a new check as it is
    assert (w.loc["a", "value"], w.loc["a", "kind"], w.loc["a", "tolerance"]) == (110.0, "abs", 30.0)
    assert (w.loc["b", "kind"], w.loc["b", "tolerance"]) == ("exact", 0.0)
    assert w.loc["c", "tolerance"] == 6.0
    assert (w.loc["d", "kind"], w.loc["d", "tolerance"]) == ("abs", 1.0)
    assert (w.loc["e", "kind"], w.loc["e", "tolerance"]) == ("abs", 1.0)


def test_compare_skips_the_cells_named_and_says_so(tmp_path) -> None:
    run = _rows([50, 70])
    f = tmp_path / "cells.csv"
    run.to_csv(f, index=False)
    base = compare.baseline_from_runs([run, _rows([50, 71])], deterministic=lambda cell: True)
    base.loc[base["cell_id"] == "b", "value"] += 1000           # b would fail
    bf = tmp_path / "base.csv"
    base.to_csv(bf, index=False)
    assert CliRunner().invoke(app, ["compare", str(f), str(bf)]).exit_code == 1
    r = CliRunner().invoke(app, ["compare", str(f), str(bf), "--skip-cell", "b"])
    assert r.exit_code == 0, r.output
    n_b = int((base["cell_id"] == "b").sum())
    assert f"not checked: b ({n_b} checks skipped)" in r.output
    assert f"{len(base) - n_b} of {len(base) - n_b} checks within tolerance" in r.output
    r = CliRunner().invoke(app, ["compare", str(f), str(bf), "--skip-cell", "zz"])
    assert r.exit_code == 2 and "--skip-cell zz: the baseline has no such cell" in r.output


def test_report_prints_the_decomposed_table(tmp_path) -> None:
    df = pd.DataFrame([
        {"approach": "lru", "workload": "readonly", "zipf_theta": 0.99, "mem_ratio": 0.5, "hit_rate": 0.6,
         "opt_hit_rate": 0.8, "loss_pp": 20.0, "loss_lru_pp": 12.0, "loss_overhead_pp": 5.0,
         "loss_policy_pp": 3.0, "throughput_ops_s": 20000.0, "skew_top10_share": 0.6,
         "skew_fitted_theta": 0.99, "status": "ok", "ac_lost_items": 0, "ac_refused_items": 0},
        {"approach": "logging", "workload": "readonly", "zipf_theta": 0.99, "mem_ratio": 0.5, "status": "oom_killed"},
        {"approach": "alru", "workload": "readonly", "zipf_theta": 0.99, "mem_ratio": 0.5, "status": "ok",
         "ac_refused_items": 3, "ac_lost_items": 2},
        {"approach": "memcached", "workload": "readonly", "zipf_theta": 0.99, "mem_ratio": 0.5, "status": "ok",
         "ac_refused_items": 0, "ac_lost_items": 50},
    ])
    f = tmp_path / "cells.csv"
    df.to_csv(f, index=False)
    r = CliRunner().invoke(app, ["report", str(f)])
    assert r.exit_code == 0, r.output
    line = next(ln for ln in r.output.splitlines() if ln.strip("│ ").startswith("lru"))
    for text in ("0.600", "0.800", "20.0", "12.0", "5.0", "3.0", "20,000"):
        assert text in line
    assert "oom_killed" in next(ln for ln in r.output.splitlines() if "logging" in ln)
    alru = next(ln for ln in r.output.splitlines() if ln.strip("│ ").startswith("alru"))
    assert "refused 3" in alru and "lost 2" in alru
    # the stock cache drops items by design: not flagged
    assert "lost" not in next(ln for ln in r.output.splitlines() if ln.strip("│ ").startswith("memcached"))
    r = CliRunner().invoke(app, ["report", str(tmp_path / "nope.csv")])
    assert r.exit_code == 2 and "no such file" in r.output


def test_plot_of_a_run_with_no_finished_cell(tmp_path: Path) -> None:
    """Every cell OOM-killed: plot says so (and exits 2), not that columns are missing."""
    from typer.testing import CliRunner

    from acbench.cli import app
    from acbench.results import RunDir
    rd = RunDir(tmp_path / "run")
    for cid in ("a", "b"):
        rd.append({"cell_id": cid, "status": "oom_killed", "approach": "lru", "error": "oom_killed: ..."})
    r = CliRunner().invoke(app, ["plot", str(rd.path)])
    assert r.exit_code == 2
    assert "no finished cell to plot: 2 cells, 2 oom_killed (each cell's error.txt under cells/ says why)" in \
        " ".join(r.output.split())
