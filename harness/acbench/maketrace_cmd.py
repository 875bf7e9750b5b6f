"""`acbench make-trace OUT --requests N --objects K [--theta T] [--one-hit F] [--size B]
[--size-max B] [--seed S] [--format csv|oracleGeneral]`: a synthetic trace to replay (maketrace.py)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from acbench.maketrace import TraceParams, TraceSpecError, write

_err = Console(stderr=True, soft_wrap=True, highlight=False)


def make_trace(
    out: Path = typer.Argument(..., help="The trace file to write (.csv: CSV time,key,size,op; else oracleGeneral)."),
    requests: int = typer.Option(..., "--requests", "-n", help="Requests (gets) in the trace."),
    objects: int = typer.Option(..., "--objects", "-k", help="Popular objects the Zipf draws choose among."),
    theta: float = typer.Option(0.99, "--theta", help="Zipf exponent of the popular objects (0 < θ <= 10)."),
    one_hit: float = typer.Option(0.0, "--one-hit", help="Share of requests for objects asked for once only "
                                  "(one-hit wonders), in [0, 1)."),
    size: int = typer.Option(100, "--size", help="Object size in bytes (with --size-max: the smallest)."),
    size_max: Optional[int] = typer.Option(None, "--size-max", help="Largest object size: sizes vary, log-uniform "
                                           "in [--size, --size-max], one per object."),
    seed: int = typer.Option(1, "--seed", help="Seed of the draws (the same seed writes the same file)."),
    fmt: Optional[str] = typer.Option(None, "--format", help="csv or oracleGeneral (default: from OUT's name)."),
) -> None:
    """Writes a synthetic request trace (exact Zipf plus a one-hit-wonder tail, fixed or varying
    sizes) that memcached-ac -o ac_driver_trace and a spec's [fixed] trace replay; prints its summary."""
    try:
        summary = write(out, TraceParams(requests, objects, theta, one_hit, size, size_max, seed), fmt)
    except TraceSpecError as e:
        _err.print(f"acbench make-trace: error: {e}", markup=False)
        raise typer.Exit(2)
    typer.echo(json.dumps(summary))


def register(app: typer.Typer) -> None:
    app.command("make-trace")(make_trace)
