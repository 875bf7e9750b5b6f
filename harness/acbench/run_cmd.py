"""`acbench run SPEC [--run-id ID] [--force] [--redo APPROACH ...] [--dry-run] [--results DIR] [--mode MODE]
[--spill-device DEV] [--run-set KEY=VALUE ...] [--only APPROACH ...] [--repetitions N] [--allow-mixed] [--cluster ADDRESS]
[--cells-per-host K] [--stop-by WHEN] [--redo-busy SHARE]`."""
from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from acbench import paths
from acbench.deadline import StopByError, parse_stop_by
from acbench.ramdev import RamDeviceError
from acbench.runner import RunError, run_spec
from acbench.spec import SpecError, parse_run_setting

# emoji off: a value such as local:zero: is printed as given
_err = Console(stderr=True, soft_wrap=True, highlight=False, emoji=False)


class Mode(str, enum.Enum):
    in_process = "in-process"
    network = "network"


class SpillDevice(str, enum.Enum):
    disk = "disk"
    ram = "ram"


def run(
    spec: Path = typer.Argument(..., help="Experiment spec (TOML), e.g. experiments/demo.toml (a relative path "
                                "not found here is looked for in the home, see acbench --help)."),
    run_id: Optional[str] = typer.Option(None, "--run-id", help="Run directory name (default: date-time); "
                                         "an existing run id resumes: a finished cell is skipped when it ran "
                                         "with the settings it has now, and the run is refused, naming what "
                                         "changed, when it did not."),
    force: bool = typer.Option(False, "--force", help="Redo cells that are already finished."),
    allow_mixed: bool = typer.Option(False, "--allow-mixed", help="Resume although finished cells ran another "
                                     "build of the tools (only the binaries differ) or on another machine "
                                     "(kernel, CPU model or cores differ); each row keeps its binary_sha256 "
                                     "and machine, and run.json says mixed_binaries or mixed_machines."),
    redo: Optional[list[str]] = typer.Option(None, "--redo", help="Redo the finished cells of this approach "
                                             "(repeatable), e.g. after a change that concerns only it."),
    only: Optional[list[str]] = typer.Option(None, "--only", help="Run only the cells of this approach "
                                             "(repeatable); a later run of the same run id can add the others."),
    repetitions: Optional[int] = typer.Option(None, "--repetitions", help="Run only the first N repetitions of "
                                              "each cell (1 to the spec's [grid] repetition); a later run of the "
                                              "same run id adds the others, e.g. one repetition of every grid "
                                              "first."),
    stop_by: Optional[str] = typer.Option(None, "--stop-by", help="Start no process expected to run past this "
                                          "time (+2h, +90m, 05:10 UTC, 2026-11-30T05:10): the run ends at a cell "
                                          "boundary, exit status 3 when cells are left; the same command resumes."),
    redo_busy: Optional[float] = typer.Option(None, "--redo-busy", help="Run again the finished cells that ran "
                                              "beside other work: other processes' share of the machine's CPU "
                                              "over the cell (other_cpu_share) above this, e.g. 0.10."),
    dry_run: bool = typer.Option(False, "--dry-run", help="List the cells and their memory plan; run nothing."),
    results: Optional[Path] = typer.Option(None, "--results", help="Results root (default: build/results)."),
    mode: Optional[Mode] = typer.Option(None, "--mode", help="Override [run] mode of the spec."),
    spill_device: Optional[SpillDevice] = typer.Option(
        None, "--spill-device", help="Override [run] spill_device of the spec: disk, or ram (a zram device for "
        "the spill directories and swap files; hit rates only)."),
    run_set: Optional[list[str]] = typer.Option(
        None, "--run-set", help="Override one [run] setting of the spec, checked as the spec's own "
        "(repeatable), e.g. --run-set io_engine=uring --run-set driver_depth=32 --run-set io_direct=true; "
        "like every setting it is part of each cell's identity: a finished cell run with another value is "
        "not reused."),
    cluster: Optional[str] = typer.Option(
        None, "--cluster", help="Run the cells as tasks of a Dask cluster: a scheduler's address (tcp://HOST:8786; "
        "its workers started with --resources cell=1, one per host, each on a checkout and build of this "
        "revision), or local:N (N workers on this machine). Rows come back into the same run directory."),
    cells_per_host: int = typer.Option(
        1, "--cells-per-host", help="With --cluster: cells run side by side on one host (default 1); more only "
        "when every approach of the run is deterministic and drives one thread."),
) -> None:
    """Run every cell of SPEC: one row per cell in RESULTS/<spec>/<run-id>/cells.{parquet,csv}."""
    if run_id is not None and (not run_id or "/" in run_id or run_id in (".", "..")):
        _err.print(f"acbench run: error: --run-id {run_id!r}: accepted: a name without '/'")
        raise typer.Exit(2)
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 200)
    try:
        spec = paths.from_home(spec)
        overrides = dict(parse_run_setting(t) for t in run_set or [])
        if cluster is None and cells_per_host != 1:
            raise RunError(f"--cells-per-host {cells_per_host}: only with --cluster")
        placement = None
        if cluster is not None:
            from acbench.cluster import Cluster   # distributed is imported only for a cluster run
            placement = Cluster(cluster, cells_per_host)
        rc = run_spec(spec, results or paths.default_results(), run_id, force, dry_run,
                      mode.value if mode else None, console,
                      spill_device.value if spill_device else None, redo or [], overrides, only or [],
                      allow_mixed, placement, repetitions,
                      None if stop_by is None else parse_stop_by(stop_by), check_share(redo_busy))
    except (SpecError, RunError, RamDeviceError, StopByError) as e:
        _err.print(f"acbench run: error: {e}", markup=False)
        raise typer.Exit(2)
    raise typer.Exit(rc)


def check_share(share: float | None) -> float | None:
    if share is not None and not 0 <= share < 1:
        raise RunError(f"--redo-busy {share}: other_cpu_share is a fraction of the machine; accepted: 0 <= SHARE < 1 "
                       "(0.10: an idle machine's cells read up to 0.08)")
    return share


def register(app: typer.Typer) -> None:
    app.command("run")(run)
