"""`acbench fig2 [--out DIR] [--records N] [--reads N] [--cg-reads N] [--repeats N] [--theta T]
[--methods a,b,...] [--no-callgrind]`: Fig 2 of Zhang et al. (ICDE 2015), the CPU cost of access tracking."""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from acbench import fig2, paths

_err = Console(stderr=True, soft_wrap=True, highlight=False)


def _write_csv(path: Path, rows: list[dict]) -> None:
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def run_fig2(
    out: Optional[Path] = typer.Option(None, "--out", help="Output directory (default build/results/fig2)."),
    records: int = typer.Option(100_000, "--records", help="YCSB records (10 x 100 B), all held in RAM."),
    reads: int = typer.Option(10_000_000, "--reads", help="Reads per timed run (long enough for several of "
                              "vma's 1 s protection resets)."),
    cg_reads: int = typer.Option(200_000, "--cg-reads", help="Reads in the callgrind run of each method."),
    repeats: int = typer.Option(3, "--repeats", help="Timed runs per method (the median is reported)."),
    theta: float = typer.Option(0.99, "--theta", help="Zipf θ of the reads (true Zipf over the records)."),
    methods: Optional[str] = typer.Option(
        None, "--methods", help="Comma-separated tracking methods (default all): "
        + ", ".join(m.name for m in fig2.METHODS) + "; none is the baseline and is required."),
    no_callgrind: bool = typer.Option(False, "--no-callgrind", help="Time only (no instruction or cache counts)."),
) -> None:
    """Per access: instructions, L1I and L1D misses (callgrind's cache simulator) and time (runs
    without instrumentation) that each access-tracking method adds to the in-memory request path,
    as % of stock memcached. Writes fig2.csv, fig2-runs.csv, fig2.png/.pdf and callgrind/*.out."""
    names = tuple(fig2.BY_NAME) if methods is None else tuple(s.strip() for s in methods.split(",") if s.strip())
    cfg = fig2.Config(records=records, reads=reads, cg_reads=cg_reads, repeats=repeats, theta=theta, methods=names)
    outdir = out or paths.default_results() / "fig2"
    try:
        cfg.check()
        if not paths.binary("memcached-ac").exists():
            raise fig2.Fig2Error(f"{paths.binary('memcached-ac')} not found: run `make -C memcached` first")
        rows, runs = fig2.measure(cfg, outdir, callgrind=not no_callgrind,
                                  progress=lambda s: _err.print(s, markup=False))
    except fig2.Fig2Error as e:
        _err.print(f"acbench fig2: error: {e}", markup=False)
        raise typer.Exit(2 if isinstance(e, fig2.Fig2UsageError) else 1)
    _write_csv(outdir / "fig2.csv", rows)
    _write_csv(outdir / "fig2-runs.csv", runs)
    from acplot.fig2 import METRICS, plot_fig2
    import pandas as pd
    df = pd.DataFrame(rows)
    figs = plot_fig2(df, outdir / "fig2")
    cols = ["tracking_method", "instructions_per_access", "l1i_misses_per_access", "l1d_misses_per_access",
            "ns_per_access", *(c for c, _ in METRICS)]
    typer.echo(df[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}"))
    for p in [outdir / "fig2.csv", outdir / "fig2-runs.csv", *figs]:
        typer.echo(str(p))


def register(app: typer.Typer) -> None:
    app.command("fig2")(run_fig2)
