"""`acbench publish RUN DEST`: a run's rows as committed data — DEST/cells.csv (every row, every
column: the cell's parameters, memory plan, measurements, OPT, git revision, machine and date) and
DEST/run.json (the spec's text, the sessions that ran it and their wall time). `make paper` calls it
for each paper-scale grid with DEST = experiments/results/<spec name>, so that the notebooks render
the paper's figures from a fresh clone without re-running anything."""
from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

_err = Console(stderr=True, soft_wrap=True, highlight=False)


def summary(df, meta: dict) -> str:
    """One line: cells by status, revisions, dates, the grid's wall time."""
    status = df["status"].fillna("ok").value_counts() if "status" in df.columns else {"ok": len(df)}
    parts = [f"{len(df)} cells (" + ", ".join(f"{n} {s}" for s, n in sorted(dict(status).items())) + ")"]
    if "git_revision" in df.columns:
        parts.append("revision " + ", ".join(sorted(str(r) for r in df["git_revision"].dropna().unique())))
    if "date" in df.columns and df["date"].notna().any():
        parts.append(f"dates {df['date'].min()} .. {df['date'].max()}")
    if meta.get("wall_s") is not None:
        wall = f"wall time {float(meta['wall_s']) / 3600:.2f} h in {len(meta.get('sessions') or [])} session(s)"
        if float(meta.get("given_up_s") or 0) > 0:
            wall += f", {float(meta['given_up_s']) / 3600:.2f} h of it given up to other work (hold-machine)"
        parts.append(wall)
    return "; ".join(parts)


def publish(run: Path = typer.Argument(..., help="A run directory of `acbench run` (cells.parquet)."),
            dest: Path = typer.Argument(..., help="Where to write cells.csv and run.json, e.g. "
                                                   "experiments/results/fig3-paper."),
            ) -> None:
    """Writes DEST/cells.csv and DEST/run.json from RUN, and prints what they hold."""
    from acbench.results import ResultsError, RunDir, load_results, write_published
    try:
        df = load_results(run)
        meta = RunDir(Path(run)).read_meta()
    except ResultsError as e:
        _err.print(f"acbench publish: error: {e}", markup=False)
        raise typer.Exit(2)
    if df.empty:
        _err.print(f"acbench publish: error: {run}: no rows to publish", markup=False)
        raise typer.Exit(2)
    stale = stale_rows(df)
    if stale.any():
        print(f"left out {int(stale.sum())} rows on the RAM device of approaches that may not use it "
              "(approaches.py ram_device; `acbench run` redoes them on the disk): "
              + ", ".join(sorted(df.loc[stale, "approach"].unique())))
        df = df[~stale]
    write_published(df, meta, dest)
    print(f"{dest}: {summary(df, meta)}")


def stale_rows(df):
    """Rows run on the RAM device by an approach whose hit rate depends on the request rate: they
    predate its ram_device setting and are run again on the disk by a resumed `acbench run`."""
    import pandas as pd
    from acbench.approaches import lookup, on_ram_device
    if "spill_device" not in df.columns or "approach" not in df.columns:
        return pd.Series(False, index=df.index)
    allowed = df["approach"].map(lambda a: on_ram_device(x) if (x := lookup(str(a))) is not None else True)
    return (df["spill_device"].fillna("disk") == "ram") & ~allowed


def register(app: typer.Typer) -> None:
    app.command("publish")(publish)
