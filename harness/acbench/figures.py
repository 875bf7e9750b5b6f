"""Figures of a run: Fig 3 (loss vs OPT, via acplot), the loss decomposed (stacked bars: what
exact LRU loses, what memory overhead costs, what the policy's choices cost) and a Fig-4 panel
set (throughput on a log axis, CPU per operation, disk reads per operation vs memory ratio, per
approach; every per-operation figure is over the measured run only)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd

from acplot import loss_table, plot_loss_grid
from acplot.cells import approach_order
from acplot.style import approach_styles, legend_above, plot_line, scale_title

FIG4_PANELS = (("throughput_ops_s", "throughput (ops/s)"),
               ("cpu_us_per_op", "CPU (µs per op)"),
               ("disk_reads_per_op", "disk reads per op"),
               ("disk_read_ops_s", "disk read requests per s"),
               ("disk_read_latency_us", "mean disk read latency (µs)"),
               ("spill_read_us_p50", "spill read latency p50 (µs)"),
               ("spill_read_us_p99", "spill read latency p99 (µs)"))
# the spill-read quantiles: the I/O engine's reads (records, blocks, uvmm's pages); the kernel-paged
# approaches read through page faults and have none (their panel lines are absent)


class PlotError(ValueError):
    pass


def fig3_input(df: pd.DataFrame) -> pd.DataFrame:
    """acplot's frame: reads not served from RAM (disk hits, or misses of the memcached
    baseline whose items were dropped) count as disk_hits, so hit_rate = hits / reads."""
    need = ["approach", "zipf_theta", "mem_ratio", "workload", "hits", "disk_hits", "misses", "opt_hit_rate"]
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise PlotError(f"results lack column(s) {', '.join(missing)}")
    out = df[need].dropna(subset=["hits", "disk_hits", "opt_hit_rate"]).copy()
    out["disk_hits"] = out["disk_hits"] + out["misses"].fillna(0)
    return out.drop(columns=["misses"])


def plot_fig3(df: pd.DataFrame, outdir: Path) -> list[Path]:
    table = loss_table(fig3_input(df))
    ratios = tuple(sorted(table["mem_ratio"].unique(), reverse=True))
    paths: list[Path] = []
    for wl in sorted(table["workload"].unique()):
        paths += plot_loss_grid(table, outdir / f"fig3-{wl}", workload=wl, mem_ratios=ratios,
                                title=scale_title(df[df["workload"] == wl], wl))
    return paths


def fig4_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Per-operation columns as the runner writes them (runner.per_op); computed here for rows
    that lack them, from the same run-window columns."""
    out = df.copy()
    ops = out["operations"].where(out["operations"] > 0)
    if "cpu_us_per_op" not in out.columns:
        out["cpu_us_per_op"] = 1e6 * (out["cpu_user_s"] + out["cpu_sys_s"]) / ops
    if "disk_reads_per_op" not in out.columns:
        out["disk_reads_per_op"] = out["disk_read_ios"] / ops
    if "disk_read_ops_s" not in out.columns:      # older rows: from the run window's reads and time
        secs = out["run_duration_s"].where(out["run_duration_s"] > 0) if "run_duration_s" in out.columns else None
        out["disk_read_ops_s"] = out["disk_read_ios"] / secs if secs is not None else float("nan")
    for col in ("disk_read_latency_us", "spill_read_us_p50", "spill_read_us_p99"):
        if col not in out.columns:  # rows older than the measurement: an empty panel
            out[col] = float("nan")
    # the regime the disk ran in ([run] regime: native, or hdd, the paper's hard disk emulated); rows older
    # than the setting ran native. Fig 4 is drawn per regime: its times are not comparable across them.
    out["regime"] = out["regime"].fillna("native").astype(str) if "regime" in out.columns else "native"
    return out


def regime_label(workload: str, regime: str) -> str:
    """How a Fig 4 figure or table row names a workload in a regime: the workload alone when native."""
    return workload if regime == "native" else f"{workload}, {regime} regime"


def fig4_tables_frame(df: pd.DataFrame) -> pd.DataFrame:
    """fig4_frame with the regime folded into the workload's name (regime_label), so that the per-cell
    tables (acplot.cells.by_cell: rows per workload) keep the regimes apart."""
    out = fig4_frame(df)
    out["workload"] = [regime_label(str(w), r) for w, r in zip(out["workload"], out["regime"])]
    return out


# the three parts: colour-blind-safe colours of different lightness, and a hatch each for grayscale
DECOMP = (("loss_lru_pp", "exact LRU vs OPT", "#88CCEE", ""), ("loss_overhead_pp", "memory overhead", "#DDCC77", "//"),
          ("loss_policy_pp", "policy vs exact LRU", "#882255", "xx"))


def plot_decomposition(df: pd.DataFrame, outdir: Path) -> list[Path]:
    """Per workload, a grid θ × M/D of stacked bars per approach (negative parts below 0);
    a black tick marks the total loss."""
    need = ["approach", "zipf_theta", "mem_ratio", "workload", "loss_pp"] + [c for c, _, _, _ in DECOMP]
    if any(c not in df.columns for c in need):
        return []     # results from before the decomposition: nothing to draw
    data = df.dropna(subset=need)
    paths: list[Path] = []
    for wl, wdf in data.groupby("workload", sort=True):
        thetas = sorted(wdf["zipf_theta"].unique(), reverse=True)
        ratios = sorted(wdf["mem_ratio"].unique(), reverse=True)
        approaches = [a for a in dict.fromkeys(wdf["approach"])]
        fig, axes = plt.subplots(len(thetas), len(ratios), figsize=(1.2 + 0.55 * len(approaches) * len(ratios),
                                 2.6 * len(thetas)), squeeze=False, sharey=True)
        for i, theta in enumerate(thetas):
            for j, ratio in enumerate(ratios):
                ax = axes[i][j]
                cell = wdf[(wdf["zipf_theta"] == theta) & (wdf["mem_ratio"] == ratio)]
                means = cell.groupby("approach", sort=False)[need[4:]].mean().reindex(approaches)
                x = range(len(approaches))
                pos = [0.0] * len(approaches)
                neg = [0.0] * len(approaches)
                for col, label, color, hatch in DECOMP:
                    vals = means[col].fillna(0).tolist()
                    bottoms = [pos[k] if v >= 0 else neg[k] for k, v in enumerate(vals)]
                    ax.bar(x, vals, bottom=bottoms, color=color, label=label, width=0.7, hatch=hatch,
                           edgecolor="white", linewidth=0)
                    for k, v in enumerate(vals):
                        if v >= 0:
                            pos[k] += v
                        else:
                            neg[k] += v
                ax.scatter(x, means["loss_pp"], marker="_", s=200, color="black", zorder=3,
                           label="loss (total)")
                ax.axhline(0, color="black", linewidth=0.6)
                ax.set_xticks(list(x))
                ax.set_xticklabels(approaches, rotation=60, ha="right", fontsize=7)
                ax.set_title(f"θ = {theta:g}, M/D = {ratio:g}", fontsize=9)
                if j == 0:
                    ax.set_ylabel("loss vs OPT (pp)")
                ax.grid(axis="y", alpha=0.3)
        handles, labels = axes[0][0].get_legend_handles_labels()
        fig.suptitle(f"{scale_title(wdf, wl)}: loss = [OPT(C) − LRU(C)] + [LRU(C) − LRU(R)] + [LRU(R) − approach]",
                     y=0.995, fontsize=9)
        fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.955), ncol=4, frameon=False,
                   fontsize=8)
        fig.tight_layout(rect=(0, 0, 1, 0.9))
        paths += save_figure(fig, outdir, f"loss-decomposed-{wl}")
    return paths


def save_figure(fig: Any, outdir: Path, stem: str) -> list[Path]:
    """stem.png and stem.pdf in outdir; the figure is closed."""
    outdir.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext in ("png", "pdf"):
        p = outdir / f"{stem}.{ext}"
        fig.savefig(p, bbox_inches="tight")
        paths.append(p)
    plt.close(fig)
    return paths


def plot_fig4(df: pd.DataFrame, outdir: Path) -> list[Path]:
    need = ["approach", "zipf_theta", "mem_ratio", "workload", "throughput_ops_s", "operations",
            "cpu_user_s", "cpu_sys_s", "disk_read_ios"]
    if "status" in df.columns:
        df = df[df["status"].fillna("ok") == "ok"]
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise PlotError(f"results lack column(s) {', '.join(missing)}")
    data = fig4_frame(df)
    styles = approach_styles(list(map(str, data["approach"].unique())))
    paths: list[Path] = []
    for (wl, regime), wdf in data.groupby(["workload", "regime"], sort=True):
        thetas = sorted(wdf["zipf_theta"].unique(), reverse=True)
        fig, axes = plt.subplots(len(thetas), len(FIG4_PANELS), figsize=(4 * len(FIG4_PANELS), 3 * len(thetas)),
                                 squeeze=False)
        for i, theta in enumerate(thetas):
            tdf = wdf[wdf["zipf_theta"] == theta]
            for j, (col, label) in enumerate(FIG4_PANELS):
                ax = axes[i][j]
                for approach in approach_order(list(map(str, tdf["approach"].unique()))):
                    rows = tdf[tdf["approach"].astype(str) == approach]
                    line = rows.groupby("mem_ratio", sort=True)[col].mean()
                    plot_line(ax, line.index, line.values, approach, styles[approach])
                if col in ("throughput_ops_s", "spill_read_us_p99") and (tdf[col] > 0).any():
                    ax.set_yscale("log")     # anti-caching next to all-in-RAM (a tail next to a median) spans decades
                ax.set_xlabel("memory / data (M/D)")
                ax.set_ylabel(label)
                ax.set_title(f"θ = {theta:g}")
                ax.grid(alpha=0.3)
        handles, labels = axes[0][0].get_legend_handles_labels()
        fig.tight_layout()
        legend_above(fig, handles, labels, title=scale_title(wdf, regime_label(str(wl), regime)))
        paths += save_figure(fig, outdir, f"fig4-{wl}" if regime == "native" else f"fig4-{wl}-{regime}")
    return paths
