"""`acbench run`: expand a spec, run the cells not yet finished, append one row per cell.

run_spec's steps: load the spec and check the tools; pick the cells (--only); work out each
cell's identity (cellkey.py) and what resume keeps, reruns or refuses (resume_status); list the
plan (--dry-run) or start a session of the run directory, run the cells one by one (run_one), or
have a Placement run them elsewhere (cluster.py: each on a worker by the same execute_cell), and
close the session. A finished cell is skipped only when it ran with exactly the settings it would
run with now; otherwise the run is refused with what changed (--force, --redo or a new run id)."""
from __future__ import annotations

import datetime
import json
import shutil
import signal
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from rich.console import Console
from rich.markup import escape
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)
from rich.table import Table

from acbench import calibrate, cellkey, core, deadline, decompose, leftovers, paths, ramdev, server, sysinfo
from acbench import machine as machine_turn
from acbench.approaches import get_approach
from acbench.cell import CellError, OomKilled, opt_columns, run_cell
from acbench.memory import MemoryPlan, plan
from acbench.placement import SPILL_PARENT, cell_device, cell_repetition_mode, footprint, ram_device_bytes
from acbench.results import ResultsError, RunDir
from acbench.spec import Cell, Spec, load_spec
from acplot.runs import HOST_FACTS, fact_text

HARNESS_VERSION = "1"
STOPPED_BY = 3      # acbench run's exit status when --stop-by left cells to run


class RunError(RuntimeError):
    pass


def default_run_id() -> str:
    return datetime.datetime.now().strftime("%Y%m%d-%H%M%S")


def resolve_mode(spec: Spec, mode: str | None) -> str:
    m = mode or spec.run["mode"]
    if m == "in-process" and not server.supports_driver():
        raise RunError("memcached-ac has no in-process driver (its -h lists no ac_driver): rebuild it "
                       "with `make -C memcached all`, or use --mode network / [run] mode = \"network\"")
    only = [a for a in spec.grid["approach"] if get_approach(a).in_process_only]
    if m == "network" and only:
        raise RunError(f"approach(es) {', '.join(only)} run only in-process (policy vma protects the slab memory "
                       "and a socket touching a protected page gets EFAULT): use [run] mode = \"in-process\" "
                       "or leave them out")
    net = [a for a in spec.grid["approach"] if get_approach(a).network_only]
    if m == "in-process" and net:
        raise RunError(f"approach(es) {', '.join(net)} run only in network mode (extstore's reads finish on its IO "
                       "threads, which the in-process driver cannot wait for): use [run] mode = \"network\" "
                       "(or --mode network), or leave them out")
    return m


def plan_for(spec: Spec, cell: Cell, calibrate_missing: bool = True, spill_root: Path = SPILL_PARENT) -> MemoryPlan:
    """The cell's memory plan. [memory] allowance = "auto": the calibrated allowance (calibrate.py),
    run first if not cached; with calibrate_missing False it is not run: the plan then has allowance 0
    and allowance_source "to calibrate: ..." (the dry run lists it)."""
    props = cell.properties
    mem = spec.memory
    fp = footprint(spec, cell)
    rc = int(props["recordcount"])
    needs, offline = None, 0
    if mem["allowance"] == "auto":
        device = calibrate.plan_device(spec, cell)
        req = calibrate.request_for(spec, cell, fp, spill_root if device == "ram" else SPILL_PARENT, device)
        if mem["provisioning"] == "equal":
            allow, needs, offline, source = calibrate.equal_for(req, run=calibrate_missing)
        else:
            allow, source = calibrate.allowance_for(req, int(mem["allowance_margin"]), run=calibrate_missing)
    else:
        allow, source = int(mem["allowance"]), "spec"
    swap = None if mem["swap"] == "auto" else int(mem["swap"])
    return plan(get_approach(cell.approach), rc, fp, cell.mem_ratio, allow or 0, swap, source,
                mem["provisioning"], needs, offline)


def perf_available() -> bool:
    return shutil.which("perf") is not None


# per-operation figures of the run window (cell.run_window): column -> numerator
PER_OP = {"cpu_us_per_op": ("cpu_user_s", "cpu_sys_s"), "disk_reads_per_op": ("disk_read_ios",),
          "disk_read_bytes_per_op": ("disk_read_bytes",), "major_faults_per_op": ("major_faults",),
          "ctx_switches_per_op": ("vol_ctx_switches", "invol_ctx_switches")}


def per_op(metrics: dict[str, Any]) -> dict[str, float | None]:
    """Per-operation figures of the run window, and Fig 4's I/O panels: the spill device's read
    requests per second of the run and their mean latency (its read time over its reads)."""
    ops = metrics.get("operations") or 0
    out: dict[str, float | None] = {}
    for col, parts in PER_OP.items():
        vals = [metrics.get(p) for p in parts]
        if ops <= 0 or any(v is None for v in vals):
            out[col] = None
        else:
            out[col] = sum(vals) / ops * (1e6 if col == "cpu_us_per_op" else 1)
    reads, us, secs = metrics.get("disk_read_ios"), metrics.get("disk_read_time_us"), metrics.get("run_duration_s")
    out["disk_read_ops_s"] = reads / secs if reads is not None and secs else None
    out["disk_read_latency_us"] = us / reads if us is not None and reads else None
    return out


def resident_for(cell: Cell, p: MemoryPlan, metrics: dict[str, Any], footprint: int) -> float | None:
    """R of the decomposition: what the approach held in RAM during the run (approaches.py): its
    items, or for a kernel-paged approach the resident bytes of its slab mapping / the footprint."""
    if get_approach(cell.approach).resident == "pages":
        b = metrics.get("resident_bytes_avg")
        return None if b is None else float(b) / footprint
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
        row.update(decompose.decompose(opt["opt_hits"], hist, p.opt_capacity, resident_for(cell, p, metrics, footprint),
                                       row["hit_rate"], int(opt["opt_requests"])))
    row.update(machine)
    row["date"] = sysinfo.now()
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
    return row


def dry_run_table(spec: Spec, cells: list[Cell], status: ResumeStatus) -> Table:
    """Each cell's plan: item budget (what OPT gets) + allowance = cgroup limit, where the allowance
    comes from, and what resume does with it; calibrations not cached yet are listed in the caption
    (never run here)."""
    kept = {c.cell_id for c in status.kept}
    stale = {c.cell_id: why for c, why in status.stale}
    t = Table(title=f"{spec.name}: {len(cells)} cells ({len(kept)} finished, {len(stale)} finished with other settings)")
    dists = sorted({str(c.properties.get("requestdistribution", "as in the workload file")) for c in cells})
    t.title += f", request distribution: {', '.join(dists)}"
    for col in ("cell", "approach", "workload", "θ", "M/D", "rep", "-m MB", "item budget", "allowance",
                "cgroup limit", "allowance source", "OPT capacity", "status"):
        t.add_column(col)
    pending: dict[str, tuple[str, int]] = {}
    for c in cells:
        try:
            p = plan_for(spec, c, calibrate_missing=False)
        except ValueError as e:      # the approach needs more of the common limit than there is
            t.add_row(c.cell_id, c.approach, c.workload, f"{c.zipf_theta:g}", f"{c.mem_ratio:g}", str(c.repetition),
                      *["–"] * 6, f"cannot run: {e}")
            continue
        todo = p.allowance_source.startswith("to calibrate")
        if todo:
            req = calibrate.request_for(spec, c, p.data_bytes // int(c.properties["recordcount"]),
                                        device=calibrate.plan_device(spec, c))
            for r in calibrate.requests_of(spec, req):
                if calibrate.cached(r) is None:
                    pending[str(r.cache_file())] = (r.describe(), len(r.sizes))
        state = ("finished" if c.cell_id in kept else
                 f"finished with other settings ({'; '.join(stale[c.cell_id][:2])})" if c.cell_id in stale else "to run")
        t.add_row(c.cell_id, c.approach, c.workload, f"{c.zipf_theta:g}", f"{c.mem_ratio:g}", str(c.repetition),
                  "?" if todo and not get_approach(c.approach).pages else str(p.item_mb),
                  f"{p.item_budget_bytes / 2**20:.1f} MiB",
                  "?" if todo else f"{p.allowance_bytes / 2**20:.1f} MiB",
                  "?" if todo else f"{p.limit_bytes / 2**20:.1f} MiB", p.allowance_source, str(p.opt_capacity), state)
    if pending:
        runs = sum(n for _, n in pending.values())
        t.caption = (f"{len(pending)} allowance calibrations ({runs} runs) are not cached: `acbench run` runs each"
                     f" before its first cell, `python3 -m acbench.calibrate SPEC` runs them all now: "
                     + ", ".join(d for d, _ in pending.values()))
    return t


def _sigterm(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


# --- resume: which finished cells are kept -------------------------------------------------------

@dataclass
class ResumeStatus:
    """What resuming a run directory does with each cell of the spec."""
    todo: list[Cell] = field(default_factory=list)          # to run (new, --force, --redo)
    kept: list[Cell] = field(default_factory=list)          # finished with the settings it has now
    stale: list[tuple[Cell, list[str]]] = field(default_factory=list)   # finished with other settings: why
    mixed: list[Cell] = field(default_factory=list)         # kept although another binary ran it (--allow-mixed)
    redone_stale: list[tuple[Cell, list[str]]] = field(default_factory=list)  # finished with other settings: run again

    def refusal(self, rd: RunDir) -> str | None:
        """The message that refuses the run, naming what changed (None: nothing stale)."""
        if not self.stale:
            return None
        by_change: dict[str, list[str]] = {}
        for c, why in self.stale:
            for w in why:
                by_change.setdefault(w, []).append(c.cell_id)
        lines = [f"  {w} ({len(ids)} cell{'s' if len(ids) > 1 else ''}, e.g. {ids[0]})"
                 for w, ids in sorted(by_change.items(), key=lambda x: -len(x[1]))[:12]]
        more = len(by_change) - len(lines)
        hint = ("--force reruns every cell, --redo APPROACH reruns one approach's cells, or start a new run "
                "directory with another --run-id")
        if all(cellkey.only_binaries(why) for _, why in self.stale):
            hint += "; --allow-mixed keeps them (a grid of several binaries: each row names its binary)"
        return (f"{rd.path} holds {len(self.stale)} finished cell{'s' if len(self.stale) > 1 else ''} run with other "
                f"settings than the spec gives now; resuming would mix old and new results. What changed:\n"
                + "\n".join(lines) + (f"\n  ... and {more} other change(s)" if more > 0 else "") + f"\n{hint}")


def resume_status(cells: list[Cell], identity: dict[str, dict[str, Any]], finished: dict[str, str | None],
                  recorded: dict[str, dict[str, Any]], force: bool = False, redo: list[str] | None = None,
                  allow_mixed: bool = False, redo_ids: set[str] | frozenset[str] = frozenset(),
                  redo_stale: bool = False) -> ResumeStatus:
    """identity: each cell's settings now; finished: the run directory's finished cells and their
    keys; recorded: the settings each finished cell ran with (run.json); redo_ids: finished cells to
    run again (busy_cells); redo_stale: run again those finished with other settings than the spec's
    now instead of refusing (counted in `redone_stale`)."""
    st = ResumeStatus()
    for c in cells:
        if force or c.approach in (redo or []) or c.cell_id not in finished or c.cell_id in redo_ids:
            st.todo.append(c)
            continue
        now = identity[c.cell_id]
        if finished[c.cell_id] == cellkey.key(now):
            st.kept.append(c)
            continue
        why = cellkey.changes(recorded.get(c.cell_id), now)
        if not why:      # recorded settings equal, key not: the row was written by another key scheme
            why = ["its cell key differs (settings recorded equal: the key was made another way)"]
        if allow_mixed and cellkey.only_binaries(why) and c.cell_id in recorded:
            st.kept.append(c)
            st.mixed.append(c)
        elif redo_stale:
            st.todo.append(c)
            st.redone_stale.append((c, why))
        else:
            st.stale.append((c, why))
    return st


# The machine facts that make two rows' times incomparable are the figures' (acplot.runs.HOST_FACTS):
# a grid resumed on another machine (a VM started on another host between sessions: this one has run
# on an AMD EPYC and on an Intel Xeon under the same host name) is refused like one resumed with
# another binary.
MACHINE_FACTS = HOST_FACTS


def machine_changes(rows: Any, kept: list[Cell], now: dict[str, Any]) -> list[str]:
    """What of this machine (now: sysinfo.machine()) differs from the machines the kept cells' rows
    ran on, one phrase per fact ("cpu_model: 'AMD EPYC' then, 'Intel(R) Xeon(R) Processor' now");
    rows without a fact's column (an older acbench's) say nothing of it."""
    ids = {c.cell_id for c in kept}
    if rows is None or rows.empty or "cell_id" not in rows.columns or not ids:
        return []
    rows = rows[rows["cell_id"].isin(ids)]
    out = []
    for fact in MACHINE_FACTS:
        if fact not in rows.columns or now.get(fact) is None:
            continue
        was, here = [fact_text(v) for v in rows[fact].dropna()], fact_text(now[fact])
        other = sorted(set(was) - {here})
        if other:
            n = sum(1 for v in was if v != here)
            out.append(f"{fact}: {', '.join(repr(v) for v in other)} then ({n} cell{'s' if n > 1 else ''}), "
                       f"{here!r} now")
    return out


def machine_refusal(rd: RunDir, changes: list[str]) -> str:
    return (f"{rd.path} holds finished cells run on another machine; resuming would mix machines in one grid "
            "(times, CPU and I/O of one are not another's). What differs:\n"
            + "\n".join(f"  {c}" for c in changes)
            + "\n--allow-mixed keeps them (each row names its machine: host, kernel, cpu_model, cpus; run.json says "
            "mixed_machines), --force reruns every cell here, or start a new run directory with another --run-id")


def busy_cells(rows: Any, share: float | None) -> set[str]:
    """The finished cells that ran beside other work: other processes took more than `share` of the
    machine's CPU over the cell (other_cpu_share, collect.py; the windows of one process share it,
    so they are run again together). None: no cell is."""
    if share is None or rows is None or rows.empty or "other_cpu_share" not in rows.columns:
        return set()
    ok = rows["status"].fillna("ok") == "ok" if "status" in rows.columns else True
    return set(rows.loc[ok & (rows["other_cpu_share"] > share), "cell_id"])


def identities(spec: Spec, cells: list[Cell], mode: str, use_perf: bool,
               bins: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """Each cell's identity (cellkey.settings) as this run would run it; bins: the binaries' checksums
    (default: those in use, cellkey.binaries)."""
    bins = cellkey.binaries(mode) if bins is None else bins
    return {c.cell_id: cellkey.settings(c, {**spec.run, "repetition_mode": cell_repetition_mode(spec, c)}, spec.memory,
                                        mode=mode, spill_device=cell_device(spec, c),
                                        perf=use_perf, bins=bins, harness_version=HARNESS_VERSION)
            for c in cells}


# --- the run ------------------------------------------------------------------------------------

def check_tools() -> None:
    missing = [str(paths.binary(n)) for n in ("memcached-ac", "ycsb-mc", "ycsb-trace") if not paths.binary(n).exists()]
    missing += [str(core.lib_path())] if not core.lib_path().exists() else []
    if missing:
        raise RunError(f"{', '.join(missing)} missing: build them with `make` (or point ACBENCH_BIN at a "
                       "directory that has the tools, ACOPT_LIB at libacopt.so)")


def select_cells(spec: Spec, only: list[str], redo: list[str], repetitions: int | None = None) -> list[Cell]:
    """repetitions: only the cells of the first that many repetitions (--repetitions)."""
    for flag, names in (("--redo", redo), ("--only", only)):
        unknown = sorted(set(names) - set(spec.grid["approach"]))
        if unknown:
            raise RunError(f"{flag} {', '.join(unknown)}: not an approach of {spec.path.name}; accepted: "
                           f"{', '.join(spec.grid['approach'])}")
    if repetitions is not None and not 1 <= repetitions <= spec.repetitions:
        raise RunError(f"--repetitions {repetitions}: {spec.path.name} has {spec.repetitions} "
                       f"(accepted: 1 to {spec.repetitions})")
    return [c for c in spec.cells() if (not only or c.approach in only)
            and (repetitions is None or c.repetition < repetitions)]


@dataclass
class Session:
    """One `acbench run` of a run directory (a resumed grid has several), kept in run.json with
    the settings of every finished cell; the grid's wall time is the sum of its sessions'."""
    rd: RunDir
    meta: dict[str, Any]
    record: dict[str, Any]
    t_start: float = field(default_factory=time.monotonic)

    @classmethod
    def start(cls, rd: RunDir, old_meta: dict[str, Any], spec: Spec, run_id: str, mode: str, use_perf: bool,
              machine: dict[str, Any], cells_to_run: int, mixed: bool, mixed_machines: bool = False) -> "Session":
        sessions = list(old_meta.get("sessions") or [])
        record: dict[str, Any] = {"started": sysinfo.now(), "git_revision": machine.get("git_revision"),
                                  "binary_sha256": machine.get("binary_sha256"),
                                  **{k: machine.get(k) for k in ("host", *MACHINE_FACTS, "disk_iops")},
                                  "spill_device": spec.run["spill_device"], "cells_to_run": cells_to_run}
        sessions.append(record)
        meta = {"spec": str(spec.path.resolve()), "spec_text": spec.path.read_text(), "run_id": run_id,
                "mode": mode, "perf": use_perf, "spill_device": spec.run["spill_device"],
                "run_settings": dict(spec.run), "memory_settings": dict(spec.memory),
                "started": record["started"], "sessions": sessions,
                "cell_settings": dict(old_meta.get("cell_settings") or {}),
                "mixed_binaries": bool(old_meta.get("mixed_binaries")) or mixed,
                "mixed_machines": bool(old_meta.get("mixed_machines")) or mixed_machines, "harness_version": HARNESS_VERSION,
                **machine}
        rd.write_meta(meta)
        return cls(rd, meta, record)

    def cell_finished(self, cell_id: str, settings: dict[str, Any]) -> None:
        self.meta["cell_settings"][cell_id] = settings
        self.rd.write_meta(self.meta)

    def close(self, cells_run: int, cells_failed: int, given_up_s: float = 0.0) -> None:
        """given_up_s: the part of the session's wall time the machine was given up to other work
        (machine.Turn.given_up_s); the grid's own time is wall_s minus it."""
        self.record.update(finished=sysinfo.now(), wall_s=round(time.monotonic() - self.t_start, 1),
                           given_up_s=round(given_up_s, 1), cells_run=cells_run, cells_failed=cells_failed)
        sessions = self.meta["sessions"]
        # a session without wall_s was killed: the sum counts the finished ones, and says how many were not
        self.meta["wall_s"] = round(sum(float(x.get("wall_s") or 0) for x in sessions), 1)
        self.meta["given_up_s"] = round(sum(float(x.get("given_up_s") or 0) for x in sessions if x.get("wall_s")), 1)
        self.meta["sessions_unfinished"] = sum(1 for x in sessions if x.get("wall_s") is None)
        self.rd.write_meta(self.meta)


@dataclass
class Tally:
    stopped: int = 0            # cells left to run at --stop-by
    finished: int = 0
    failed: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


@dataclass
class CellOutcome:
    """What running one cell gave: the row to append (None when it failed before having one),
    whether it failed, and what to tell the user. The cell's files are in its directory."""
    cell_id: str
    row: dict[str, Any] | None
    failed: bool
    message: str = ""
    yielded: bool = False        # stopped for other work (machine.py): runs again, nothing recorded


def execute_cell(spec: Spec, c: Cell, cdir: Path, run_id: str, mode: str, use_perf: bool, machine: dict[str, Any],
                 ram_root: Path | None, settings: dict[str, Any],
                 interrupt: Callable[[], str | None] | None = None) -> CellOutcome:
    """Runs one cell into cdir (its logs, trace.txt, row.json or error.txt); never raises: a failed
    cell is an outcome. The local loop (run_one) and a cluster worker (cluster.py) both call it.
    interrupt: asked during the cell; a non-empty answer (who wants the machine) stops it, cleaned
    up, as an outcome with `yielded` (machine.py)."""
    return execute_cells(spec, [c], [cdir], run_id, mode, use_perf, machine, ram_root, [settings], interrupt)[0]


def execute_cells(spec: Spec, cells: list[Cell], cdirs: list[Path], run_id: str, mode: str, use_perf: bool,
                  machine: dict[str, Any], ram_root: Path | None, settings: list[dict[str, Any]],
                  interrupt: Callable[[], str | None] | None = None) -> list[CellOutcome]:
    """Runs cells that share one process (one cell; or with repetition_mode windows, consecutive
    repetitions of one cell: units()), the process's files in the first one's directory; one outcome
    per cell, never raises. Repetition k's row is the process's run window k (run_window), its OPT
    columns those of its own requests (seed + k after the warm-up of its own seed: opt_columns)."""
    lead = cells[0]
    for d in cdirs:
        if d.exists():
            shutil.rmtree(d)
    try:
        dev = cell_device(spec, lead)
        spill_root = ram_root if dev == "ram" and ram_root is not None else SPILL_PARENT
        plans = [plan_for(spec, c, spill_root=spill_root) for c in cells]
        p = plans[0]
        if any(q.as_row() != p.as_row() for q in plans[1:]):
            raise CellError(f"{lead.cell_id}: its repetitions' memory plans differ; they cannot share a process")
        try:
            metrics = run_cell(lead, p, spec.run, mode, cdirs[0], use_perf, spill_root, dev, interrupt, len(cells))
        except machine_turn.Yielded as e:
            return [CellOutcome(c.cell_id, None, False, f"cell {c.cell_id} stopped: {e}", yielded=True) for c in cells]
        except OomKilled as e:
            for d in cdirs:
                d.mkdir(parents=True, exist_ok=True)
                (d / "error.txt").write_text(str(e) + "\n")
            return [CellOutcome(c.cell_id, failed_row(spec, c, p, e, run_id, machine), True, f"cell {c.cell_id}: {e}")
                    for c in cells]
        skip = metrics.pop("opt_skip_requests")
        later = metrics.pop("windows", [])
        if len(cells) > 1:
            metrics.update(windows_wall(metrics, later))
        out = []
        for k, (c, cdir) in enumerate(zip(cells, cdirs)):
            m = {**metrics, **later[k - 1]} if k else dict(metrics)
            if len(cells) > 1:      # a later window's row holds its run's time (windows_wall)
                m.update(run_window=k, window_of=lead.cell_id, **({"cell_wall_s": m["run_duration_s"]} if k else {}))
            opt, hist = opt_columns(c, p, skip)
            cdir.mkdir(parents=True, exist_ok=True)
            (cdir / "trace.txt").write_text(str(opt.pop("trace")) + "\n")   # the request trace OPT read (a cache file)
            fp = p.data_bytes // int(c.properties["recordcount"])
            row = build_row(spec, c, p, m, opt, run_id, machine, fp, hist)
            row["repetition_mode"] = cell_repetition_mode(spec, c)
            row["cell_key"] = cellkey.key(settings[k])
            (cdir / "row.json").write_text(json.dumps(row, indent=1, default=str) + "\n")
            out.append(CellOutcome(c.cell_id, row, False))
        return out
    except Exception as e:  # noqa: BLE001 - one failed cell must not stop the run
        text = traceback.format_exc()
        for d in cdirs:
            d.mkdir(parents=True, exist_ok=True)
            (d / "error.txt").write_text(text)
        return [CellOutcome(c.cell_id, None, True, f"cell {c.cell_id} failed: {e}") for c in cells]


def windows_wall(first: dict[str, Any], later: list[dict[str, Any]]) -> dict[str, Any]:
    """The process's wall time shared out over its windows' rows: each later window's row its run's
    duration, the first window's row the rest (set-up, load, warm-up, its run, clean-up), so that
    the rows' cell_wall_s sum to the process's (process_wall_s on every row)."""
    total = first["cell_wall_s"]
    return {"process_wall_s": total, "cell_wall_s": total - sum(w.get("run_duration_s") or 0 for w in later)}


def units(spec: Spec, todo: list[Cell]) -> list[list[Cell]]:
    """The cells to run, as the processes that run them, in the order of each one's first cell: one
    cell each, or with [run] repetition_mode = "windows" and an approach whose repetitions may be
    windows, or "windows-all" (placement.cell_repetition_mode), a cell's consecutive repetitions to run together (a
    repetition already finished splits them: it is not run again)."""
    groups: dict[tuple[Any, ...], list[Cell]] = {}
    alone: list[list[Cell]] = []
    for c in todo:
        if cell_repetition_mode(spec, c) != "windows":
            alone.append([c])
            continue
        key = (c.approach, c.workload, c.zipf_theta, c.mem_ratio, tuple(sorted(c.extra.items())))
        groups.setdefault(key, []).append(c)
    out: list[list[Cell]] = alone
    for cells in groups.values():
        cells.sort(key=lambda c: c.repetition)
        run = [cells[0]]
        for c in cells[1:]:
            if c.repetition == run[-1].repetition + 1:
                run.append(c)
            else:
                out.append(run)
                run = [c]
        out.append(run)
    first = {c.cell_id: i for i, c in enumerate(todo)}
    return sorted(out, key=lambda u: first[u[0].cell_id])


def record(out: CellOutcome, rd: RunDir, settings: dict[str, Any], session: Session, tally: Tally,
           console: Console) -> None:
    """Appends a cell's row (or notes its failure) to the run directory and the session."""
    if out.row is not None:
        rd.append(out.row)
    if out.failed:
        tally.failed.append(out.cell_id)
        console.print(f"[red]{escape(out.message)}[/red]", markup=True, highlight=False)
        return
    session.cell_finished(out.cell_id, settings)
    tally.finished += 1
    row = out.row or {}
    if row.get("ac_refused_items"):
        tally.refused.append(f"{out.cell_id} ({row['ac_refused_items']})")
        console.print(f"[yellow]cell {out.cell_id}: the server refused {row['ac_refused_items']} "
                      "requests (ac_refused_items; stats anticache refused_* says why)[/yellow]",
                      markup=True, highlight=False)


def run_one(spec: Spec, unit: list[Cell], rd: RunDir, run_id: str, mode: str, use_perf: bool,
            machine: dict[str, Any], turn: machine_turn.Turn, ram: "RamHold", ident: dict[str, dict[str, Any]],
            session: Session, tally: Tally, console: Console, may_start: Callable[[], bool] = lambda: True) -> bool:
    """Runs the cells of one process here (units()) and appends their rows (or failures); one failed
    cell never stops the run. Work that asks for the machine (turn.wanted) gets it first, before the
    process or during it (it then runs again whole, machine.py). may_start is asked each time the
    process is to start (--stop-by: the machine may have been given up for long); False: it is not
    run, and run_one returns False."""
    while True:
        while who := turn.wanted():      # (another may have asked while the grid waited for the first)
            turn.give_way(who, ram.stop, ram.start)
        if not may_start():
            return False
        outs = execute_cells(spec, unit, [rd.cell_dir(c.cell_id) for c in unit], run_id, mode, use_perf, machine,
                             ram.root, [ident[c.cell_id] for c in unit], turn.wanted)
        if not outs[0].yielded:
            break
        console.print(outs[0].message, highlight=False)
    for c, out in zip(unit, outs):
        record(out, rd, ident[c.cell_id], session, tally, console)
    return True


class RamHold:
    """The run's RAM device (None: no cell of it on the RAM device), stopped while the grid has given
    the machine up and started again after."""

    def __init__(self, size_bytes: int | None) -> None:
        self.device = ramdev.RamDevice(size_bytes) if size_bytes is not None else None
        self.root: Path | None = None

    def start(self) -> None:
        if self.device is not None:
            self.root = self.device.start()

    def stop(self) -> None:
        if self.device is not None:
            self.root = None
            self.device.stop()


class Placement(Protocol):
    """Where the cells of a run go instead of this machine (cluster.Cluster)."""
    address: str

    def check(self, cells: list[Cell]) -> None:
        """Raises RunError if these cells cannot be placed so."""

    def run_cells(self, spec: Spec, todo: list[Cell], rd: RunDir, run_id: str, mode: str, use_perf: bool,
                  ident: dict[str, dict[str, Any]], machine: dict[str, Any], session: Session, tally: Tally,
                  console: Console, advance: Callable[[str], None]) -> None:
        """Runs the cells (execute_cell on each), recording each (record) as it finishes."""


def run_spec(spec_path: Path, results: Path, run_id: str | None, force: bool, dry_run: bool,
             mode: str | None, console: Console, spill_device: str | None = None,
             redo: list[str] | None = None, run_overrides: dict[str, Any] | None = None,
             only: list[str] | None = None, allow_mixed: bool = False, cluster: Placement | None = None,
             repetitions: int | None = None, stop_by: float | None = None, redo_busy: float | None = None,
             prior_walls: dict[str, list[float]] | None = None, redo_stale: bool = False,
             prior_slices: deadline.SliceModel | None = None) -> int:
    """cluster: where the cells run instead of here, one by one (cluster.Cluster: a Dask cluster);
    repetitions: only the first that many of each cell (a later run of the run id adds the others);
    stop_by: a Unix time no process may be expected to run past (deadline.py; returns STOPPED_BY
    when it left cells to run, also when some failed: they run again on resume); prior_walls: per
    approach, the wall per cell of earlier runs, for an approach this run directory has no finished
    process of (deadline.per_cell_walls); prior_slices: what slices cost in earlier runs, for the
    slices this run directory has no finished process in (deadline.SliceModel.borrow_slices); redo_busy: run again the finished cells whose
    other_cpu_share is above it; redo_stale: run again the finished cells whose settings are not the
    spec's now (what a changed spec would otherwise refuse; done once, so a resumed run keeps them)."""
    spec = load_spec(spec_path, run_overrides)
    if spill_device is not None:
        spec.run["spill_device"] = spill_device
    check_tools()
    cells = select_cells(spec, only or [], redo or [], repetitions)
    windows = spec.run["repetition_mode"]
    if windows != "separate" and cluster is not None:
        raise RunError(f"{spec.path.name}: [run] repetition_mode = \"{windows}\" runs a cell's repetitions in one "
                       "process here; accepted: without --cluster, or repetition_mode = \"separate\"")
    if windows != "separate" and (mode or spec.run["mode"]) != "in-process":
        raise RunError(f"--mode {mode}: [run] repetition_mode = \"{windows}\" needs the in-process driver "
                       "(its run windows); accepted: --mode in-process, or repetition_mode = \"separate\"")
    if cluster is not None:
        cluster.check(cells)
        if stop_by is not None:
            raise RunError("--stop-by: only for a run on this machine (a cluster's cells are not started one by one here)")
    run_id = run_id or default_run_id()
    rd = RunDir(results / spec.name / run_id)
    eff_mode = mode or spec.run["mode"]
    use_perf = bool(spec.run["perf"]) and perf_available()
    ident = identities(spec, cells, eff_mode, use_perf)
    try:
        old_meta = rd.read_meta()
    except ResultsError as e:
        raise RunError(str(e)) from None
    busy = busy_cells(rd.read(), redo_busy)
    status = resume_status(cells, ident, rd.finished_keys(), old_meta.get("cell_settings") or {}, force,
                           redo, allow_mixed, busy, redo_stale)
    if dry_run:
        console.print(dry_run_table(spec, cells, status))
        console.print(f"results would go to {rd.path}")
        return 0
    refusal = status.refusal(rd)
    if refusal:
        raise RunError(refusal)
    machine = sysinfo.machine()
    # a cluster's rows name the worker each ran on (its own machine); here the grid's machine is this one
    moved = machine_changes(rd.read(), status.kept, machine) if cluster is None else []
    if moved and not allow_mixed:
        raise RunError(machine_refusal(rd, moved))
    # before any cell: what a SIGKILLed acbench left (its server, cgroup, swap file, page-cluster,
    # spill directories; one stderr line each). A live acbench's are never touched.
    leftovers.cleanup_before_run()
    mode = resolve_mode(spec, eff_mode)
    session = Session.start(rd, old_meta, spec, run_id, mode, use_perf, machine, len(status.todo),
                            bool(status.mixed), bool(moved))
    if cluster is not None:
        session.record["cluster"] = cluster.address
    if busy:
        console.print(f"{len(busy)} finished cells ran beside other work (other_cpu_share > {redo_busy}): run again",
                      highlight=False)
    if status.redone_stale:
        changes = sorted({w for _, why in status.redone_stale for w in why})
        console.print(f"{len(status.redone_stale)} finished cells ran with other settings than the spec gives now "
                      f"({'; '.join(changes[:3])}{' ...' if len(changes) > 3 else ''}): run again", highlight=False)
    if status.kept:
        console.print(f"{len(status.kept)} of {len(cells)} cells already finished in {rd.path} with the same "
                      "settings (--force redoes them)")
    if status.mixed:
        console.print(f"[yellow]{len(status.mixed)} of them ran another binary (--allow-mixed): each row's "
                      "binary_sha256 says which[/yellow]", markup=True, highlight=False)
    if moved:
        console.print("[yellow]some of them ran on another machine (--allow-mixed): " + escape("; ".join(moved))
                      + "[/yellow]", markup=True, highlight=False)
    # a cluster's cells on the RAM device each get one on their worker (cluster.cell_task)
    on_ram = [c for c in status.todo if cell_device(spec, c) == "ram"] if cluster is None else []
    ram = RamHold(ram_device_bytes(spec, on_ram) if on_ram else None)
    # the machine is the grid's from its first cell to its last, unless work asks for it (machine.py)
    turn = machine_turn.Turn(lambda text: console.print(f"acbench run: {text}", highlight=False))
    old = signal.signal(signal.SIGTERM, _sigterm)
    tally = Tally()
    walls = dict(prior_walls or {}) if stop_by is not None else {}
    model: deadline.SliceModel | None = None

    def timings() -> deadline.SliceModel:      # this run's processes, then slices they have not begun
        rows = rd.read()
        walls.update(deadline.per_cell_walls(rows))
        m = deadline.SliceModel(deadline.slice_walls(rows))
        if prior_slices is not None:
            m.borrow_slices(prior_slices)
        return m
    if stop_by is not None:
        model = timings()
    try:
        if cluster is None and status.todo:
            turn.take()
        ram.start()
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                      console=console, transient=False) as bar:
            task = bar.add_task(spec.name, total=len(status.todo))
            if cluster is not None and status.todo:
                cluster.run_cells(spec, status.todo, rd, run_id, mode, use_perf, ident, machine, session, tally,
                                  console, lambda cid: bar.update(task, advance=1, description=f"{spec.name}: {cid}"))
            elif cluster is None:
                plan_units = units(spec, status.todo)
                for i, unit in enumerate(plan_units):
                    bar.update(task, description=f"{spec.name}: {unit[0].cell_id}"
                               + (f" (+{len(unit) - 1} windows)" if len(unit) > 1 else ""))

                    def fits(u: list[Cell] = unit) -> bool:
                        return stop_by is None or time.time() + deadline.expected_wall(
                            walls, u[0].approach, len(u), unknown_as_slowest=True, model=model,
                            where=deadline.slice_of(u[0].workload, u[0].zipf_theta, u[0].mem_ratio)) <= stop_by
                    if not run_one(spec, unit, rd, run_id, mode, use_perf, machine, turn, ram, ident, session, tally,
                                   console, fits):
                        tally.stopped = sum(len(u) for u in plan_units[i:])
                        break
                    bar.advance(task, len(unit))
                    if stop_by is not None:     # this run's own times, as they come
                        model = timings()
    except KeyboardInterrupt:
        console.print(f"interrupted: {tally.finished} cells finished in this run, "
                      f"{len(rd.finished())} kept in {rd.path}; nothing left running")
        return 130
    finally:
        signal.signal(signal.SIGTERM, old)
        session.close(tally.finished, len(tally.failed), turn.given_up_s)
        try:
            ram.stop()
        except ramdev.RamDeviceError as e:
            console.print(f"[red]acbench run: {e}[/red]", markup=True, highlight=False)
            tally.failed.append("RAM device")
        turn.release()
    console.print(f"{tally.finished} cells run, {len(status.kept)} skipped, {len(tally.failed)} failed; "
                  f"results: {rd.path}")
    if tally.stopped:
        console.print(f"stopped by --stop-by: {tally.stopped} cells left to run (the next would have run past "
                      f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(stop_by or 0))}); the same command "
                      "resumes", highlight=False)
        return STOPPED_BY
    if tally.refused:
        console.print(f"cells with refused requests: {', '.join(tally.refused)}", highlight=False)
    return 1 if tally.failed else 0
