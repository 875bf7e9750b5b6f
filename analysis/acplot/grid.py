"""The Fig-3-style grid: loss (or any column, e.g. hit rate) vs skew, one panel per memory
ratio, one line per approach (Zhang et al., ICDE 2015, Fig. 3 layout)."""
from __future__ import annotations

import os
from fractions import Fraction
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from acplot.cells import approach_order
from acplot.evidence import t_interval
from acplot.loss import ResultsError
from acplot.style import approach_styles, legend_above, plot_line

MEM_RATIOS = (0.75, 0.5, 0.25)


def plot_loss_grid(table: pd.DataFrame, out: str | os.PathLike[str], workload: str | None = None,
                   mem_ratios: tuple[float, ...] = MEM_RATIOS, title: str | None = None) -> list[Path]:
    """Draws loss_pp against zipf_theta (one panel per memory ratio, one line
    per approach) and writes OUT.png and OUT.pdf; returns both paths. Rows of
    several workloads need `workload` to pick one. Repeated cells are averaged.
    title: above the legend (e.g. acplot.style.scale_title of the rows)."""
    if "loss_pp" not in table.columns:
        raise ResultsError("the table has no loss_pp column: build it with loss_table() first")
    return plot_grid(table, out, "loss_pp", "loss vs OPT (pp)", workload, mem_ratios, title)


def plot_grid(table: pd.DataFrame, out: str | os.PathLike[str], value: str, ylabel: str,
              workload: str | None = None, mem_ratios: tuple[float, ...] = MEM_RATIOS,
              title: str | None = None) -> list[Path]:
    """The same grid for any column `value` of the table (e.g. hit_rate)."""
    if value not in table.columns:
        raise ResultsError(f"the table has no {value} column")
    df = table
    if workload is not None:
        df = df[df["workload"] == workload]
        if df.empty:
            raise ResultsError(f"no rows for workload {workload!r}")
    elif df["workload"].nunique() > 1:
        raise ResultsError(f"rows of several workloads ({', '.join(sorted(map(str, df['workload'].unique())))}): "
                           "pass workload=")
    fig, axes = plt.subplots(1, len(mem_ratios), figsize=(4 * len(mem_ratios), 3.4), sharey=True, squeeze=False)
    styles = approach_styles(list(map(str, df["approach"].unique())))
    for ax, ratio in zip(axes[0], mem_ratios):
        panel = df[(df["mem_ratio"] - ratio).abs() < 1e-9]
        for approach in approach_order(list(map(str, panel["approach"].unique()))):
            rows = panel[panel["approach"].astype(str) == approach]
            ivs = rows.groupby("zipf_theta", sort=True)[value].apply(lambda v: t_interval(v.dropna()))
            plot_line(ax, ivs.index, [iv.mean for iv in ivs], approach, styles[approach])
            if any(iv.n > 1 for iv in ivs):      # repetitions: their mean's 95 % t-interval, shaded
                lo = [iv.lo if iv.n > 1 else iv.mean for iv in ivs]
                hi = [iv.hi if iv.n > 1 else iv.mean for iv in ivs]
                ax.fill_between(ivs.index, lo, hi, color=styles[approach]["color"], alpha=0.18, linewidth=0)
        ax.set_title(f"memory = {Fraction(ratio).limit_denominator(16)} of data")
        ax.set_xlabel("skew θ")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(ylabel)
    handles, labels = axes[0][0].get_legend_handles_labels()
    for ax in axes[0][1:]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.tight_layout()
    legend_above(fig, handles, labels, title=title if title is not None else
                 (f"workload {workload}" if workload is not None else None))
    base = Path(out)
    base.parent.mkdir(parents=True, exist_ok=True)
    paths = [base.with_name(base.name + ".png"), base.with_name(base.name + ".pdf")]
    for p in paths:
        fig.savefig(p, bbox_inches="tight")
    plt.close(fig)
    return paths
