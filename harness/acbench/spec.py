"""Experiment specs (TOML): fixed parameters + a grid, validated, expanded into cells.

    name = "demo"                       # optional (default: the file name)
    [fixed]   YCSB properties for every cell (recordcount=..., operationcount=...), or
              trace = "FILE": every cell replays that request trace (oracleGeneral or CSV, path
              relative to the spec; see _trace_cells) instead of generating YCSB requests
    [grid]    approach, zipf_theta, mem_ratio, workload (lists), repetition (count),
              and optionally any YCSB property as a list
    [run]     mode, server_threads (default "threads": -t follows each cell's driver threads),
              perf, timeout_s, network_conns, network_depth, driver_depth
              (in-process: requests each driver thread keeps in flight), io_engine (spilling
              approaches' -o ac_io: uring (default), sync, threads, aio), io_direct (true: their record
              reads with O_DIRECT, -o ac_io_direct=on), spill_device (disk, or ram: a
              zram device for hit-rate-only runs, acbench/ramdev.py), regime (native, or hdd:
              the disk limited to hdd_iops reads and writes per second for each cell, the
              paper's hard disk emulated), order (grid or interleaved), repetition_mode
              (separate: a process per repetition; windows: one process per cell's
              repetitions, one measured window each; windows-all: windows for every
              approach, for checks; see REPETITION_MODES)
    [memory]  item_footprint, allowance, allowance_margin, swap
    [per_approach.NAME]  run-length properties (PER_APPROACH_KEYS) one approach of the grid runs
              with instead of [fixed]'s, e.g. one shown to settle later than the others

Every error names the table and field and says what is accepted.
"""
from __future__ import annotations

import itertools
import math
import os
import re
import tomllib
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from acbench import paths, traceio
from acbench.approaches import ApproachError, accepted_names, lookup
from acbench.units import UsageError, parse_size, size_forms

# YCSB properties the driver accepts (ycsb-driver/README.md).
YCSB_PROPERTIES = (
    "recordcount", "operationcount", "workload", "readproportion", "updateproportion",
    "insertproportion", "readmodifywriteproportion", "scanproportion", "requestdistribution",
    "fieldcount", "fieldlength", "insertorder", "insertstart", "insertcount",
    "hotspotdatafraction", "hotspotopnfraction", "readallfields", "writeallfields",
    "zeropadding", "minscanlength", "maxscanlength", "scanlengthdistribution", "zipfianconstant", "seed",
    "threads", "warmupoperations", "target", "valuekind")
# Set through the grid or by the harness, never in [fixed] / as extra grid keys.
RESERVED = {"zipfianconstant": "use [grid] zipf_theta",
            "lookaside": "set by the approach (memcached refills after a miss, memcached-static does not)",
            "diskstats_device": "set by the harness (the device of the spill directory)",
            "workload": "use [grid] workload (a workload file's name or path)"}
TOP_KEYS = ("name", "description", "fixed", "grid", "run", "memory", "per_approach")
# what [per_approach.NAME] may set: how long a cell measures and warms up, never what it stores or asks
# (every approach of a slice must see the same data set and request stream to be compared)
PER_APPROACH_KEYS = ("operationcount", "warmupoperations")
GRID_KEYS = ("approach", "zipf_theta", "mem_ratio", "workload", "repetition")
# server_threads "threads": memcached's -t follows each cell's driver threads (YCSB `threads`)
RUN_DEFAULTS: dict[str, Any] = {"mode": "in-process", "server_threads": "threads", "perf": True,
                                "timeout_s": 3600, "network_conns": 1, "network_depth": 1,
                                "driver_depth": 1, "io_engine": "uring", "io_direct": False,
                                "spill_device": "disk", "regime": "native", "hdd_iops": 150, "hdd_from": "run",
                                "order": "grid", "repetition_mode": "separate"}
# the order the cells run in: "grid" (approach after approach, each one's cells in grid order, its
# repetitions back to back) or "interleaved" (repetition after repetition; within one, each
# (workload, θ, M/D) with every approach back to back): where run time is a verdict's measure, the
# machine's drift then falls on every approach alike instead of on the one that ran last
ORDERS = ("grid", "interleaved")
# how a cell's repetitions run: "separate" (a process each: load, warm-up, run) or "windows" (one
# process for all of them: one load and warm-up, then the run once per repetition, repetition r's
# requests those of the run with seed + r; the driver's runwindows, ycsb-driver/README.md "Run windows").
# windows saves a load and a warm-up per repetition; a repetition's store is then as the previous one
# left it (harness/README.md "Repetitions in windows" has the equivalence check). windows runs them so
# only for the approaches measured not to move with it (approaches.in_windows); "windows-all" for every
# approach, checked or not: for the checks themselves (a first window against the pool of all,
# experiments/*-reads-check.toml), whose later windows are not repetitions of the unchecked ones
REPETITION_MODES = ("separate", "windows", "windows-all")
# the driver's most windows in one process (ycsb-driver/ycsb_config.h YCSB_RUN_WINDOWS_MAX)
MAX_WINDOWS = 8
# -o ac_io of the approaches that spill (policies/README.md "I/O engines")
IO_ENGINES = ("sync", "threads", "aio", "uring")
# where the cells' spill directories and swap files live: the disk under /var/tmp, or a RAM device
SPILL_DEVICES = ("disk", "ram")
# native: the disk as it is; hdd: its IOPS limited for the cell's processes (cell.regime_limit)
REGIMES = ("native", "hdd")
MODES = ("in-process", "network")
# allowance "auto": calibrated per approach and scale (calibrate.py); allowance_margin: the fixed floor
# added to it (page cache room for the spill files and what sampling can miss)
# provisioning: "equal" (every approach of a cell under one limit: memory.py) or "own" (each its own
# allowance on top of the budget; allowance_margin applies to it only)
PROVISIONINGS = ("equal", "own")
MEMORY_DEFAULTS: dict[str, Any] = {"item_footprint": "auto", "allowance": "auto",
                                   "allowance_margin": "8M", "swap": "auto", "provisioning": "equal"}
WORKLOAD_DIR_PARTS = ("experiments", "workloads")
_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class SpecError(ValueError):
    """A spec problem; the message names the field and what is accepted."""


@dataclass(frozen=True)
class Cell:
    spec: str
    approach: str
    workload: str              # name (file stem)
    workload_file: str         # absolute path
    zipf_theta: float
    mem_ratio: float
    repetition: int
    seed: int
    properties: dict[str, Any]  # every -p for the driver (zipfianconstant, seed included)
    extra: dict[str, Any] = field(default_factory=dict)  # extra grid keys (also in properties)
    trace: str = ""            # [fixed] trace: the replayed trace (absolute path), "" for YCSB requests

    @property
    def cell_id(self) -> str:
        parts = [self.approach, self.workload, f"z{_num(self.zipf_theta)}", f"m{_num(self.mem_ratio)}"]
        parts += [f"{k}{_num(v)}" for k, v in sorted(self.extra.items())]
        parts.append(f"r{self.repetition}")
        return re.sub(r"[^A-Za-z0-9_.=-]", "_", "_".join(parts))

    def params(self) -> dict[str, Any]:
        """The cell's parameters as flat columns."""
        out = {"spec": self.spec, "cell_id": self.cell_id, "approach": self.approach,
               "workload": self.workload, "zipf_theta": self.zipf_theta,
               "mem_ratio": self.mem_ratio, "repetition": self.repetition, "seed": self.seed}
        for k, v in sorted(self.properties.items()):
            if k not in ("zipfianconstant", "seed"):
                out[f"p_{k}"] = v
        if self.trace:
            out["replay_trace"] = self.trace
        return out


@dataclass
class Spec:
    name: str
    path: Path
    description: str
    fixed: dict[str, Any]
    grid: dict[str, list[Any]]
    repetitions: int
    run: dict[str, Any]
    memory: dict[str, Any]
    trace: str = ""
    per_approach: dict[str, dict[str, Any]] = field(default_factory=dict)

    def cells(self) -> list[Cell]:
        extra_keys = [k for k in self.grid if k not in GRID_KEYS]
        out: list[Cell] = []
        base_seed = int(self.fixed.get("seed", 1))
        for approach, wl, theta, ratio, *extra in itertools.product(
                self.grid["approach"], self.grid["workload"], self.grid["zipf_theta"],
                self.grid["mem_ratio"], *(self.grid[k] for k in extra_keys)):
            for rep in range(self.repetitions):
                ex = dict(zip(extra_keys, extra))
                props = {k: v for k, v in self.fixed.items()}
                props.update(self.per_approach.get(approach, {}))
                props.update(ex)
                if not self.trace:          # a trace has its own skew (measured: skew_* columns)
                    props["zipfianconstant"] = theta
                props["seed"] = base_seed + rep
                wname, wfile = wl
                out.append(Cell(self.name, approach, wname, wfile, theta, ratio, rep,
                                base_seed + rep, props, ex, self.trace))
        if self.run.get("order") == "interleaved":
            # out is in grid order: approach-major, each approach's cells alike, repetitions innermost
            per_approach = len(out) // len(self.grid["approach"])
            out = [out[a * per_approach + i] for rep in range(self.repetitions)
                   for i in range(rep, per_approach, self.repetitions) for a in range(len(self.grid["approach"]))]
        ids = [c.cell_id for c in out]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise SpecError(f"{self.path.name}: cells with the same id {dup[0]!r}: two grid values "
                            "print alike; make them distinct")
        return out


def _num(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _err(path: Path, where: str, msg: str) -> SpecError:
    return SpecError(f"{path.name}: {where}: {msg}")


def _ratio(path: Path, v: Any) -> float:
    where = "[grid] mem_ratio"
    if isinstance(v, bool):
        raise _err(path, where, f"{v!r} is not a ratio; accepted: numbers or fractions like \"1/4\" with 0 < M/D <= 4")
    if isinstance(v, str):
        try:
            r = float(Fraction(v.strip()))
        except (ValueError, ZeroDivisionError):
            raise _err(path, where, f"{v!r} is not a ratio; accepted: numbers or fractions like \"1/4\" "
                       "with 0 < M/D <= 4") from None
    elif isinstance(v, (int, float)):
        r = float(v)
    else:
        raise _err(path, where, f"{v!r} is not a ratio; accepted: numbers or fractions like \"1/4\" with 0 < M/D <= 4")
    if not (0 < r <= 4) or math.isnan(r):
        raise _err(path, where, f"{v!r} is out of range; accepted: 0 < M/D <= 4")
    return r


def _theta(path: Path, v: Any) -> float:
    # the ycsb-driver's range (θ = 1 only for truezipf: checked in _check_theta_one)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < float(v) <= 10:
        raise _err(path, "[grid] zipf_theta", f"{v!r} is not accepted; accepted: numbers with 0 < θ <= 10 "
                   "(θ = 1 only with requestdistribution = \"truezipf\")")
    return float(v)


def _check_theta_one(path: Path, fixed: dict[str, Any], grid: dict[str, list[Any]]) -> None:
    """YCSB's zipfian (Gray's method) divides by 1 − θ; the true Zipf takes θ = 1."""
    if not any(abs(t - 1) < 1e-9 for t in grid["zipf_theta"]):
        return
    dists = grid.get("requestdistribution") or [fixed.get("requestdistribution")]
    if any(d != "truezipf" for d in dists):
        raise _err(path, "[grid] zipf_theta", "θ = 1 is accepted only with requestdistribution = \"truezipf\" "
                   "in [fixed] (YCSB's zipfian divides by 1 − θ)")


def workload_dirs(path: Path) -> list[Path]:
    """Where a workload name is looked for, in this order: beside the spec (and its workloads/
    directory), in the current directory (and its workloads/), in the repository's
    experiments/workloads."""
    here = Path.cwd()
    dirs = [path.parent, path.parent / "workloads", here, here / "workloads", paths.top().joinpath(*WORKLOAD_DIR_PARTS)]
    out: list[Path] = []
    for d in dirs:
        d = d.resolve()
        if d not in out:
            out.append(d)
    return out


def file_properties(f: str) -> dict[str, str]:
    """key=value lines of a YCSB property file (comments and blank lines skipped)."""
    out: dict[str, str] = {}
    for line in Path(f).read_text(errors="replace").splitlines():
        s = line.strip()
        if not s or s[0] in "#!":
            continue
        m = re.match(r"([^=:]+?)\s*[=:]\s*(.*)$", s)     # the first '=' or ':' separates, as in Java
        if m:
            out[m.group(1)] = m.group(2)
    return out


def find_workload(path: Path, name: Any) -> tuple[str, str]:
    """(name, absolute file) of a [grid] workload entry: a path, or a file name found in workload_dirs."""
    if not isinstance(name, str) or not name:
        raise _err(path, "[grid] workload", f"{name!r}; accepted: a workload file name (e.g. \"readonly\") "
                   "or a path")
    dirs = workload_dirs(path)
    for c in [d / name for d in dirs]:
        if c.is_file():
            return Path(name).name, str(c.resolve())
    raise _err(path, "[grid] workload", f"no workload file {name!r}; looked in {', '.join(str(d) for d in dirs)} "
               "(in that order); accepted: a file name found there or a path")


def _prop_value(path: Path, where: str, key: str, v: Any) -> Any:
    if isinstance(v, (bool, int, float, str)):
        return v
    raise _err(path, where, f"{key} = {v!r}; accepted: a number, string or boolean")


def _list(path: Path, key: str, v: Any) -> list[Any]:
    if not isinstance(v, list) or not v:
        raise _err(path, f"[grid] {key}", f"{v!r}; accepted: a non-empty list, e.g. {key} = [...]")
    return v


def load_spec(path: str | Path, run_overrides: dict[str, Any] | None = None) -> Spec:
    """run_overrides: [run] settings that replace the file's (acbench run --run-set), checked as if
    the file said them."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise SpecError(f"{path}: no such spec file") from None
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{path.name}: not valid TOML: {e}") from None
    if run_overrides:
        if "run" in data and not isinstance(data["run"], dict):
            raise _err(path, "run", "must be a table [run]")
        data["run"] = {**data.get("run", {}), **run_overrides}
    return parse_spec(data, path)


def parse_run_setting(text: str) -> tuple[str, Any]:
    """KEY=VALUE of --run-set: VALUE as a TOML value (true, 32, "uring"), else as text (uring)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise SpecError(f"--run-set {text!r}: accepted: KEY=VALUE with KEY a [run] setting "
                        f"({', '.join(RUN_DEFAULTS)})")
    try:
        v: Any = tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        v = value
    return key.strip(), v


def parse_spec(data: dict[str, Any], path: Path) -> Spec:
    unknown = [k for k in data if k not in TOP_KEYS]
    if unknown:
        raise _err(path, "top level", f"unknown key {unknown[0]!r}; accepted: {', '.join(TOP_KEYS)}")
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise _err(path, "name", f"{name!r}; accepted: 1 to 64 characters from A-Z a-z 0-9 _ . -")
    desc = data.get("description", "")
    if not isinstance(desc, str):
        raise _err(path, "description", f"{desc!r}; accepted: a string")
    for table in ("fixed", "grid", "run", "memory"):
        if table in data and not isinstance(data[table], dict):
            raise _err(path, table, f"must be a table [{table}]")
    fixed_t = dict(data.get("fixed", {}))
    trace = _trace_file(path, fixed_t.pop("trace")) if "trace" in fixed_t else ""
    fixed = _fixed(path, fixed_t)
    grid_t = data.get("grid")
    if trace:
        _trace_fixed(path, trace, fixed, grid_t)
    grid, reps = _grid(path, grid_t, trace)
    clash = [k for k in grid if k in fixed]
    if clash:
        raise _err(path, "[grid]", f"{clash[0]} is also in [fixed]; set it in one place only")
    _check_theta_one(path, fixed, grid)
    props = {**fixed, **{k: grid[k][0] for k in grid if k not in GRID_KEYS}}
    if "recordcount" not in props:
        raise _err(path, "[fixed] recordcount", "missing; the data size D = recordcount × item "
                   "footprint needs it (a whole number >= 1)")
    run = _table(path, "run", data.get("run", {}), RUN_DEFAULTS)
    if run["mode"] not in MODES:
        raise _err(path, "[run] mode", f"{run['mode']!r}; accepted: {', '.join(MODES)}")
    if run["server_threads"] != "threads" and (isinstance(run["server_threads"], bool)
                                               or not isinstance(run["server_threads"], int) or run["server_threads"] < 1):
        raise _err(path, "[run] server_threads", f"{run['server_threads']!r}; accepted: a whole number >= 1, or "
                   "\"threads\" (memcached's worker threads follow each cell's driver threads)")
    for k in ("timeout_s", "network_conns", "network_depth", "driver_depth"):
        if isinstance(run[k], bool) or not isinstance(run[k], int) or run[k] < 1:
            raise _err(path, f"[run] {k}", f"{run[k]!r}; accepted: a whole number >= 1")
    if run["driver_depth"] > 256:
        raise _err(path, "[run] driver_depth", f"{run['driver_depth']!r}; accepted: 1 to 256 (requests each "
                   "in-process driver thread keeps in flight)")
    if run["io_engine"] not in IO_ENGINES:
        raise _err(path, "[run] io_engine", f"{run['io_engine']!r}; accepted: {', '.join(IO_ENGINES)}")
    if run["spill_device"] not in SPILL_DEVICES:
        raise _err(path, "[run] spill_device", f"{run['spill_device']!r}; accepted: disk (the disk under "
                   "/var/tmp) or ram (a zram device: hit rates only, throughput is not the disk's)")
    if run["regime"] not in REGIMES:
        raise _err(path, "[run] regime", f"{run['regime']!r}; accepted: native (the disk as it is) or hdd (its "
                   "reads and writes limited to hdd_iops per second for each cell: a hard disk emulated)")
    if isinstance(run["hdd_iops"], bool) or not isinstance(run["hdd_iops"], int) or not 1 <= run["hdd_iops"] <= 100000:
        raise _err(path, "[run] hdd_iops", f"{run['hdd_iops']!r}; accepted: a whole number from 1 to 100000 "
                   "(I/O operations per second of the emulated disk)")
    if run["hdd_from"] not in ("run", "load"):
        raise _err(path, "[run] hdd_from", f"{run['hdd_from']!r}; accepted: run (load and warm-up at the disk's own "
                   "speed, the measured run on the emulated disk) or load (the whole cell on it)")
    if run["order"] not in ORDERS:
        raise _err(path, "[run] order", f"{run['order']!r}; accepted: grid (approach after approach) or "
                   "interleaved (per repetition, every approach of a cell back to back)")
    _check_windows(path, run, reps, trace, grid, fixed)
    if run["regime"] == "hdd" and run["spill_device"] != "disk":
        raise _err(path, "[run] regime", "hdd emulates a slow disk and needs spill_device = \"disk\" (a RAM "
                   "device has no disk to limit)")
    nvm_dev = [a for a in grid["approach"] if lookup(a).device_latency]
    if nvm_dev and run["spill_device"] != "ram":
        raise _err(path, "[grid] approach", f"{nvm_dev[0]}: device_latency limits the RAM device, which stands for "
                   "an NVM block device; accepted with [run] spill_device = \"ram\" only")
    for k in ("perf", "io_direct"):
        if not isinstance(run[k], bool):
            raise _err(path, f"[run] {k}", f"{run[k]!r}; accepted: true or false")
    memory = _memory(path, data.get("memory", {}))
    if trace and run["mode"] != "in-process":
        raise _err(path, "[fixed] trace", "is replayed by the in-process driver; accepted with [run] mode = "
                   "\"in-process\" only")
    if trace and run["driver_depth"] != 1:
        raise _err(path, "[run] driver_depth", f"{run['driver_depth']}: a trace is replayed one request at a time "
                   "(batches refill their misses after the batch); accepted: 1 with [fixed] trace")
    per_approach = _per_approach(path, data.get("per_approach", {}), grid, trace)
    return Spec(name, path, desc, fixed, grid, reps, run, memory, trace, per_approach)


def _per_approach(path: Path, t: Any, grid: dict[str, list[Any]], trace: str) -> dict[str, dict[str, Any]]:
    """[per_approach.NAME]: for an approach of [grid] approach, PER_APPROACH_KEYS replacing [fixed]'s."""
    if not isinstance(t, dict):
        raise _err(path, "per_approach", "must be tables [per_approach.NAME], NAME an approach of [grid] approach")
    out: dict[str, dict[str, Any]] = {}
    for name, props in t.items():
        where = f"[per_approach.{name}]"
        if name not in grid["approach"]:
            raise _err(path, where, f"{name!r} is not in [grid] approach; accepted: "
                       f"{', '.join(grid['approach'])}")
        if not isinstance(props, dict) or not props:
            raise _err(path, where, f"must be a table with one or more of {', '.join(PER_APPROACH_KEYS)}")
        for k, v in props.items():
            if k not in PER_APPROACH_KEYS:
                raise _err(path, f"{where} {k}", "not settable per approach (every approach of a slice sees the "
                           f"same data and requests); accepted: {', '.join(PER_APPROACH_KEYS)}")
            if k in grid:
                raise _err(path, f"{where} {k}", "is also a [grid] key; set it in one place only")
            if trace:
                raise _err(path, f"{where} {k}", f"set by [fixed] trace ({TRACE_SETS.get(k, 'the trace')})"
                           if k in TRACE_SETS else "a replayed trace is the same requests for every approach")
            props_k = _count(path, f"{where} {k}", v, 1 if k == "operationcount" else 0)
            out.setdefault(name, {})[k] = props_k
    return out


# what a replayed trace decides, so a spec with [fixed] trace does not set it
TRACE_SETS = {"recordcount": "the trace's distinct objects", "fieldcount": "1",
              "fieldlength": "the trace's mean object size (for the memory plan: D = objects x footprint)",
              "operationcount": "the trace's requests after the warm-up"}


def _trace_file(path: Path, v: Any) -> str:
    """[fixed] trace: an existing, readable trace file (relative to the spec, or absolute) whose
    format the driver can tell from its name."""
    if not isinstance(v, str) or not v:
        raise _err(path, "[fixed] trace", f"{v!r}; accepted: the path of an oracleGeneral or CSV trace")
    f = (path.parent / v).resolve()
    if not f.is_file() or not os.access(f, os.R_OK):
        raise _err(path, "[fixed] trace", f"{v!r}: {f} is missing or unreadable; accepted: an existing trace "
                   "file, relative to the spec or absolute")
    if traceio.replay_format(f) is None:
        raise _err(path, "[fixed] trace", f"{v!r}: the format is told by the name; accepted: a name ending .csv "
                   "(time,key,size[,op]) or .og, .oracleGeneral, .bin (oracleGeneral)")
    return str(f)


def _trace_fixed(path: Path, trace: str, fixed: dict[str, Any], grid: Any) -> None:
    """[fixed] made to fit a replayed trace: the data set is the trace's objects (recordcount
    = distinct ids, fieldlength = their mean size, so D = objects x the footprint of a mean-sized
    item; _grid names the workload after the trace and sets zipf_theta 0: not used, the skew is
    measured). A trace with deletes is refused: OPT and the LRU reference have no delete."""
    for k, why in TRACE_SETS.items():
        if k in fixed or (isinstance(grid, dict) and k in grid):
            raise _err(path, f"[fixed] {k}" if k in fixed else f"[grid] {k}", f"set by [fixed] trace ({why})")
    if isinstance(grid, dict):
        for k in ("workload", "zipf_theta"):
            if k in grid:
                raise _err(path, f"[grid] {k}", "has no effect with [fixed] trace (the trace is the workload and "
                           "has its own skew); accepted: leave it out")
    try:
        recs = traceio.read_replay(trace)
    except ValueError as e:
        raise _err(path, "[fixed] trace", str(e)) from None
    ids, first = np.unique(recs["key"], return_index=True)
    warm = int(fixed.get("warmupoperations", 0))
    if warm >= len(recs):
        raise _err(path, "[fixed] warmupoperations", f"{warm}: the trace has {len(recs)} requests; accepted: "
                   "fewer, so that the run has some")
    fixed.update(recordcount=len(ids), fieldcount=1, operationcount=len(recs) - warm,
                 fieldlength=max(1, round(float(recs["size"][first].astype(np.float64).mean()))))


def server_threads_of(run: dict[str, Any], properties: dict[str, Any]) -> int:
    """memcached's worker threads (-t) for a cell: [run] server_threads, or its driver threads."""
    v = run.get("server_threads", "threads")
    return int(properties.get("threads", 1)) if v == "threads" else int(v)


def _table(path: Path, name: str, t: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    unknown = [k for k in t if k not in defaults]
    if unknown:
        raise _err(path, f"[{name}]", f"unknown key {unknown[0]!r}; accepted: {', '.join(defaults)}")
    return {**defaults, **t}


def _count(path: Path, where: str, v: Any, minimum: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise _err(path, where, f"{v!r}; accepted: a whole number >= {minimum}")
    return v


def _fixed(path: Path, t: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in t.items():
        if k in RESERVED:
            raise _err(path, f"[fixed] {k}", RESERVED[k])
        if k not in YCSB_PROPERTIES:
            raise _err(path, "[fixed]", f"unknown key {k!r}; accepted: YCSB properties "
                       f"({', '.join(p for p in YCSB_PROPERTIES if p not in RESERVED)})")
        out[k] = _prop_value(path, "[fixed]", k, v)
    for k in ("recordcount", "operationcount", "fieldcount", "fieldlength", "threads"):
        if k in out:
            _count(path, f"[fixed] {k}", out[k], 1)
    for k in ("warmupoperations", "seed"):
        if k in out:
            _count(path, f"[fixed] {k}", out[k], 0)
    return out


def _grid(path: Path, t: Any, trace: str = "") -> tuple[dict[str, list[Any]], int]:
    if t is None:
        raise _err(path, "[grid]", "missing; required: approach, zipf_theta, mem_ratio, workload")
    for k in t:
        if k not in GRID_KEYS and k not in YCSB_PROPERTIES:
            raise _err(path, "[grid]", f"unknown key {k!r}; accepted: {', '.join(GRID_KEYS)} "
                       "or a YCSB property given as a list")
        if k in RESERVED and k not in GRID_KEYS:
            raise _err(path, f"[grid] {k}", RESERVED[k])
    for k in GRID_KEYS[:4]:
        if k not in t and not (trace and k in ("workload", "zipf_theta")):
            raise _err(path, f"[grid] {k}", "missing; required: a non-empty list")
    grid: dict[str, list[Any]] = {}
    approaches = _list(path, "approach", t["approach"])
    for a in approaches:
        try:
            known = isinstance(a, str) and lookup(a) is not None
        except ApproachError as e:
            raise _err(path, "[grid] approach", str(e)) from None
        if not known:
            raise _err(path, "[grid] approach", f"unknown approach {a!r}; accepted: {', '.join(accepted_names())} "
                       "(or POLICY+TIER, a pair of memcached-ac -o ac_list, or NAME{option=value,...})")
    grid["approach"] = list(dict.fromkeys(approaches))
    if trace:      # the trace is the workload (readonly: the footprint measured at its mean size), own skew
        grid["workload"] = [(Path(trace).stem, str(paths.top().joinpath(*WORKLOAD_DIR_PARTS, "readonly")))]
        grid["zipf_theta"] = [0.0]
    else:
        grid["workload"] = [find_workload(path, w) for w in _list(path, "workload", t["workload"])]
        grid["zipf_theta"] = [_theta(path, v) for v in _list(path, "zipf_theta", t["zipf_theta"])]
    grid["mem_ratio"] = [_ratio(path, v) for v in _list(path, "mem_ratio", t["mem_ratio"])]
    for k, v in t.items():
        if k not in GRID_KEYS:
            grid[k] = [_prop_value(path, "[grid]", k, x) for x in _list(path, k, v)]
            if k in ("recordcount", "operationcount", "fieldcount", "fieldlength", "threads"):
                for x in grid[k]:
                    _count(path, f"[grid] {k}", x, 1)
    reps = _count(path, "[grid] repetition", t.get("repetition", 1), 1)
    return grid, reps


def _check_windows(path: Path, run: dict[str, Any], reps: int, trace: str, grid: dict[str, list[Any]],
                   fixed: dict[str, Any]) -> None:
    """[run] repetition_mode: one of REPETITION_MODES; windows only where one process can stand for
    every repetition (in-process, YCSB requests without inserts, at most MAX_WINDOWS)."""
    mode = run["repetition_mode"]
    if mode not in REPETITION_MODES:
        raise _err(path, "[run] repetition_mode", f"{mode!r}; accepted: separate (a process per repetition), "
                   "windows (one process per cell: one load and warm-up, a measured window per repetition) or "
                   "windows-all (windows for every approach, also those not shown to stand them: for checks)")
    if mode == "separate":
        return
    why = None
    if run["mode"] != "in-process":
        why = f"[run] mode is {run['mode']}: the windows are the in-process driver's (runwindows)"
    elif trace:
        why = "[fixed] trace replays one run: its repetitions are the same requests"
    elif reps > MAX_WINDOWS:
        why = f"[grid] repetition is {reps}: one process measures at most {MAX_WINDOWS} windows"
    else:
        for wname, wfile in grid["workload"]:
            given = grid.get("insertproportion") or [fixed.get("insertproportion", _file_property(Path(wfile),
                                                                                               "insertproportion"))]
            ins = max((float(v) for v in given if v is not None), default=0.0)
            if ins > 0:
                why = (f"workload {wname} inserts (insertproportion {ins}): a window's inserts would follow the "
                       "previous window's, not be those of its own seed")
                break
    if why:
        raise _err(path, "[run] repetition_mode", f"{mode}: {why}; accepted: separate")


def _file_property(path: Path, key: str) -> str | None:
    """A workload file's `key=value` (or `key: value`), the last one given; None if it has none."""
    found = None
    for line in path.read_text().splitlines():
        m = re.match(rf"\s*{re.escape(key)}\s*[=:]\s*(\S+)", line)
        if m:
            found = m.group(1)
    return found


def _memory(path: Path, t: dict[str, Any]) -> dict[str, Any]:
    m = _table(path, "memory", t, MEMORY_DEFAULTS)
    for k in ("allowance", "allowance_margin", "swap"):
        v = m[k]
        if k != "allowance_margin" and v == "auto":
            continue
        try:
            m[k] = v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else parse_size(str(v), k)
            if isinstance(v, bool):
                raise UsageError("")
        except UsageError as e:
            auto = "\"auto\" or " if k != "allowance_margin" else ""
            note = f" ({e.detail})" if e.detail else ""
            raise _err(path, f"[memory] {k}", f"{v!r}{note}; accepted: {auto}{size_forms()}") from None
    if m["provisioning"] not in PROVISIONINGS:
        raise _err(path, "[memory] provisioning", f"{m['provisioning']!r}; accepted: "
                   + ", ".join(f'"{p}"' for p in PROVISIONINGS))
    if "allowance_margin" in t and m["provisioning"] != "own":
        raise _err(path, "[memory] allowance_margin", "applies to provisioning = \"own\" only (with \"equal\","
                   " the default, every approach gets stock memcached's calibrated allowance: harness/README.md"
                   " \"Memory arithmetic\"); accepted: remove it, or set provisioning = \"own\"")
    fp = m["item_footprint"]
    if fp != "auto" and (isinstance(fp, bool) or not isinstance(fp, int) or fp < 48):
        raise _err(path, "[memory] item_footprint", f"{fp!r}; accepted: \"auto\" (measured) or "
                   "bytes per item, a whole number >= 48")
    return m
