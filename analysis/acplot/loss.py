"""The loss table: how far each approach's hit rate is below Belady's OPT.

    hit_rate = hits / (hits + disk_hits)
    loss_pp  = 100 * (opt_hit_rate - hit_rate)          (percentage points)

opt_hit_rate comes either from a column of that name (0..1), or is computed
with the harness (`acbench.opt`) from the columns trace (path of an ACTRACE /
oracleGeneral file) and opt_capacity (objects), with the bypass variant
unless opt_variant says "demand".
"""
from __future__ import annotations

from typing import Callable

import pandas as pd

REQUIRED_COLUMNS = ("approach", "zipf_theta", "mem_ratio", "workload", "hits", "disk_hits")
OPT_FROM_TRACE = ("trace", "opt_capacity")


class ResultsError(ValueError):
    """The results frame lacks columns or holds values the table cannot use."""


def _opt_from_traces(df: pd.DataFrame) -> pd.Series:
    from acbench import core   # the harness is only needed in this case

    cache: dict[tuple[str, int, str], float] = {}

    def one(row: pd.Series) -> float:
        variant = str(row.get("opt_variant", "bypass"))
        if variant not in ("bypass", "demand"):
            raise ResultsError(f"opt_variant must be 'bypass' or 'demand', got {variant!r}")
        key = (str(row["trace"]), int(row["opt_capacity"]), variant)
        if key not in cache:
            with core.Trace.open(key[0]) as t, core.NextUse(t) as nu:
                hits = nu.opt([key[1]], bypass=variant == "bypass")[0]
                cache[key] = hits / nu.scored_reads if nu.scored_reads else 0.0   # writes are not scored
        return cache[key]

    return df.apply(one, axis=1)


def loss_table(results: pd.DataFrame,
               opt_hit_rate: Callable[[pd.DataFrame], pd.Series] | None = None) -> pd.DataFrame:
    """A copy of `results` with hit_rate, opt_hit_rate and loss_pp columns."""
    missing = [c for c in REQUIRED_COLUMNS if c not in results.columns]
    if missing:
        raise ResultsError(f"results lack column(s) {', '.join(missing)}; required: {', '.join(REQUIRED_COLUMNS)} "
                           "and opt_hit_rate (or trace and opt_capacity)")
    df = results.copy()
    if "opt_hit_rate" not in df.columns:
        if not all(c in df.columns for c in OPT_FROM_TRACE):
            raise ResultsError("results need opt_hit_rate (0..1) or both trace and opt_capacity to compute it")
        df["opt_hit_rate"] = (opt_hit_rate or _opt_from_traces)(df)
    served = df["hits"] + df["disk_hits"]
    if (df["hits"] < 0).any() or (df["disk_hits"] < 0).any():
        raise ResultsError("hits and disk_hits must not be negative")
    if (served == 0).any():
        bad = df.loc[served == 0, "approach"].tolist()
        raise ResultsError(f"rows with hits + disk_hits = 0 have no hit rate (approach {', '.join(map(str, bad))})")
    opt = df["opt_hit_rate"].astype(float)
    if ((opt < 0) | (opt > 1)).any():
        raise ResultsError("opt_hit_rate must lie in 0..1 (a fraction, not a percentage)")
    df["hit_rate"] = df["hits"] / served
    df["loss_pp"] = 100.0 * (opt - df["hit_rate"])
    return df
