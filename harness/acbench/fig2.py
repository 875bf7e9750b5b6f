"""Fig 2 of Zhang et al. (ICDE 2015) (§IV-B-2): what each access-tracking method adds, per access, to the
in-memory request path — instructions, L1 instruction-cache misses, L1 data-cache misses and
time — everything in RAM, nothing spilled, the same YCSB run for every method.

How it is measured (this machine has no hardware counters: `perf stat -e instructions` says
"not supported"; `hardware_counters()` detects it and the rows say which source was used):
- instructions and L1 misses: one run under valgrind's callgrind with its cache simulator
  (I1 and D1 of 32 KiB, 8-way, 64-byte lines: the paper's Xeon E5-2603), collecting only inside
  the in-process driver's read (`ip_read`: the server's lookup, the policy's tracking, the value
  copy), divided by the reads of the run. A simulator sees user space only: the kernel's part of
  a fault (vma) or of a timer's context switch (alru) is not in these counts, and work driven by
  wall-clock time (vma's resets, alru's timer) happens about 50x less often per access than
  natively, because valgrind runs the accesses that much slower.
- time: the mean latency of a read as the driver measures it, from runs without valgrind, the
  median of `repeats` runs per method, methods interleaved.
The baseline ("none") is stock memcached, so each method's overhead also contains the
anti-caching hooks its request path runs (with nothing spilled: a flag test and the policy's
on_access call)."""
from __future__ import annotations

import json
import math
import resource
import shutil
import statistics
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from acbench import paths, server, sysinfo

MIB = 1 << 20
# slab chunk of a 10 x 100 B record (1184 B) with room for the slab classes' slack and the
# policies' book-keeping charged against -m (logging's estimate table, lru's evicted table)
BYTES_PER_RECORD = 1600
HEADROOM_MB = 64
# memcached sets its file limit (soft and hard) to -c; valgrind keeps the top descriptors for
# itself and refuses a hard limit other than the one it reports: the runs start with a limit
# of 1024 and -c 1012, the most valgrind 3.19 leaves
NOFILE = 1024
MAXCONNS = 1012
CACHE_MODEL = ("--I1=32768,8,64", "--D1=32768,8,64", "--LL=8388608,16,64")
CACHE_TEXT = "callgrind cache simulation: I1 32 KiB 8-way, D1 32 KiB 8-way, 64 B lines"
MAX_MISS_SHARE = 1e-5        # reads that may miss in a run (none may spill)
COLLECT = "ip_read"           # ycsb-driver/inproc/inproc.c: one read, as the server serves it
METRICS = (("instructions", "instructions_per_access"), ("l1i", "l1i_misses_per_access"),
           ("l1d", "l1d_misses_per_access"), ("time", "ns_per_access"))


class Fig2Error(RuntimeError):
    pass


class Fig2UsageError(Fig2Error):
    """A bad argument (exit status 2), as opposed to a run that failed (1)."""


@dataclass(frozen=True)
class Method:
    name: str
    options: dict[str, str]
    about: str


METHODS: tuple[Method, ...] = (
    Method("none", {"ac_policy": "none"}, "stock memcached: no tracking of ours (the baseline)"),
    Method("lru", {"ac_policy": "lru"}, "exact LRU list (H-Store): each access moves the item to the MRU end"),
    Method("alru", {"ac_policy": "alru", "ac_alru_bits": "22", "ac_alru_resolution": "1us",
                    "ac_alru_clock": "timer"},
           "ALRU as the paper ran it: 22-bit clock a timer thread advances every 1 us"),
    Method("alru-redis", {"ac_policy": "alru", "ac_alru_bits": "24", "ac_alru_resolution": "1s",
                          "ac_alru_clock": "timer"}, "ALRU with Redis's clock: 24 bits, a timer every 1 s"),
    Method("alru-clock", {"ac_policy": "alru", "ac_alru_bits": "22", "ac_alru_resolution": "1us",
                          "ac_alru_clock": "access"}, "ALRU reading CLOCK_MONOTONIC on every access (1 us)"),
    # no classification round within the run (ac_log_round 3600 s): a round migrates the keys it
    # finds cold (those never read) out of RAM, and Fig 2 measures the tracking with all in RAM
    Method("logging", {"ac_policy": "logging", "ac_log_sample": "1", "ac_log_round": "3600s"},
           "access logging, every access logged (no classification round within the run)"),
    Method("logging-0.1", {"ac_policy": "logging", "ac_log_sample": "0.1", "ac_log_round": "3600s"},
           "access logging, 1 access in 10 logged (no classification round within the run)"),
    Method("vma", {"ac_policy": "vma", "ac_vma_reset": "1s"},
           "VMA protection: mprotect + SIGSEGV handler, protection reset every 1 s"),
)
BY_NAME = {m.name: m for m in METHODS}


@dataclass(frozen=True)
class Config:
    records: int = 100_000
    reads: int = 10_000_000          # per timed run: several of vma's 1 s resets (~5 s a run)
    cg_reads: int = 200_000          # in the callgrind run
    repeats: int = 3
    theta: float = 0.99
    distribution: str = "truezipf"
    methods: tuple[str, ...] = field(default_factory=lambda: tuple(m.name for m in METHODS))

    def check(self) -> None:
        bad = [m for m in self.methods if m not in BY_NAME]
        if bad:
            raise Fig2UsageError(f"unknown tracking method(s) {', '.join(bad)}; known: {', '.join(BY_NAME)}")
        if "none" not in self.methods:
            raise Fig2UsageError("the methods must include none (the baseline every overhead is relative to)")
        for name, v, low in (("records", self.records, 100), ("reads", self.reads, 1000),
                             ("cg-reads", self.cg_reads, 1000), ("repeats", self.repeats, 1)):
            if v < low:
                raise Fig2UsageError(f"--{name} must be at least {low}, got {v}")
        if not 0 < self.theta <= 10:
            raise Fig2UsageError(f"--theta must be in (0, 10], got {self.theta}")


def item_mb(records: int) -> int:
    return math.ceil(records * BYTES_PER_RECORD / MIB) + HEADROOM_MB


def max_map_count() -> int:
    try:
        return int(Path("/proc/sys/vm/max_map_count").read_text())
    except (OSError, ValueError):
        return 65530


# policy vma's mapping holds -m plus room for each slab class's first page and two borrowed
# pages (ac_slab_headroom, policies/core/ac_room.c: 64 classes + 2 + 1 pages of 1 MiB)
VMA_HEADROOM_MB = 67


def vma_granule(mb: int) -> int:
    """The smallest power-of-two granule (>= 4 KiB) whose count over vma's mapping stays within
    what policy vma accepts (vm.max_map_count less 4096, policies/policy/vma.c)."""
    room = max(max_map_count() - 4096, 1)
    g = 4096
    while math.ceil((mb + VMA_HEADROOM_MB) * MIB / g) > room:
        g *= 2
    return g


def hashpower(records: int) -> int:
    """memcached's hash table sized for the records from the start (it grows past 1.5 items per
    bucket): no expansion thread at work during the load, the same for every method. (Under
    valgrind, vma's process died in memcached's expansion thread while the table grew: README.)"""
    hp = 16
    while 1.5 * (1 << hp) <= records * 1.2:
        hp += 1
    return hp


def options(m: Method, mb: int, spill_dir: Path, records: int) -> list[str]:
    opts = {"hashpower": str(hashpower(records)), **m.options}
    if m.options["ac_policy"] != "none":
        opts["ac_spill_dir"] = str(spill_dir)
    if m.options["ac_policy"] == "vma":
        opts["ac_vma_granule"] = str(vma_granule(mb))
    return [f"{k}={v}" for k, v in opts.items()]


def workload_props(cfg: Config, reads: int) -> dict[str, Any]:
    return {"recordcount": cfg.records, "operationcount": reads, "readproportion": 1,
            "updateproportion": 0, "insertproportion": 0, "readmodifywriteproportion": 0,
            "requestdistribution": cfg.distribution, "zipfianconstant": cfg.theta,
            "warmupoperations": 0, "threads": 1}


def _limit_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (NOFILE, NOFILE))


def run_once(m: Method, cfg: Config, reads: int, workdir: Path, prefix: list[str] | None = None) -> dict[str, Any]:
    """One in-process run of method m; the driver's JSON. prefix: e.g. valgrind's command."""
    mb = item_mb(cfg.records)
    workdir.mkdir(parents=True, exist_ok=True)
    out = workdir / f"{m.name}.json"
    out.unlink(missing_ok=True)
    spill = workdir / f"spill-{m.name}"
    cmd = server.driver_cmd(mb, 1, options(m, mb, spill, cfg.records), str(paths.top() / "experiments/workloads/workloadc"),
                            out, workload_props(cfg, reads))
    cmd[1:1] = ["-c", str(MAXCONNS)]
    cmd = (prefix or []) + cmd
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=_limit_files, timeout=3600)
    except subprocess.TimeoutExpired:
        raise Fig2Error(f"{m.name}: the run did not finish within an hour: {' '.join(cmd)}")
    finally:
        shutil.rmtree(spill, ignore_errors=True)
    if r.returncode != 0 or not out.exists():
        tail = "\n".join((r.stderr or r.stdout).strip().splitlines()[-5:])
        raise Fig2Error(f"{m.name}: memcached-ac exited with status {r.returncode}: {tail}")
    d = json.loads(out.read_text())
    run = d["run"]
    if run["reads"]["total"] != reads or run["errors"]["total"] != 0:
        raise Fig2Error(f"{m.name}: {run['reads']['total']} reads of {reads}, {run['errors']['total']} errors")
    ac = d.get("server", {}).get("anticache", {})
    # stock memcached's slab mover may drop the odd item even with room to spare (1 read in 10^7
    # missed once): a few misses do not change a per-access cost; a spill does (a disk read)
    if ac.get("spilled_items", 0) or run["reads"]["hit"] < reads * (1 - MAX_MISS_SHARE):
        raise Fig2Error(f"{m.name}: not everything stayed in RAM ({ac.get('spilled_items', 0)} items spilled, "
                        f"{run['reads']['hit']} of {reads} reads hit): Fig 2 measures tracking alone")
    return d


def parse_callgrind(path: Path) -> dict[str, int]:
    """The `events:` and `totals:` (or `summary:`) lines of a callgrind output file."""
    events: list[str] = []
    totals: list[int] = []
    for line in path.read_text().splitlines():
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith(("totals:", "summary:")) and not totals:
            totals = [int(x) for x in line.split()[1:]]
    if not events or not totals:
        raise Fig2Error(f"{path}: no events/totals lines (not a callgrind output file?)")
    totals += [0] * (len(events) - len(totals))
    return dict(zip(events, totals))


def valgrind_version() -> str:
    exe = shutil.which("valgrind")
    if exe is None:
        raise Fig2Error("valgrind is not installed: `make -C harness deps` installs it (apt-get install valgrind)")
    return subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip()


def hardware_counters() -> str:
    """'available', or why not (perf missing, or counters not supported, as on this VM)."""
    exe = shutil.which("perf")
    if exe is None:
        return "perf not installed"
    r = subprocess.run([exe, "stat", "-x,", "-e", "instructions:u", "true"], capture_output=True, text=True)
    if r.returncode != 0 or "<not supported>" in r.stderr or "<not counted>" in r.stderr:
        return "perf stat -e instructions: not supported"
    return "available"


def callgrind_run(m: Method, cfg: Config, workdir: Path) -> dict[str, Any]:
    cgout = workdir / "callgrind" / f"{m.name}.out"
    cgout.parent.mkdir(parents=True, exist_ok=True)
    # vma resumes the faulting access after its SIGSEGV handler changed the page's protection:
    # valgrind's manual (§2.9, "Signals") asks for every register to be exact at a memory access
    # then (by default only the program counter and stack pointers are). Every method gets the same.
    prefix = ["valgrind", "-q", "--tool=callgrind", "--vex-iropt-register-updates=allregs-at-mem-access",
              "--cache-sim=yes", f"--toggle-collect={COLLECT}", *CACHE_MODEL, f"--callgrind-out-file={cgout}"]
    d = run_once(m, cfg, cfg.cg_reads, workdir, prefix)
    ev = parse_callgrind(cgout)
    if ev.get("Ir", 0) == 0:
        raise Fig2Error(f"{m.name}: callgrind collected nothing inside {COLLECT} (is memcached-ac stripped?)")
    n = cfg.cg_reads
    return {"instructions_per_access": ev["Ir"] / n, "l1i_misses_per_access": ev["I1mr"] / n,
            "l1d_misses_per_access": (ev["D1mr"] + ev["D1mw"]) / n,
            # vma's protection unit as its server reported it (vma_granule chose it)
            "vma_granule_bytes": d.get("server", {}).get("anticache", {}).get("vma_granule_bytes")}


def overheads(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row's *_overhead_pct: (method - none) / none x 100, per metric."""
    base = next((r for r in rows if r["tracking_method"] == "none"), None)
    if base is None:
        raise Fig2Error("no row of the baseline (none)")
    for r in rows:
        for short, col in METRICS:
            b, v = base.get(col), r.get(col)
            r[f"{short}_overhead_pct"] = (100.0 * (v - b) / b) if (b and v is not None) else float("nan")
    return rows


def measure(cfg: Config, workdir: Path, callgrind: bool = True,
            progress: Callable[[str], None] = lambda s: None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(rows per method, rows per timed run)."""
    cfg.check()
    methods = [BY_NAME[n] for n in cfg.methods]
    vg = valgrind_version() if callgrind else ""
    counters = hardware_counters()
    runs: list[dict[str, Any]] = []
    for rep in range(cfg.repeats):
        for m in methods:
            d = run_once(m, cfg, cfg.reads, workdir)
            lat = d["run"]["latency_us"]["read"]
            runs.append({"tracking_method": m.name, "repeat": rep, "ns_per_access": 1000.0 * lat["mean"],
                         "throughput_ops_s": d["run"]["throughput_ops_per_s"]})
            progress(f"{m.name} timed run {rep + 1}/{cfg.repeats}: {1000.0 * lat['mean']:.1f} ns per read")
    meta = {"records": cfg.records, "reads": cfg.reads, "cg_reads": cfg.cg_reads if callgrind else 0,
            "repeats": cfg.repeats, "zipf_theta": cfg.theta, "distribution": cfg.distribution,
            "item_mb": item_mb(cfg.records),
            "counter_source": (f"{CACHE_TEXT} ({vg})" if callgrind else "none"),
            "hardware_counters": counters, **sysinfo.machine(), "date": sysinfo.now()}
    rows = []
    for m in methods:
        mine = [r for r in runs if r["tracking_method"] == m.name]
        row: dict[str, Any] = {"tracking_method": m.name, "about": m.about,
                               "options": ",".join(f"{k}={v}" for k, v in m.options.items()),
                               "ns_per_access": statistics.median(r["ns_per_access"] for r in mine),
                               "ns_per_access_runs": ";".join(f"{r['ns_per_access']:.1f}" for r in mine),
                               "throughput_ops_s": statistics.median(r["throughput_ops_s"] for r in mine)}
        if callgrind:
            row.update(callgrind_run(m, cfg, workdir))
            progress(f"{m.name} callgrind: {row['instructions_per_access']:.0f} instructions per read")
        else:
            row.update({c: float("nan") for _, c in METRICS[:3]})
            row["vma_granule_bytes"] = vma_granule(item_mb(cfg.records)) if m.name == "vma" else None
        rows.append({**row, **meta})
    return overheads(rows), runs
