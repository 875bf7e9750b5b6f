"""The loss table's values and the grid's files."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from acplot import ResultsError, loss_table, plot_loss_grid


def synthetic() -> pd.DataFrame:
    rows = []
    for approach, base in (("lru", 0), ("alru", 50)):
        for theta in (0.5, 0.99, 1.5):
            for ratio in (0.75, 0.5, 0.25):
                hits = 700 + base + int(theta * 100) - int((1 - ratio) * 200)
                rows.append({"approach": approach, "zipf_theta": theta, "mem_ratio": ratio, "workload": "C",
                             "hits": hits, "disk_hits": 1000 - hits, "opt_hit_rate": 0.9})
    return pd.DataFrame(rows)


def test_loss_values_exact() -> None:
    t = loss_table(synthetic())
    row = t[(t.approach == "lru") & (t.zipf_theta == 0.5) & (t.mem_ratio == 0.25)].iloc[0]
    # hits = 700 + 50 - 150 = 600 of 1000 -> hit rate 0.6, loss 100 * (0.9 - 0.6) = 30 pp
    assert row["hits"] == 600 and row["hit_rate"] == 0.6
    assert row["loss_pp"] == pytest.approx(30.0, abs=1e-12)
    row = t[(t.approach == "alru") & (t.zipf_theta == 1.5) & (t.mem_ratio == 0.75)].iloc[0]
    # 700 + 50 + 150 - 50 = 850 -> loss 5 pp
    assert row["hit_rate"] == 0.85 and row["loss_pp"] == pytest.approx(5.0, abs=1e-12)
    assert len(t) == 18 and list(t.columns[-2:]) == ["hit_rate", "loss_pp"]


def test_grid_files(tmp_path: Path) -> None:
    paths = plot_loss_grid(loss_table(synthetic()), tmp_path / "figs" / "fig3")
    assert [p.name for p in paths] == ["fig3.png", "fig3.pdf"]
    for p in paths:
        assert p.stat().st_size > 1000
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert paths[1].read_bytes()[:5] == b"%PDF-"


def test_opt_from_a_trace(tmp_path: Path) -> None:
    from acbench import traceio
    path = tmp_path / "t.actrace"
    traceio.write_actrace(path, traceio.actrace_records([1, 2, 1, 2, 3, 1]))
    df = pd.DataFrame([{"approach": "lru", "zipf_theta": 0.9, "mem_ratio": 0.5, "workload": "C",
                        "hits": 1, "disk_hits": 3, "trace": str(path), "opt_capacity": 1}])
    t = loss_table(df)
    # bypass OPT with one slot: keep 1 across 1,2,1 (hit), then 2 is gone; keep 1 again for the last: 2 hits of 6
    assert t["opt_hit_rate"].iloc[0] == pytest.approx(2 / 6)
    assert t["loss_pp"].iloc[0] == pytest.approx(100 * (2 / 6 - 0.25))


def test_errors() -> None:
    df = synthetic()
    with pytest.raises(ResultsError, match="^results lack column\\(s\\) disk_hits; required: approach, zipf_theta, "
                                           "mem_ratio, workload, hits, disk_hits and opt_hit_rate"):
        loss_table(df.drop(columns=["disk_hits"]))
    with pytest.raises(ResultsError, match="^results need opt_hit_rate \\(0..1\\) or both trace and opt_capacity"):
        loss_table(df.drop(columns=["opt_hit_rate"]))
    with pytest.raises(ResultsError, match="^opt_hit_rate must lie in 0..1"):
        loss_table(df.assign(opt_hit_rate=90.0))
    with pytest.raises(ResultsError, match="^rows with hits \\+ disk_hits = 0 have no hit rate \\(approach lru\\)"):
        loss_table(df.head(1).assign(hits=0, disk_hits=0))
    with pytest.raises(ResultsError, match="^rows of several workloads \\(A, C\\): pass workload="):
        plot_loss_grid(loss_table(pd.concat([df, df.assign(workload="A")])), "/nonexistent/x")


def test_grid_of_another_column(tmp_path: Path) -> None:
    from acplot.grid import plot_grid
    from acplot.style import approach_styles
    png, pdf = plot_grid(loss_table(synthetic()), tmp_path / "hr", "hit_rate", "hit rate", workload="C")
    assert png.name == "hr.png" and png.stat().st_size > 1000 and pdf.stat().st_size > 1000
    with pytest.raises(ResultsError, match="^the table has no nope column"):
        plot_grid(synthetic(), tmp_path / "x", "nope", "?")
    # looks follow the harness's order, whatever order the names come in
    assert approach_styles(["logging", "lru"]) == approach_styles(["lru", "logging"])


def test_grid_shades_the_interval_of_repeated_cells(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Three repetitions per cell: the line is their mean and the band its 95 % t-interval; one
    repetition: no band."""
    import matplotlib.axes
    bands = []
    real = matplotlib.axes.Axes.fill_between
    monkeypatch.setattr(matplotlib.axes.Axes, "fill_between",
                        lambda self, x, lo, hi, **kw: bands.append((list(x), list(lo), list(hi))) or real(self, x, lo, hi, **kw))
    reps = pd.concat([loss_table(synthetic()).assign(loss_pp=lambda d, k=k: d.loss_pp + k, repetition=k)
                      for k in (-1.0, 0.0, 1.0)], ignore_index=True)
    plot_loss_grid(reps[reps.approach == "lru"], tmp_path / "reps")
    assert len(bands) == 3                                     # one per memory-ratio panel
    x, lo, hi = bands[2]                                       # M/D 1/4: losses 30-1, 30, 30+1 at θ 0.5
    assert x == [0.5, 0.99, 1.5]
    # s = 1, t(2) = 4.303: half-width 4.303 / sqrt(3) = 2.4843
    assert lo[0] == pytest.approx(30 - 2.4843, abs=1e-3) and hi[0] == pytest.approx(30 + 2.4843, abs=1e-3)
    bands.clear()
    plot_loss_grid(loss_table(synthetic()), tmp_path / "once")
    assert bands == []
