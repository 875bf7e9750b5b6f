"""`acbench plot RUN_DIR [--out DIR]`: Fig 3 (loss vs OPT), Fig 4 (throughput / CPU / I/O), the
sensitivity sweeps (acbench/sweep.py) and scaling with threads (acbench/scaling.py)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from acbench.figures import PlotError, plot_decomposition, plot_fig3, plot_fig4
from acbench.results import ResultsError, RunDir, load_results
from acbench.scaling import plot_scaling
from acbench.sweep import plot_sweeps

_err = Console(stderr=True, soft_wrap=True, highlight=False)


def plot(run_dir: Path = typer.Argument(..., help="A run directory of `acbench run` (or its cells.parquet)."),
         out: Optional[Path] = typer.Option(None, "--out", help="Figure directory (default: RUN_DIR/figures)."),
         ) -> None:
    """Writes fig3-<workload>, loss-decomposed-<workload> and fig4-<workload> (.png and .pdf), and for
    each sweep of one option (approaches NAME{option=value}) sweep-<name>-<option>-<workload>
    (.png, .pdf, and .md: the best value per cell and how far the loss moves), and for a grid of
    several driver-thread counts scaling-<workload> (.png, .pdf, .md: throughput and per thread
    against threads, and the ratio to stock memcached)."""
    from acplot import ResultsError as AcplotError
    try:
        df = load_results(run_dir)
        if df.empty:
            raise ResultsError(f"{run_dir}: no rows")
        if "status" in df.columns and not (df["status"].fillna("ok") == "ok").any():
            counts = df["status"].value_counts()
            raise ResultsError(f"{run_dir}: no finished cell to plot: {len(df)} cells, "
                               + ", ".join(f"{n} {s}" for s, n in counts.items())
                               + " (each cell's error.txt under cells/ says why)")
        outdir = out or (run_dir if run_dir.is_dir() else run_dir.parent) / "figures"
        # the settings each cell ran with (run.json), for a sweep's base approach rows
        settings = RunDir(run_dir if run_dir.is_dir() else run_dir.parent).read_meta().get("cell_settings")
        paths = (plot_fig3(df, outdir) + plot_decomposition(df, outdir) + plot_fig4(df, outdir)
                 + plot_sweeps(df, outdir, settings if isinstance(settings, dict) else None)
                 + plot_scaling(df, outdir))
    except (ResultsError, PlotError, AcplotError) as e:
        _err.print(f"acbench plot: error: {e}", markup=False)
        raise typer.Exit(2)
    for p in paths:
        typer.echo(str(p))


def register(app: typer.Typer) -> None:
    app.command("plot")(plot)
