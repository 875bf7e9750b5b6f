"""acplot.fig2 on made-up rows: which bars the figure draws (none under the L1 noise floor), one
panel per θ, the baseline named by the rows (none-flat) or, in tables from before the column, none;
and the committed old-format table still loads and draws."""
from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from acplot.fig2 import MISS_FLOOR, bar_table, baseline_of, draw_fig2, load_fig2, plot_fig2, thetas_of



def rows() -> pd.DataFrame:
    # (method, θ, L1I misses per read, L1D misses per read)
    spec = [("none-flat", 0.99, 0.0002, 17.0), ("none", 0.99, 0.0003, 17.5), ("lru", 0.99, 0.0004, 19.0),
            ("vma", 0.99, 0.02, 0.005),
            ("none-flat", 0.5, 0.05, 20.0), ("none", 0.5, 0.06, 20.5), ("lru", 0.5, 0.2, 22.0),
            ("vma", 0.5, 0.009, 21.0)]
    out = []
    for i, (m, t, l1i, l1d) in enumerate(spec):
        out.append({"tracking_method": m, "zipf_theta": t, "baseline": "none-flat", "instructions_per_access": 700 + i,
                    "l1i_misses_per_access": l1i, "l1d_misses_per_access": l1d, "ns_per_access": 300.0,
                    "instructions_overhead_pct": 10.0 * i, "l1i_overhead_pct": 50.0 + i, "l1d_overhead_pct": 1.0 * i,
                    "time_overhead_pct": 2.0 * i, "cpu_overhead_pct": 3.0 * i,
                    "counter_source": "callgrind cache simulation: I1 32 KiB 8-way"})
    return pd.DataFrame(out)


def test_bars_under_the_floor_are_left_out() -> None:
    assert MISS_FLOOR == 0.01
    b = bar_table(rows())
    # the baseline has no bars; 3 methods x 2 θ x 5 metrics
    assert set(b["tracking_method"]) == {"none", "lru", "vma"} and len(b) == 30
    hidden = b[~b["shown"]].set_index(["theta", "tracking_method", "metric"])["why"].to_dict()
    assert hidden == {
        # θ 0.99: the baseline's 0.0002 L1I misses per read make every L1I ratio noise (vma's 0.02 too)
        (0.99, "none", "l1i_overhead_pct"): "none-flat: 0.0002 L1I misses per read < 0.01; "
                                            "none: 0.0003 L1I misses per read < 0.01",
        (0.99, "lru", "l1i_overhead_pct"): "none-flat: 0.0002 L1I misses per read < 0.01; "
                                           "lru: 0.0004 L1I misses per read < 0.01",
        (0.99, "vma", "l1i_overhead_pct"): "none-flat: 0.0002 L1I misses per read < 0.01",
        # the method's own count under the floor
        (0.99, "vma", "l1d_overhead_pct"): "vma: 0.005 L1D misses per read < 0.01",
        (0.5, "vma", "l1i_overhead_pct"): "vma: 0.009 L1I misses per read < 0.01",
    }
    shown = b[b["shown"]].set_index(["theta", "tracking_method", "metric"])["value"]
    assert shown[(0.5, "lru", "l1i_overhead_pct")] == 56.0       # 0.2 and 0.05 per read: a bar
    assert shown[(0.99, "vma", "cpu_overhead_pct")] == 9.0


def test_figure_draws_the_shown_bars_only() -> None:
    df = rows()
    b = bar_table(df)
    fig = draw_fig2(df)
    try:
        axes = fig.axes[:2]
        assert [ax.get_title() for ax in axes] == ["Zipf θ = 0.99", "Zipf θ = 0.5"]
        assert axes[0].get_ylabel() == "overhead per access\n(% of none-flat)"
        for ax, theta in zip(axes, (0.99, 0.5)):
            mine = b[b["theta"] == theta]
            bars = [p for p in ax.patches if p.get_width() > 0]
            assert len(bars) == int(mine["shown"].sum())
            marks = sum(len(ln.get_xdata()) for ln in ax.lines if ln.get_marker() == "x")
            assert marks == int((~mine["shown"]).sum())
        legend = [t.get_text() for t in axes[0].get_legend().get_texts()]
        assert legend[-1] == "no bar: < 0.01 L1 misses per read\n(method or baseline): noise"
        assert legend[:5] == ["instructions", "L1I misses", "L1D misses", "time per read", "CPU time, user + system"]
    finally:
        plt.close(fig)


def test_old_table_still_draws(tmp_path: Path) -> None:
    # the table committed before the paper-scale run (100k records: one θ, baseline none, no CPU time
    # columns), kept as test data
    df = load_fig2(Path(__file__).parent / "data" / "fig2-100k.csv")
    assert baseline_of(df) == "none" and thetas_of(df) == [0.99]
    b = bar_table(df)
    assert set(b["metric"]) == {"instructions_overhead_pct", "l1i_overhead_pct", "l1d_overhead_pct",
                                "time_overhead_pct"}
    # its L1I misses (< 0.001 per read) are all under the floor, its L1D misses (~17.6) none
    assert not b[b["metric"] == "l1i_overhead_pct"]["shown"].any()
    assert b[b["metric"] == "l1d_overhead_pct"]["shown"].all()
    out = plot_fig2(df, tmp_path / "fig2")
    assert [p.name for p in out] == ["fig2.png", "fig2.pdf"] and all(p.stat().st_size > 0 for p in out)
    # without zipf_theta: one panel, no title
    assert thetas_of(df.drop(columns=["zipf_theta"])) == [None]
    assert len(bar_table(df.drop(columns=["zipf_theta"]))) == len(b)
