"""Figures of a run: Fig 3 (loss vs OPT, via acplot) and a Fig-4 panel set
(throughput, CPU per operation, disk reads per operation vs memory ratio, per approach)."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from acplot import loss_table, plot_loss_grid  # noqa: E402

FIG4_PANELS = (("throughput_ops_s", "throughput (ops/s)"),
               ("cpu_us_per_op", "CPU (µs per op)"),
               ("disk_reads_per_op", "disk reads per op"))


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
        paths += plot_loss_grid(table, outdir / f"fig3-{wl}", workload=wl, mem_ratios=ratios)
    return paths


def fig4_frame(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    ops = out["operations"].where(out["operations"] > 0)
    cpu = out["cpu_user_s"].fillna(0) + out["cpu_sys_s"].fillna(0)
    out["cpu_us_per_op"] = 1e6 * cpu / ops
    out["disk_reads_per_op"] = out["disk_read_ios"] / ops
    return out


def plot_fig4(df: pd.DataFrame, outdir: Path) -> list[Path]:
    need = ["approach", "zipf_theta", "mem_ratio", "workload", "throughput_ops_s", "operations",
            "cpu_user_s", "cpu_sys_s", "disk_read_ios"]
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise PlotError(f"results lack column(s) {', '.join(missing)}")
    data = fig4_frame(df)
    paths: list[Path] = []
    for wl, wdf in data.groupby("workload", sort=True):
        thetas = sorted(wdf["zipf_theta"].unique(), reverse=True)
        fig, axes = plt.subplots(len(thetas), len(FIG4_PANELS), figsize=(4 * len(FIG4_PANELS), 3 * len(thetas)),
                                 squeeze=False)
        for i, theta in enumerate(thetas):
            tdf = wdf[wdf["zipf_theta"] == theta]
            for j, (col, label) in enumerate(FIG4_PANELS):
                ax = axes[i][j]
                for approach, rows in tdf.groupby("approach", sort=True):
                    line = rows.groupby("mem_ratio", sort=True)[col].mean()
                    ax.plot(line.index, line.values, marker="o", label=str(approach))
                ax.set_xlabel("memory / data (M/D)")
                ax.set_ylabel(label)
                ax.set_title(f"θ = {theta:g}")
                ax.grid(alpha=0.3)
        handles, labels = axes[0][0].get_legend_handles_labels()
        if handles:
            fig.legend(handles, labels, loc="upper center", ncol=min(len(labels), 6), frameon=False)
        fig.suptitle(f"workload {wl}", y=0.995, fontsize=10)
        fig.tight_layout(rect=(0, 0, 1, 0.93))
        outdir.mkdir(parents=True, exist_ok=True)
        for ext in ("png", "pdf"):
            p = outdir / f"fig4-{wl}.{ext}"
            fig.savefig(p)
            paths.append(p)
        plt.close(fig)
    return paths
