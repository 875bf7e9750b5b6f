"""`acbench tables RUN [--out DIR]`: Tables II and III of Zhang et al. (ICDE 2015) measured on the server — tracking
bytes per resident item and book-keeping bytes per spilled item, each as the paper's Eq. (1)
overhead ratio next to the paper's formula at our item size (analysis/acplot/overhead.py)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

_err = Console(stderr=True, soft_wrap=True, highlight=False)


def tables(run: Path = typer.Argument(..., help="A run directory of `acbench run` (cells.parquet or cells.csv), "
                                                 "or one such file."),
           out: Optional[Path] = typer.Option(None, "--out", help="Also write table2.csv, table3.csv and "
                                                                   "overhead-cells.csv to this directory."),
           ) -> None:
    """Prints Table II (access tracking) and Table III (book-keeping), means over the run's cells."""
    from acplot import ResultsError
    from acplot.overhead import overhead_cells, overhead_summary
    from acplot.runs import load_run
    try:
        cells = overhead_cells(load_run(run))
    except ResultsError as e:
        _err.print(f"acbench tables: error: {e}", markup=False)
        raise typer.Exit(2)
    t2, t3 = overhead_summary(cells, 2), overhead_summary(cells, 3)
    fmt = {"float_format": lambda v: f"{v:.3f}", "index": False}
    typer.echo("Table II: access tracking (bytes per resident item; Eq. (1) in %)")
    typer.echo(t2.to_string(**fmt))
    typer.echo("\nTable III: book-keeping (bytes per spilled item; Eq. (1) in %; block buffer apart)")
    typer.echo(t3.to_string(**fmt))
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        for name, frame in (("table2.csv", t2), ("table3.csv", t3), ("overhead-cells.csv", cells)):
            frame.to_csv(out / name, index=False)
            typer.echo(str(out / name))


def register(app: typer.Typer) -> None:
    app.command("tables")(tables)
