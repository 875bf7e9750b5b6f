"""The Fig-3-style grid: loss vs skew, one panel per memory ratio, one line
per approach (Zhang et al., ICDE 2015, Fig. 3 layout)."""
from __future__ import annotations

import os
from fractions import Fraction
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from acplot.loss import ResultsError  # noqa: E402

MEM_RATIOS = (0.75, 0.5, 0.25)


def plot_loss_grid(table: pd.DataFrame, out: str | os.PathLike[str], workload: str | None = None,
                   mem_ratios: tuple[float, ...] = MEM_RATIOS) -> list[Path]:
    """Draws loss_pp against zipf_theta (one panel per memory ratio, one line
    per approach) and writes OUT.png and OUT.pdf; returns both paths. Rows of
    several workloads need `workload` to pick one. Repeated cells are averaged."""
    if "loss_pp" not in table.columns:
        raise ResultsError("the table has no loss_pp column: build it with loss_table() first")
    df = table
    if workload is not None:
        df = df[df["workload"] == workload]
        if df.empty:
            raise ResultsError(f"no rows for workload {workload!r}")
    elif df["workload"].nunique() > 1:
        raise ResultsError(f"rows of several workloads ({', '.join(sorted(map(str, df['workload'].unique())))}): "
                           "pass workload=")
    fig, axes = plt.subplots(1, len(mem_ratios), figsize=(4 * len(mem_ratios), 3.4), sharey=True, squeeze=False)
    for ax, ratio in zip(axes[0], mem_ratios):
        panel = df[(df["mem_ratio"] - ratio).abs() < 1e-9]
        for approach, rows in panel.groupby("approach", sort=True):
            line = rows.groupby("zipf_theta", sort=True)["loss_pp"].mean()
            ax.plot(line.index, line.values, marker="o", label=str(approach))
        ax.set_title(f"memory = {Fraction(ratio).limit_denominator(16)} of data")
        ax.set_xlabel("skew θ")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("loss vs OPT (pp)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    for ax in axes[0][1:]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if handles:
        fig.legend(handles, labels, loc="upper center", ncol=min(len(labels), 6), frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 0.88))
    base = Path(out)
    base.parent.mkdir(parents=True, exist_ok=True)
    paths = [base.with_name(base.name + ".png"), base.with_name(base.name + ".pdf")]
    for p in paths:
        fig.savefig(p)
    plt.close(fig)
    return paths
