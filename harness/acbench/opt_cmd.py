"""`acbench opt TRACE --capacity N[,N...] [--bytes B[,B...]] [--score-from N] [--preload-writes N]
[--reads-only]`: prints JSON."""
from __future__ import annotations

import enum
import json
import re
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from acbench.opt import OptError, OptMemoryError, analyse
from acbench.units import UsageError, parse_capacities, parse_size

_err = Console(stderr=True, soft_wrap=True, highlight=False)


def parse_count(text: str, option: str, what: str) -> int:
    """A whole number >= 0 given on the command line."""
    if not re.fullmatch(r"\s*\d+\s*", text):
        raise UsageError(f"invalid {option} {text!r}: expected a whole number of {what} (0 or more), e.g. 1000")
    return int(text)


class Format(str, enum.Enum):
    auto = "auto"
    actrace = "actrace"
    oraclegeneral = "oraclegeneral"


def opt(
    trace: Path = typer.Argument(..., help="ACTRACE or libCacheSim oracleGeneral trace file."),
    capacity: Optional[str] = typer.Option(
        None, "--capacity", "-c", help="Cache sizes in objects, comma-separated (OPT demand/bypass, LRU)."),
    bytes_: Optional[str] = typer.Option(
        None, "--bytes", "-b",
        help="Cache sizes in bytes, comma-separated, e.g. 64M,1.5G (docs/sizes.txt) (PFOO-L lower bound and "
             "size-aware Belady upper bound on misses; exact variable-size OPT is NP-hard)."),
    fmt: Format = typer.Option(Format.auto, "--format", "-f", help="Trace format (auto: by the magic)."),
    max_memory: Optional[str] = typer.Option(
        None, "--max-memory", help="Memory limit, e.g. 4G (default: MemAvailable)."),
    no_lru: bool = typer.Option(False, "--no-lru", help="Skip the LRU stack-distance pass."),
    score_from: Optional[str] = typer.Option(
        None, "--score-from", help="Score only requests from this index of the file on (0-based); earlier "
        "ones (warm-up) still drive the cache. Default 0."),
    preload_writes: Optional[str] = typer.Option(
        None, "--preload-writes", help="Put one insert of each key 0..N-1 before the file's requests "
        "(the load phase of N records), unscored. Default 0."),
    reads_only: bool = typer.Option(
        False, "--reads-only", help="ACTRACE only: the old reads-only model for comparison: drop updates "
        "and inserts, count a read-modify-write as a plain read (writes are otherwise write-allocate)."),
    lru_curve: Optional[Path] = typer.Option(
        None, "--lru-curve", help="Write LRU hits for every capacity 1..distinct keys to this CSV."),
) -> None:
    """Belady's OPT (demand and bypass), exact LRU and variable-size bounds of a trace, as JSON.
    Writes are write-allocate; hits are counted for reads from --score-from on."""
    try:
        caps = parse_capacities(capacity, "--capacity", in_bytes=False) if capacity is not None else []
        bcaps = parse_capacities(bytes_, "--bytes", in_bytes=True) if bytes_ is not None else []
        limit = parse_size(max_memory, "--max-memory") if max_memory is not None else None
        if limit == 0:
            raise UsageError("--max-memory must be at least 1 byte")
        first = parse_count(score_from, "--score-from", "requests") if score_from is not None else 0
        preload = parse_count(preload_writes, "--preload-writes", "records") if preload_writes is not None else 0
    except UsageError as e:
        _err.print(f"acbench opt: error: {e}", markup=False)
        raise typer.Exit(2)
    try:
        report = analyse(trace, caps, bcaps, fmt.value, limit, lru=not no_lru, lru_curve_path=lru_curve,
                         reads_only=reads_only, score_from=first, preload_writes=preload)
    except OptError as e:
        _err.print(f"acbench opt: error: {e}", markup=False)
        raise typer.Exit(1 if isinstance(e, OptMemoryError) else 2)
    typer.echo(json.dumps(report, indent=2))


def register(app: typer.Typer) -> None:
    app.command("opt")(opt)
