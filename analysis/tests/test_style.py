"""Figures that print: every approach differs from the others of a figure in colour (colour-blind
safe), marker and line style; one point is a marker, not a one-dot line; legends in balanced rows;
titles with workload, records and item size; no backend forced on import."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from acbench.approaches import APPROACHES
from acplot.style import LINESTYLES, MARKERS, PALETTE, approach_styles, legend_layout, plot_line, scale_title


def test_each_approach_its_own_colour_marker_and_line_style() -> None:
    everything = approach_styles(list(APPROACHES))
    looks = [(s["marker"], s["linestyle"], s["color"]) for s in everything.values()]
    assert len(set(looks)) == len(looks)                      # all approaches at once: each distinct
    figure = [a for a, x in APPROACHES.items() if x.figures]   # the paper's figures' approaches
    styles = approach_styles(figure)
    for part in ("color", "marker"):
        assert len({styles[a][part] for a in figure}) == len(figure), part
    order = list(styles)
    assert all(styles[a]["linestyle"] != styles[b]["linestyle"] for a, b in zip(order, order[1:]))
    assert styles["alru-hstore"]["color"] != styles["alru"]["color"]
    assert all(s["color"] in PALETTE and s["marker"] in MARKERS and s["linestyle"] in LINESTYLES
               for s in everything.values())
    # the same approaches look the same whatever order they come in; unknown names come last
    assert approach_styles(["logging", "lru"]) == approach_styles(["lru", "logging"])
    assert list(approach_styles(["mine", "lru"])) == ["lru", "mine"]


def test_one_point_is_a_marker() -> None:
    fig, ax = plt.subplots()
    plot_line(ax, [0.99], [3.0], "lru", approach_styles(["lru"])["lru"])
    plot_line(ax, [0.5, 0.99], [4.0, 3.0], "alru", approach_styles(["alru"])["alru"])
    one, two = ax.get_lines()
    assert one.get_linestyle() == "None" and one.get_marker() == approach_styles(["lru"])["lru"]["marker"]
    assert two.get_linestyle() == approach_styles(["alru"])["alru"]["linestyle"]
    plt.close(fig)


@pytest.mark.parametrize("n,fit,cols", [(9, 7, 5), (8, 7, 4), (10, 7, 5), (3, 7, 3), (7, 7, 7), (15, 7, 5)])
def test_legend_rows_balanced(n: int, fit: int, cols: int) -> None:
    assert legend_layout(n, fit * 1.7 + 0.1) == cols
    rows = -(-n // cols)
    assert n - (rows - 1) * cols >= cols / 2 or rows == 1     # the last row at least half full


def test_titles_say_workload_and_scale() -> None:
    df = pd.DataFrame({"p_recordcount": [20000, 20000], "p_fieldcount": [10, 10], "p_fieldlength": [100, 100]})
    assert scale_title(df, "readonly") == "workload readonly, 20,000 records of 1,000 B"
    assert scale_title(df.drop(columns=["p_fieldcount"]), "readonly") == "workload readonly, 20,000 records"
    assert scale_title(pd.DataFrame({"x": [1]}), "w") == "workload w"


def _frame(thetas: list[float], ratios: list[float]) -> pd.DataFrame:
    rows = []
    for a in ("memcached", "lru", "alru-hstore", "alru", "logging", "ospaging", "ospaging-file", "effpaging", "vma"):
        for t in thetas:
            for r in ratios:
                rows.append({"approach": a, "workload": "readonly", "zipf_theta": t, "mem_ratio": r, "hits": 800,
                             "disk_hits": 200, "misses": 0, "opt_hit_rate": 0.9, "throughput_ops_s": 1e5,
                             "operations": 1000, "cpu_user_s": 0.1, "cpu_sys_s": 0.0, "disk_read_ios": 10,
                             "loss_pp": 10.0, "loss_lru_pp": 5.0, "loss_overhead_pp": 3.0, "loss_policy_pp": 2.0,
                             "p_recordcount": 20000, "p_fieldcount": 10, "p_fieldlength": 100, "status": "ok"})
    return pd.DataFrame(rows)


def _figures(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    kept: list[Any] = []
    monkeypatch.setattr(plt, "close", lambda fig=None: kept.append(fig))
    return kept


def test_fig3_and_fig4_of_one_theta(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from acbench.figures import plot_fig3, plot_fig4
    kept = _figures(monkeypatch)
    plot_fig3(_frame([0.99], [0.5]), tmp_path)
    plot_fig4(_frame([0.99], [0.5]), tmp_path)
    assert len(kept) == 2
    for fig in kept:
        lines = [ln for ax in fig.axes for ln in ax.get_lines()]
        assert lines and all(ln.get_linestyle() == "None" for ln in lines)     # one point each: markers only
        legend = fig.legends[0]
        assert legend.get_title().get_text() == "workload readonly, 20,000 records of 1,000 B"
        markers = {ln.get_marker() for ln in legend.legend_handles}
        assert len(markers) == 9
        ncol = legend._ncols
        assert 9 - (-(-9 // ncol) - 1) * ncol >= ncol / 2          # no entry alone on the last row
    plt.close("all")


def test_fig4_spill_read_panels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fig 4 has the spill reads' p50 and p99 panels (p99 on a log axis): lines of the approaches that read
    through the I/O engine, none of one whose reads are page faults; rows older than the measurement get
    empty panels."""
    from acbench.figures import FIG4_PANELS, fig4_frame, plot_fig4
    kept = _figures(monkeypatch)
    df = _frame([0.99], [0.25, 0.5])
    assert fig4_frame(df)[["spill_read_us_p50", "spill_read_us_p99"]].isna().all().all()
    paging = df["approach"].isin(["ospaging", "ospaging-file", "effpaging", "vma", "memcached"])
    df["spill_read_us_p50"] = df["spill_read_us_p99"] = float("nan")
    df.loc[~paging, "spill_read_us_p50"], df.loc[~paging, "spill_read_us_p99"] = 70.0, 900.0
    plot_fig4(df, tmp_path)
    (fig,) = kept
    cols = [c for c, _ in FIG4_PANELS]
    p50, p99 = fig.axes[cols.index("spill_read_us_p50")], fig.axes[cols.index("spill_read_us_p99")]
    assert p50.get_ylabel() == "spill read latency p50 (µs)" and p99.get_yscale() == "log"
    drawn = [ln for ln in p99.get_lines() if not pd.isna(ln.get_ydata()).all()]
    assert sorted(ln.get_label() for ln in drawn) == ["alru", "alru-hstore", "logging", "lru"]
    assert all(list(ln.get_ydata()) == [900.0, 900.0] for ln in drawn)
    plt.close("all")


def test_fig4_one_figure_per_regime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows of the native disk and of the emulated hard disk (regime hdd) are drawn apart, each figure
    named and titled by its regime; the tables keep them apart too; rows without a regime are native."""
    from acbench.figures import fig4_tables_frame, plot_fig4
    kept = _figures(monkeypatch)
    native, hdd = _frame([0.99], [0.5]), _frame([0.99], [0.5])
    hdd["regime"], hdd["throughput_ops_s"] = "hdd", 150.0
    paths = plot_fig4(pd.concat([native, hdd], ignore_index=True), tmp_path)
    assert sorted(p.name for p in paths) == ["fig4-readonly-hdd.pdf", "fig4-readonly-hdd.png",
                                             "fig4-readonly.pdf", "fig4-readonly.png"]
    titles = sorted(fig.legends[0].get_title().get_text() for fig in kept)
    assert titles == ["workload readonly, 20,000 records of 1,000 B",
                      "workload readonly, hdd regime, 20,000 records of 1,000 B"]
    tput = [sorted({float(y) for ln in fig.axes[0].get_lines() for y in ln.get_ydata()}) for fig in kept]
    assert sorted(tput) == [[150.0], [1e5]]                      # no mean across the regimes
    frame = fig4_tables_frame(pd.concat([native, hdd], ignore_index=True))
    assert sorted(frame["workload"].unique()) == ["readonly", "readonly, hdd regime"]
    plt.close("all")


def test_no_backend_forced_on_import() -> None:
    code = ("import matplotlib; matplotlib.use('svg'); import acbench.figures, acplot.grid, acplot.fig2, acplot; "
            "print(matplotlib.get_backend())")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.strip() == "svg", p.stderr
