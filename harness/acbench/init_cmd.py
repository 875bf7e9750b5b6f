"""`acbench init NAME [--dir DIR]`: write NAME.toml, a commented spec to start an experiment from."""
from __future__ import annotations

import re
from pathlib import Path

import typer
from rich.console import Console

from acbench.approaches import APPROACHES
from acbench.spec import IO_ENGINES, RUN_DEFAULTS

_err = Console(stderr=True, soft_wrap=True, highlight=False)
_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")

TEMPLATE = '''# {name}: an acbench experiment spec (TOML). Run it with
#   acbench run {name}.toml --dry-run     # the cells and their memory plan; runs nothing
#   acbench run {name}.toml --run-id first
#   acbench plot build/results/{name}/first   and   acbench report build/results/{name}/first
# Every cell of the grid below is one run of memcached-ac under a cgroup memory limit: load the
# records, warm up, then the measured run; one row per cell in build/results/{name}/<run-id>/cells.csv.
# `acbench columns` documents every column of the rows.
name = "{name}"
description = "my first grid: three approaches, one skew, two memory sizes"

# [fixed]: YCSB properties every cell gets (as in a YCSB workload file; the workload file sets the
# operation mix, these override it).
[fixed]
recordcount = 20000            # records loaded (keys user0..); data D = recordcount x item footprint
operationcount = 50000         # requests in the measured run
warmupoperations = 10000       # requests before it, not measured (the cache warms up)
fieldcount = 10                # a record's value: fieldcount x fieldlength bytes (YCSB: 10 x 100 B)
fieldlength = 100
# truezipf: Zipf(theta) over the record keys; YCSB's own "zipfian" scrambles keys over 10^10 ranks
# and is nearly uniform below theta 0.99
requestdistribution = "truezipf"
# seed = 1                     # the request stream's seed; repetition r uses seed + r

# [grid]: every combination is one cell.
[grid]
# approaches (acbench's names; `acbench run` lists them all when one is wrong):
#   {approaches}
approach = ["memcached", "lru", "alru"]
# workload files: a name looked for beside this spec, in the current directory, then in the
# repository's experiments/workloads (readonly, readheavy, writeheavy, workloada..workloadf), or a path
workload = ["readonly"]
zipf_theta = [0.99]            # skew theta of the request distribution
# M/D: the memory given to items as a fraction of the data (the paper: 3/4, 1/2, 1/4)
mem_ratio = ["3/4", "1/2"]
repetition = 1                 # runs per cell (seed + r); the paper ran 3
# any YCSB property may also be a list here, e.g. readproportion = [1.0, 0.95], or driver threads:
# threads = [1, 2, 4] (memcached's workers follow them: [run] server_threads = "threads")

# [run]: how the cells run (defaults shown).
[run]
mode = "{mode}"            # in-process (the driver inside memcached-ac, no network) or network (ycsb-mc)
server_threads = "threads"     # memcached worker threads: a number, or "threads" (the cell's driver threads)
driver_depth = {driver_depth}               # in-process: requests each driver thread keeps in flight
network_conns = {network_conns}              # network: connections per ycsb-mc thread
network_depth = {network_depth}              # network: requests each connection keeps in flight
io_engine = "{io_engine}"           # spill I/O of the spilling approaches: {engines}
io_direct = {io_direct_toml}            # their record reads with O_DIRECT (no page cache)
spill_device = "{spill_device}"          # disk, or ram (a zram device: hit rates only, not throughput)
regime = "{regime}"             # native (the disk as it is), or hdd: a hard disk emulated (its IOPS limited)
hdd_iops = {hdd_iops}                # regime hdd: reads and writes per second the disk allows each cell
hdd_from = "{hdd_from}"              # regime hdd: from the measured run (load, warm-up at full speed) or the load
perf = {perf_toml}                    # perf stat's software counters per cell (when perf is installed)
timeout_s = {timeout_s}             # a cell running longer fails
order = "{order}"                 # grid (approach after approach) or interleaved (per repetition, each cell's approaches back to back)
repetition_mode = "{repetition_mode}"   # separate (a process per repetition) or windows (one process, a window each, where the approach allows)

# [memory]: the memory plan (defaults: measured and calibrated; see harness/README.md).
# [memory]
# item_footprint = "auto"      # bytes per record in memcached's slabs, or a number
# provisioning = "equal"       # one cgroup limit for every approach of a cell (the paper's rule); "own":
#                              # each approach its own allowance on top of the budget (the older rule)
# allowance = "auto"           # the limit beyond the items' budget: calibrated, or a size
# allowance_margin = "8M"      # provisioning = "own" only: a fixed floor added to each allowance
# swap = "auto"                # paging approaches' swap file size

# [per_approach.NAME]: how long one approach of the grid measures and warms up, instead of [fixed]'s
# (operationcount, warmupoperations only: every approach of a cell sees the same data and requests),
# e.g. for one that a read-count check (harness/README.md) showed still settling.
# [per_approach.lru]
# operationcount = 100000
'''


def render(name: str) -> str:
    toml = {f"{k}_toml": str(v).lower() for k, v in RUN_DEFAULTS.items() if isinstance(v, bool)}
    return TEMPLATE.format(name=name, approaches=", ".join(APPROACHES), engines=", ".join(IO_ENGINES),
                           **RUN_DEFAULTS, **toml)


def init(
    name: str = typer.Argument(..., help="The experiment's name: NAME.toml is written, its results go to "
                               "build/results/NAME/."),
    directory: Path = typer.Option(Path("."), "--dir", help="Where to write NAME.toml (default: here)."),
) -> None:
    """Write NAME.toml: a commented spec of a small grid to edit and run."""
    if not _NAME_RE.match(name):
        _err.print(f"acbench init: error: {name!r}: accepted: 1 to 64 characters from A-Z a-z 0-9 _ . -", markup=False)
        raise typer.Exit(2)
    out = directory / f"{name}.toml"
    if not directory.is_dir():
        _err.print(f"acbench init: error: {directory}: no such directory", markup=False)
        raise typer.Exit(2)
    if out.exists():
        _err.print(f"acbench init: error: {out} exists; it is left as it is (choose another NAME or --dir)",
                   markup=False)
        raise typer.Exit(2)
    out.write_text(render(name))
    print(f"wrote {out}: edit it, then `acbench run {out} --dry-run` lists its cells")


def register(app: typer.Typer) -> None:
    app.command("init")(init)
