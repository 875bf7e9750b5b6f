"""The paper's grids rerun in pieces, each piece committed (`acbench rerun`, `make rerun`).

A rerun of every paper grid at three repetitions takes days on the 2-core VM; a machine is ours for
a few hours at a time, and what it holds outside the repository does not outlive it. So each piece
runs the grids in order until a deadline (runner's stop_by: it ends at a cell boundary), then stages
what it has in the repository, under STAGE/<machine>/:

    machine.json            the machine facts the rows must share (kernel, cpu_model, cpus)
    <grid>/cells.csv        the grid's rows so far, as `acbench publish` writes them
    <grid>/run.json         its sessions (wall time, given_up_s) and every finished cell's settings
    calibrations/*.json     the allowance calibrations its cells used (build/acbench/allowance-*.json),
                            so that a later piece gives every cell the same memory plan
    fig2/                   `acbench fig2 --out` (one command: run whole, when FIG2_S fit before the deadline)

The next piece, on a fresh checkout, restores each grid's run directory from its staged rows (the
inverse of publish) and the calibrations into the cache, and resumes: `acbench run` keeps a
finished cell only if its settings (binaries included) are the same, and refuses one that ran on
another machine. A piece on another machine (this VM is started on AMD EPYC or Intel Xeon hosts, with
other kernel builds) stages under its own directory: a grid's rows never mix machines, nor do those of
grids compared within a slice (a unit: machine_units); a unit another machine started is left to it
unless taken over. `finish` publishes every grid complete, one binary, each unit from one machine, no
cell beside other work, copied to experiments/results/<grid>/."""
from __future__ import annotations

import json
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from acbench import measure, paths, sysinfo
from acbench.deadline import SliceModel, expected_wall, per_cell_walls, scaled_walls, slice_of, slice_walls
from acbench.results import RunDir, load_results, write_published
from acbench.runner import HOST_FACTS, STOPPED_BY, busy_cells, fact_text, units
from acbench.spec import load_spec

# the order the grids run in: the short ones first (each piece then finishes whole grids), Fig 2, the
# long ones last (uvmm-paper's cells are fig3-paper's uvmm cells: not rerun on their own)
GRIDS = ("inmemory-paper", "compression-paper", "uvmm-compression-paper", "fig4-paper", "blocks-paper", "fig2",
         "fig3-paper-rw", "fig4-paper-hdd", "fig3-paper")
FIG2 = "fig2"
FIG2_S = 3600           # Fig 2's command runs whole; an hour is an estimate (its last run's time was not kept; fig2/run.json keeps this one's)
BUSY = 0.10             # other_cpu_share above which a cell ran beside other work (an idle machine's read <= 0.08)
CALIBRATIONS = "calibrations"


class RerunError(Exception):
    pass


def machine_facts() -> dict[str, str]:
    m = sysinfo.machine_facts()
    return {k: fact_text(m[k]) for k in HOST_FACTS}


def machine_slug(facts: dict[str, str]) -> str:
    """A directory name for a machine: its CPU model, cores and kernel ('amd-epyc-2cpu-6.18.44-fc-v595')."""
    text = f"{facts['cpu_model']}-{facts['cpus']}cpu-{facts['kernel']}"
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9.]+", "-", re.sub(r"\(r\)|\(tm\)|processor", "", text.lower()))).strip("-")


def stage_dir(stage: Path, facts: dict[str, str]) -> Path:
    """STAGE/<machine>/, made with its machine.json; RerunError if a directory of that name holds
    another machine's facts."""
    d = stage / machine_slug(facts)
    f = d / "machine.json"
    if f.exists():
        was = json.loads(f.read_text())
        if was != facts:
            raise RerunError(f"{d}: staged for {was}, this machine is {facts}; a directory name was reused")
    else:
        d.mkdir(parents=True, exist_ok=True)
        f.write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n")
    return d


# --- the rerun's binaries --------------------------------------------------------------------------
# One binary for the whole rerun, whatever the C code of later revisions: the first piece pins the
# revision it was built from and the checksums of the programs a cell key names (cellkey.binaries);
# every later piece runs that revision's build (make rerun: harness/rerun-pin.sh builds it in
# build/rerun-pin and points ACBENCH_BIN and ACOPT_LIB at it) and is refused with any other.
PIN = "pin.json"


def pin_binaries() -> dict[str, str]:
    from acbench.cellkey import binaries
    return binaries("in-process")


def check_pin(root: Path, revision: Callable[[], str], own_build: bool) -> dict[str, Any]:
    """ROOT/pin.json, written by the first piece (revision(): the checkout's commit, '-dirty' when its
    tracked files differ from it; its own build must be the one in use: own_build); RerunError when
    the binaries in use are not the pinned ones."""
    f = root / PIN
    now = pin_binaries()
    if not f.exists():
        if not own_build:
            raise RerunError("the first piece pins the checkout's own build; ACBENCH_BIN or ACOPT_LIB points "
                             "elsewhere: unset them (or build this checkout with make)")
        rev = revision()
        if rev.endswith("-dirty"):
            raise RerunError("the first piece pins the checkout's commit, and its tracked files differ from it "
                             "(git status): commit them (the pinned revision must build the binaries in use)")
        pin = {"revision": rev, "binaries": now, "pinned": sysinfo.now()}
        root.mkdir(parents=True, exist_ok=True)
        f.write_text(json.dumps(pin, indent=1, sort_keys=True) + "\n")
        return pin
    pin = json.loads(f.read_text())
    differ = [f"{k}: {pin['binaries'].get(k)} pinned, {v} here" for k, v in sorted(now.items())
              if pin["binaries"].get(k) != v]
    if differ:
        raise RerunError(f"{f}: the rerun runs revision {pin['revision'][:12]}'s binaries; these differ ("
                         + "; ".join(differ) + "). `make rerun` builds that revision in build/rerun-pin and runs "
                         "with its binaries (harness/rerun-pin.sh, then ACBENCH_BIN and ACOPT_LIB)")
    return pin


# --- a grid's rows: published into the stage, restored from it ----------------------------------

def publish(rd: RunDir, dest: Path) -> int:
    """DEST/cells.csv and run.json from the run directory (`acbench publish`); the rows written."""
    df = rd.read()
    if not df.empty:
        write_published(df, rd.read_meta(), dest)
    return len(df)


def restore(published: Path, rd: RunDir) -> int:
    """The run directory again from its published rows (the inverse of publish): cells.parquet,
    cells.csv and run.json, typed as the column dictionary says. Refused over a run directory that
    has rows: it may hold cells the published ones lack."""
    if not (published / "cells.csv").exists():
        return 0
    if not rd.read().empty:
        raise RerunError(f"{rd.path} already holds rows; restoring {published} over it could lose cells "
                         "(remove the run directory to restore it from the published rows)")
    df = load_results(published / "cells.csv")
    rd.write(df)
    meta = published / "run.json"
    if meta.exists():
        rd.write_meta(json.loads(meta.read_text()))
    return len(df)


def check_not_behind(rd: RunDir, published: Path) -> None:
    """RerunError if the staged rows hold finished cells the run directory lacks (staged by a later
    piece elsewhere and pulled here): running on would stage over them."""
    if not (published / "cells.csv").exists():
        return
    have = set(rd.finished())
    staged = load_results(published / "cells.csv")
    ok = staged[staged["status"].fillna("ok") == "ok"] if "status" in staged.columns else staged
    lacking = sorted(set(ok["cell_id"]) - have)
    if lacking:
        raise RerunError(f"{published} holds {len(lacking)} finished cells that {rd.path} lacks (e.g. {lacking[0]}): "
                         "it is behind the stage; remove the run directory to restore it from the staged rows")


def probe_sizes(spec: Any) -> set[tuple[int, ...]]:
    """The record counts a calibration of the spec's cells probes (calibrate.Request.sizes)."""
    from acbench import calibrate
    out = set()
    for c in spec.cells():
        n = int(calibrate._with_file_counts(c.properties, c.workload_file)["recordcount"])
        out.add((n,) if c.trace else calibrate.sizes_for(n))
    return out


def save_calibrations(stage: Path, sizes: set[tuple[int, ...]]) -> int:
    """This machine's cached allowance calibrations of the binary in use (measure._binary_id: the
    pinned one) that probed one of `sizes` (probe_sizes of the grid run: not those of a test's or a
    check's small grids run with the same binary), copied into the stage (new ones only)."""
    out = stage / CALIBRATIONS
    mine = measure._binary_id()
    n = 0
    for f in sorted(paths.cache_dir().glob("allowance-*.json")):
        try:
            key = json.loads(f.read_text())["key"]
            ours = key["bin"] == mine and tuple(int(r[0]) for r in key["runs"]) in sizes
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            ours = False                       # unreadable or of another layout: not the rerun's
        if ours and not (out / f.name).exists():
            out.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, out / f.name)
            n += 1
    return n


def restore_calibrations(stage: Path) -> int:
    """The staged calibrations into the cache (a cached one is kept)."""
    n = 0
    for f in sorted((stage / CALIBRATIONS).glob("allowance-*.json")):
        if not (paths.cache_dir() / f.name).exists():
            shutil.copy2(f, paths.cache_dir() / f.name)
            n += 1
    return n


# --- where each grid stands -----------------------------------------------------------------------

@dataclass
class GridState:
    grid: str
    cells: int                  # the spec's
    finished: int               # rows with status ok of a cell of the spec
    busy: int                   # of them, ran beside other work
    failed: int
    stale: int                  # of them, ran with other settings than the spec gives now (refused on resume)
    binaries: list[str]
    wall_s: float
    given_up_s: float
    left_s: float = 0.0             # expected wall time of the cells left, from this machine's finished ones
    unmeasured: tuple[str, ...] = ()   # approaches with cells left and none finished yet (not in left_s)
    checked: tuple[str, ...] = ()      # approaches with cells left whose time is a check run's (CHECKS)
    unmeasured_slices: int = 0         # cells left in slices not begun here nor in prior_slices (timed by medians)
    borrowed_slices: int = 0           # cells left in slices not begun here, timed by prior_slices' terms

    @property
    def complete(self) -> bool:
        return self.cells > 0 and self.finished == self.cells and not self.busy and not self.stale


def grid_state(grid: str, stage: Path, busy: float = BUSY, bins: dict[str, str] | None = None) -> GridState:
    """bins: the binaries' checksums the cells must have run (default: the pin's, else those in use)."""
    d = stage / grid
    if grid == FIG2:
        done = (d / "fig2.csv").exists()
        meta = json.loads((d / "run.json").read_text()) if (d / "run.json").exists() else {}
        return GridState(grid, 1, int(done), 0, 0, 0, [meta["binary_sha256"]] if meta.get("binary_sha256") else [],
                         float(meta.get("wall_s") or 0), 0.0, 0.0 if done else float(FIG2_S))
    spec = load_spec(paths.top() / "experiments" / f"{grid}.toml")
    cells = spec.cells()
    ids = {c.cell_id for c in cells}
    df = load_results(d / "cells.csv") if (d / "cells.csv").exists() else pd.DataFrame({"cell_id": []})
    df = df[df["cell_id"].isin(ids)]
    ok = df[df["status"].fillna("ok") == "ok"] if "status" in df.columns else df
    meta = json.loads((d / "run.json").read_text()) if (d / "run.json").exists() else {}
    ran = sorted(str(b) for b in ok["binary_sha256"].dropna().unique()) if "binary_sha256" in ok.columns else []
    stale = stale_cells(spec, cells, ok, bins if bins is not None else pinned_or_current(stage.parent))
    redo = busy_cells(ok, busy)
    todo = [c for c in cells if c.cell_id not in set(ok["cell_id"]) - redo - stale]
    rows, checks = prior_sources(grid)
    own = per_cell_walls(ok)
    walls = {**checks, **rows, **own}
    model = SliceModel(slice_walls(ok))
    begun = set(model.s)
    borrowed = set(model.borrow_slices(prior_slices(grid)))
    plan = [(u, slice_of(u[0].workload, u[0].zipf_theta, u[0].mem_ratio)) for u in units(spec, todo)]
    left = [(u[0].approach, expected_wall(walls, u[0].approach, len(u), where=where, model=model)) for u, where in plan]
    checked = tuple(sorted({a for a, _ in left if a in checks and a not in own}))
    return GridState(grid, len(ids), ok["cell_id"].nunique(), len(redo), len(df) - len(ok), len(stale), ran,
                     float(meta.get("wall_s") or 0), float(meta.get("given_up_s") or 0),
                     sum(t for _, t in left), tuple(sorted({a for a, _ in left if a not in walls})), checked,
                     sum(len(u) for u, w in plan if w not in begun | borrowed) if begun else 0,
                     sum(len(u) for u, w in plan if w in borrowed))


def stale_cells(spec: Any, cells: list[Any], rows: pd.DataFrame, bins: dict[str, str]) -> set[str]:
    """The rows' cells whose cell key is not the one the spec and these binaries give now (the spec
    was changed after they ran): `acbench run` refuses to resume over them, naming what changed."""
    from acbench import cellkey
    from acbench.runner import identities, perf_available
    if rows.empty or "cell_key" not in rows.columns:
        return set()
    keys = dict(zip(rows["cell_id"], rows["cell_key"]))
    now = identities(spec, [c for c in cells if c.cell_id in keys], spec.run["mode"],
                     bool(spec.run["perf"]) and perf_available(), bins)
    return {cid for cid, settings in now.items() if cellkey.key(settings) != keys[cid]}


def pinned_or_current(root: Path) -> dict[str, str]:
    f = root / PIN
    return json.loads(f.read_text())["binaries"] if f.exists() else pin_binaries()


# Check runs that measured a grid's approaches at its scale (their READMEs in
# experiments/results/<check>/): what a piece expects of an approach the grid's committed rows lack,
# at one slice or a few among the grid's costliest, so on the long side (fig3-rw-reads-check's one
# slice stands for all twelve of fig3-paper-rw).
CHECKS = {"fig3-paper": ("fig3-reads-check-flat", "fig3-reads-check-skewed"),
          "fig3-paper-rw": ("fig3-rw-reads-check",), "fig4-paper-hdd": ("hdd-reads-check",)}


def prior_sources(grid: str, committed: Path | None = None) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Wall per cell of each approach in the grid's committed rows (experiments/results/<grid>/, an
    earlier run, maybe on another machine), and for each approach those rows lack (all of them, for a
    grid never run) its CHECKS' processes, scaled to the grid's run lengths (deadline.scaled_walls:
    fig3-paper-rw's uvmm 16 min a cell)."""
    root = committed or paths.top() / "experiments" / "results"
    f = root / grid / "cells.csv"
    rows = per_cell_walls(load_results(f)) if f.exists() else {}
    checks = [c for c in (root / c / "cells.csv" for c in CHECKS.get(grid, ())) if c.exists()]
    if not checks:
        return rows, {}
    ops = {c.approach: int(c.properties["operationcount"])
           for c in load_spec(paths.top() / "experiments" / f"{grid}.toml").cells() if c.approach not in rows}
    out: dict[str, list[float]] = {}
    for c in checks:
        for approach, walls in scaled_walls(load_results(c), ops).items():
            out.setdefault(approach, []).extend(walls)
    return rows, out


# Grids over the same data and slices whose committed rows say what a slice costs relative to the
# others, for a grid whose own committed rows do not (fig4-paper-hdd: none; fig4-paper's run every
# slice on the native disk).
SLICE_SIBLINGS = {"fig4-paper-hdd": ("fig4-paper",)}


def prior_slices(grid: str, committed: Path | None = None) -> SliceModel:
    """The slices' terms of the committed rows of the grid and its SLICE_SIBLINGS (experiments/results/),
    for the slices a grid has not begun (SliceModel.borrow_slices). Approaches are told apart by grid:
    only the slices' terms are borrowed."""
    root = committed or paths.top() / "experiments" / "results"
    obs = []
    for g in (grid, *SLICE_SIBLINGS.get(grid, ())):
        f = root / g / "cells.csv"
        if f.exists():
            obs += [(f"{g}:{a}", where, w) for a, where, w in slice_walls(load_results(f))]
    return SliceModel(obs)


def prior_walls(grid: str, committed: Path | None = None) -> dict[str, list[float]]:
    """What a piece expects of an approach it has not run yet (prior_sources, both), so that its first
    process (blocks-paper's lru-block-merge: 35 min a cell) is not started just before the deadline."""
    rows, checks = prior_sources(grid, committed)
    return {**checks, **rows}


# --- which machine runs which grid -----------------------------------------------------------------
# A grid's rows never mix machines (the runner refuses another's rows), nor do the rows of grids whose
# disk cells share a slice: the figures and claims compare them within it (fig4-paper's disk runs of
# fig3-paper's RAM-device approaches beside fig3-paper's own disk cells; compression-paper,
# uvmm-compression-paper and blocks-paper at θ 0.99, M/D 1/2 beside both). Such grids are one unit
# (machine_units). The VM is started on hosts with other kernel builds between sessions, so units may
# run on different machines: a unit goes on on the machine that holds rows of one of its grids; one no
# machine has started runs here; one started on another machine only (it may come back) is skipped,
# unless the piece is told to take it over (take_over: it runs again here from its first cell, the
# other machine's rows kept where they are). `finish` publishes each unit from a machine where it is
# complete.

def disk_slices(grid: str) -> set[tuple[Any, ...]]:
    """(regime, workload, θ, M/D) of the grid's cells on the disk (Fig 2: none)."""
    if grid == FIG2:
        return set()
    from acbench.placement import cell_device
    spec = load_spec(paths.top() / "experiments" / f"{grid}.toml")
    return {(spec.run["regime"], c.workload, c.zipf_theta, c.mem_ratio) for c in spec.cells()
            if cell_device(spec, c) == "disk"}


def machine_units(grids: tuple[str, ...] = GRIDS) -> list[tuple[str, ...]]:
    """The grids grouped into units that run on one machine: grids joined through the disk slices they
    share (acplot.runs.comparison_groups, what the figures and claims compare), in GRIDS order."""
    from acplot.runs import GROUP_SLICE, comparison_groups
    cols = ["spec", "regime", *GROUP_SLICE]
    slices = pd.DataFrame([(g, *s) for g in grids for s in disk_slices(g)], columns=cols)
    label = dict(zip(slices["spec"], comparison_groups(slices))) if not slices.empty else {}
    units: dict[str, list[str]] = {}
    for g in grids:
        units.setdefault(label.get(g, g), []).append(g)
    return [tuple(u) for u in units.values()]


def unit_of(grid: str, units: list[tuple[str, ...]]) -> tuple[str, ...]:
    return next(u for u in units if grid in u)


def machines(root: Path) -> list[Path]:
    """ROOT's machine directories (those with a machine.json)."""
    return sorted(f.parent for f in root.glob("*/machine.json"))


def holds(stage: Path, grid: str) -> bool:
    """Whether a machine's stage holds rows of the grid (Fig 2: its files)."""
    return (stage / grid / ("fig2.csv" if grid == FIG2 else "cells.csv")).exists()


def placement(stage: Path, grid: str, units: list[tuple[str, ...]], take_over: tuple[str, ...] = ()) -> str | None:
    """None when a piece on the machine of STAGE (STAGE.parent holds every machine's) runs the grid;
    else why it is skipped: its unit was started on another machine only, and not taken over."""
    unit = unit_of(grid, units)
    if any(holds(stage, g) for g in unit) or any(g in take_over for g in unit):
        return None
    elsewhere = sorted({m.name for m in machines(stage.parent) if m != stage for g in unit if holds(m, g)})
    if not elsewhere:
        return None
    what = f"its unit ({', '.join(unit)})" if len(unit) > 1 else "it"
    return (f"{what} ran on {', '.join(elsewhere)} and is left to it; --take-over {grid} runs "
            f"{'them' if len(unit) > 1 else 'it'} here from the first cell")


def status_lines(stage: Path, grids: tuple[str, ...] = GRIDS) -> list[str]:
    """Each grid on this machine (STAGE); one held only by other machines, as it stands there."""
    out = []
    units = machine_units()
    for g in grids:
        there = [m for m in machines(stage.parent) if m != stage and holds(m, g)]
        states = {m: grid_state(g, m) for m in there}
        out.extend(f"{g:24} on {m.name}: " + _state_text(s) for m, s in states.items())
        if holds(stage, g) or not there:
            out.append(f"{g if not there else '':24} {'here: ' if there else ''}" + _state_text(grid_state(g, stage)))
        why = placement(stage, g, units)
        if why is not None and not any(s.complete for s in states.values()):
            out.append(f"{'':24} skipped here: {why}")
    return out


def _state_text(s: GridState) -> str:
    return (f"{s.finished:4}/{s.cells:<4} cells" + (f", {s.busy} beside other work" if s.busy else "")
            + (f", {s.failed} failed" if s.failed else "")
            + (f", {s.stale} run with other settings than the spec's now" if s.stale else "")
            + f", {s.wall_s / 3600:.2f} h"
            + (f" ({s.given_up_s / 3600:.2f} h given up)" if s.given_up_s else "")
            + (f", binaries {', '.join(b[:16] for b in s.binaries)}" if s.binaries else "")
            + (" — complete" if s.complete else f"; left ≈ {s.left_s / 3600:.2f} h")
            + (_not_begun_text(s) if (s.borrowed_slices or s.unmeasured_slices) and not s.complete else "")
            + (f" + {', '.join(s.unmeasured)} (none finished yet)" if s.unmeasured else "")
            + (f" ({', '.join(s.checked)} timed by {', '.join(CHECKS[s.grid])}, not by cells of its own)"
               if s.checked else ""))


def _not_begun_text(s: GridState) -> str:
    parts = ([f"{s.borrowed_slices} timed by what their slices cost "
              f"{' and '.join((s.grid,) + SLICE_SIBLINGS.get(s.grid, ()))}'s committed cells"] if s.borrowed_slices else [])
    parts += [f"{s.unmeasured_slices} by their approach's median cell, not by what the slice costs"] \
        if s.unmeasured_slices else []
    return f" (of its cells in slices not begun here, {'; '.join(parts)})"


# --- a piece of the rerun ------------------------------------------------------------------------

def set_aside_unpinned(rd: RunDir, pinned: str) -> Path | None:
    """A run directory with rows of another memcached-ac than the pinned one (binary_sha256) is what an
    earlier pin left in build/: the rerun runs one binary, so none of its cells can be kept, and `acbench
    run` would refuse to resume over them. Renamed to <run id>.unpinned-<its binary> beside it (kept,
    nothing deleted), so that the grid restores from its staged rows; the new path, or None."""
    df = rd.read()
    if df.empty or "binary_sha256" not in df.columns:
        return None
    others = sorted(str(b) for b in df["binary_sha256"].dropna().unique() if str(b)[:16] != pinned[:16])  # 16 hex kept
    if not others:
        return None
    base = rd.path.with_name(f"{rd.path.name}.unpinned-{others[0][:16]}")
    dest, n = base, 1
    while dest.exists():
        n += 1
        dest = base.with_name(f"{base.name}.{n}")
    rd.path.rename(dest)
    return dest


def run_piece(stage: Path, results: Path, run_id: str, stop_by: float, grids: tuple[str, ...],
              run_grid: Callable[[Path, Path, str, float, float, dict[str, list[float]]], int],
              run_fig2: Callable[[Path], int], say: Callable[[str], None], pinned: str | None = None,
              take_over: tuple[str, ...] = ()) -> int:
    """Runs the grids in order until stop_by; stages each grid's rows after it ran (also when stopped).
    run_grid(spec, results, run_id, stop_by, busy, prior_walls) is runner.run_spec's piece; run_fig2(out) the Fig 2
    command; pinned: the pinned memcached-ac's checksum (a run directory of another is set aside:
    set_aside_unpinned); a grid whose unit another machine started is skipped unless take_over names one of
    the unit (placement). Returns STOPPED_BY when the deadline left work, run_grid's status when it was
    interrupted (130), 0 when every grid run here is complete, 1 when a grid has failed cells."""
    say(f"restored {restore_calibrations(stage)} calibrations from {stage}")
    failed = False
    units = machine_units()
    for g in grids:
        state = grid_state(g, stage)
        if state.complete:
            continue
        why = placement(stage, g, units, take_over)
        if why is not None:
            done = [m.name for m in machines(stage.parent) if m != stage and grid_state(g, m).complete]
            say(f"{g}: complete on {', '.join(done)}, not run here" if done else f"{g}: skipped: {why}")
            continue
        if g == FIG2:
            if time.time() + FIG2_S > stop_by:
                return STOPPED_BY
            rc = stage_fig2(stage / FIG2, results / FIG2 / run_id, run_fig2)
            if rc > 1:
                return rc
            continue        # 1: written, a method's callgrind run failed (vma's always does): fig2/run.json says so
        rd = RunDir(results / g / run_id)
        aside = set_aside_unpinned(rd, pinned) if pinned is not None else None
        if aside is not None:
            say(f"{g}: {rd.path} held rows of another binary than the pinned {pinned[:16]} (an earlier pin's): "
                f"moved to {aside}")
        if rd.read().empty:
            n = restore(stage / g, rd)
            if n:
                say(f"{g}: restored {n} rows from {stage / g}")
        else:
            check_not_behind(rd, stage / g)
        spec = paths.top() / "experiments" / f"{g}.toml"
        rc = run_grid(spec, results, run_id, stop_by, BUSY, prior_walls(g))
        n = publish(rd, stage / g)
        say(f"{g}: {n} rows staged in {stage / g}; {save_calibrations(stage, probe_sizes(load_spec(spec)))} "
            "new calibrations")
        busy = grid_state(g, stage).busy if rc in (0, 1) else 0
        if busy:        # cells that ran beside other work (a test, a build): once more, now
            say(f"{g}: {busy} cells ran beside other work (other_cpu_share > {BUSY}): running them again")
            rc = run_grid(spec, results, run_id, stop_by, BUSY, prior_walls(g))
            publish(rd, stage / g)
        if rc == STOPPED_BY or rc > 1:      # the deadline, or interrupted (130: SIGTERM, ^C)
            return rc
        failed |= rc != 0
    return 1 if failed else 0


# Fig 2's files that are results (theta-T/ holds the drivers' JSON and callgrind's outputs: not staged)
FIG2_FILES = ("fig2.csv", "fig2-runs.csv", "fig2.png", "fig2.pdf")


def stage_fig2(dest: Path, out: Path, run_fig2: Callable[[Path], int]) -> int:
    """Runs Fig 2 into OUT (a run directory, out of the repository) and, if it wrote fig2.csv, stages
    its result files and a run.json (binary, revision, wall time, exit status) in DEST; its status (1
    with fig2.csv: written, a method's callgrind run failed, as vma's does; 2 without)."""
    if out.exists():
        shutil.rmtree(out)
    t0 = time.monotonic()
    rc = run_fig2(out)
    if not (out / "fig2.csv").exists():
        return rc if rc > 1 else 2
    tmp = dest.with_name(dest.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    for name in FIG2_FILES:
        if (out / name).exists():
            shutil.copy2(out / name, tmp / name)
    meta = {"binary_sha256": sysinfo.binary_sha256(), "git_revision": sysinfo.git_revision(),
            "wall_s": round(time.monotonic() - t0, 1), "exit_status": rc, "finished": sysinfo.now()}
    (tmp / "run.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    if dest.exists():
        shutil.rmtree(dest)
    tmp.rename(dest)
    return rc


def finish(root: Path, dest_root: Path, grids: tuple[str, ...] = GRIDS) -> list[tuple[str, str]]:
    """Every grid complete on one binary, each unit (machine_units) on one machine: the staged grids
    copied to DEST_ROOT/<grid>/ (cells.csv, run.json; Fig 2's files) from ROOT/<machine>/; (destination,
    machine) of each. RerunError says what is missing otherwise (nothing is copied)."""
    chosen: dict[str, Path] = {}
    missing = []
    for unit in ([g for g in u if g in grids] for u in machine_units()):
        if not unit:
            continue
        states = {m: [grid_state(g, m) for g in unit] for m in machines(root)}
        whole = [m for m, ss in states.items() if all(s.complete for s in ss)]
        if len(whole) > 1:
            raise RerunError(f"{', '.join(unit)}: complete on {len(whole)} machines ({', '.join(m.name for m in whole)}); "
                             "one is published: remove the other machines' directories of these grids")
        if whole:
            chosen.update({g: whole[0] for g in unit})
            continue
        for m, ss in states.items():
            if any(holds(m, s.grid) for s in ss):
                missing.append(f"on {m.name}: " + ", ".join(
                    f"{s.grid} ({s.finished}/{s.cells}" + (f", {s.busy} beside other work" if s.busy else "")
                    + (f", {s.stale} with other settings than the spec's" if s.stale else "") + ")"
                    for s in ss if not s.complete))
        if not any(holds(m, g) for m in states for g in unit):
            missing.append(f"{', '.join(unit)}: not started")
    if missing:
        raise RerunError(f"{root}: not complete: {'; '.join(missing)}")
    bins = sorted({b for g, m in chosen.items() for b in grid_state(g, m).binaries})
    if len(bins) != 1:
        raise RerunError(f"{root}: the grids ran {len(bins)} binaries ({', '.join(b[:16] for b in bins)}); one is required")
    done = []
    for g in grids:
        dest = dest_root / g
        dest.mkdir(parents=True, exist_ok=True)
        for f in (chosen[g] / g).iterdir():
            if f.is_file():
                shutil.copy2(f, dest / f.name)
        done.append((str(dest), chosen[g].name))
    return done


def facts_of(stage: Path) -> dict[str, Any]:
    f = stage / "machine.json"
    return json.loads(f.read_text()) if f.exists() else {}
