"""`acbench compare RUN BASELINE [--tolerance M=X ...]` and `acbench baseline RUN [RUN ...] --out OUT.csv`."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, List, Optional

import pandas as pd

import typer
from rich.console import Console
from rich.table import Table

from acbench.approaches import lookup
from acbench.compare import (CompareError, baseline_from_runs, compare, make_baseline, parse_overrides,
                              read_baseline, widen)
from acbench.results import ResultsError, load_results

_err = Console(stderr=True, soft_wrap=True, highlight=False)


def _fmt(v: float | None) -> str:
    return "missing" if v is None else f"{v:.6g}"


def compare_run(
    run: Path = typer.Argument(..., help="Run directory (or its cells.parquet / cells.csv)."),
    baseline: Path = typer.Argument(..., help="Baseline CSV, e.g. experiments/baselines/ci.csv."),
    tolerance: Optional[List[str]] = typer.Option(None, "--tolerance", help="METRIC=X overrides the "
                                                  "baseline's tolerance (repeatable)."),
    show_all: bool = typer.Option(False, "--all", help="List the checks within tolerance too."),
    skip_cell: Optional[List[str]] = typer.Option(None, "--skip-cell", help="A cell whose checks are not made "
                                                  "(repeatable; said in the output): make regress passes the "
                                                  "cells a known defect killed in every try."),
) -> None:
    """Exit 1 and print a table when a metric of RUN is outside the baseline's tolerance."""
    console = Console(highlight=False, width=160)
    try:
        base = read_baseline(str(baseline))
        unknown = sorted(set(skip_cell or []) - set(base["cell_id"]))
        if unknown:
            raise CompareError(f"--skip-cell {unknown[0]}: the baseline has no such cell")
        for cell in sorted(set(skip_cell or [])):
            console.print(f"not checked: {cell} ({int((base['cell_id'] == cell).sum())} checks skipped)")
        base = base[~base["cell_id"].isin(set(skip_cell or []))]
        checks = compare(load_results(run), base, parse_overrides(tolerance or []))
    except (CompareError, ResultsError) as e:
        _err.print(f"acbench compare: error: {e}", markup=False)
        raise typer.Exit(2)
    bad = [c for c in checks if not c.ok]
    shown = checks if show_all else bad
    if shown:
        t = Table(title=f"{len(bad)} of {len(checks)} checks outside tolerance")
        for col in ("cell", "metric", "baseline", "run", "difference", "allowed", "status"):
            t.add_column(col)
        for c in shown:
            diff = "" if c.value is None else f"{c.value - c.baseline:+.6g}"
            t.add_row(c.cell_id, c.metric, _fmt(c.baseline), _fmt(c.value), diff, c.allowed,
                      "ok" if c.ok else "OUTSIDE")
        console.print(t)
    console.print(f"{len(checks) - len(bad)} of {len(checks)} checks within tolerance")
    raise typer.Exit(1 if bad else 0)


def _deterministic(run: "pd.DataFrame") -> Callable[[str], bool]:
    """cell_id -> its approach is deterministic (approaches.py) and it ran one driver thread."""
    by_cell = run.set_index("cell_id")

    def det(cell: str) -> bool:
        r = by_cell.loc[cell]
        threads = r.get("p_threads", 1)
        a = lookup(str(r["approach"]))
        return a is not None and a.deterministic and (pd.isna(threads) or int(threads) == 1)
    return det


def baseline_cmd(runs: List[Path] = typer.Argument(..., help="Run directories to take the values from: one "
                                                   "(default tolerances) or several runs of the same spec "
                                                   "(tolerances from their spread)."),
                 out: Path = typer.Option(..., "--out", help="Baseline CSV to write."),
                 widen_from: Optional[Path] = typer.Option(None, "--widen", help="A baseline CSV whose tolerances "
                                                           "the new one never narrows (same cell and metric).")) -> None:
    """Write a baseline CSV. From one run: the default tolerances (acbench/compare.py). From
    several: value = median; exact where every run agrees and the cell is deterministic (or the
    metric structural), else 3 × the largest deviation (with a small floor). --widen OLD: no
    tolerance narrower than OLD's for the same check (regenerating from new runs keeps the spread
    seen before)."""
    try:
        frames = [load_results(r) for r in runs]
        b = make_baseline(frames[0]) if len(frames) == 1 else baseline_from_runs(frames, deterministic=_deterministic(frames[0]))
        if widen_from is not None:
            b = widen(b, read_baseline(str(widen_from)))
    except (ResultsError, CompareError) as e:
        _err.print(f"acbench baseline: error: {e}", markup=False)
        raise typer.Exit(2)
    out.parent.mkdir(parents=True, exist_ok=True)
    b.to_csv(out, index=False)
    exact = int((b["kind"] == "exact").sum())
    typer.echo(f"{len(b)} checks ({exact} exact) from {len(frames)} run(s) written to {out}")


def register(app: typer.Typer) -> None:
    app.command("compare")(compare_run)
    app.command("baseline")(baseline_cmd)
