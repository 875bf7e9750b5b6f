"""`acbench cleanup`: remove what a dead (e.g. SIGKILLed) acbench left behind (leftovers.py)."""
from __future__ import annotations

import typer

from acbench import leftovers


HELP = "\n\n".join(" ".join(p.split()) for p in (
    """Remove what a dead acbench (SIGKILLed, OOM-killed, machine crashed mid-run) left behind.""",
    """Per dead run (owner PID gone, or reused: checked by its start time): kill the memcached-ac,
    perf and ycsb-mc processes it started (PID, start time and executable must match) and the
    memcached-ac processes in its cgroups; remove its acbench-* cgroups; swapoff and delete its
    swap files; restore vm.page-cluster to the value it recorded (only if it still holds the 0 it
    set and no live run has set it too); delete its spill and scratch directories.""",
    """One line per removal on stderr: "acbench: removed leftover ... of dead run pid N". What a
    live acbench made is never touched. `acbench run` does the same before its first cell.""",
    """Exit status 0, or 1 if something could not be removed (the run's marker is kept, so a
    later cleanup tries again). Markers: $ACBENCH_RUN_DIR (default /run/acbench) and acg's
    $ACG_RUN_DIR (default /run/acg).""",
))


def cleanup() -> None:
    """Remove what a dead acbench left behind (HELP)."""
    removed, failed, live = leftovers.cleanup()
    if live:
        typer.echo(f"live acbench runs, left alone: pid {', '.join(map(str, live))}")
    if not removed and not failed:
        typer.echo("nothing left behind by a dead acbench run")
    raise typer.Exit(1 if failed else 0)


def register(app: typer.Typer) -> None:
    app.command("cleanup", help=HELP, short_help=HELP.split("\n")[0])(cleanup)
