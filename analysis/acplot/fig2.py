"""Fig 2 of Zhang et al. (ICDE 2015): the CPU overhead of each access-tracking method, per access, in
instructions, L1I misses, L1D misses, time and CPU time (user + system), from the rows `acbench fig2`
writes (fig2.csv); one panel per Zipf θ. Also reads the older tables (one θ, baseline "none", no
CPU time columns)."""
from __future__ import annotations

import math
import os
from pathlib import Path

import pandas as pd

from acplot.loss import ResultsError
from acplot.style import PALETTE

# one hatch per metric, so that the bars part in grayscale too
HATCHES = ("", "//", "..", "xx", "\\\\")

METRICS = (("instructions_overhead_pct", "instructions"), ("l1i_overhead_pct", "L1I misses"),
           ("l1d_overhead_pct", "L1D misses"), ("time_overhead_pct", "time per read"),
           ("cpu_overhead_pct", "CPU time, user + system"))
REQUIRED = ("tracking_method", "instructions_per_access", "l1i_misses_per_access", "l1d_misses_per_access",
            "ns_per_access", *(c for c, _ in METRICS[:4]), "counter_source")
# An L1 overhead whose method or baseline has fewer misses per read than this is a ratio of a
# handful of misses (the committed 100k-record table: L1I < 0.001 per read, +155 % from noise):
# its bar is left out, a grey mark says so.
MISS_FLOOR = 0.01
FLOORED = {"l1i_overhead_pct": "l1i_misses_per_access", "l1d_overhead_pct": "l1d_misses_per_access"}
NOISE_COLOR = "#BBBBBB"
# where `make paper` keeps the committed result (relative to the repository root)
COMMITTED = Path("experiments/results/fig2/fig2.csv")


def fig2_path(default_root: Path | None = None) -> Path | None:
    """ACBENCH_FIG2 (a fig2.csv or the directory holding it), else the committed result under the
    repository root, else None."""
    env = os.environ.get("ACBENCH_FIG2")
    if env:
        p = Path(env)
        return p / "fig2.csv" if p.is_dir() else p
    if default_root is None:
        from acbench import paths   # the checkout acbench works on (its home)
        default_root = paths.top()
    p = default_root / COMMITTED
    return p if p.exists() else None


def load_fig2(path: Path) -> pd.DataFrame:
    if not path.exists():
        raise ResultsError(f"{path}: no such file (write it with `acbench fig2 --out DIR`)")
    df = pd.read_csv(path)
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise ResultsError(f"{path}: not a Fig 2 table of `acbench fig2` (lacks {', '.join(missing)})")
    return df


def baseline_of(df: pd.DataFrame) -> str:
    """The method the overheads are relative to (tables before the baseline column: none)."""
    if "baseline" in df.columns and df["baseline"].notna().any():
        return str(df["baseline"].dropna().iloc[0])
    return "none"


def thetas_of(df: pd.DataFrame) -> list[float | None]:
    """The θ values, most skewed first ([None] for a table without zipf_theta)."""
    if "zipf_theta" not in df.columns:
        return [None]
    return sorted(df["zipf_theta"].dropna().unique(), reverse=True) or [None]


def _below(v: object) -> bool:
    return isinstance(v, (int, float)) and not math.isnan(v) and v < MISS_FLOOR


def bar_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per bar the figure would draw: theta, tracking_method, metric (column), label, value
    (the overhead in %), shown (False: left out, under MISS_FLOOR L1 misses per read in the method
    or in the baseline of its θ), why. The baseline has no bars; metrics the table lacks neither."""
    base = baseline_of(df)
    metrics = [(c, lab) for c, lab in METRICS if c in df.columns]
    out = []
    for theta in thetas_of(df):
        group = df if theta is None else df[df["zipf_theta"] == theta]
        brow = group[group["tracking_method"] == base]
        b = brow.iloc[0] if len(brow) else None
        for _, r in group[group["tracking_method"] != base].iterrows():
            for col, label in metrics:
                v = float(r[col]) if pd.notna(r[col]) else float("nan")
                low = []
                if col in FLOORED:
                    src = FLOORED[col]
                    low = [(n, x[src]) for n, x in ((base, b), (r["tracking_method"], r))
                           if x is not None and _below(x.get(src))]
                why = "; ".join(f"{n}: {v:.4g} {label} per read < {MISS_FLOOR:g}" for n, v in low)
                out.append({"theta": theta, "tracking_method": r["tracking_method"], "metric": col, "label": label,
                            "value": v, "shown": not why, "why": why})
    return pd.DataFrame(out, columns=["theta", "tracking_method", "metric", "label", "value", "shown", "why"])


def draw_fig2(df: pd.DataFrame):  # -> matplotlib Figure
    """Grouped bars, one panel per θ (most skewed on top): one group per tracking method (the
    baseline left out), one bar per metric, overhead in % of the baseline; an L1 bar under the noise
    floor (MISS_FLOOR) is left out and a grey x marks its place; a symmetric-log axis when one bar
    exceeds 300 %."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    bars = bar_table(df)
    thetas = thetas_of(df)
    metrics = [(c, lab) for c, lab in METRICS if c in df.columns]
    methods = list(dict.fromkeys(bars["tracking_method"]))
    width = 0.8 / len(metrics)
    fig, axes = plt.subplots(len(thetas), 1, sharex=True, sharey=True, squeeze=False,
                             figsize=(max(6.0, 1.1 * len(methods) + 2), 0.4 + 3.0 * len(thetas)))
    axes = [row[0] for row in axes]
    for ax, theta in zip(axes, thetas):
        mine = bars if theta is None else bars[bars["theta"] == theta]
        for k, (col, label) in enumerate(metrics):
            m = mine[mine["metric"] == col].set_index("tracking_method")
            xs = [i + (k - (len(metrics) - 1) / 2) * width for i in range(len(methods))]
            shown = [(x, m.loc[n, "value"]) for x, n in zip(xs, methods) if n in m.index and m.loc[n, "shown"]]
            ax.bar([x for x, _ in shown], [0.0 if math.isnan(v) else v for _, v in shown], width,
                   color=PALETTE[k % len(PALETTE)],
                   hatch=HATCHES[k % len(HATCHES)], edgecolor="white", linewidth=0)
            hidden = [x for x, n in zip(xs, methods) if n in m.index and not m.loc[n, "shown"]]
            ax.plot(hidden, [0.0] * len(hidden), linestyle="none", marker="x", color=NOISE_COLOR, markersize=5)
        ax.set_xticks(range(len(methods)))
        ax.set_xticklabels(methods, rotation=25, ha="right")
        ax.axhline(0, color="black", linewidth=0.6)
        if theta is not None:
            ax.set_title(f"Zipf θ = {theta:g}", fontsize="small")
        ax.set_ylabel(f"overhead per access\n(% of {baseline_of(df)})")
    if (bars.loc[bars["shown"], "value"].abs() > 300).any():
        axes[0].set_yscale("symlog", linthresh=10)
    handles = [Patch(facecolor=PALETTE[k % len(PALETTE)], hatch=HATCHES[k % len(HATCHES)], edgecolor="white",
                     linewidth=0) for k in range(len(metrics))]
    labels = [label for _, label in metrics]
    handles.append(Line2D([], [], linestyle="none", marker="x", color=NOISE_COLOR))
    labels.append(f"no bar: < {MISS_FLOOR:g} L1 misses per read\n(method or baseline): noise")
    axes[0].legend(handles, labels, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize="small")
    src = str(df["counter_source"].iloc[0])
    fig.suptitle(f"CPU overhead of access tracking (vs {baseline_of(df)})\n{src}", fontsize="small")
    fig.tight_layout()
    return fig


def plot_fig2(df: pd.DataFrame, stem: Path) -> list[Path]:
    """draw_fig2, written to STEM.png and STEM.pdf."""
    import matplotlib.pyplot as plt

    fig = draw_fig2(df)
    stem.parent.mkdir(parents=True, exist_ok=True)
    out = [stem.with_suffix(".png"), stem.with_suffix(".pdf")]
    for p in out:
        fig.savefig(p, bbox_inches="tight", dpi=130)
    plt.close(fig)
    return out
