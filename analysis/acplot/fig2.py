"""Fig 2 of Zhang et al. (ICDE 2015): the CPU overhead of each access-tracking method, per access, in four metrics
(instructions, L1I misses, L1D misses, time), from the rows `acbench fig2` writes (fig2.csv)."""
from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from acplot.loss import ResultsError
from acplot.style import PALETTE

# one hatch per metric, so that the bars part in grayscale too
HATCHES = ("", "//", "..", "xx", "\\\\")

METRICS = (("instructions_overhead_pct", "instructions"), ("l1i_overhead_pct", "L1I misses"),
           ("l1d_overhead_pct", "L1D misses"), ("time_overhead_pct", "time"))
REQUIRED = ("tracking_method", "instructions_per_access", "l1i_misses_per_access", "l1d_misses_per_access",
            "ns_per_access", *(c for c, _ in METRICS), "counter_source")
# where `make paper` keeps the committed result (relative to the repository root)
COMMITTED = Path("experiments/results/fig2/fig2.csv")


def fig2_path(default_root: Path | None = None) -> Path | None:
    """ACBENCH_FIG2 (a fig2.csv or the directory holding it), else the committed result under the
    repository root, else None."""
    env = os.environ.get("ACBENCH_FIG2")
    if env:
        p = Path(env)
        return p / "fig2.csv" if p.is_dir() else p
    root = default_root or Path(__file__).resolve().parents[2]
    p = root / COMMITTED
    return p if p.exists() else None


def load_fig2(path: Path) -> pd.DataFrame:
    if not path.exists():
        raise ResultsError(f"{path}: no such file (write it with `acbench fig2 --out DIR`)")
    df = pd.read_csv(path)
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise ResultsError(f"{path}: not a Fig 2 table of `acbench fig2` (lacks {', '.join(missing)})")
    return df


def plot_fig2(df: pd.DataFrame, stem: Path) -> list[Path]:
    """Grouped bars: one group per tracking method (the baseline left out), one bar per metric,
    overhead in % of the baseline; a symmetric-log axis when one bar exceeds 300 %."""
    import matplotlib.pyplot as plt

    rows = df[df["tracking_method"] != "none"].reset_index(drop=True)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(rows) + 2), 3.6))
    width = 0.8 / len(METRICS)
    for k, (col, label) in enumerate(METRICS):
        xs = [i + (k - (len(METRICS) - 1) / 2) * width for i in range(len(rows))]
        ax.bar(xs, rows[col].fillna(0.0), width, label=label, color=PALETTE[k % len(PALETTE)],
               hatch=HATCHES[k % len(HATCHES)], edgecolor="white", linewidth=0)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(rows["tracking_method"], rotation=20, ha="right")
    ax.axhline(0, color="black", linewidth=0.6)
    ax.set_ylabel("overhead per access (%)")
    if (rows[[c for c, _ in METRICS]].abs() > 300).any().any():
        ax.set_yscale("symlog", linthresh=10)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize="small")
    src = str(df["counter_source"].iloc[0])
    ax.set_title(f"CPU overhead of access tracking (vs stock memcached)\n{src}", fontsize="small")
    fig.tight_layout()
    stem.parent.mkdir(parents=True, exist_ok=True)
    out = [stem.with_suffix(".png"), stem.with_suffix(".pdf")]
    for p in out:
        fig.savefig(p, bbox_inches="tight", dpi=130)
    plt.close(fig)
    return out
