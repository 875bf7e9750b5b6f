"""Per-cell views of a run: the mean of a metric per (workload, θ, M/D) slice and approach
(repetitions averaged), approaches in the harness's order, skew and memory from high to low."""
from __future__ import annotations

import pandas as pd

from acplot.loss import ResultsError

SLICE = ("workload", "zipf_theta", "mem_ratio")


def approach_order(names: list[str]) -> list[str]:
    """The harness's approach order (acbench.approaches), unknown names last, alphabetically."""
    try:
        from acbench.approaches import APPROACHES
        known = list(APPROACHES)
    except ImportError:
        known = []
    rank = {a: i for i, a in enumerate(known)}
    return sorted(dict.fromkeys(names), key=lambda a: (rank.get(a, len(rank)), a))


def hit_rates(df: pd.DataFrame) -> pd.Series:
    """hits / reads, reads = hits + disk_hits + misses (a miss of the memcached baseline is a read
    not served from RAM, as in acbench.figures.fig3_input)."""
    missing = [c for c in ("hits", "disk_hits") if c not in df.columns]
    if missing:
        raise ResultsError(f"results lack column(s) {', '.join(missing)} needed for hit rates")
    misses = df["misses"].fillna(0) if "misses" in df.columns else 0
    reads = df["hits"] + df["disk_hits"] + misses
    if (reads <= 0).any():
        raise ResultsError("rows with no reads have no hit rate: "
                           + ", ".join(sorted(map(str, df.loc[reads <= 0, "approach"].unique()))))
    return df["hits"] / reads


def slice_means(df: pd.DataFrame, value: str) -> pd.DataFrame:
    """One row per (workload, θ, M/D), one column per approach: the mean of `value`."""
    missing = [c for c in ("approach", *SLICE, value) if c not in df.columns]
    if missing:
        raise ResultsError(f"results lack column(s) {', '.join(missing)} needed for {value} per cell")
    table = df.pivot_table(index=list(SLICE), columns="approach", values=value, aggfunc="mean")
    table = table.sort_index(level=["workload", "zipf_theta", "mem_ratio"], ascending=[True, False, False])
    return table[approach_order(list(table.columns))]


def by_cell(df: pd.DataFrame, value: str) -> pd.DataFrame:
    """The same means laid out for reading: rows (workload, approach), columns (θ, M/D)."""
    long = slice_means(df, value).stack().rename(value).reset_index()
    table = long.pivot_table(index=["workload", "approach"], columns=["zipf_theta", "mem_ratio"], values=value)
    table = table.sort_index(axis=1, ascending=False)
    order = {a: i for i, a in enumerate(approach_order(list(long["approach"])))}
    return table.sort_index(level=["workload", "approach"], key=lambda s: s.map(order) if s.name == "approach" else s)
