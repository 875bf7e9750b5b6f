"""`acbench rerun [--stop-by WHEN] [--grid G ...] [--stage DIR] [--results DIR] [--run-id ID] [--status]
[--finish] [--redo-stale] [--take-over G]`: the paper's grids rerun in pieces that each end by a deadline and stage their rows in
the repository (rerun.py)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from acbench import paths, rerun
from acbench.deadline import StopByError, parse_stop_by
from acbench.ramdev import RamDeviceError
from acbench.runner import RunError, run_spec
from acbench.spec import SpecError

_err = Console(stderr=True, soft_wrap=True, highlight=False, emoji=False)
STAGE = Path("experiments") / "results" / "rerun"


def main(
    stop_by: Optional[str] = typer.Option(None, "--stop-by", help="Run the grids in order until this time (+2h, "
                                          "05:10 UTC, 2026-11-30T05:10): no cell is started that is expected to "
                                          "run past it; each grid's rows are staged when it stops."),
    grid: Optional[list[str]] = typer.Option(None, "--grid", help="Only these grids, in this order (repeatable; "
                                             f"default, in order: {', '.join(rerun.GRIDS)})."),
    stage: Optional[Path] = typer.Option(None, "--stage", help=f"Where the pieces stage their rows, one directory "
                                         f"per machine (default: {STAGE})."),
    results: Optional[Path] = typer.Option(None, "--results", help="Results root of the run directories "
                                           "(default: build/results)."),
    run_id: str = typer.Option("rerun", "--run-id", help="Run id of each grid's run directory."),
    status: bool = typer.Option(False, "--status", help="Print where each grid stands on this machine (and on the "
                                "others that hold it); run nothing."),
    finish: bool = typer.Option(False, "--finish", help="Every grid complete on one binary, grids compared within a "
                                "slice on one machine: copy the staged grids to experiments/results/<grid>/; run nothing."),
    redo_stale: bool = typer.Option(False, "--redo-stale", help="Run again the finished cells whose settings are not "
                                    "their spec's now (a spec changed after they ran), instead of refusing the grid."),
    take_over: Optional[list[str]] = typer.Option(None, "--take-over", help="Run this grid and the grids of its unit "
                                                  "here from their first cell although another machine started "
                                                  "them (repeatable; --status names the skipped ones)."),
) -> None:
    """Rerun the paper's grids in pieces (harness/README.md "The rerun in pieces")."""
    grids = tuple(grid or rerun.GRIDS)
    unknown = [g for g in (*grids, *(take_over or ())) if g != rerun.FIG2
               and not (paths.top() / "experiments" / f"{g}.toml").exists()]
    if unknown:
        _err.print(f"acbench rerun: error: --grid/--take-over {', '.join(unknown)}: no experiments/<grid>.toml; accepted: "
                   f"{', '.join(rerun.GRIDS)}")
        raise typer.Exit(2)
    if (stop_by is None) == (not status and not finish) or (status and finish):
        _err.print("acbench rerun: error: give one of --stop-by WHEN (run a piece), --status or --finish")
        raise typer.Exit(2)
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 200)
    try:
        deadline = parse_stop_by(stop_by) if stop_by is not None else None
        facts = rerun.machine_facts()
        root = paths.from_home(stage) if stage is not None else paths.top() / STAGE
        if status or finish:
            if not rerun.machines(root):
                raise rerun.RerunError(f"{root}: no rerun staged on any machine")
            here = root / rerun.machine_slug(facts)      # maybe none staged here yet: read, not made
        else:
            pin = rerun.check_pin(root, git_head, not (os.environ.get("ACBENCH_BIN") or os.environ.get("ACOPT_LIB")))
            console.print(f"binaries of revision {pin['revision'][:12]} (pinned {pin['pinned']}): "
                          + ", ".join(f"{k} {v}" for k, v in sorted(pin["binaries"].items())))
            here = rerun.stage_dir(root, facts)
        if status:
            console.print(f"{here} ({facts['cpu_model']}, {facts['cpus']} cpus, kernel {facts['kernel']}; "
                          f"machines staged: {', '.join(m.name for m in rerun.machines(root))}):")
            for line in rerun.status_lines(here, grids):
                console.print("  " + line)
            return
        if finish:
            for d, m in rerun.finish(root, paths.top() / "experiments" / "results", grids):
                console.print(f"published {d} (from {m})")
            return
        assert deadline is not None

        def run_grid(spec: Path, res: Path, rid: str, until: float, busy: float, prior: dict[str, list[float]]) -> int:
            return run_spec(spec, res, rid, False, False, None, console, stop_by=until, redo_busy=busy,
                            prior_walls=prior, redo_stale=redo_stale, prior_slices=rerun.prior_slices(spec.stem))

        signal.signal(signal.SIGTERM, _interrupt)      # stop the piece (a grid's cell or Fig 2 cleaned up)
        rc = rerun.run_piece(here, results or paths.default_results(), run_id, deadline, grids, run_grid, run_fig2,
                             console.print, pin["binaries"].get("memcached-ac"), tuple(take_over or ()))
    except (rerun.RerunError, SpecError, RunError, RamDeviceError, StopByError) as e:
        _err.print(f"acbench rerun: error: {e}", markup=False)
        raise typer.Exit(2)
    except KeyboardInterrupt:
        _err.print("acbench rerun: interrupted; what each grid finished is in its run directory (the same command "
                   "resumes and stages it)")
        raise typer.Exit(130)
    for line in rerun.status_lines(here, grids):
        console.print("  " + line)
    raise typer.Exit(rc)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def run_fig2(out: Path) -> int:
    """`acbench fig2 --out OUT`; interrupted, it is asked to stop (SIGTERM: it cleans up) and waited for."""
    child = subprocess.Popen([sys.executable, "-m", "acbench", "fig2", "--out", str(out)])
    try:
        return child.wait()
    except KeyboardInterrupt:
        child.send_signal(signal.SIGTERM)
        child.wait()
        raise


def git_head() -> str:
    """The checkout's commit, '-dirty' when its tracked files (results aside) differ from it."""
    from acbench import sysinfo
    p = subprocess.run(["git", "-C", str(paths.top()), "rev-parse", "HEAD"], capture_output=True, text=True)
    if p.returncode != 0:
        raise rerun.RerunError(f"git rev-parse HEAD in {paths.top()}: {p.stderr.strip()}; the first piece pins "
                               "the checkout's commit")
    return p.stdout.strip() + ("-dirty" if sysinfo.git_revision().endswith("-dirty") else "")


def register(app: typer.Typer) -> None:
    app.command("rerun")(main)
