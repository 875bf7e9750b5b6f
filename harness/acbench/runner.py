"""`acbench run`: expand a spec, run the cells not yet finished, append one row per cell."""
from __future__ import annotations

import datetime
import shutil
import signal
import traceback
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)
from rich.table import Table

from acbench import measure, server, sysinfo
from acbench.approaches import get_approach
from acbench.cell import opt_columns, run_cell
from acbench.memory import MemoryPlan, allowance, plan
from acbench.results import RunDir
from acbench.spec import Cell, Spec, load_spec

HARNESS_VERSION = "1"


class RunError(RuntimeError):
    pass


def default_run_id() -> str:
    return datetime.datetime.now().strftime("%Y%m%d-%H%M%S")


def resolve_mode(spec: Spec, mode: str | None) -> str:
    m = mode or spec.run["mode"]
    if m == "in-process" and not server.supports_driver():
        raise RunError("memcached-ac has no in-process driver (its -h lists no ac_driver): rebuild it "
                       "with `make -C memcached all`, or use --mode network / [run] mode = \"network\"")
    return m


def plan_for(spec: Spec, cell: Cell) -> MemoryPlan:
    props = cell.properties
    mem = spec.memory
    fp = mem["item_footprint"]
    footprint = measure.item_footprint(cell.workload_file, props) if fp == "auto" else int(fp)
    rc = int(props["recordcount"])
    if mem["allowance"] == "auto":
        allow = allowance(measure.base_rss(spec.run["server_threads"]), rc, int(mem["allowance_margin"]))
    else:
        allow = int(mem["allowance"])
    swap = None if mem["swap"] == "auto" else int(mem["swap"])
    return plan(get_approach(cell.approach), rc, footprint, cell.mem_ratio, allow, swap)


def perf_available() -> bool:
    return shutil.which("perf") is not None


def build_row(spec: Spec, cell: Cell, p: MemoryPlan, metrics: dict[str, Any], opt: dict[str, Any],
              run_id: str, machine: dict[str, Any], footprint: int) -> dict[str, Any]:
    row: dict[str, Any] = {"run_id": run_id}
    row.update(cell.params())
    row["item_footprint"] = footprint
    row.update(p.as_row())
    row.update(metrics)
    row.update(opt)
    hits, disk, miss = metrics.get("hits"), metrics.get("disk_hits"), metrics.get("misses")
    if hits is not None and disk is not None:
        served = hits + disk + (miss or 0)   # misses = dropped items for the memcached baseline
        row["hit_rate"] = hits / served if served else None
        row["reads_accounted"] = served == metrics.get("reads_total")
    else:
        row["hit_rate"] = None
        row["reads_accounted"] = None
    if row["hit_rate"] is not None and opt.get("opt_hit_rate") is not None:
        row["loss_pp"] = 100.0 * (opt["opt_hit_rate"] - row["hit_rate"])
    else:
        row["loss_pp"] = None
    row.update(machine)
    row["date"] = sysinfo.now()
    row["harness_version"] = HARNESS_VERSION
    return row


def dry_run_table(spec: Spec, cells: list[Cell], done: set[str]) -> Table:
    t = Table(title=f"{spec.name}: {len(cells)} cells ({len(done & {c.cell_id for c in cells})} finished)")
    for col in ("cell", "approach", "workload", "θ", "M/D", "rep", "-m MB", "cgroup limit", "OPT capacity", "status"):
        t.add_column(col)
    for c in cells:
        p = plan_for(spec, c)
        t.add_row(c.cell_id, c.approach, c.workload, f"{c.zipf_theta:g}", f"{c.mem_ratio:g}", str(c.repetition),
                  str(p.item_mb), f"{p.limit_bytes / 2**20:.1f} MiB", str(p.opt_capacity),
                  "finished" if c.cell_id in done else "to run")
    return t


def _sigterm(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def run_spec(spec_path: Path, results: Path, run_id: str | None, force: bool, dry_run: bool,
             mode: str | None, console: Console) -> int:
    spec = load_spec(spec_path)
    cells = spec.cells()
    run_id = run_id or default_run_id()
    rd = RunDir(results / spec.name / run_id)
    done = rd.finished()
    if dry_run:
        console.print(dry_run_table(spec, cells, done))
        console.print(f"results would go to {rd.path}")
        return 0
    mode = resolve_mode(spec, mode)
    use_perf = bool(spec.run["perf"]) and perf_available()
    machine = sysinfo.machine()
    todo = [c for c in cells if force or c.cell_id not in done]
    skipped = len(cells) - len(todo)
    rd.write_meta({"spec": str(spec.path.resolve()), "spec_text": spec.path.read_text(), "run_id": run_id,
                   "mode": mode, "perf": use_perf, "started": sysinfo.now(), **machine})
    if skipped:
        console.print(f"{skipped} of {len(cells)} cells already finished in {rd.path} (--force redoes them)")
    old = signal.signal(signal.SIGTERM, _sigterm)
    failed: list[str] = []
    finished = 0
    try:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                      console=console, transient=False) as bar:
            task = bar.add_task(spec.name, total=len(todo))
            for c in todo:
                bar.update(task, description=f"{spec.name}: {c.cell_id}")
                cdir = rd.cell_dir(c.cell_id)
                if cdir.exists():
                    shutil.rmtree(cdir)
                try:
                    p = plan_for(spec, c)
                    metrics = run_cell(c, p, spec.run, mode, cdir, use_perf)
                    opt = opt_columns(c, p, metrics.pop("opt_skip_requests"))
                    fp = p.data_bytes // int(c.properties["recordcount"])
                    row = build_row(spec, c, p, metrics, opt, run_id, machine, fp)
                    (cdir / "row.json").write_text(__import__("json").dumps(row, indent=1, default=str) + "\n")
                    rd.append(row)
                    finished += 1
                except Exception as e:  # noqa: BLE001 - one failed cell must not stop the run
                    failed.append(c.cell_id)
                    cdir.mkdir(parents=True, exist_ok=True)
                    (cdir / "error.txt").write_text(traceback.format_exc())
                    console.print(f"[red]cell {c.cell_id} failed:[/red] {e}", markup=True, highlight=False)
                bar.advance(task)
    except KeyboardInterrupt:
        console.print(f"interrupted: {finished} cells finished in this run, "
                      f"{len(rd.finished())} kept in {rd.path}; nothing left running")
        return 130
    finally:
        signal.signal(signal.SIGTERM, old)
    console.print(f"{finished} cells run, {skipped} skipped, {len(failed)} failed; results: {rd.path}")
    return 1 if failed else 0
