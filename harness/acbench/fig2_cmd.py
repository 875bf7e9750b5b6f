"""`acbench fig2 [--out DIR] [--records N] [--reads N] [--cg-reads N] [--repeats N] [--theta T,T]
[--methods a,b,...] [--no-callgrind] [--allow-big-granules]`: Fig 2 of Zhang et al. (ICDE 2015), the
CPU cost of access tracking."""
from __future__ import annotations

import csv
import math
import signal
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console

from acbench import fig2, paths

_err = Console(stderr=True, soft_wrap=True, highlight=False)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _write_csv(path: Path, rows: list[dict]) -> None:
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def _num(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:.4f}" if abs(v) < 1 else f"{v:.3f}" if abs(v) < 100 else f"{v:.1f}"


def _pct(v: Any, noise: bool) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:+.1f}{'*' if noise else ''}"


def table(rows: list[dict[str, Any]], floor: float) -> str:
    """Per method and θ: each per-read value beside its overhead (% of the baseline); an L1
    percentage whose method or baseline misses per read are under `floor` is marked *."""
    head = ["method", "θ", "instr/read", "%", "L1I/read", "%", "L1D/read", "%", "ns/read", "%",
            "user ns", "sys ns", "CPU %", "faults/read", "ctx sw/read"]
    base = {r["zipf_theta"]: r for r in rows if r["tracking_method"] == fig2.BASELINE}
    lines = [head]
    for r in rows:
        b = base.get(r["zipf_theta"], {})

        def noise(col: str) -> bool:
            vals = [r.get(col), b.get(col)]
            return any(isinstance(v, float) and not math.isnan(v) and v < floor for v in vals)
        lines.append([r["tracking_method"], f"{r['zipf_theta']:g}",
                      _num(r["instructions_per_access"]), _pct(r["instructions_overhead_pct"], False),
                      _num(r["l1i_misses_per_access"]), _pct(r["l1i_overhead_pct"], noise("l1i_misses_per_access")),
                      _num(r["l1d_misses_per_access"]), _pct(r["l1d_overhead_pct"], noise("l1d_misses_per_access")),
                      _num(r["ns_per_access"]), _pct(r["time_overhead_pct"], False),
                      _num(r["user_ns_per_access"]), _num(r["sys_ns_per_access"]), _pct(r["cpu_overhead_pct"], False),
                      _num(r["faults_per_access"]), _num(r["ctx_switches_per_access"])])
    widths = [max(len(x[i]) for x in lines) for i in range(len(head))]
    text = "\n".join("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(x, widths)))
                     for x in lines)
    return (text + f"\n% = overhead against {fig2.BASELINE} at the same θ (fig2.csv: *_overhead_pct; against "
            f"stock memcached, segmented LRU on: *_overhead_vs_none_pct). * = L1 misses per read under "
            f"{floor:g} in the method or the baseline: a ratio of noise (the figure leaves the bar out).")


def run_fig2(
    out: Optional[Path] = typer.Option(None, "--out", help="Output directory (default build/results/fig2)."),
    records: int = typer.Option(fig2.RECORDS, "--records", help="YCSB records (10 x 100 B), all held in RAM "
                                "(the paper's 1,000,000; -m is 1600 B per record + 64 MiB). At least 100."),
    reads: int = typer.Option(10_000_000, "--reads", help="Reads per timed run (long enough for several of "
                              "vma's 1 s protection resets)."),
    cg_reads: int = typer.Option(200_000, "--cg-reads", help="Reads in the callgrind run of each method."),
    repeats: int = typer.Option(3, "--repeats", help="Timed runs per method (the median is reported)."),
    theta: str = typer.Option(",".join(f"{t:g}" for t in fig2.THETAS), "--theta",
                              help="Comma-separated Zipf θ values of the reads (true Zipf over the records), "
                              "each in the open interval (0, 1); every method runs at each; one figure panel per θ."),
    methods: Optional[str] = typer.Option(
        None, "--methods", help="Comma-separated tracking methods (default all): "
        + ", ".join(m.name for m in fig2.METHODS) + f"; {fig2.BASELINE} is the baseline and is required."),
    no_callgrind: bool = typer.Option(False, "--no-callgrind", help="Time only (no instruction or cache counts)."),
    allow_big_granules: bool = typer.Option(
        False, "--allow-big-granules", help="If vm.max_map_count cannot be raised to what 4 KiB vma granules "
        "need (not root, read-only /proc/sys), let vma use the smallest bigger granule that fits (rows say "
        "which, vma_granule_bytes) instead of failing. Without it, that is an error naming the sysctl."),
) -> None:
    """Per access: instructions, L1I and L1D misses (callgrind's cache simulator), time, user and
    system CPU time (getrusage of the read phase) and page faults and context switches (perf
    software counters) that each access-tracking method adds to the in-memory request path, as %
    of none-flat (stock memcached with its segmented LRU off), at each θ. vma runs with 4 KiB
    protection granules: vm.max_map_count is raised for its runs and restored after. Writes
    fig2.csv, fig2-runs.csv, fig2.png/.pdf and theta-T/ (drivers' JSON, callgrind/*.out, perf/*.txt)."""
    names = tuple(fig2.BY_NAME) if methods is None else tuple(s.strip() for s in methods.split(",") if s.strip())
    outdir = out or paths.default_results() / "fig2"
    try:
        cfg = fig2.Config(records=records, reads=reads, cg_reads=cg_reads, repeats=repeats,
                          thetas=fig2.parse_thetas(theta), methods=names, allow_big_granules=allow_big_granules)
        cfg.check()
        if not paths.binary("memcached-ac").exists():
            raise fig2.Fig2Error(f"{paths.binary('memcached-ac')} not found: run `make -C memcached` first")
        outdir.mkdir(parents=True, exist_ok=True)
        # SIGTERM as Ctrl-C: the runs are killed and vm.max_map_count restored on the way out
        old = signal.signal(signal.SIGTERM, _interrupt)
        try:
            rows, runs = fig2.measure(cfg, outdir, callgrind=not no_callgrind,
                                      progress=lambda s: _err.print(s, markup=False))
        finally:
            signal.signal(signal.SIGTERM, old)
    except fig2.Fig2Error as e:
        _err.print(f"acbench fig2: error: {e}", markup=False)
        raise typer.Exit(2 if isinstance(e, fig2.Fig2UsageError) else 1)
    except KeyboardInterrupt:
        _err.print("acbench fig2: interrupted: nothing left running, vm.max_map_count as it was", markup=False)
        raise typer.Exit(130)
    _write_csv(outdir / "fig2.csv", rows)
    _write_csv(outdir / "fig2-runs.csv", runs)
    from acplot.fig2 import MISS_FLOOR, plot_fig2
    import pandas as pd
    figs = plot_fig2(pd.DataFrame(rows), outdir / "fig2")
    typer.echo(table(rows, MISS_FLOOR))
    for p in [outdir / "fig2.csv", outdir / "fig2-runs.csv", *figs]:
        typer.echo(str(p))
    failed = [f"{r['tracking_method']} at θ {r['zipf_theta']:g}" for r in rows if r.get("callgrind_error")]
    if failed:
        _err.print(f"acbench fig2: error: the callgrind run of {', '.join(failed)} failed (fig2.csv "
                   "callgrind_error says why): those rows have no instruction or cache counts; everything "
                   "else was measured and written", markup=False)
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("fig2")(run_fig2)
