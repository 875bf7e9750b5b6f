"""Beyond the paper (experiments/modern.toml, modern-extstore.toml, modern-trace.toml): today's eviction
policies spilling in the server, memcached's own extstore and the kernel's modern offloading beside
the paper's approaches. Tables of the loss against OPT and its three parts (acbench/decompose.py),
the best online policy's loss against lru's (the project's target: at most half at θ 0.99), extstore's
hit rate and items lost beside lru's and stock memcached's at the same memory, and the kernel
baselines (zram, the PSI-driven limit) beside ospaging at the memory each had; the loss figure."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

# the policies a modern design would choose among (lru is the reference they are measured against)
ONLINE = ("alru", "logging", "sieve", "s3fifo", "wtinylfu")
REFERENCE = "lru"
TARGET = 0.5                         # best online loss / lru's loss at θ 0.99
KERNEL = ("ospaging", "ospaging-zram", "ospaging-psi")
SLICE = ["workload", "zipf_theta", "mem_ratio"]
PARTS = ("loss_lru_pp", "loss_overhead_pp", "loss_policy_pp")


def _slice_cols(df: pd.DataFrame) -> list[str]:
    """The columns that tell a cell's slice apart: a trace's cells have no workload or θ."""
    return [c for c in SLICE if c in df.columns and df[c].notna().any()]


def loss_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per slice and approach (mean over repetitions): hit rate, OPT's, the loss and its three parts,
    items lost, throughput and the repetitions."""
    cols = _slice_cols(df)
    agg = {"hit_rate": ("hit_rate", "mean"), "opt_hit_rate": ("opt_hit_rate", "mean"),
           "loss_pp": ("loss_pp", "mean")}
    agg.update({p: (p, "mean") for p in PARTS if p in df.columns})
    if "ac_lost_items" in df.columns:
        agg["lost_items"] = ("ac_lost_items", "mean")
    agg["throughput_ops_s"] = ("throughput_ops_s", "mean")
    agg["runs"] = ("hit_rate", "size")
    out = df.groupby(cols + ["approach"], dropna=False).agg(**agg).reset_index()
    # workload A-Z, θ and M/D from the largest, then the smallest loss first
    return out.sort_values(cols + ["loss_pp"], ascending=[c == "workload" for c in cols] + [True],
                           ignore_index=True)


def best_over_lru(df: pd.DataFrame) -> pd.DataFrame:
    """Per slice: lru's loss, the online policy (ONLINE) with the smallest loss, its loss and the ratio
    of the two; meets_target says ratio <= TARGET (judged at θ 0.99 only, None elsewhere). Slices
    without lru or without any online policy are left out; a ratio is None where lru lost nothing."""
    t = loss_table(df)
    cols = _slice_cols(df)
    rows = []
    for key, g in t.groupby(cols, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        ref = g[g["approach"] == REFERENCE]
        cand = g[g["approach"].isin(ONLINE)]
        if ref.empty or cand.empty:
            continue
        best = cand.loc[cand["loss_pp"].idxmin()]
        lru_loss = float(ref["loss_pp"].iloc[0])
        ratio = float(best["loss_pp"]) / lru_loss if lru_loss > 0 else None
        row = dict(zip(cols, key))
        theta = row.get("zipf_theta")
        row.update({"lru_loss_pp": lru_loss, "best": best["approach"], "best_loss_pp": float(best["loss_pp"]),
                    "ratio": ratio,
                    "meets_target": (ratio is not None and ratio <= TARGET) if theta == 0.99 else None})
        rows.append(row)
    return pd.DataFrame(rows)


def served(df: pd.DataFrame) -> pd.Series:
    """The share of reads answered with the value, from RAM or from the cold tier (hit_rate counts RAM's
    only, as the paper does); 1 under anti-caching, the hit rate for a cache."""
    return (df["hits"] + df["disk_hits"]) / (df["hits"] + df["disk_hits"] + df["misses"])


def extstore_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per slice: extstore's hit rate in RAM, the share of reads it answered (RAM or file), its disk hits,
    misses (each one a refill), items lost (and their three ways), beside lru's and stock memcached's,
    at the same cgroup limit."""
    df = df.assign(served=served(df))
    cols = _slice_cols(df)
    rows = []
    for key, g in df.groupby(cols, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        by = {a: r for a, r in g.groupby("approach")}
        if "extstore" not in by:
            continue
        e = by["extstore"]
        row = dict(zip(cols, key))
        row.update({"extstore_hit_rate": e["hit_rate"].mean(), "extstore_served": e["served"].mean(),
                    "extstore_disk_hits": e["disk_hits"].mean(), "extstore_misses": e["misses"].mean(),
                    "extstore_lost_items": e["ac_lost_items"].mean(),
                    "lost_in_ram": e["ac_ext_lost_ram"].mean(), "lost_on_disk": e["ac_ext_lost_disk"].mean(),
                    "lost_in_compaction": e["ac_ext_lost_compact"].mean(),
                    "extstore_file_mb": e["ext_file_bytes"].mean() / (1 << 20),
                    "extstore_item_mb": e["item_memory_bytes"].mean() / (1 << 20)})
        for a in ("lru", "memcached"):
            if a in by:
                row[f"{a}_hit_rate"] = by[a]["hit_rate"].mean()
                row[f"{a}_served"] = by[a]["served"].mean()
                row[f"{a}_lost_items"] = by[a]["ac_lost_items"].mean()
        row["limit_mb"] = e["cgroup_limit_bytes"].mean() / (1 << 20)
        row["runs"] = len(e)
        rows.append(row)
    return pd.DataFrame(rows)


def kernel_table(df: pd.DataFrame) -> pd.DataFrame:
    """The kernel baselines per slice: hit rate, loss, throughput, major faults, the cell's limit and the
    memory each really had: ospaging-psi's time-weighted mean limit, ospaging-zram's limit plus the
    zram device's peak RAM (charged to no cgroup)."""
    d = df[df["approach"].isin(KERNEL)].copy()
    if d.empty:
        return pd.DataFrame()
    cols = _slice_cols(df)
    mib = float(1 << 20)
    d["limit_mb"] = d["cgroup_limit_bytes"] / mib
    psi = d["psi_limit_avg_bytes"] if "psi_limit_avg_bytes" in d.columns else pd.Series(float("nan"), index=d.index)
    zram = d["zram_mem_used_max_bytes"] if "zram_mem_used_max_bytes" in d.columns else \
        pd.Series(float("nan"), index=d.index)
    d["memory_had_mb"] = (psi.where(psi.notna(), d["cgroup_limit_bytes"]) + zram.fillna(0)) / mib
    agg = d.groupby(cols + ["approach"], dropna=False).agg(
        hit_rate=("hit_rate", "mean"), loss_pp=("loss_pp", "mean"), throughput_ops_s=("throughput_ops_s", "mean"),
        major_faults=("cg_pgmajfault", "mean"), limit_mb=("limit_mb", "mean"), memory_had_mb=("memory_had_mb", "mean"),
        runs=("hit_rate", "size")).reset_index()
    return agg


def plot_loss(table: pd.DataFrame, out: Path, stem: str = "modern-loss") -> list[Path]:
    """One panel per (workload, M/D): the loss against OPT per approach at each θ, stacked by its three
    parts where they are known (exact LRU's, memory overhead's, the policy's). Writes STEM.png."""
    import matplotlib.pyplot as plt
    import numpy as np

    from acplot.style import save_panels

    if table.empty or "workload" not in table.columns:
        return []
    panels = sorted(table.groupby(["workload", "mem_ratio"]).groups)
    approaches = list(dict.fromkeys(table.sort_values("approach")["approach"]))
    thetas = sorted(table["zipf_theta"].unique(), reverse=True)
    fig, axes = plt.subplots(1, len(panels), figsize=(4.8 * len(panels), 4.2), squeeze=False, sharey=True)
    width = 0.8 / max(1, len(approaches))
    colors = {"loss_lru_pp": "#4c72b0", "loss_overhead_pp": "#dd8452", "loss_policy_pp": "#55a868"}
    labels = {"loss_lru_pp": "exact LRU's loss", "loss_overhead_pp": "memory overhead",
              "loss_policy_pp": "the policy's choices"}
    for ax, (wl, md) in zip(axes[0], panels):
        g = table[(table["workload"] == wl) & (table["mem_ratio"] == md)]
        for i, a in enumerate(approaches):
            r = g[g["approach"] == a].set_index("zipf_theta").reindex(thetas)
            x = np.arange(len(thetas)) + (i - (len(approaches) - 1) / 2) * width
            if all(p in r.columns for p in PARTS) and r[list(PARTS)].notna().all(axis=None):
                bottom = np.zeros(len(thetas))
                for p in PARTS:
                    v = r[p].to_numpy(dtype=float)
                    ax.bar(x, v, width, bottom=np.where(v >= 0, bottom, 0), color=colors[p], edgecolor="black",
                           linewidth=0.3, label=labels[p] if i == 0 else None)
                    bottom = bottom + np.clip(v, 0, None)
            else:
                ax.bar(x, r["loss_pp"].to_numpy(dtype=float), width, color="#999999", edgecolor="black",
                       linewidth=0.3)
            for xi, v in zip(x, r["loss_pp"].to_numpy(dtype=float)):
                if v == v:
                    ax.text(xi, max(v, 0) + 0.3, a, rotation=90, ha="center", va="bottom", fontsize=6)
        ax.set_xticks(np.arange(len(thetas)), [f"θ {t:g}" for t in thetas])
        ax.set_title(f"{wl}, M/D {md:g}")
        ax.grid(True, axis="y", alpha=0.3)
    axes[0][0].set_ylabel("loss against OPT (pp of hit rate)")
    return save_panels(fig, axes, out / f"{stem}.png")
