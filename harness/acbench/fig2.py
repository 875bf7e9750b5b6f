"""Fig 2 of Zhang et al. (ICDE 2015) (§IV-B-2): what each access-tracking method adds, per access, to the
in-memory request path — instructions, L1 instruction-cache misses, L1 data-cache misses, time,
and the CPU time and kernel events behind it — everything in RAM, nothing spilled, the same YCSB
reads for every method, at each Zipf θ asked for (the paper: 1,000,000 records, θ 0.99 and 0.5).

How it is measured (this machine has no hardware counters: `perf stat -e instructions` says
"not supported"; `hardware_counters()` detects it and the rows say which source was used):
- instructions and L1 misses: one run under valgrind's callgrind with its cache simulator
  (I1 and D1 of 32 KiB, 8-way, 64-byte lines: the paper's Xeon E5-2603), collecting only inside
  the in-process driver's read (`ip_read`: the server's lookup, the policy's tracking, the value
  copy), divided by the reads of the run; the load runs uninstrumented and a short warm-up fills
  the simulated caches before the counted reads. A simulator sees user space only, and work driven by
  wall-clock time (vma's resets, alru's timer) happens about 50x less often per access than
  natively, because valgrind runs the accesses that much slower.
- time: the mean latency of a read as the driver measures it, from runs without valgrind, the
  median of `repeats` runs per method, methods interleaved.
- CPU time, user and system (the kernel's part: vma's faults and mprotect calls, alru's timer
  sleeps): getrusage(RUSAGE_SELF) of memcached-ac, all its threads, which the driver takes at the
  start and the end of the read phase (run.resources), so the load and start-up are not in it;
  per read, the median over the timed runs.
- page faults and context switches: `perf stat -e page-faults,context-switches` around each timed
  run (software counters, all threads; they count vma's SIGSEGV faults, which getrusage's minflt
  does not), less the same count of a load-only run (no reads) of the method, per read. Where perf
  is missing or refuses, the columns are empty and perf_source says why.
The baseline is "none-flat": stock memcached with its segmented LRU off (-o no_lru_maintainer), the
request path with no access tracking at all. Every anti-caching method runs with memcached's
segmented LRU off too (policies/core/ac_core.c sets lru_segmented=false and its do_item_bump hook
replaces memcached's bump), while "none" (stock memcached as shipped) marks each read for its
segmented LRU: against "none" a method's overhead would be net of memcached's own tracking.
"none" is reported beside it (*_overhead_vs_none_pct)."""
from __future__ import annotations

import contextlib
import json
import math
import os
import resource
import shutil
import signal
import statistics
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from acbench import leftovers, paths, server, sysinfo

MIB = 1 << 20
# slab chunk of a 10 x 100 B record (1184 B) with room for the slab classes' slack and the
# policies' book-keeping charged against -m (logging's estimate table, lru's evicted table).
# At 1,000,000 records: -m 1590 MiB, of which logging (the largest charge) leaves 1469 MiB for
# items, which need 1130 MiB of 1184-byte chunks.
BYTES_PER_RECORD = 1600
HEADROOM_MB = 64
# memcached sets its file limit (soft and hard) to -c; valgrind keeps the top descriptors for
# itself and refuses a hard limit other than the one it reports: the runs start with a limit
# of 1024 and -c 1012, the most valgrind 3.19 leaves
NOFILE = 1024
MAXCONNS = 1012
CACHE_MODEL = ("--I1=32768,8,64", "--D1=32768,8,64", "--LL=8388608,16,64")
# reads before the callgrind run's measured ones, under instrumentation (callgrind_run)
CG_WARMUP = 10_000
CACHE_TEXT = "callgrind cache simulation: I1 32 KiB 8-way, D1 32 KiB 8-way, 64 B lines"
MAX_MISS_SHARE = 1e-5        # reads that may miss in a run (none may spill)
COLLECT = "ip_read"           # ycsb-driver/inproc/inproc.c: one read, as the server serves it
METRICS = (("instructions", "instructions_per_access"), ("l1i", "l1i_misses_per_access"),
           ("l1d", "l1d_misses_per_access"), ("time", "ns_per_access"), ("cpu", "cpu_ns_per_access"))
BASELINE = "none-flat"        # what every *_overhead_pct is relative to
STOCK = "none"                # stock memcached, segmented LRU on: *_overhead_vs_none_pct
THETAS = (0.99, 0.5)          # the paper's two skews
RECORDS = 1_000_000           # the paper's scale
KERNEL_TIME_SOURCE = ("getrusage(RUSAGE_SELF) of memcached-ac, all threads, over the read phase "
                      "(the driver's run.resources); median of the timed runs")
PERF_EVENTS = ("page-faults", "context-switches")
PERF_SOURCE = ("perf stat -e page-faults,context-switches, all threads: median of the timed runs "
               "less a load-only run of the method, per read")
# vm.max_map_count: policy vma refuses a mapping whose granules could split it into more than
# max_map_count - MAP_COUNT_RESERVE VMAs (policies/policy/vma.c)
MAX_MAP_COUNT = Path("/proc/sys/vm/max_map_count")
MAP_COUNT_RESERVE = 4096
PAGE = 4096
# policy vma's mapping holds -m plus room for each slab class's first page and two borrowed
# pages (ac_slab_headroom, policies/core/ac_room.c: 64 classes + 2 + 1 pages of 1 MiB)
VMA_HEADROOM_MB = 67


class Fig2Error(RuntimeError):
    pass


class Fig2UsageError(Fig2Error):
    """A bad argument (exit status 2), as opposed to a run that failed (1)."""


@dataclass(frozen=True)
class Method:
    name: str
    options: dict[str, str]
    about: str
    flags: tuple[str, ...] = ()       # bare -o flags (memcached's own)


METHODS: tuple[Method, ...] = (
    Method(BASELINE, {"ac_policy": "none"},
           "stock memcached with its segmented LRU off (-o no_lru_maintainer: lru_segmented=false, no "
           "LRU maintainer thread): no access tracking at all (the baseline)", ("no_lru_maintainer",)),
    Method(STOCK, {"ac_policy": "none"},
           "stock memcached as shipped: its segmented LRU marks every read, its maintainer thread moves items"),
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


def parse_thetas(text: str) -> tuple[float, ...]:
    """'0.99,0.5' -> (0.99, 0.5): each in the open interval (0, 1), each once."""
    out: list[float] = []
    for part in (s.strip() for s in text.split(",")):
        try:
            t = float(part)
        except ValueError:
            raise Fig2UsageError(f"--theta takes comma-separated Zipf θ values in the open interval (0, 1), "
                                 f"e.g. 0.99,0.5; got {part!r}") from None
        if t not in out:
            out.append(t)
    return tuple(out)


@dataclass(frozen=True)
class Config:
    records: int = RECORDS
    reads: int = 10_000_000          # per timed run: several of vma's 1 s resets (~5 s a run)
    cg_reads: int = 200_000          # in the callgrind run
    repeats: int = 3
    thetas: tuple[float, ...] = THETAS
    distribution: str = "truezipf"
    methods: tuple[str, ...] = field(default_factory=lambda: tuple(m.name for m in METHODS))
    allow_big_granules: bool = False  # vma: bigger granules when vm.max_map_count cannot be raised

    def check(self) -> None:
        bad = [m for m in self.methods if m not in BY_NAME]
        if bad:
            raise Fig2UsageError(f"unknown tracking method(s) {', '.join(bad)}; known: {', '.join(BY_NAME)}")
        if BASELINE not in self.methods:
            raise Fig2UsageError(f"the methods must include {BASELINE} (the baseline every overhead is relative to)")
        for name, v, low in (("records", self.records, 100), ("reads", self.reads, 1000),
                             ("cg-reads", self.cg_reads, 1000), ("repeats", self.repeats, 1)):
            if v < low:
                raise Fig2UsageError(f"--{name} must be a whole number of at least {low}, got {v}")
        if not self.thetas:
            raise Fig2UsageError("--theta needs at least one Zipf θ in the open interval (0, 1), e.g. 0.99,0.5")
        for t in self.thetas:
            if not 0 < t < 1:
                raise Fig2UsageError(f"--theta takes Zipf θ values in the open interval (0, 1), e.g. 0.99,0.5; "
                                     f"got {t:g}")


def item_mb(records: int) -> int:
    return math.ceil(records * BYTES_PER_RECORD / MIB) + HEADROOM_MB


def mem_available_mb(meminfo: Path = Path("/proc/meminfo")) -> int | None:
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def check_memory(records: int, available_mb: int | None) -> None:
    """Every run holds all records in RAM: -m (item_mb) must fit in the memory available."""
    mb = item_mb(records)
    if available_mb is not None and mb > available_mb:
        raise Fig2Error(f"{records:,} records need -m {mb} MiB ({BYTES_PER_RECORD} B per record + {HEADROOM_MB} MiB), "
                        f"all in RAM, and this machine has {available_mb} MiB available: use fewer --records")


def read_map_count(sysctl: Path = MAX_MAP_COUNT) -> int:
    try:
        return int(Path(sysctl).read_text())
    except (OSError, ValueError) as e:
        raise Fig2Error(f"cannot read vm.max_map_count ({sysctl}): {e}") from None


def vma_map_need(mb: int, granule: int = PAGE) -> int:
    """The vm.max_map_count policy vma accepts `granule`-byte granules with at -m mb: one VMA per
    granule of its mapping at most, plus the reserve it keeps for the rest of the process."""
    return math.ceil((mb + VMA_HEADROOM_MB) * MIB / granule) + MAP_COUNT_RESERVE


def vma_granule(mb: int, map_count: int) -> int:
    """The smallest power-of-two granule (>= 4 KiB) policy vma accepts at this vm.max_map_count:
    what --allow-big-granules falls back to."""
    room = max(map_count - MAP_COUNT_RESERVE, 1)
    g = PAGE
    while vma_map_need(mb, g) - MAP_COUNT_RESERVE > room:
        g *= 2
    return g


@dataclass(frozen=True)
class VmaSetting:
    granule: int                      # ac_vma_granule of the runs
    map_count: int                    # vm.max_map_count while they run
    note: str                         # what was done to the sysctl, for the progress lines


@contextlib.contextmanager
def vma_map_count(mb: int, allow_big: bool = False, sysctl: Path = MAX_MAP_COUNT) -> Iterator[VmaSetting]:
    """vm.max_map_count high enough for 4 KiB granules over vma's mapping at -m mb, for the block:
    raised (leftovers.hold_sysctl: recorded first, so `acbench cleanup` restores it if this process
    is killed; shared with other acbench processes) and restored after it, also on an error or
    Ctrl-C. Held at its value when that is enough already (another run may be holding it). If it
    cannot be raised: Fig2Error naming the sysctl, or with allow_big the smallest granule that fits."""
    need = vma_map_need(mb)
    now = read_map_count(sysctl)
    target = max(now, need)
    try:
        old = leftovers.hold_sysctl(sysctl, str(target))
    except OSError as e:
        refused = e.strerror or str(e)
    else:
        try:
            yield VmaSetting(PAGE, target, f"vm.max_map_count raised from {now} to {target} for 4 KiB granules "
                             f"(restored after)" if target > now else
                             f"vm.max_map_count {now} is enough for 4 KiB granules (needs {need})")
        finally:
            leftovers.release_sysctl(sysctl, old)
        return
    if now >= need:                   # nothing to raise: it is enough as it is
        yield VmaSetting(PAGE, now, f"vm.max_map_count {now} (enough for 4 KiB granules)")
    elif allow_big:
        g = vma_granule(mb, now)
        yield VmaSetting(g, now, f"vm.max_map_count {now}: cannot raise it to {need} ({sysctl}: {refused}); "
                                 f"{g}-byte granules (--allow-big-granules)")
    else:
        raise Fig2Error(
            f"vma needs vm.max_map_count >= {need} for 4 KiB protection granules over its "
            f"{mb + VMA_HEADROOM_MB} MiB mapping (it is {now}), and raising it failed ({sysctl}: {refused}). "
            f"Run as root (acbench raises it for vma's runs and restores it), or set it yourself "
            f"(sysctl -w vm.max_map_count={need}), or pass --allow-big-granules to let vma use "
            f"{vma_granule(mb, now)}-byte granules")


def hashpower(records: int) -> int:
    """memcached's hash table sized for the records from the start (it grows past 1.5 items per
    bucket): no expansion thread at work during the load, the same for every method. (Under
    valgrind, vma's process died in memcached's expansion thread while the table grew: README.)"""
    hp = 16
    while 1.5 * (1 << hp) <= records * 1.2:
        hp += 1
    return hp


def options(m: Method, spill_dir: Path, records: int, granule: int = PAGE) -> list[str]:
    opts = {"hashpower": str(hashpower(records)), **m.options}
    if m.options["ac_policy"] != "none":
        opts["ac_spill_dir"] = str(spill_dir)
    if m.options["ac_policy"] == "vma":
        opts["ac_vma_granule"] = str(granule)
    return [f"{k}={v}" for k, v in opts.items()] + list(m.flags)


def is_vma(m: Method) -> bool:
    return m.options["ac_policy"] == "vma"


def workload_props(cfg: Config, theta: float, reads: int, warmup: int = 0) -> dict[str, Any]:
    return {"recordcount": cfg.records, "operationcount": reads, "readproportion": 1,
            "updateproportion": 0, "insertproportion": 0, "readmodifywriteproportion": 0,
            "requestdistribution": cfg.distribution, "zipfianconstant": theta,
            "warmupoperations": warmup, "threads": 1}


def _limit_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (NOFILE, NOFILE))


def _run(cmd: list[str], timeout: float) -> subprocess.CompletedProcess:
    """cmd in a session of its own (perf or valgrind and memcached-ac under it): on a timeout, an
    error or Ctrl-C the whole group is killed, by its process group id, before this returns."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=_limit_files, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        raise
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


def run_once(m: Method, cfg: Config, theta: float, reads: int, workdir: Path, prefix: list[str] | None = None,
             granule: int = PAGE, tag: str = "", warmup: int = 0) -> dict[str, Any]:
    """One in-process run of method m; the driver's JSON (kept as workdir/<method><tag>.json).
    prefix: e.g. valgrind's or perf's command; warmup: reads before the measured ones."""
    mb = item_mb(cfg.records)
    workdir.mkdir(parents=True, exist_ok=True)
    out = workdir / f"{m.name}{tag}.json"
    out.unlink(missing_ok=True)
    spill = workdir / f"spill-{m.name}"
    cmd = server.driver_cmd(mb, 1, options(m, spill, cfg.records, granule),
                            str(paths.top() / "experiments/workloads/workloadc"), out,
                            workload_props(cfg, theta, reads, warmup))
    cmd[1:1] = ["-c", str(MAXCONNS)]
    cmd = (prefix or []) + cmd
    try:
        r = _run(cmd, 3600)
    except subprocess.TimeoutExpired:
        raise Fig2Error(f"{m.name}: the run did not finish within an hour: {' '.join(cmd)}")
    finally:
        shutil.rmtree(spill, ignore_errors=True)
    if r.returncode != 0 or not out.exists():
        tail = "\n".join((r.stderr or r.stdout).strip().splitlines()[-5:])
        hint = ("\n(valgrind tracks a fixed number of mappings, VG_N_SEGMENTS, and vma's open granules split "
                "its mapping into more: fewer --records for the callgrind runs)") if "VG_N_SEGMENTS" in r.stderr else ""
        raise Fig2Error(f"{m.name}: memcached-ac exited with status {r.returncode}: {tail}{hint}")
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


def parse_perf(path: Path) -> dict[str, int | None]:
    """The counts of `perf stat -x, -o FILE`: event -> count (None: <not counted>/<not supported>)."""
    out: dict[str, int | None] = {}
    for line in path.read_text().splitlines():
        f = line.split(",")
        if line.startswith("#") or len(f) < 3 or not f[2]:
            continue
        try:
            out[f[2]] = int(float(f[0]))
        except ValueError:
            out[f[2]] = None
    return out


def perf_cmd(out: Path) -> list[str]:
    return ["perf", "stat", "-x,", "-e", ",".join(PERF_EVENTS), "-o", str(out), "--"]


def perf_status(scratch: Path) -> str:
    """'' when perf counts page-faults and context-switches here, else why not."""
    if shutil.which("perf") is None:
        return "perf not installed"
    scratch.mkdir(parents=True, exist_ok=True)
    out = scratch / "perf-check.txt"
    try:
        r = subprocess.run(perf_cmd(out) + ["true"], capture_output=True, text=True, timeout=60)
        counts = parse_perf(out) if out.exists() else {}
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"perf stat failed: {e}"
    finally:
        out.unlink(missing_ok=True)
    if r.returncode != 0:
        return f"perf stat failed: {(r.stderr.strip().splitlines() or ['exit status ' + str(r.returncode)])[-1]}"
    missing = [e for e in PERF_EVENTS if counts.get(e) is None]
    if missing:
        return f"perf stat -e {','.join(missing)}: not supported"
    return ""


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


def callgrind_run(m: Method, cfg: Config, theta: float, workdir: Path, granule: int = PAGE) -> dict[str, Any]:
    cgout = workdir / "callgrind" / f"{m.name}.out"
    cgout.parent.mkdir(parents=True, exist_ok=True)
    # vma resumes the faulting access after its SIGSEGV handler changed the page's protection:
    # valgrind's manual (§2.9, "Signals") asks for every register to be exact at a memory access
    # then (by default only the program counter and stack pointers are). Every method gets the same.
    # The load runs uninstrumented (--instr-atstart=no; at 1M records it would take most of the
    # callgrind run's time): the driver switches instrumentation on at the warm-up, whose
    # CG_WARMUP reads fill the simulated caches, and the reading thread zeroes its counts when the
    # measured reads begin (ycsb-driver/inproc/inproc.c, ip_phase_begin, ip_thread_phase_begin).
    prefix = ["valgrind", "-q", "--tool=callgrind", "--vex-iropt-register-updates=allregs-at-mem-access",
              "--instr-atstart=no", "--cache-sim=yes", f"--toggle-collect={COLLECT}", *CACHE_MODEL,
              f"--callgrind-out-file={cgout}"]
    run_once(m, cfg, theta, cfg.cg_reads, workdir, prefix, granule, "-callgrind", warmup=CG_WARMUP)
    ev = parse_callgrind(cgout)
    if ev.get("Ir", 0) == 0:
        raise Fig2Error(f"{m.name}: callgrind collected nothing inside {COLLECT} (is memcached-ac stripped?)")
    n = cfg.cg_reads
    return {"instructions_per_access": ev["Ir"] / n, "l1i_misses_per_access": ev["I1mr"] / n,
            "l1d_misses_per_access": (ev["D1mr"] + ev["D1mw"]) / n}


def _pct(v: Any, b: Any) -> float:
    ok = isinstance(v, (int, float)) and isinstance(b, (int, float)) and not math.isnan(v) and not math.isnan(b)
    return 100.0 * (v - b) / b if ok and b else float("nan")


def overheads(rows: list[dict[str, Any]], baseline: str = BASELINE) -> list[dict[str, Any]]:
    """Each row's *_overhead_pct, (method - baseline) / baseline x 100 per metric, and
    *_overhead_vs_none_pct against stock memcached (nan without its row), within its θ."""
    for theta in dict.fromkeys(r.get("zipf_theta") for r in rows):
        group = [r for r in rows if r.get("zipf_theta") == theta]
        base = next((r for r in group if r["tracking_method"] == baseline), None)
        if base is None:
            raise Fig2Error(f"no row of the baseline ({baseline})" + (f" at θ {theta:g}" if theta is not None else ""))
        stock = next((r for r in group if r["tracking_method"] == STOCK), {})
        for r in group:
            for short, col in METRICS:
                r[f"{short}_overhead_pct"] = _pct(r.get(col), base.get(col))
            for short, col in METRICS:
                r[f"{short}_overhead_vs_none_pct"] = _pct(r.get(col), stock.get(col))
    return rows


def theta_dir(workdir: Path, theta: float) -> Path:
    return workdir / f"theta-{theta:g}"


def _per_read(res: dict[str, Any], key: str, reads: int) -> float:
    v = res.get(key)
    return 1e9 * float(v) / reads if v is not None else float("nan")


def _median(xs: list[Any]) -> float | None:
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def measure(cfg: Config, workdir: Path, callgrind: bool = True, progress: Callable[[str], None] = lambda s: None,
            sysctl: Path = MAX_MAP_COUNT) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(rows per method and θ, rows per run)."""
    cfg.check()
    check_memory(cfg.records, mem_available_mb())
    methods = [BY_NAME[n] for n in cfg.methods]
    mb = item_mb(cfg.records)
    vg = valgrind_version() if callgrind else ""
    counters = hardware_counters()
    perf_why = perf_status(workdir)
    if perf_why:
        progress(f"no page-fault and context-switch counts: {perf_why}")
    if any(is_vma(m) for m in methods):
        with vma_map_count(mb, cfg.allow_big_granules, sysctl) as vs:    # refused: fails before any run
            progress(f"vma: {vs.note} for its runs")

    def tracking(m: Method) -> contextlib.AbstractContextManager:
        return vma_map_count(mb, cfg.allow_big_granules, sysctl) if is_vma(m) else contextlib.nullcontext(None)

    runs: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    meta = {"records": cfg.records, "reads": cfg.reads, "cg_reads": cfg.cg_reads if callgrind else 0,
            "repeats": cfg.repeats, "distribution": cfg.distribution, "item_mb": mb,
            "counter_source": (f"{CACHE_TEXT} ({vg}), after {CG_WARMUP:,} warm-up reads" if callgrind else "none"),
            "hardware_counters": counters, **sysinfo.machine(), "date": sysinfo.now()}
    for theta in cfg.thetas:
        wd = theta_dir(workdir, theta)
        setting: dict[str, VmaSetting | None] = {}
        for rep in range(cfg.repeats):
            for m in methods:
                pout = wd / "perf" / f"{m.name}-{rep}.txt"
                pout.parent.mkdir(parents=True, exist_ok=True)
                with tracking(m) as vs:
                    d = run_once(m, cfg, theta, cfg.reads, wd, None if perf_why else perf_cmd(pout),
                                 vs.granule if vs else PAGE)
                setting[m.name] = vs
                runs.append(_run_row(m, theta, "timed", rep, cfg.reads, d, None if perf_why else parse_perf(pout)))
                progress(f"θ {theta:g} {m.name} timed run {rep + 1}/{cfg.repeats}: "
                         f"{runs[-1]['ns_per_access']:.1f} ns per read, {runs[-1]['sys_ns_per_access']:.1f} ns system time")
        if not perf_why:
            for m in methods:
                pout = wd / "perf" / f"{m.name}-load.txt"
                with tracking(m) as vs:
                    d = run_once(m, cfg, theta, 0, wd, perf_cmd(pout), vs.granule if vs else PAGE, "-load")
                runs.append(_run_row(m, theta, "load-only", 0, 0, d, parse_perf(pout)))
        for m in methods:
            row = _method_row(m, theta, cfg, [r for r in runs if r["tracking_method"] == m.name
                                              and r["zipf_theta"] == theta], perf_why, setting[m.name])
            if callgrind:
                # a callgrind run that fails (valgrind's mapping table full with vma's open granules)
                # leaves this row's counts empty, says why in callgrind_error, and the rest runs on
                try:
                    with tracking(m) as vs:
                        row.update(callgrind_run(m, cfg, theta, wd, vs.granule if vs else PAGE))
                    progress(f"θ {theta:g} {m.name} callgrind: {row['instructions_per_access']:.0f} instructions per read")
                except Fig2Error as e:
                    row["callgrind_error"] = str(e)
                    progress(f"θ {theta:g} {m.name} callgrind failed, its instruction and cache columns stay "
                             f"empty: {e}")
            rows.append({**row, **meta})
    return overheads(rows), runs


def _run_row(m: Method, theta: float, kind: str, rep: int, reads: int, d: dict[str, Any],
             perf: dict[str, int | None] | None) -> dict[str, Any]:
    run = d["run"]
    res = run.get("resources", {})
    timed = reads > 0
    return {"tracking_method": m.name, "zipf_theta": theta, "run": kind, "repeat": rep, "reads": reads,
            "ns_per_access": 1000.0 * run["latency_us"]["read"]["mean"] if timed else float("nan"),
            "throughput_ops_s": run["throughput_ops_per_s"] if timed else float("nan"),
            "user_ns_per_access": _per_read(res, "cpu_user_s", reads) if timed else float("nan"),
            "sys_ns_per_access": _per_read(res, "cpu_sys_s", reads) if timed else float("nan"),
            "page_faults": (perf or {}).get("page-faults"), "context_switches": (perf or {}).get("context-switches"),
            "vma_granule_bytes": d.get("server", {}).get("anticache", {}).get("vma_granule_bytes")}


def _method_row(m: Method, theta: float, cfg: Config, mine: list[dict[str, Any]], perf_why: str,
                vs: VmaSetting | None) -> dict[str, Any]:
    timed = [r for r in mine if r["run"] == "timed"]
    load = next((r for r in mine if r["run"] == "load-only"), None)

    def per_read(key: str) -> float | None:
        t = _median([r[key] for r in timed])
        if t is None or load is None or load[key] is None:
            return None
        return (t - load[key]) / cfg.reads

    return {"tracking_method": m.name, "zipf_theta": theta, "baseline": BASELINE, "about": m.about,
            "options": ",".join([f"{k}={v}" for k, v in m.options.items()] + list(m.flags)),
            "ns_per_access": statistics.median(r["ns_per_access"] for r in timed),
            "ns_per_access_runs": ";".join(f"{r['ns_per_access']:.1f}" for r in timed),
            "throughput_ops_s": statistics.median(r["throughput_ops_s"] for r in timed),
            "user_ns_per_access": statistics.median(r["user_ns_per_access"] for r in timed),
            "sys_ns_per_access": statistics.median(r["sys_ns_per_access"] for r in timed),
            "cpu_ns_per_access": statistics.median(r["user_ns_per_access"] + r["sys_ns_per_access"] for r in timed),
            "faults_per_access": per_read("page_faults"), "ctx_switches_per_access": per_read("context_switches"),
            "kernel_time_source": KERNEL_TIME_SOURCE, "perf_source": perf_why or PERF_SOURCE,
            "instructions_per_access": float("nan"), "l1i_misses_per_access": float("nan"),
            "l1d_misses_per_access": float("nan"), "callgrind_error": "",
            # vma's protection unit as its server reported it, and vm.max_map_count while it ran
            "vma_granule_bytes": timed[0]["vma_granule_bytes"] if is_vma(m) else None,
            "vma_max_map_count": vs.map_count if vs is not None else None}
