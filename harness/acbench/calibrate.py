"""Calibrated allowance: what a cell's process and the kernel charge to its cgroup beyond the item budget.

cgroup v1 charges a group its anonymous memory, its page cache and its kernel memory. The page cache
(spill files, the `ospaging-file` mapping, pages leaving for swap) is reclaimable: the kernel drops or
writes it back before it OOM-kills. What kills is the rest, sampled here as

    non-reclaimable = memory.stat rss (anonymous, THP included) + shmem + memory.kmem.usage_in_bytes

(kernel memory: page tables, slab objects such as inodes, dentries, buffer heads and page-cache tree
nodes, kernel stacks). A calibration runs the approach's real cell (same binary, options, driver
workload, shape, M/D, threads, the same -m arithmetic) at a few record counts n under a limit of
budget + base RSS + hash table + PROBE_EXTRA (tight, like the real cell, so the page cache and the
kernel memory that follows it stay the size they have there; an OOM kill doubles PROBE_EXTRA and tries
again), samples the group every 20 ms (50 ms with /proc/PID/smaps) and takes

    overhead(n) = max over the run of (non-reclaimable − item memory)

item memory: user-space approaches: the item budget (-m MiB: slab pages, and the evicted table, block
buffer and classifier tables each policy charges inside -m); `ospaging`: the anonymous resident bytes
of its slab mapping (smaps); `ospaging-file`: 0 (its mapping is page cache); `effpaging`: the
anonymous resident bytes of its hot + cold mapping plus its classifier book (eff_memory − hot region).

Fit (exact rational least squares over the points): overhead(n) − hash(n) = a + b·n, with b ≥ 0 and a
raised until the line is on or above every point (it never predicts less than was measured);
hash(n) = 8 B × 2^hashpower is exact and a step, so it is not fitted. Then

    allowance(N) = ceil(SAFETY × (hash(N) + a + b·N)) + floor      (floor = [memory] allowance_margin)

for user-space approaches (the slack is page cache room for the spill files: their items cannot use
it), and allowance(N) = hash(N) + a + b·N for the kernel-paged ones marked `fills_limit` (ospaging,
ospaging-file, effpaging), whose item pages take whatever the
limit leaves (reclaimable by swap or write-back): slack there would be item memory beyond the budget.

Sizes: CAL_SIZES (25k, 100k, 250k records) for cells above the largest; a smaller cell is calibrated at
its own record count (one run, b = 0). Operations: min(the cell's, 1 × n) + warm-up min(the cell's,
n / 2). Cached under build/acbench/allowance-*.json keyed by approach (policy, options, driver
properties), binary, workload file text, the cell's properties but recordcount / operation counts /
seed (θ is kept: it changes how much is spilled and fetched), M/D, item footprint, server threads
and the sizes. The in-process driver is used whatever the
cell's mode (network mode's client runs outside the group), but for an approach that runs only over the
network (extstore): its server alone in the group, ycsb-mc's load and run outside it.

A cell replaying a trace ([fixed] trace) is calibrated on the trace itself, whole, at its own object
count (a trace cannot be scaled; its sizes decide how memcached's slab classes fill): one run, keyed
by the trace's SHA-256 too.

`python3 -m acbench.calibrate SPEC [--dry-run]` runs (or lists) every calibration a spec needs.
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Iterable

from acbench import cell, companions, extstore, leftovers, measure, memory, paths, ramdev, server, sysinfo
from acbench.approaches import Approach, get_approach
from acbench.cgroup import acg
from acbench.memory import MIB, hash_bytes
from acbench.paging import PagingSetup
from acbench.placement import SPILL_PARENT, cell_device, footprint, ram_device_bytes
from acbench.spec import Cell, Spec, SpecError, file_properties, load_spec, server_threads_of
from acbench.units import parse_size

CAL_VERSION = 1
CAL_SIZES = (25_000, 100_000, 250_000)
OPS_PER_RECORD = 1.0
WARMUP_PER_RECORD = 0.5
SAFETY = 1.15
# provisioning "equal": the approach whose overhead sets every approach's allowance (stock memcached,
# no anti-caching: what any memcached server needs beside its items)
REFERENCE = "memcached"
# provisioning "equal": a spilling approach writes whole blocks through the page cache, so it needs
# room for one block of it beside its items (at least 1 MiB, the default ac_block_size), or the cgroup
# kills it (measured: lru, 8000 records, M/D 1/2, -m 5: OOM-killed under a 7.44 MiB limit, the
# calibrated model's need; fine in 3 runs under 8 MiB)
SPILL_ROOM_MIN = 1 * MIB


def spill_room(approach: Approach) -> int:
    """Page cache a spilling approach needs beside its items: one block (ac_block_size, >= 1 MiB)."""
    if not approach.spills:
        return 0
    block = approach.options.get("ac_block_size")
    return max(SPILL_ROOM_MIN, parse_size(block, "ac_block_size") if block else 0)
PROBE_EXTRA = 32 * MIB
PROBE_TRIES = 3
PROBE_TIMEOUT_S = 1200
SAMPLE_S = 0.02
SAMPLE_SMAPS_S = 0.05
GROUP_NAME = "acbench-cal"
# properties that set the scale or the random stream, not the shape of the workload
# (θ is not one of them: with truezipf at 100k records, M/D 1/2, read-only, θ 0.25 instead of 0.99 adds
# 1.0 MiB (28 %) to lru's overhead: more spills and fetches; so a calibration is per θ)
SCALE_KEYS = ("recordcount", "operationcount", "warmupoperations", "seed")

Log = Callable[[str], None]


class CalibrationError(RuntimeError):
    pass


class _ProbeOom(CalibrationError):
    pass


class _ProbeUnseen(CalibrationError):
    """The probe's process ended before a usable sample (a probe of tens of thousands of records runs
    about 0.1 s: its group's first reading can come too late): run it again."""


@dataclass(frozen=True)
class Point:
    """One calibration run."""
    recordcount: int
    operationcount: int
    warmupoperations: int
    item_mb: int
    budget_bytes: int             # ceil(M/D × D / MiB) MiB, what OPT gets
    limit_bytes: int              # the probe's cgroup limit
    overhead_bytes: int           # peak of non-reclaimable − item memory
    anon_bytes: int               # at that peak: anonymous memory beyond the item memory
    kmem_bytes: int               # at that peak: kernel memory
    pte_bytes: int                # at that peak: page tables (VmPTE, part of kmem)
    cache_bytes: int              # at that peak: page cache (reclaimable, not in the overhead)
    peak_nonreclaimable_bytes: int
    peak_usage_bytes: int         # memory.max_usage_in_bytes (page cache included)
    peak_kmem_bytes: int          # memory.kmem.max_usage_in_bytes
    samples: int
    tries: int
    wall_s: float


@dataclass(frozen=True)
class Fit:
    a: float                      # bytes (envelope intercept)
    b: float                      # bytes per record
    lsq_a: float
    lsq_b: float
    max_residual: float           # bytes, of the least-squares line


@dataclass(frozen=True)
class Calibration:
    approach: str
    points: tuple[Point, ...]
    fit: Fit

    def overhead(self, recordcount: int) -> int:
        """The modelled non-reclaimable overhead at recordcount (bytes)."""
        return hash_bytes(recordcount) + max(0, math.ceil(self.fit.a + self.fit.b * recordcount))

    def allowance(self, recordcount: int, floor: int, pages: bool = False) -> int:
        """User-space approaches: SAFETY × overhead + floor (their items cannot use the rest: it is room
        for the page cache and what the model misses). Kernel-paged approaches: the overhead alone, since
        their item pages take whatever the limit leaves (swap or write-back makes them reclaimable), so
        any slack would be extra item memory: limit − overhead = the item budget, as for the others."""
        if pages:
            return self.overhead(recordcount)
        return math.ceil(SAFETY * self.overhead(recordcount)) + floor

    def summary(self, pages: bool = False, rule: str | None = None) -> str:
        """The fit and how it is used (rule; default: provisioning "own"'s)."""
        sizes = "/".join(_k(p.recordcount) for p in self.points)
        rule = rule or ("x1 (fills the limit)" if pages else f"x{SAFETY:g}+floor")
        return (f"calibrated:n={sizes} a={self.fit.a / MIB:.2f}MiB b={self.fit.b:.2f}B/rec"
                f" res={self.fit.max_residual / MIB:.2f}MiB {rule}")

    def to_json(self) -> dict[str, Any]:
        return {"approach": self.approach, "points": [asdict(p) for p in self.points], "fit": asdict(self.fit)}

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Calibration":
        return Calibration(d["approach"], tuple(Point(**p) for p in d["points"]), Fit(**d["fit"]))


def _k(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


def fit_line(points: Iterable[tuple[int, int]]) -> Fit:
    """y = a + b·n over (n, y) points by exact least squares; then b >= 0 and a raised so that the
    line is on or above every point."""
    pts = [(Fraction(n), Fraction(y)) for n, y in points]
    if not pts:
        raise ValueError("no points to fit")
    k = len(pts)
    mn = sum(n for n, _ in pts) / k
    my = sum(y for _, y in pts) / k
    sxx = sum((n - mn) ** 2 for n, _ in pts)
    b = sum((n - mn) * (y - my) for n, y in pts) / sxx if sxx else Fraction(0)
    a = my - b * mn
    res = max(abs(y - (a + b * n)) for n, y in pts)
    be = max(b, Fraction(0))
    ae = max(y - be * n for n, y in pts)
    return Fit(float(ae), float(be), float(a), float(b), float(res))


def sizes_for(recordcount: int) -> tuple[int, ...]:
    return tuple(CAL_SIZES) if recordcount > max(CAL_SIZES) else (recordcount,)


def probe_counts(n: int, props: dict[str, Any]) -> tuple[int, int]:
    ops = min(int(props.get("operationcount", n)), math.ceil(OPS_PER_RECORD * n))
    warm = min(int(props.get("warmupoperations", 0)), math.ceil(WARMUP_PER_RECORD * n))
    return ops, warm


@dataclass(frozen=True)
class Request:
    """What one calibration depends on."""
    approach: str
    workload_file: str
    props: dict[str, Any]          # the cell's properties (recordcount included)
    ratio: float
    threads: int
    footprint: int
    # the device of the probes' spill directories and swap files ([run] spill_device: disk or ram) is
    # part of the key (the file system's own kernel memory is in the overhead); spill_root is where
    # that device is mounted (the RAM device's mount point is new each run: not part of the key)
    device: str = "disk"
    spill_root: Path = field(default=SPILL_PARENT, compare=False)
    trace: str = ""                # [fixed] trace: the probe replays it (one size: its own)

    @property
    def sizes(self) -> tuple[int, ...]:
        return (int(self.props["recordcount"]),) if self.trace else sizes_for(int(self.props["recordcount"]))

    def key(self) -> dict[str, Any]:
        a = get_approach(self.approach)
        shape = {k: v for k, v in sorted(self.props.items()) if k not in SCALE_KEYS}
        return {"v": CAL_VERSION, "approach": {"name": a.name, "policy": a.policy, "options": a.options,
                                               "flags": list(a.flags), "driver": a.driver, "pages": a.pages,
                                               "swap": a.swap},
                "bin": measure._binary_id(), "workload": Path(self.workload_file).read_text(), "shape": shape,
                "ratio": self.ratio, "threads": self.threads, "footprint": self.footprint, "device": self.device,
                "runs": [[n, *probe_counts(n, self.props)] for n in self.sizes],
                "method": {"extra": PROBE_EXTRA} | ({"held": "min(budget, data)"} if self.ratio > 1 else {})} | ({"trace": sysinfo.file_sha256(Path(self.trace))} if self.trace else {})

    def cache_file(self) -> Path:
        digest = hashlib.sha256(json.dumps(self.key(), sort_keys=True).encode()).hexdigest()[:16]
        return paths.cache_dir() / f"allowance-{self.approach}-{digest}.json"

    def describe(self) -> str:
        """Which calibration: approach, workload file, θ, M/D (and record counts)."""
        theta = self.props.get("zipfianconstant")
        what = f"trace {Path(self.trace).name}" if self.trace else Path(self.workload_file).name
        return (f"{self.approach} {what}" + (f" θ {float(theta):g}" if theta is not None else "")
                + f" M/D {self.ratio:g}")

    def sizes_text(self) -> str:
        return "n=" + "/".join(_k(n) for n in self.sizes)


def cached(req: Request) -> Calibration | None:
    f = req.cache_file()
    if not f.exists():
        return None
    return Calibration.from_json(json.loads(f.read_text())["value"])


def calibrate(req: Request, log: Log | None = None) -> Calibration:
    """The cached calibration, or run it (one probe per size) and cache it."""
    cal = cached(req)
    if cal is not None:
        return cal
    log = log or _stderr
    if not server.supports_driver():
        raise CalibrationError("[memory] allowance = \"auto\" calibrates with the in-process driver, which this"
                               " memcached-ac lacks: rebuild it, or give [memory] allowance = SIZE")
    approach = get_approach(req.approach)
    pts = []
    for n in req.sizes:
        t0 = time.monotonic()
        log(f"calibrating the allowance of {req.describe()}: {n} records ...")
        pt = probe_until_fits(approach, req, n)
        pts.append(pt)
        log(f"  {n} records: overhead {pt.overhead_bytes / MIB:.2f} MiB (anon {pt.anon_bytes / MIB:.2f},"
            f" kernel {pt.kmem_bytes / MIB:.2f}, page tables {pt.pte_bytes / MIB:.2f}),"
            f" {time.monotonic() - t0:.1f} s")
    cal = Calibration(req.approach, tuple(pts),
                      fit_line((p.recordcount, p.overhead_bytes - hash_bytes(p.recordcount)) for p in pts))
    # written whole, then renamed: two workers of a local cluster may calibrate the same at once
    f = req.cache_file()
    tmp = f.with_name(f"{f.name}.tmp{os.getpid()}.{threading.get_ident()}")
    tmp.write_text(json.dumps({"key": req.key(), "value": cal.to_json()}, indent=1) + "\n")
    os.replace(tmp, f)
    log(f"  {req.describe()}: {cal.summary(approach.fills_limit)}")
    return cal


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def probe_until_fits(approach: Approach, req: Request, n: int) -> Point:
    extra = PROBE_EXTRA
    for tries in range(1, PROBE_TRIES + 1):
        try:
            return probe(approach, req, n, extra, tries)
        except _ProbeUnseen as e:
            if tries == PROBE_TRIES:
                raise CalibrationError(f"{e} ({tries} times)") from None
        except _ProbeOom:
            if tries == PROBE_TRIES:
                raise CalibrationError(f"calibrating {req.approach} at {n} records: OOM-killed {tries} times, last"
                                       f" with {extra / MIB:.0f} MiB over the budget") from None
            extra *= 2
    raise AssertionError("unreachable")


# --- sampling -------------------------------------------------------------------------------------

def _read_keyed(path: Path) -> dict[str, int]:
    out = {}
    for line in path.read_text().splitlines():
        k, _, v = line.partition(" ")
        if v.strip().lstrip("-").isdigit():
            out[k] = int(v)
    return out


def _read_int(path: Path) -> int:
    return int(path.read_text().strip())


V2_KERNEL = ("kernel_stack", "pagetables", "sec_pagetables", "percpu", "sock", "vmalloc", "slab")


def group_now(g: Path, version: int) -> dict[str, int]:
    """The group's charge now: rss (anonymous), shmem, cache (page cache, shmem included), kmem (kernel)."""
    st = _read_keyed(g / "memory.stat")
    if version == 1:
        return {"rss": st.get("rss", 0), "shmem": st.get("shmem", 0), "cache": st.get("cache", 0),
                "swap": st.get("swap", 0), "kmem": _read_int(g / "memory.kmem.usage_in_bytes")}
    kmem = st["kernel"] if "kernel" in st else sum(st.get(k, 0) for k in V2_KERNEL)
    return {"rss": st.get("anon", 0), "shmem": st.get("shmem", 0), "cache": st.get("file", 0),
            "swap": _read_int(g / "memory.swap.current") if (g / "memory.swap.current").exists() else 0,
            "kmem": kmem}


def group_peaks(g: Path, version: int) -> dict[str, int | None]:
    """The kernel's own maxima: usage_max (page cache included), kmem_max (v1 only), oom_kills."""
    if version == 1:
        return {"usage_max": _read_int(g / "memory.max_usage_in_bytes"),
                "kmem_max": _read_int(g / "memory.kmem.max_usage_in_bytes"),
                "oom_kills": _read_keyed(g / "memory.oom_control").get("oom_kill", 0)}
    peak = g / "memory.peak"
    return {"usage_max": _read_int(peak) if peak.exists() else None, "kmem_max": None,
            "oom_kills": _read_keyed(g / "memory.events").get("oom_kill", 0)}


def _smaps(pid: int) -> list[tuple[int, int, int]] | None:
    """(start, end, anonymous bytes) of every mapping of pid; None once it is gone or exiting."""
    try:
        text = Path(f"/proc/{pid}/smaps").read_text()
    except OSError:
        return None
    vmas: list[tuple[int, int, int]] = []
    start = end = 0
    for line in text.splitlines():
        if line.startswith("Anonymous:"):
            vmas.append((start, end, int(line.split()[1]) * 1024))
        elif not line[:1].isupper():
            r = line.split(" ", 1)[0]
            s, _, e = r.partition("-")
            try:
                start, end = int(s, 16), int(e, 16)
            except ValueError:
                pass
    return vmas or None


STATUS_KEYS = ("VmHWM", "RssFile", "RssShmem", "VmPTE")


def _status(pid: int) -> dict[str, int]:
    """VmHWM, RssFile, RssShmem, VmPTE of pid in bytes (empty once it is gone or a zombie)."""
    out: dict[str, int] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            k, _, v = line.partition(":")
            if k in STATUS_KEYS:
                out[k] = int(v.split()[0]) * 1024
    except OSError:
        pass
    return out


@dataclass
class Sample:
    t: float
    rss: int
    shmem: int
    cache: int
    kmem: int
    status: dict[str, int]
    vmas: list[tuple[int, int, int]] | None

    @property
    def pte(self) -> int:
        return self.status.get("VmPTE", 0)


def item_anon(s: Sample, stats: dict[str, Any]) -> int | None:
    """Anonymous resident bytes of a paging policy's item mapping (+ effpaging's classifier book)."""
    if s.vmas is None:
        return None
    if "eff_hot_base" in stats:
        base = int(str(stats["eff_hot_base"]), 0)
        top = base + int(stats["eff_hot_bytes"]) + int(stats["eff_cold_bytes"])
        book = int(stats["eff_memory"]) - int(stats["eff_hot_bytes"])
        return sum(a for lo, hi, a in s.vmas if lo >= base and hi <= top) + book
    size = int(stats.get("os_mapping_bytes", 0))
    return sum(a for lo, hi, a in s.vmas if hi - lo == size)


def overhead_of(s: Sample, approach: Approach, held: int, stats: dict[str, Any]) -> tuple[int, int] | None:
    """(overhead, anonymous part) of one sample; None if it cannot be told (paging, mapping gone).
    held: the item memory of a user-space server (its budget, or the data when that is less)."""
    if approach.pages:
        item = item_anon(s, stats)
        if item is None:
            return None
        anon = sum(a for _, _, a in s.vmas or []) - item
    else:
        anon = s.rss - held
    return anon + s.shmem + s.kmem, anon


def unsampled_anon(peak_usage: int, peak_kmem: int, held: int) -> int:
    """A user-space server's anonymous overhead when no sample saw its store loaded (its resident memory
    below the items it holds: a probe over in a tenth of a second, its last sample taken before the
    load ended): the group's peak charge (memory.max_usage_in_bytes) less its kernel memory and the
    items. An upper bound: the page cache at that peak is counted in."""
    return max(0, peak_usage - peak_kmem - held)


def probe(approach: Approach, req: Request, n: int, extra: int, tries: int = 1) -> Point:
    """Run the cell's configuration at n records under budget + base RSS + hash + extra; sample it."""
    provisional = measure.base_rss(req.threads) + hash_bytes(n) + extra
    p = memory.plan(approach, n, req.footprint, req.ratio, provisional)
    ops, warm = probe_counts(n, req.props)
    props = {**req.props, **approach.driver, "recordcount": n, "operationcount": ops, "warmupoperations": warm}
    if req.trace:      # the whole trace, its own warm-up
        props = {**req.props, **approach.driver}
    props.pop("diskstats_device", None)
    spill_parent = Path(tempfile.mkdtemp(prefix=f"acbench-cal-{os.getpid()}-", dir=req.spill_root))
    leftovers.track_dir(spill_parent, "spill directory")
    extra_opts = dict(approach.options)
    extra_opts["hashpower"] = str(p.hashpower)
    extras = companions.for_cell(approach.options, spill_parent.name, p.data_bytes, spill_parent)  # off the group
    extra_opts.update(companions.options(extras))
    out = spill_parent / "driver.json"
    errf = spill_parent / "stderr.txt"
    extra_opts.update(extstore.options(approach, spill_parent, p.data_bytes))
    opts = server.options(approach.policy, spill_parent / "spill", extra_opts, approach.flags)
    clients: _Clients | None = None
    if approach.network_only:
        # the server alone in the group, ycsb-mc outside it (as in a network cell): load, then warm-up + run
        port = server.free_port()
        cmd = server.server_cmd(p.item_mb, req.threads, opts, port)
        clients = _Clients(port, [server.ycsb_mc_cmd(req.workload_file, props, port, phase, f)
                                  for phase, f in (("load", spill_parent / "load.json"), ("run", out))], errf)
    else:
        cmd = server.driver_cmd(p.item_mb, req.threads, opts, req.workload_file, out, props, req.trace)
    try:
        companions.start(extras)
        point = _probe(approach, req, n, tries, p, cmd, spill_parent, out, errf, clients)
    finally:
        failed = companions.stop(extras)
        shutil.rmtree(spill_parent, ignore_errors=True)
        if not spill_parent.exists():
            leftovers.untrack_dir(spill_parent)
    if failed is not None:
        raise failed
    return point


class _Clients:
    """A network probe's driver: ycsb-mc phases run one after another outside the group, against the
    server the probe started in it; running() while one is left."""

    def __init__(self, port: int, cmds: list[list[str]], errf: Path) -> None:
        self.port, self.cmds, self.errf = port, list(cmds), errf
        self.proc: subprocess.Popen | None = None

    def start(self, server_proc: subprocess.Popen) -> None:
        try:
            server.wait_port(self.port, server_proc)
        except server.ServerError as e:
            err = self.errf.read_text().strip()[-400:] if self.errf.exists() else ""
            raise CalibrationError(f"{e}: {err or '(no stderr)'}") from None

    def running(self, server_proc: subprocess.Popen) -> bool:
        """Starts the next phase when one ended well; False when all did, or when the server died under
        a failed one (the probe's checks say why: an OOM kill is retried with more room)."""
        if self.proc is not None and self.proc.poll() is None:
            return True
        if self.proc is not None and self.proc.returncode != 0:
            if server_proc.poll() is not None:
                return False
            err = self.errf.read_text().strip()[-400:] if self.errf.exists() else ""
            raise CalibrationError(f"ycsb-mc exited with status {self.proc.returncode}: {err or '(no stderr)'}")
        if not self.cmds:
            return False
        with open(self.errf, "a") as ef:
            self.proc = subprocess.Popen(self.cmds.pop(0), stdout=subprocess.DEVNULL, stderr=ef,
                                         stdin=subprocess.DEVNULL)
        leftovers.track_process(self.proc.pid, "ycsb-mc")
        return True

    def stop(self, server_proc: subprocess.Popen) -> int:
        """Kill a client still running, then SIGTERM the server: its exit status (0 when it stopped)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if server_proc.poll() is None:
            server_proc.terminate()
            try:
                server_proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server_proc.kill()
        status = server_proc.wait()
        return 0 if status == -signal.SIGTERM else status


def _probe(approach: Approach, req: Request, n: int, tries: int, p: memory.MemoryPlan, cmd: list[str],
           spill_parent: Path, out: Path, errf: Path, clients: _Clients | None = None) -> Point:
    budget = p.item_budget_bytes
    # what a user-space server's items can hold: its budget, or all the data when that is less (M/D > 1:
    # the budget never fills, and RSS less the budget would be a negative overhead)
    held = min(budget, p.data_bytes)
    ops, warm = probe_counts(n, req.props)
    group = acg().MemoryGroup(GROUP_NAME, p.limit_bytes, p.swap_bytes)
    paging = PagingSetup(spill_parent / "swap", p.swap_bytes, swap_device=approach.swap_device) \
        if approach.pages else None
    samples: list[Sample] = []
    # smaps walks the page tables of the whole mapping: slower sampling for large ones
    interval = SAMPLE_SMAPS_S if approach.pages and p.item_mb > 128 else SAMPLE_S
    t0 = time.monotonic()
    proc = None
    try:
        if paging is not None:
            paging.start()
        group.create()
        with open(errf, "w") as ef:
            proc = group.popen(cmd, stdout=ef, stderr=ef, stdin=subprocess.DEVNULL, start_new_session=True)
        leftovers.track_process(proc.pid, Path(cmd[0]).name)
        g = group.path
        if clients is not None:
            clients.start(proc)
        while (clients.running(proc) if clients is not None else proc.poll() is None):
            if time.monotonic() - t0 > PROBE_TIMEOUT_S:
                raise CalibrationError(f"calibrating {approach.name} at {n} records took over {PROBE_TIMEOUT_S} s")
            try:
                now = group_now(g, group.backend.version)
            except (OSError, KeyError, ValueError):
                break
            vmas = _smaps(proc.pid) if approach.pages else None
            if approach.pages and vmas is None:
                break      # exiting: its mappings are going
            samples.append(Sample(time.monotonic() - t0, now["rss"], now["shmem"], now["cache"], now["kmem"],
                                  _status(proc.pid), vmas))
            time.sleep(interval)
        status = clients.stop(proc) if clients is not None else proc.wait()
        peaks = group_peaks(g, group.backend.version)
        kills = peaks["oom_kills"]
        peak_usage = peaks["usage_max"] or 0
        peak_kmem = peaks["kmem_max"] if peaks["kmem_max"] is not None else max((x.kmem for x in samples), default=0)
    finally:
        if clients is not None and proc is not None:
            clients.stop(proc)
        _cleanup(group, paging, spill_parent)
    err = errf.read_text().strip()[-400:] if errf.exists() else ""
    if kills:
        raise _ProbeOom(f"OOM-killed at limit {p.limit_bytes}")
    if status != 0:
        raise CalibrationError(f"calibrating {approach.name} at {n} records: memcached-ac exited with status"
                               f" {status}: {err or '(no stderr)'}")
    try:
        stats = json.loads(out.read_text())["server"]["anticache"]
    except (OSError, ValueError, KeyError) as e:
        raise CalibrationError(f"calibrating {approach.name} at {n} records: no readable driver result ({e})") from None
    best: tuple[int, int, Sample] | None = None
    for s in samples:
        ov = overhead_of(s, approach, held, stats)
        if ov is not None and (best is None or ov[0] > best[0]):
            best = (ov[0], ov[1], s)
    if best is None:
        raise _ProbeUnseen(f"calibrating {approach.name} at {n} records: the run ended before a sample")
    ov_bytes, anon, s = best
    if not approach.pages:
        # the kernel's own peaks, which no sampling interval misses: VmHWM (resident anon + file + shmem
        # at its highest) less the mapped files, and memory.kmem.max_usage_in_bytes; their sum can only be
        # above the sampled one (the two peaks may be at different moments)
        last = next((x.status for x in reversed(samples) if "VmHWM" in x.status), {})
        if last:
            anon = max(anon, last["VmHWM"] - last.get("RssFile", 0) - last.get("RssShmem", 0) - held)
            ov_bytes = max(ov_bytes, anon + max(x.shmem for x in samples) + peak_kmem)
        if anon < 0:
            anon = unsampled_anon(peak_usage, peak_kmem, held)
            ov_bytes = max(ov_bytes, anon + max(x.shmem for x in samples) + peak_kmem)
    return Point(n, ops, warm, p.item_mb, budget, p.limit_bytes, ov_bytes, anon, s.kmem, s.pte, s.cache,
                 max(x.rss + x.shmem + x.kmem for x in samples), peak_usage, peak_kmem, len(samples), tries,
                 round(time.monotonic() - t0, 2))


def _cleanup(group: Any, paging: PagingSetup | None, spill_parent: Path | None) -> None:
    """Stop the probe as a cell stops (cell.stop), then delete its files (the probe's spill directory
    is reused by the next probe); the first failure is raised."""
    first = cell.stop(group, paging)
    leftovers.prune_processes()
    if spill_parent is not None:
        for sub in ("spill", "swap"):
            p = spill_parent / sub
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            elif p.exists():
                p.unlink()
    if first is not None:
        raise first


# --- the spec's calibrations ------------------------------------------------------------------------

def _with_file_counts(props: dict[str, Any], workload_file: str) -> dict[str, Any]:
    """The cell's properties, with operationcount and warmupoperations from its workload file where
    the spec sets neither (the driver reads the file first): a probe then runs what the cell runs
    (scanonly's 200 scans, not one operation per record, each a scan of 1000 gets)."""
    out = dict(props)
    if workload_file and Path(workload_file).is_file():
        given = file_properties(workload_file)
        for k in ("operationcount", "warmupoperations"):
            if k not in out and k in given:
                try:
                    out[k] = int(given[k])
                except ValueError:
                    pass             # the driver names a malformed value itself
    return out


def request_for(spec: Spec, cell: Cell, footprint: int, spill_root: Path = SPILL_PARENT,
                device: str | None = None) -> Request:
    """device: where the cell's files go (placement.cell_device), by default the spec's spill_device."""
    return Request(cell.approach, cell.workload_file, _with_file_counts(cell.properties, cell.workload_file),
                   float(cell.mem_ratio),
                   server_threads_of(spec.run, cell.properties), int(footprint), device or str(spec.run["spill_device"]),
                   spill_root, cell.trace)


def allowance_for(req: Request, floor: int, run: bool = True, log: Log | None = None) -> tuple[int | None, str]:
    """provisioning "own": (allowance bytes, source) for the request's record count; (None, "to
    calibrate: ...") when it is not cached and run is False."""
    cal = calibrate(req, log) if run else cached(req)
    if cal is None:
        return None, f"to calibrate: {req.sizes_text()}"
    pages = get_approach(req.approach).fills_limit
    return cal.allowance(int(req.props["recordcount"]), floor, pages), cal.summary(pages)


def reference_of(req: Request) -> Request:
    """The calibration of the cell's common limit: stock memcached (REFERENCE) in the cell's shape."""
    return dataclasses.replace(req, approach=REFERENCE)


def equal_for(req: Request, run: bool = True,
              log: Log | None = None) -> tuple[int | None, int | None, int, str]:
    """provisioning "equal": (allowance, needs, offline, source). allowance = ⌈SAFETY × stock memcached's
    overhead⌉, the same for every approach of the cell; needs = ⌈SAFETY × the approach's own
    overhead⌉ + its spill room (spill_room) for a user-space approach (its -m is what the limit
    leaves after it), None for a kernel-paged one (its pages take what the limit leaves: its own
    calibration is not needed). offline: for an approach whose classifier runs offline in the paper
    (approaches.py offline_classifier) what its need exceeds stock memcached's, granted beside the
    limit (its -m is then stock memcached's less the spill room); else 0.
    (None, None, 0, "to calibrate: ...") when one is not cached and run is False."""
    n = int(req.props["recordcount"])
    reqs = [reference_of(req)] + ([] if get_approach(req.approach).fills_limit else [req])
    cals = [calibrate(r, log) if run else cached(r) for r in reqs]
    missing = [r for r, c in zip(reqs, cals) if c is None]
    if missing:
        return None, None, 0, "to calibrate: " + ", ".join(f"{r.approach} {r.sizes_text()}" for r in missing)
    allowance = math.ceil(SAFETY * cals[0].overhead(n))
    source = f"equal: {REFERENCE} {cals[0].summary(rule=f'x{SAFETY:g}')}"
    if len(cals) == 1:
        return allowance, None, 0, source + "; fills the limit"
    a = get_approach(req.approach)
    own = math.ceil(SAFETY * cals[1].overhead(n))
    room = f" + spill room {spill_room(a) / MIB:g}MiB" if a.spills else ""
    source += f"; needs {cals[1].summary(rule=f'x{SAFETY:g}')}{room}"
    if a.offline_classifier and own > allowance:
        # what it needs beyond stock memcached is granted beside the common limit (offline bytes): its
        # -m is what stock memcached's would be, less the spill room
        return allowance, allowance + spill_room(a), own - allowance, source + "; classifier offline"
    return allowance, own + spill_room(a), 0, source


def requests_of(spec: Spec, req: Request) -> list[Request]:
    """The calibrations a cell's plan needs under the spec's provisioning (equal_for, allowance_for)."""
    if spec.memory["provisioning"] == "own":
        return [req]
    return [reference_of(req)] + ([] if get_approach(req.approach).fills_limit else [req])


def plan_device(spec: Spec, cell: Cell) -> str:
    """Where the calibrations of a cell's plan run. provisioning "equal": on the disk always, since
    -m follows from them and a cell on the RAM device must run the plan of the same cell on the disk
    (it stands in for it: approaches.py ram_device); "own": where the cell's files go."""
    return "disk" if spec.memory["provisioning"] == "equal" else cell_device(spec, cell)


def spec_requests(spec: Spec, spill_root: Path = SPILL_PARENT) -> list[Request]:
    """The distinct calibrations a spec's cells need (allowance = "auto" only); spill_root: the
    mount point of the spec's RAM device when it has spill_device = "ram"."""
    if spec.memory["allowance"] != "auto":
        return []
    out: dict[str, Request] = {}
    for c in spec.cells():
        dev = plan_device(spec, c)
        for r in requests_of(spec, request_for(spec, c, footprint(spec, c), spill_root if dev == "ram" else SPILL_PARENT,
                                                dev)):
            out.setdefault(json.dumps(r.key(), sort_keys=True), r)
    return list(out.values())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m acbench.calibrate",
                                 description="Run (or list) the allowance calibrations a spec needs.")
    ap.add_argument("spec", type=Path)
    ap.add_argument("--dry-run", action="store_true", help="list them, run nothing")
    a = ap.parse_args(argv)
    if not a.dry_run:
        leftovers.cleanup_before_run()     # what a SIGKILLed acbench left (leftovers.py)
    try:
        spec = load_spec(a.spec)
        reqs = spec_requests(spec)
    except SpecError as e:
        print(f"calibrate: error: {e}", file=sys.stderr)
        return 2
    if not reqs:
        print(f"{spec.name}: [memory] allowance = {spec.memory['allowance']!r}: nothing to calibrate")
        return 0
    floor = int(spec.memory["allowance_margin"])
    device = None
    if not a.dry_run and any(r.device == "ram" and cached(r) is None for r in reqs):
        device = ramdev.RamDevice(ram_device_bytes(spec, spec.cells()))
        try:
            reqs = spec_requests(spec, device.start())
        except ramdev.RamDeviceError as e:
            print(f"calibrate: error: {e}", file=sys.stderr)
            return 2
    try:
        return _calibrate_all(reqs, floor, a.dry_run, spec.memory["provisioning"])
    finally:
        if device is not None:
            device.stop()


def _calibrate_all(reqs: list[Request], floor: int, dry_run: bool, provisioning: str) -> int:
    for r in reqs:
        cal = cached(r) if dry_run else calibrate(r)
        rc = int(r.props["recordcount"])
        if cal is None:
            print(f"{r.describe()}: to calibrate: {r.sizes_text()}")
            continue
        pages = get_approach(r.approach).fills_limit
        if provisioning == "own":
            use = f"allowance {cal.allowance(rc, floor, pages) / MIB:.1f} MiB"
        elif r.approach == REFERENCE:
            use = f"every approach's allowance {math.ceil(SAFETY * cal.overhead(rc)) / MIB:.1f} MiB"
        else:
            use = (f"needs {(math.ceil(SAFETY * cal.overhead(rc)) + spill_room(get_approach(r.approach))) / MIB:.1f}"
                   " MiB of the limit")
        print(f"{r.describe()}: {cal.summary(pages)}; at {rc} records: overhead {cal.overhead(rc) / MIB:.1f} MiB, {use}")
        for p in cal.points:
            print(f"    n={p.recordcount:<8d} overhead {p.overhead_bytes / MIB:7.2f} MiB  anon {p.anon_bytes / MIB:6.2f}"
                  f"  kernel {p.kmem_bytes / MIB:5.2f} (page tables {p.pte_bytes / MIB:4.2f})"
                  f"  page cache {p.cache_bytes / MIB:6.1f}  limit {p.limit_bytes / MIB:7.1f} MiB  {p.wall_s:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
