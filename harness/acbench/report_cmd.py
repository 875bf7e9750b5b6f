"""`acbench report RUN`: the decomposed loss table of a run, readable in the terminal.

One line per cell: hit rate, OPT, loss and its three parts (acbench/decompose.py),
throughput, the skew the cell really had, and flags (oom_killed, refused or lost items).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import typer
from rich.console import Console
from rich.table import Table

from acbench.approaches import APPROACHES, lookup
from acbench.results import ResultsError, load_results

_err = Console(stderr=True, soft_wrap=True, highlight=False)

COLUMNS = (("hit_rate", "hit rate", "{:.3f}"), ("opt_hit_rate", "OPT", "{:.3f}"),
           ("loss_pp", "loss pp", "{:.1f}"), ("loss_lru_pp", "LRU part", "{:.1f}"),
           ("loss_overhead_pp", "overhead part", "{:.1f}"), ("loss_policy_pp", "policy part", "{:.1f}"),
           ("throughput_ops_s", "ops/s", "{:,.0f}"), ("skew_top10_share", "top-10 % share", "{:.2f}"),
           ("skew_fitted_theta", "fitted θ", "{:.2f}"))


def _fmt(v: Any, fmt: str) -> str:
    if v is None or (isinstance(v, float) and pd.isna(v)):
        return "–"
    return fmt.format(v)


def flags(r: pd.Series) -> str:
    out = []
    if str(r.get("status", "ok")) not in ("ok", "nan"):
        out.append(str(r.get("status")))
    # the stock cache (policy none) drops items by design; every other approach must lose none
    approach = lookup(str(r.get("approach")))
    drops = approach is not None and approach.policy == "none"
    for col, name in (("ac_refused_items", "refused"), ("ac_lost_items", "lost")):
        v = r.get(col)
        if v is not None and not pd.isna(v) and v > 0 and not (name == "lost" and drops):
            out.append(f"{name} {int(v)}")
    return ", ".join(out)


def ordered(df: pd.DataFrame) -> pd.DataFrame:
    order = {a: i for i, a in enumerate(APPROACHES)}
    df = df.assign(_a=df["approach"].map(lambda a: order.get(a, len(order))))
    return df.sort_values(["workload", "zipf_theta", "mem_ratio", "_a"],
                          ascending=[True, False, False, True]).drop(columns="_a")


def table(df: pd.DataFrame, title: str) -> Table:
    t = Table(title=title, title_justify="left")
    for col in ("approach", "workload", "θ", "M/D"):
        t.add_column(col)
    for _, label, _ in COLUMNS:
        t.add_column(label, justify="right")
    t.add_column("flags")
    for _, r in ordered(df).iterrows():
        t.add_row(str(r["approach"]), str(r["workload"]), f"{r['zipf_theta']:g}", f"{r['mem_ratio']:g}",
                  *[_fmt(r.get(c), f) for c, _, f in COLUMNS], flags(r))
    return t


def report(run: Path = typer.Argument(..., help="A run directory of `acbench run` (or its cells.parquet/csv)."),
           ) -> None:
    """Prints loss = [OPT(C) − LRU(C)] + [LRU(C) − LRU(R)] + [LRU(R) − approach] per cell."""
    try:
        df = load_results(run)
        if df.empty:
            raise ResultsError(f"{run}: no rows")
    except ResultsError as e:
        _err.print(f"acbench report: error: {e}", markup=False)
        raise typer.Exit(2)
    console = Console(width=max(Console().width, 170))
    console.print(table(df, f"{run}: loss against OPT in percentage points, decomposed"))
    console.print("LRU part = OPT(C) − LRU(C): what exact LRU loses with the budget C; overhead part = "
                  "LRU(C) − LRU(R): the items the approach could not keep (R held, time-averaged); "
                  "policy part = LRU(R) − approach: its eviction choices against exact LRU at equal residency.",
                  highlight=False)


def register(app: typer.Typer) -> None:
    app.command("report")(report)
