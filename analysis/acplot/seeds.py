"""The seed papers' cold tiers beside the paper's: the throughput of the runs of experiments/nvm.toml
and remote.toml (acplot.runs.spec_run finds them) per approach and skew with 95 % intervals over the
repetitions, and its figure. The claims are acplot.nvm's and acplot.remote's."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from acplot.evidence import FAILS, HOLDS, Interval, t_interval

VALUE = "throughput_ops_s"


def wide(df: pd.DataFrame, approaches: tuple[str, ...], workload: str, value: str = VALUE) -> pd.DataFrame:
    """`value` (throughput) per (θ, repetition), one column per approach; only complete rows."""
    d = df[(df["workload"] == workload) & df["approach"].isin(approaches)]
    reps = d["repetition"].fillna(0) if "repetition" in d.columns else pd.Series(0, index=d.index)
    d = d.assign(repetition=reps)
    table = d.pivot_table(index=["zipf_theta", "repetition"], columns="approach", values=value, aggfunc="mean")
    if any(a not in table.columns for a in approaches):
        return pd.DataFrame()
    return table[list(approaches)].dropna(how="any")


def state(iv: Interval) -> str:
    if iv.n < 2:
        return HOLDS if iv.mean > 0 else FAILS
    return HOLDS if iv.lo > 0 else FAILS if iv.hi < 0 else "not decided"


def verdict(states: list[str], detail: str) -> str:
    kind = ("reproduced" if all(s == HOLDS for s in states) else
            "contradicted" if FAILS in states else "not decided")
    return f"{kind} ({detail})"


def missing(df: pd.DataFrame, need: tuple[str, ...], spec: str = "nvm") -> str | None:
    there = set(map(str, df["approach"].unique())) if "approach" in df.columns else set()
    lack = [a for a in need if a not in there]
    if lack:
        return f"not testable with these results: no cells of {', '.join(lack)} (run experiments/{spec}.toml)"
    return None


def throughput_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per workload, θ and approach: mean throughput, its 95 % interval and the repetitions."""
    rows = []
    for (wl, theta, a), g in df.groupby(["workload", "zipf_theta", "approach"]):
        iv = t_interval(g[VALUE])
        rows.append({"workload": wl, "zipf_theta": theta, "approach": a, "throughput_ops_s": iv.mean,
                     "ci_lo": iv.lo, "ci_hi": iv.hi, "runs": iv.n})
    return pd.DataFrame(rows).sort_values(["workload", "approach", "zipf_theta"], ascending=[True, True, False],
                                          ignore_index=True)



def plot_throughput(table: pd.DataFrame, out: Path, stem: str, title: str) -> list[Path]:
    """One panel per workload: throughput (log scale) against θ per approach, the 95 % interval as
    error bars. Writes STEM.png and returns its path."""
    import matplotlib.pyplot as plt

    from acplot.style import approach_styles, plot_line, save_panels
    wls = sorted(table["workload"].unique())
    if not wls:
        return []
    styles = approach_styles(list(table["approach"].unique()))
    fig, axes = plt.subplots(1, len(wls), figsize=(5.2 * len(wls), 4), squeeze=False, sharey=True)
    for ax, wl in zip(axes[0], wls):
        for a, g in table[table["workload"] == wl].groupby("approach"):
            g = g.sort_values("zipf_theta")
            plot_line(ax, g["zipf_theta"], g["throughput_ops_s"], a, styles[a])
            err = [g["throughput_ops_s"] - g["ci_lo"], g["ci_hi"] - g["throughput_ops_s"]]
            ax.errorbar(g["zipf_theta"], g["throughput_ops_s"], yerr=err, fmt="none", ecolor=styles[a]["color"],
                        capsize=3)
        ax.set_yscale("log")
        ax.set_xlabel("Zipf θ")
        ax.set_title(f"{wl}, {title}")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("throughput (ops/s)")
    return save_panels(fig, axes, out / f"{stem}.png")
