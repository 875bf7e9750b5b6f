"""Scaling with threads: the cells of a grid with more than one driver-thread count ([grid] threads,
memcached's workers following them: [run] server_threads = "threads"). Per workload, a column of
panels per M/D: throughput against threads (top) and throughput per thread (bottom), a line per
approach, medians over repetitions; and a table of each approach's throughput and its ratio to the
reference approach (the first of REFERENCES the rows have) at each thread count
(scaling-<workload>.png/.pdf/.md, `acbench plot`; experiments/scaling.toml)."""
from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from acplot.cells import approach_order
from acbench.figures import save_figure
from acplot.style import approach_styles, legend_above, plot_line, scale_title

# the approach a ratio is taken against: stock memcached (no tracking of ours), or none at all
REFERENCES = ("memcached", "memcached-static")
THREADS = "p_threads"            # the rows' YCSB property threads (driver threads)
NEED = ["approach", "workload", "mem_ratio", THREADS, "throughput_ops_s"]
LOG_SPREAD = 10.0                # a panel's max / min throughput above which it is drawn on a log scale


def scaling_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Finished rows with a throughput, when the grid has at least two thread counts (else empty)."""
    if any(c not in df.columns for c in NEED):
        return pd.DataFrame(columns=NEED)
    ok = df[df["status"].fillna("ok") == "ok"] if "status" in df.columns else df
    ok = ok.dropna(subset=[THREADS, "throughput_ops_s"])
    if ok[THREADS].nunique() < 2:
        return pd.DataFrame(columns=NEED)
    return ok.assign(threads=pd.to_numeric(ok[THREADS]).astype(int))


def scaling_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per workload, M/D, approach and thread count: runs, median throughput, per thread, and the
    ratio to the reference approach's median at the same cell and thread count (None without one)."""
    rows = scaling_rows(df)
    cols = ["workload", "mem_ratio", "approach", "threads", "runs", "throughput_ops_s", "per_thread_ops_s",
            "reference", "ratio_to_reference"]
    if rows.empty:
        return pd.DataFrame(columns=cols)
    med = (rows.groupby(["workload", "mem_ratio", "approach", "threads"])["throughput_ops_s"]
           .agg(["count", "median"]).reset_index())
    ref = next((r for r in REFERENCES if r in set(med["approach"])), None)
    base = (med[med["approach"] == ref].set_index(["workload", "mem_ratio", "threads"])["median"]
            if ref is not None else None)
    out = []
    for r in med.itertuples(index=False):
        b = base.get((r.workload, r.mem_ratio, r.threads)) if base is not None else None
        out.append((r.workload, r.mem_ratio, r.approach, int(r.threads), int(r.count), r.median,
                    r.median / r.threads, ref, None if not b else r.median / b))
    t = pd.DataFrame(out, columns=cols)
    order = {a: i for i, a in enumerate(approach_order(list(t["approach"].unique())))}
    return t.sort_values(["workload", "mem_ratio", "approach", "threads"],
                         key=lambda s: s.map(order) if s.name == "approach" else s,
                         ascending=[True, False, True, True]).reset_index(drop=True)


def plot_scaling(df: pd.DataFrame, outdir: Path) -> list[Path]:
    table = scaling_table(df)
    paths: list[Path] = []
    for wl, g in table.groupby("workload", sort=True):
        ratios = sorted(g["mem_ratio"].unique(), reverse=True)
        approaches = approach_order(list(g["approach"].unique()))
        styles = approach_styles(approaches)
        fig, axes = plt.subplots(2, len(ratios), figsize=(3.4 * len(ratios), 5.4), squeeze=False, sharex=True)
        for col, ratio in enumerate(ratios):
            t = g[g["mem_ratio"] == ratio]
            for a in approaches:
                line = t[t["approach"] == a].sort_values("threads")
                if line.empty:
                    continue
                x = list(line["threads"])
                plot_line(axes[0][col], x, list(line["throughput_ops_s"]), a, styles[a])
                plot_line(axes[1][col], x, list(line["per_thread_ops_s"]), a, styles[a])
            axes[0][col].set_title(f"M/D {ratio:g}", fontsize=9)
            axes[1][col].set_xlabel("driver threads")
            axes[1][col].set_xticks(sorted(g["threads"].unique()))
            # a panel whose approaches differ by more than LOG_SPREAD (stock memcached drops what the
            # others spill) is drawn on a log scale, or the spilling approaches lie flat on its floor
            spread = t["throughput_ops_s"].max() / max(t["throughput_ops_s"].min(), 1.0)
            for row in (0, 1):
                axes[row][col].grid(alpha=0.3, which="both")
                if spread > LOG_SPREAD:
                    axes[row][col].set_yscale("log")
                else:
                    axes[row][col].set_ylim(bottom=0)
        axes[0][0].set_ylabel("throughput (ops/s)")
        axes[1][0].set_ylabel("per thread (ops/s)")
        handles, labels = axes[0][0].get_legend_handles_labels()
        legend_above(fig, handles, labels,
                     title=f"{scale_title(df[df['workload'] == wl], wl)}: scaling with threads (medians)")
        stem = f"scaling-{wl}"
        paths += save_figure(fig, outdir, stem)
        md = outdir / f"{stem}.md"
        md.write_text(markdown(g) + "\n")
        paths.append(md)
    return paths


def markdown(t: pd.DataFrame) -> str:
    ref = next((r for r in t["reference"] if isinstance(r, str)), None)
    head = ["M/D", "approach", "threads", "runs", "ops/s (median)", "per thread", f"/ {ref}" if ref else "/ reference"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in t.itertuples(index=False):
        ratio = "-" if r.ratio_to_reference is None or pd.isna(r.ratio_to_reference) else f"{r.ratio_to_reference:.2f}"
        lines.append(f"| {r.mem_ratio:g} | {r.approach} | {r.threads} | {r.runs} | {r.throughput_ops_s:,.0f} |"
                     f" {r.per_thread_ops_s:,.0f} | {ratio} |")
    return "\n".join(lines)
