"""`acbench run`: expand a spec, run the cells not yet finished, append one row per cell."""
from __future__ import annotations

import datetime
import json
import shutil
import signal
import time
import traceback
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)
from rich.table import Table

from acbench import decompose, leftovers, measure, paths, ramdev, server, sysinfo
from acbench.approaches import APPROACHES, get_approach, on_ram_device
from acbench.cell import SPILL_PARENT, OomKilled, opt_columns, run_cell
from acbench.memory import MemoryPlan, plan
from acbench.results import ResultsError, RunDir
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
    only = [a for a in spec.grid["approach"] if APPROACHES[a].in_process_only]
    if m == "network" and only:
        raise RunError(f"approach(es) {', '.join(only)} run only in-process (policy vma protects the slab memory "
                       "and a socket touching a protected page gets EFAULT): use [run] mode = \"in-process\" "
                       "or leave them out")
    return m


def cell_device(spec: Spec, cell: Cell) -> str:
    """Where the cell's spill directory and swap file go: the RAM device when the spec asks for it and
    the approach's hit rate does not depend on the device's speed (approaches.py ram_device), else the disk."""
    return "ram" if spec.run["spill_device"] == "ram" and on_ram_device(get_approach(cell.approach)) else "disk"


def plan_for(spec: Spec, cell: Cell, calibrate_missing: bool = True, spill_root: Path = SPILL_PARENT) -> MemoryPlan:
    """The cell's memory plan. [memory] allowance = "auto": the calibrated allowance (calibrate.py),
    run first if not cached; with calibrate_missing False it is not run: the plan then has allowance 0
    and allowance_source "to calibrate: ..." (the dry run lists it)."""
    from acbench import calibrate
    props = cell.properties
    mem = spec.memory
    fp = mem["item_footprint"]
    footprint = measure.item_footprint(cell.workload_file, props) if fp == "auto" else int(fp)
    rc = int(props["recordcount"])
    if mem["allowance"] == "auto":
        device = cell_device(spec, cell)
        req = calibrate.request_for(spec, cell, footprint, spill_root if device == "ram" else SPILL_PARENT, device)
        allow, source = calibrate.allowance_for(req, int(mem["allowance_margin"]), run=calibrate_missing)
    else:
        allow, source = int(mem["allowance"]), "spec"
    swap = None if mem["swap"] == "auto" else int(mem["swap"])
    return plan(get_approach(cell.approach), rc, footprint, cell.mem_ratio, allow or 0, swap, source)


def perf_available() -> bool:
    return shutil.which("perf") is not None


# per-operation figures of the run window (cell.run_window): column -> numerator
PER_OP = {"cpu_us_per_op": ("cpu_user_s", "cpu_sys_s"), "disk_reads_per_op": ("disk_read_ios",),
          "disk_read_bytes_per_op": ("disk_read_bytes",), "major_faults_per_op": ("major_faults",),
          "ctx_switches_per_op": ("vol_ctx_switches", "invol_ctx_switches")}


def per_op(metrics: dict[str, Any]) -> dict[str, float | None]:
    ops = metrics.get("operations") or 0
    out: dict[str, float | None] = {}
    for col, parts in PER_OP.items():
        vals = [metrics.get(p) for p in parts]
        if ops <= 0 or any(v is None for v in vals):
            out[col] = None
        else:
            out[col] = sum(vals) / ops * (1e6 if col == "cpu_us_per_op" else 1)
    return out


def resident_for(cell: Cell, p: MemoryPlan, metrics: dict[str, Any]) -> float | None:
    """R of the decomposition: what the approach held in RAM during the run (approaches.py)."""
    if get_approach(cell.approach).resident == "budget":
        return float(p.opt_capacity)
    r = metrics.get("resident_items_avg")
    return None if r is None else float(r)


def build_row(spec: Spec, cell: Cell, p: MemoryPlan, metrics: dict[str, Any], opt: dict[str, Any],
              run_id: str, machine: dict[str, Any], footprint: int, hist: Any = None) -> dict[str, Any]:
    row: dict[str, Any] = {"run_id": run_id, "status": "ok"}
    row.update(cell.params())
    row["item_footprint"] = footprint
    row.update(p.as_row())
    row.update(metrics)
    row.update(opt)
    row.update(per_op(metrics))
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
    if hist is not None and opt.get("opt_hits") is not None:
        row.update(decompose.decompose(opt["opt_hits"], hist, p.opt_capacity, resident_for(cell, p, metrics),
                                       row["hit_rate"], int(opt["opt_requests"])))
    row.update(machine)
    row["date"] = sysinfo.now()
    row["harness_version"] = HARNESS_VERSION
    return row


def failed_row(spec: Spec, cell: Cell, p: MemoryPlan, err: OomKilled, run_id: str,
               machine: dict[str, Any]) -> dict[str, Any]:
    """The row of a cell the cgroup killed: its plan, the group's peak and limit, no metrics."""
    row: dict[str, Any] = {"run_id": run_id, "status": "oom_killed"}
    row.update(cell.params())
    row.update(p.as_row())
    row.update({"cg_peak_bytes": err.peak, "cg_oom_kills": err.kills, "error": str(err)})
    row.update(machine)
    row["date"] = sysinfo.now()
    row["harness_version"] = HARNESS_VERSION
    return row


def dry_run_table(spec: Spec, cells: list[Cell], done: set[str]) -> Table:
    """Each cell's plan: item budget (what OPT gets) + allowance = cgroup limit, and where the allowance
    comes from; calibrations not cached yet are listed in the caption (never run here)."""
    t = Table(title=f"{spec.name}: {len(cells)} cells ({len(done & {c.cell_id for c in cells})} finished)")
    dists = sorted({str(c.properties.get("requestdistribution", "as in the workload file")) for c in cells})
    t.title += f", request distribution: {', '.join(dists)}"
    for col in ("cell", "approach", "workload", "θ", "M/D", "rep", "-m MB", "item budget", "allowance",
                "cgroup limit", "allowance source", "OPT capacity", "status"):
        t.add_column(col)
    pending: dict[str, tuple[str, int]] = {}
    for c in cells:
        p = plan_for(spec, c, calibrate_missing=False)
        todo = p.allowance_source.startswith("to calibrate")
        if todo:
            from acbench import calibrate
            req = calibrate.request_for(spec, c, p.data_bytes // int(c.properties["recordcount"]),
                                        device=cell_device(spec, c))
            pending[str(req.cache_file())] = (req.describe(), len(req.sizes))
        t.add_row(c.cell_id, c.approach, c.workload, f"{c.zipf_theta:g}", f"{c.mem_ratio:g}", str(c.repetition),
                  str(p.item_mb), f"{p.item_budget_bytes / 2**20:.1f} MiB",
                  "?" if todo else f"{p.allowance_bytes / 2**20:.1f} MiB",
                  "?" if todo else f"{p.limit_bytes / 2**20:.1f} MiB", p.allowance_source, str(p.opt_capacity),
                  "finished" if c.cell_id in done else "to run")
    if pending:
        runs = sum(n for _, n in pending.values())
        t.caption = (f"{len(pending)} allowance calibrations ({runs} runs) are not cached: `acbench run` runs each"
                     f" before its first cell, `python3 -m acbench.calibrate SPEC` runs them all now: "
                     + ", ".join(d for d, _ in pending.values()))
    return t


def ram_device_bytes(spec: Spec, cells: list[Cell]) -> int:
    """The RAM device's size for [run] spill_device = "ram": room for the largest cell's spill files
    (3 × its data: blocks rewritten by merges, files not yet compacted) and its swap file, plus 1 GiB.
    zram takes RAM only for what is written and not yet discarded (compressed)."""
    need = 0
    for c in cells:
        if cell_device(spec, c) != "ram":
            continue
        p = plan_for(spec, c, calibrate_missing=False)
        need = max(need, 3 * p.data_bytes + p.swap_bytes)
    return need + 2**30


def _sigterm(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


# [run] settings that change what a cell measures: a run directory keeps one set of them
MEASURED_RUN_SETTINGS = ("server_threads", "network_conns", "network_depth", "driver_depth", "io_engine",
                         "io_direct")


def run_spec(spec_path: Path, results: Path, run_id: str | None, force: bool, dry_run: bool,
             mode: str | None, console: Console, spill_device: str | None = None,
             redo: list[str] | None = None, run_overrides: dict[str, Any] | None = None,
             only: list[str] | None = None) -> int:
    spec = load_spec(spec_path, run_overrides)
    from acbench import core
    missing = [str(paths.binary(n)) for n in ("memcached-ac", "ycsb-mc", "ycsb-trace") if not paths.binary(n).exists()]
    missing += [str(core.lib_path())] if not core.lib_path().exists() else []
    if missing:
        raise RunError(f"{', '.join(missing)} missing: build them with `make` (or point ACBENCH_BIN at a "
                       "directory that has the tools, ACOPT_LIB at libacopt.so)")
    for flag, names in (("--redo", redo), ("--only", only)):
        unknown = sorted(set(names or []) - set(spec.grid["approach"]))
        if unknown:
            raise RunError(f"{flag} {', '.join(unknown)}: not an approach of {spec.path.name}; accepted: "
                           f"{', '.join(spec.grid['approach'])}")
    if spill_device is not None:
        spec.run["spill_device"] = spill_device
    cells = [c for c in spec.cells() if not only or c.approach in only]
    run_id = run_id or default_run_id()
    rd = RunDir(results / spec.name / run_id)
    on = rd.finished_on()          # finished cells -> the device their spill files were on
    done = set(on)
    if dry_run:
        console.print(dry_run_table(spec, cells, done))
        console.print(f"results would go to {rd.path}")
        return 0
    # before any cell: what a SIGKILLed acbench left (its server, cgroup, swap file, page-cluster,
    # spill directories; one stderr line each). A live acbench's are never touched.
    leftovers.cleanup_before_run()
    mode = resolve_mode(spec, mode)
    use_perf = bool(spec.run["perf"]) and perf_available()
    machine = sysinfo.machine()
    # not finished, or finished on another device than it gets now (approaches.py ram_device
    # changed, e.g. measured rate-dependent): run
    todo = [c for c in cells if force or c.approach in (redo or []) or on.get(c.cell_id) != cell_device(spec, c)]
    skipped = len(cells) - len(todo)
    # every `acbench run` of this run directory is one session (a resumed grid has several): when it
    # started and ended, its revision, how many cells it ran; the grid's wall time is their sum
    try:
        old_meta = rd.read_meta()
    except ResultsError as e:
        raise RunError(str(e)) from None
    if (done and not force and old_meta.get("spill_device", "disk") != spec.run["spill_device"]):
        raise RunError(f"{rd.path} holds {len(done)} cells run with spill_device = {old_meta.get('spill_device', 'disk')}; "
                       f"resuming it with {spec.run['spill_device']} would mix devices: use another --run-id, the same "
                       "device, or --force to redo every cell")
    settings = {k: spec.run[k] for k in MEASURED_RUN_SETTINGS}
    if done and not force:
        # a run directory from before run_settings were kept ran its spec's own settings
        old = old_meta.get("run_settings") or {k: v for k, v in load_spec(spec_path).run.items()
                                               if k in MEASURED_RUN_SETTINGS}
        differ = [f"{k} = {old.get(k)!r} there, {settings[k]!r} now" for k in MEASURED_RUN_SETTINGS
                  if k in old and old[k] != settings[k]]
        if differ:
            raise RunError(f"{rd.path} holds {len(done)} cells run with other [run] settings ({'; '.join(differ)}): "
                           "resuming would mix them; use another --run-id, the same settings, or --force")
    sessions = list(old_meta.get("sessions") or [])
    session: dict[str, Any] = {"started": sysinfo.now(), "git_revision": machine.get("git_revision"),
                               "binary_sha256": machine.get("binary_sha256"),
                               "spill_device": spec.run["spill_device"], "cells_to_run": len(todo)}
    sessions.append(session)
    meta = {"spec": str(spec.path.resolve()), "spec_text": spec.path.read_text(), "run_id": run_id,
            "mode": mode, "perf": use_perf, "spill_device": spec.run["spill_device"], "run_settings": settings,
            "started": session["started"], "sessions": sessions, **machine}
    rd.write_meta(meta)
    t_start = time.monotonic()
    if skipped:
        console.print(f"{skipped} of {len(cells)} cells already finished in {rd.path} (--force redoes them)")
    on_ram = [c for c in todo if cell_device(spec, c) == "ram"]
    device = ramdev.RamDevice(ram_device_bytes(spec, on_ram)) if on_ram else None
    old = signal.signal(signal.SIGTERM, _sigterm)
    failed: list[str] = []
    refused: list[str] = []
    finished = 0
    try:
        ram_root = device.start() if device is not None else None
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
                    dev = cell_device(spec, c)
                    spill_root = ram_root if dev == "ram" and ram_root is not None else SPILL_PARENT
                    p = plan_for(spec, c, spill_root=spill_root)
                    try:
                        metrics = run_cell(c, p, spec.run, mode, cdir, use_perf, spill_root, dev)
                    except OomKilled as e:
                        failed.append(c.cell_id)
                        rd.append(failed_row(spec, c, p, e, run_id, machine))
                        (cdir / "error.txt").write_text(str(e) + "\n")
                        console.print(f"[red]cell {c.cell_id}: {e}[/red]", markup=True, highlight=False)
                        bar.advance(task)
                        continue
                    opt, hist = opt_columns(c, p, metrics.pop("opt_skip_requests"))
                    fp = p.data_bytes // int(c.properties["recordcount"])
                    row = build_row(spec, c, p, metrics, opt, run_id, machine, fp, hist)
                    (cdir / "row.json").write_text(json.dumps(row, indent=1, default=str) + "\n")
                    rd.append(row)
                    finished += 1
                    if row.get("ac_refused_items"):
                        refused.append(f"{c.cell_id} ({row['ac_refused_items']})")
                        console.print(f"[yellow]cell {c.cell_id}: the server refused {row['ac_refused_items']} "
                                      "requests (ac_refused_items; stats anticache refused_* says why)[/yellow]",
                                      markup=True, highlight=False)
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
        session.update(finished=sysinfo.now(), wall_s=round(time.monotonic() - t_start, 1),
                       cells_run=finished, cells_failed=len(failed))
        # a session without wall_s was killed: the sum counts the finished ones, and says how many were not
        meta["wall_s"] = round(sum(float(x.get("wall_s") or 0) for x in sessions), 1)
        meta["sessions_unfinished"] = sum(1 for x in sessions if x.get("wall_s") is None)
        rd.write_meta(meta)
        if device is not None:
            try:
                device.stop()
            except ramdev.RamDeviceError as e:
                console.print(f"[red]acbench run: {e}[/red]", markup=True, highlight=False)
                failed.append("RAM device")
    console.print(f"{finished} cells run, {skipped} skipped, {len(failed)} failed; results: {rd.path}")
    if refused:
        console.print(f"cells with refused requests: {', '.join(refused)}", highlight=False)
    return 1 if failed else 0
