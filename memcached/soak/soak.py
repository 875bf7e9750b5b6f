#!/usr/bin/env python3
"""Soak test of memcached-ac (`make soak`; not in CI; root).

Per approach, --minutes (default 30) of the mixed-size many-client load of
memcached/tests/test_mixed_load.py at --overcommit (default 8) times the item memory:
--threads (default 8) client threads, each a noloss.ModelWorker (its own keys, an
exact model of every answer), values 1 B .. 500 KiB log-uniform
(mc_helpers.log_uniform_size), every command (set, add, replace, append, prepend,
cas, incr/decr, get, gets, touch, gat, delete). The server runs inside a memory
cgroup (cgroups/acg_lib); a sampler thread reads the server and the group every
second; at the end every key of every model is read back.

Approaches (the `-o ac_*` options of harness/acbench/approaches.py, plus
lru-block-merge = lru with ac_merge=block as in test_mixed_load.py):
  user-space, they spill:  lru, lru-block-merge, alru, logging
  kernel-paged:            ospaging (anonymous memory, swap file), ospaging-file
                           (shared file mapping in the spill directory, no swap),
                           effpaging (mlocked hot region + swapped cold region)

Sizes (M = --mem-mib, default 32; O = --overcommit, default 8; A = --allowance-mib,
default 64):
  user-space:    memcached-ac -m M, -t 4; cgroup limit M + A MiB, no swap (memsw =
                 limit). A = 64 because memcached-ac's own memory beyond -m is ~30 MiB
                 under this load (measured: RSS 62-67 MiB at -m 32 for lru); the rest is
                 page-cache room for the spill files.
  kernel-paged:  the same limit M + A MiB; -m PAGED_M_FACTOR (3) x O x M, because
                 these never evict and -m must hold the live data plus slab
                 fragmentation (the slab automover is off for them; measured unpaged:
                 ~373 MiB of slab pages for 256 MiB of live values); vm.page-cluster=0
                 while they run; ospaging and effpaging get a swap file of -m + 64 MiB
                 under /var/tmp (and that much swap in the group); ospaging-file none.
                 effpaging gets ac_eff_memory=M (its locked hot region and classifier,
                 the counterpart of -m M): its default, "what the cgroup allows", and
                 also ac_eff_memory 32M or 16M under a 64 MiB limit were OOM-killed
                 within seconds of this load (8 writers; the unlocked rest could not be
                 reclaimed fast enough).
  In both the live data (the models' values) is held at O x M: once a thread's live
  bytes exceed O x M / threads it deletes random live keys of its own (through
  ModelWorker.delete, so the answer is checked too) until it is below again. So the
  data is O times the item memory in steady state and, for the kernel-paged ones,
  above the cgroup limit (M + A) — the kernel must page.
  Each thread runs until the minutes are over and it wrote at least O x M / threads
  bytes (so the run writes at least O x -m in all, also with a tiny --minutes).
  A "round" is O x M bytes written in all; the models carry across rounds.
  ModelWorker.run() cannot be called again for a second round (it makes new
  counters and stops at a fixed quota of written bytes): the loop here calls
  make_counters() once and then ModelWorker.step() until the time is up.

Checks per approach (any failure -> FAIL; the exit status is 1 if one failed):
  - no wrong data at any time (a ModelWorker raises on a value, flags or number that
    differs from its model), no refusal seen by a client (ModelWorker.refused: any
    SERVER_ERROR, unexpected NOT_STORED / NOT_FOUND / EXISTS / miss);
  - at the end every live key byte-exact with its flags, every deleted key absent
    (ModelWorker.verify), `stats anticache` lost_items 0, io_errors 0, every
    refused_* 0, checksum_errors and spill_failures 0 (noloss.check_no_refusals);
  - the server alive throughout and exiting 0 on SIGTERM; no OOM kill in the group
    (memory.oom_control oom_kill on v1, memory.events oom_kill on v2);
  - sampled every SAMPLE_S (1 s): VmRSS of the server, the group's usage and peak
    (memory.usage_in_bytes / max_usage_in_bytes on v1, memory.current / memory.peak on
    v2, read through acg_lib), open fds (/proc/PID/fd), the spill directory's disk
    blocks. Bounds:
      RSS <= limit + RssFile of the first sample (the binary and its libraries: page
        cache charged to whichever group first read those files, ~2.7 MiB) and
        usage <= limit in every sample, peak <= limit at the end (the kernel enforces
        these; what would break them is an OOM kill, which fails the run at once);
      fds at the end of the load <= fds after warm-up + FD_SLACK (8)
        (warm-up: the first WARMUP_FRACTION = 10 % of the load phase; "after warm-up" is
        the first sample after it);
      in the steady state (from the first trim, when the live data reached its cap, to the
      end of the load): RSS max over its last 10 % <= RSS max of its first half
        x (1 + RSS_GROWTH = 0.10) + RSS_SLACK (8 MiB)   (no memory growth); a run that
        never reached the cap (a few seconds) says "RSS growth not checked".
  - a guard, not a check of the server: if free space on the file system of the
    work directory (/var/tmp) falls below max(2 GiB, 5 %) the approach stops and
    fails (before logging's cold store was cleaned it grew ~4 GiB/min under this load).

Output: a progress line per approach every minute (every quarter of the run if
shorter), one summary line per approach, one final line; --out FILE gets the summary
and final lines too. Everything is undone per approach, also on failure, SIGINT,
SIGTERM or SIGHUP: the server is stopped by its PID (SIGTERM, SIGKILL after 20 s), the
cgroup removed (acg_lib kills what it started if still inside), the swap file swapped
off and deleted, vm.page-cluster restored, the work directory (spill directory, stderr)
removed. The signals are blocked while that runs and act right after it.
"""
from __future__ import annotations

import argparse
import inspect
import math
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.dont_write_bytecode = True      # keep the source tree clean (imports below)
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for _p in (ROOT / "memcached" / "tests", ROOT / "cgroups", ROOT / "harness"):
    sys.path.insert(0, str(_p))

from mc_helpers import BIN, MiB, Server, log_uniform_size, start_server  # noqa: E402
from noloss import ModelWorker, check_no_refusals  # noqa: E402
from acg_lib import AcgError, MemoryGroup, swap_off, swap_on  # noqa: E402
from acbench.approaches import APPROACHES as ACBENCH  # noqa: E402
from acbench.paging import hold_page_cluster_zero, release_page_cluster  # noqa: E402

SAMPLE_S = 1.0
WARMUP_FRACTION = 0.10
FD_SLACK = 8
RSS_GROWTH = 0.10
RSS_SLACK = 8 * MiB
PAGED_M_FACTOR = 3
SWAP_EXTRA = 64 * MiB
SERVER_THREADS = 4
MIN_LIVE_KEYS = 64             # trimming never takes a thread's live set below this
STALL_S = 120                  # no client progress for this long: the server hangs
DISK_FLOOR = 2 << 30
WORK_PARENT = Path("/var/tmp")
GiB = 1 << 30


@dataclass(frozen=True)
class Approach:
    name: str
    ac: dict
    paged: bool = False
    swap: bool = False


def _from_acbench(name: str, extra: dict | None = None) -> Approach:
    a = ACBENCH[name]
    return Approach(name, {"ac_policy": a.policy, **a.options, **(extra or {})}, a.pages, a.swap)


APPROACHES: dict[str, Approach] = {
    "lru": _from_acbench("lru"),
    "lru-block-merge": Approach("lru-block-merge", {**_from_acbench("lru").ac, "ac_merge": "block"}),
    "alru": _from_acbench("alru"),
    "logging": _from_acbench("logging"),
    "ospaging": _from_acbench("ospaging"),
    "ospaging-file": _from_acbench("ospaging-file"),
    "effpaging": _from_acbench("effpaging"),
}
# Approaches that spill but cannot run this load, with the reason (printed, never silent).
LEFT_OUT: dict[str, str] = {
    "vma": "runs only with the in-process driver; this load comes over the network, and a socket touching "
           "policy vma's protected slab memory would get EFAULT",
}


def mib(n: float | None) -> str:
    return "?" if n is None else f"{n / MiB:.1f}"


def human(n: float) -> str:
    return f"{n / GiB:.2f} GiB" if n >= GiB else f"{n / MiB:.0f} MiB"


# ---------------------------------------------------------------- clients

class SoakWorker(ModelWorker):
    """ModelWorker plus the live bytes of its model (kept below `cap` by deleting random
    live keys of its own) and a loop that runs until a deadline and a written quota."""

    def __init__(self, srv, tid: int, seed: int, quota: int, cap: int):
        super().__init__(srv, tid, seed, quota, log_uniform_size)
        self.cap = cap
        self.live_bytes = 0
        self.trimmed = 0
        self.first_trim: float | None = None     # time.monotonic() of the first trim
        self.steps = 0
        self.trim_rng = random.Random(seed ^ 0x5EED)
        self.error: BaseException | None = None
        self.error_text = ""

    # the three places ModelWorker changes its model
    def stored(self, key, value, flags):
        old = self.model.get(key)
        self.live_bytes += len(value) - (len(old[0]) if old else 0)
        super().stored(key, value, flags)

    def deleted(self, key):
        old = self.model.get(key)
        if old:
            self.live_bytes -= len(old[0])
        super().deleted(key)

    def forget(self, key):
        old = self.model.get(key)
        if old:
            self.live_bytes -= len(old[0])
        super().forget(key)

    def soak(self, deadline: float, stop: threading.Event) -> None:
        self.make_counters()
        while not stop.is_set() and (time.monotonic() < deadline or self.written < self.quota):
            self.step()
            self.steps += 1
            while self.live_bytes > self.cap and len(self.live) > MIN_LIVE_KEYS:
                self.delete("delete", self.live.choice(self.trim_rng))
                self.trimmed += 1
                if self.first_trim is None:
                    self.first_trim = time.monotonic()


# ---------------------------------------------------------------- sampling

def read_rss(pid: int) -> tuple[int, int]:
    """(VmRSS, RssFile) of pid in bytes."""
    got = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "RssFile:")):
                got[line.split(":")[0]] = int(line.split()[1]) * 1024
    if "VmRSS" not in got:
        raise ProcessLookupError(pid)
    return got["VmRSS"], got.get("RssFile", 0)


def dir_blocks(d: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(d):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
            except FileNotFoundError:
                pass
    return total


@dataclass
class Sample:
    t: float
    rss: int
    usage: int
    peak: int | None
    fds: int
    swap: int | None
    spill: int


class Sampler(threading.Thread):
    def __init__(self, proc: subprocess.Popen, group: MemoryGroup, limit: int, spill_dir: Path,
                 work: Path, t0: float, abort: threading.Event):
        super().__init__(name="soak-sampler", daemon=True)
        self.proc, self.group, self.limit = proc, group, limit
        self.spill_dir, self.work, self.t0, self.abort = spill_dir, work, t0, abort
        self.samples: list[Sample] = []
        self.problems: list[str] = []
        self.oom_kills = 0
        self.rss_file0: int | None = None      # RssFile at the first sample: binary and libraries
        self.counts: Counter = Counter()
        self.halt = threading.Event()
        self.lock = threading.Lock()

    def run(self) -> None:
        while True:
            try:
                self.sample()
            except Exception as e:                                   # noqa: BLE001
                self.problem(f"sampler: {e!r}", stop=False)
            if self.halt.wait(SAMPLE_S):
                return

    def problem(self, text: str, stop: bool = True) -> None:
        """Records a problem (once per kind: the text up to " at "); stop: end the load."""
        kind = text.split(" at ")[0]
        with self.lock:
            self.counts[kind] += 1
            if self.counts[kind] == 1:
                self.problems.append(text)
        if stop:
            self.abort.set()

    def sample(self) -> Sample | None:
        st = self.group.sample()
        oom = st.get("oom_kills") or 0
        if oom:
            self.oom_kills = oom
            self.problem(f"OOM kill in the cgroup (oom_kill {oom})")
        if self.proc.poll() is not None:
            self.problem(f"the server exited during the run (status {self.proc.returncode})")
            return None
        try:
            rss, rss_file = read_rss(self.proc.pid)
            if self.rss_file0 is None:
                self.rss_file0 = rss_file
            fds = len(os.listdir(f"/proc/{self.proc.pid}/fd"))
        except (FileNotFoundError, ProcessLookupError):
            return None
        s = Sample(time.monotonic() - self.t0, rss, st.get("usage_bytes") or 0, st.get("peak_bytes"), fds,
                   st.get("swap_bytes"), dir_blocks(self.spill_dir) if self.spill_dir.exists() else 0)
        with self.lock:
            self.samples.append(s)
        if s.rss > self.limit + self.rss_file0:
            self.problem(f"RSS {mib(s.rss)} MiB above the limit {mib(self.limit)} MiB + {mib(self.rss_file0)} MiB "
                         f"of binary and libraries at {s.t:.0f} s", stop=False)
        if s.usage > self.limit:
            self.problem(f"cgroup usage {mib(s.usage)} MiB above the limit {mib(self.limit)} MiB at {s.t:.0f} s",
                         stop=False)
        du = shutil.disk_usage(self.work)
        if du.free < max(DISK_FLOOR, du.total // 20):
            self.problem(f"free space under {self.work} down to {human(du.free)} (spill directory "
                         f"{human(s.spill)}): stopped")
        return s

    def stop(self) -> None:
        if self.halt.is_set():
            return
        self.halt.set()
        self.join(10)
        try:
            self.sample()             # a last one: an exit or OOM kill of the last second
        except Exception as e:                                       # noqa: BLE001
            self.problem(f"sampler: {e!r}", stop=False)


# ---------------------------------------------------------------- one approach

@dataclass
class Result:
    name: str
    line: str = ""
    ok: bool = False
    problems: list[str] = field(default_factory=list)
    growth_note: str = ""


def start_in_group(group: MemoryGroup, work: Path, mem: int, ac: dict) -> Server:
    """memcached-ac joined to the group before exec, as mc_helpers.Server (stop() by PID)."""
    return start_server(work, mem, SERVER_THREADS, ac, check_dir_modes=False, popen=group.popen,
                        start_timeout=30)


class Cleanup:
    """Runs the undo steps in reverse order, each even if an earlier one failed, with
    SIGINT/SIGTERM/SIGHUP blocked meanwhile (they act once it is done)."""

    def __init__(self) -> None:
        self.steps: list[tuple[str, callable]] = []

    def push(self, what: str, fn) -> None:
        self.steps.append((what, fn))

    def run(self) -> list[str]:
        errors = []
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM, signal.SIGHUP})
        try:
            while self.steps:
                what, fn = self.steps.pop()
                try:
                    fn()
                except BaseException as e:                            # noqa: BLE001 - keep cleaning up
                    errors.append(f"clean-up ({what}): {e}")
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        return errors


def swap_off_retry(path: Path) -> None:
    for attempt in range(10):     # swapoff can fail with ENOMEM while the dead server's swap is freed
        try:
            swap_off(path)
            return
        except AcgError:
            if attempt == 9:
                raise
            time.sleep(1)


def run_approach(a: Approach, args, log) -> Result:
    res = Result(a.name)
    mem, threads = args.mem_mib, args.threads
    live_cap = int(args.overcommit * mem * MiB)
    limit = (mem + args.allowance_mib) * MiB
    server_m = math.ceil(PAGED_M_FACTOR * live_cap / MiB) if a.paged else mem
    swap_bytes = server_m * MiB + SWAP_EXTRA if a.swap else 0
    quota = math.ceil(live_cap / threads)            # written bytes per thread, at least
    cap = live_cap // threads
    duration = args.minutes * 60
    seed = args.seed
    clean = Cleanup()
    problems: list[str] = res.problems
    workers: list[SoakWorker] = []
    sampler = None
    srv = None
    t_load = 0.0
    st_ac: dict = {}
    cg: dict = {}
    verify_bad: Counter = Counter()
    verified = False
    verify_s = 0.0
    rc = None
    try:
        work = Path(tempfile.mkdtemp(prefix=f"soak-{a.name}-", dir=WORK_PARENT))
        clean.push("work directory", lambda: shutil.rmtree(work, ignore_errors=True))
        spill = work / "spill"
        if a.paged and not args.page_cluster_held:
            old_pc = hold_page_cluster_zero()       # shared with acbench runs and tests at once
            clean.push("vm.page-cluster", lambda: release_page_cluster(old_pc))
        if a.swap:
            # owned (where acg_lib has it): `acg cleanup` removes the file should soak.py be SIGKILLed
            owned = {"owned": True} if "owned" in inspect.signature(swap_on).parameters else {}
            swap_on(work / "swap", swap_bytes, **owned)
            clean.push("swap file", lambda: swap_off_retry(work / "swap"))
        group = MemoryGroup(f"soak-{a.name}", limit, swap_bytes)
        group.create()
        clean.push("cgroup", lambda: _remove_group(group))
        ac = {**a.ac, "ac_spill_dir": str(spill)}
        if a.ac["ac_policy"] == "effpaging":
            ac["ac_eff_memory"] = f"{mem}M"        # the item memory, as -m for the user-space ones
        srv = start_in_group(group, work, server_m, ac)
        clean.push("server", lambda: srv.stop())
        log(f"[{a.name}] pid {srv.proc.pid} in {group.path}: -m {server_m}, limit {mib(limit)} MiB, "
            f"swap {mib(swap_bytes)} MiB, live data held at {mib(live_cap)} MiB, "
            f"{threads} clients, {args.minutes:g} min")

        abort = threading.Event()
        stop = threading.Event()
        t0 = time.monotonic()
        sampler = Sampler(srv.proc, group, limit, spill, work, t0, abort)
        sampler.start()
        clean.push("sampler", sampler.stop)
        workers = [SoakWorker(srv, t, seed * 1000 + t, quota, cap) for t in range(threads)]
        deadline = t0 + duration

        def go(w: SoakWorker) -> None:
            try:
                w.soak(deadline, stop)
            except BaseException as e:                                 # noqa: BLE001
                w.error = e
                w.error_text = "".join(traceback.format_exception_only(type(e), e)).strip()
                abort.set()

        ths = [threading.Thread(target=go, args=(w,), name=f"soak-client-{w.tid}", daemon=True) for w in workers]
        for th in ths:
            th.start()
        clean.push("clients", lambda: _end_clients(stop, ths))
        every = 60.0 if duration >= 300 else max(5.0, duration / 4)
        next_report = t0 + every
        last_steps, last_progress = -1, time.monotonic()
        while any(th.is_alive() for th in ths):
            for th in ths:
                th.join(0.5 / len(ths))
            now = time.monotonic()
            if abort.is_set() and not stop.is_set():
                stop.set()
            steps = sum(w.steps for w in workers)
            if steps != last_steps:
                last_steps, last_progress = steps, now
            elif now - last_progress > STALL_S:
                problems.append(f"no client progress for {STALL_S} s: the server stalled")
                stop.set()
                srv.stop()                    # unblocks the clients
                break
            if now >= next_report:
                next_report += every
                s = sampler.samples[-1] if sampler.samples else None
                log(f"[{a.name}] {(now - t0) / 60:5.1f} min: written {human(sum(w.written for w in workers))}, "
                    f"{sum(sum(w.ops.values()) for w in workers)} cmds, live "
                    f"{human(sum(w.live_bytes for w in workers))}, rss {mib(s and s.rss)} MiB, cgroup "
                    f"{mib(s and s.usage)} MiB, fds {s and s.fds}, spill dir {human(s.spill) if s else '?'}")
        t_load = time.monotonic() - t0
        load_end = t_load
        if any(w.error is not None for w in workers):
            try:                      # a dying server resets its connections before it is a zombie
                srv.proc.wait(3)
            except subprocess.TimeoutExpired:
                pass
        try:
            fds_end = len(os.listdir(f"/proc/{srv.proc.pid}/fd")) if srv.proc.poll() is None else None
        except FileNotFoundError:
            fds_end = None
        if fds_end is None:
            with sampler.lock:
                fds_end = sampler.samples[-1].fds if sampler.samples else None
        # root causes first: the sampler's findings (OOM kill, ...), a dead server, then the clients
        with sampler.lock:
            problems.extend(sampler.problems)
        if srv.proc.poll() is not None and not srv.stopped:
            died = f"the server exited during the run (status {srv.proc.returncode})"
            if not any(p.startswith(died[:30]) for p in problems):
                problems.append(died)
        errs: dict[str, list[int]] = {}
        for w in workers:
            if w.error is not None:
                errs.setdefault(w.error_text, []).append(w.tid)
        for text, tids in errs.items():
            problems.append(f"client{'s' if len(tids) > 1 else ''} {','.join(map(str, tids))}: {text}")

        # read back every model (also after a refusal: it reports all problems)
        if srv.proc.poll() is None and not srv.stopped and not any(
                isinstance(w.error, AssertionError) for w in workers):
            cli = srv.client(timeout=120)
            tv = time.monotonic()
            try:
                for w in workers:
                    verify_bad.update(w.verify(cli))
                verified = True
                verify_s = time.monotonic() - tv
            except AssertionError as e:
                problems.append(f"read-back: {e}")
            except Exception as e:                                     # noqa: BLE001
                problems.append(f"read-back: {e!r}")
            try:
                st_ac = srv.ac()
            except Exception as e:                                     # noqa: BLE001
                problems.append(f"stats anticache: {e!r}")
        if verify_bad:
            problems.append(f"read-back refused: {dict(verify_bad)}")
        if st_ac:
            try:
                check_no_refusals(st_ac)
            except AssertionError as e:
                problems.append(f"stats anticache: {str(e).rstrip('; ')}")
        refused = sum((w.refused for w in workers), Counter())
        if refused:
            eg = [x for w in workers for x in w.samples][:5]
            problems.append(f"refused during the run: {sum(refused.values())} {dict(refused)} e.g. {eg}")
        sampler.stop()
        problems.extend(p for p in sampler.problems if p not in problems)
        cg = group.stats()
        if cg.get("oom_kills"):
            p = f"OOM kill in the cgroup (oom_kill {cg['oom_kills']})"
            if p not in problems:
                problems.append(p)
        if not srv.stopped and srv.proc.poll() is None:
            try:
                rc = srv.stop()
            except AssertionError as e:
                problems.append(str(e))
            if rc not in (0, None):
                problems.append(f"memcached-ac exited with {rc} after SIGTERM: {srv.stderr()[-500:].strip()}")
            elif rc == 0 and spill.exists() and any(spill.iterdir()):
                problems.append(f"spill directory not emptied at exit: {sorted(p.name for p in spill.iterdir())}")

        # bounds over the samples of the load phase
        samples = [s for s in sampler.samples if s.t <= load_end]
        all_samples = sampler.samples
        rss_max = max((s.rss for s in all_samples), default=None)
        peak = cg.get("peak_bytes")
        if peak is not None and peak > limit:
            problems.append(f"cgroup peak {mib(peak)} MiB above the limit {mib(limit)} MiB")
        warm = [s for s in samples if s.t >= WARMUP_FRACTION * load_end]
        fds_warm = warm[0].fds if warm else None
        if fds_warm is None or fds_end is None:
            problems.append("too few samples for the fd bound")
        elif fds_end > fds_warm + FD_SLACK:
            problems.append(f"fds grew from {fds_warm} after warm-up to {fds_end} (bound +{FD_SLACK})")
        # Growth is judged in the steady state only: from the first trim on (the live data
        # at its cap; before that the data set itself grows). A run too short to get there
        # (CI's few seconds) has no growth check, and its line says so.
        # (a short run may have no sample in a window: then its first / last sample)
        trims = [w.first_trim - t0 for w in workers if w.first_trim is not None]
        steady = min(trims) if trims else None
        window = [s for s in samples if steady is not None and s.t >= steady]
        mid = (steady + load_end) / 2 if steady is not None else load_end
        first = [s.rss for s in window if s.t <= mid] or [s.rss for s in window[:1]]
        last = [s.rss for s in window if s.t >= steady + 0.9 * (load_end - steady)] \
            or [s.rss for s in window[-1:]] if steady is not None else []
        rss_first = max(first, default=None)
        rss_last = max(last, default=None)
        if steady is None or len(window) < 4:
            res.growth_note = "RSS growth not checked: no steady state, the live data never reached its cap"
        elif rss_last > rss_first * (1 + RSS_GROWTH) + RSS_SLACK:
            problems.append(f"RSS grew: {mib(rss_last)} MiB in the last 10 % against {mib(rss_first)} MiB "
                            f"in the first half (bound x{1 + RSS_GROWTH:g} + {mib(RSS_SLACK)} MiB)")

        # the summary line
        ops = sum((w.ops for w in workers), Counter())
        written = sum(w.written for w in workers)
        rounds = written / live_cap if live_cap else 0
        if a.paged:
            size = f"{args.overcommit:g}x {mem} MiB, limit {mib(limit)} MiB, -m {server_m}"
            moved = (f"swap max {mib(cg.get('swap_bytes_max') or 0)} MiB, pgmajfault {cg.get('pgmajfault')}, "
                     f"disk hits {st_ac.get('disk_hits', '?')}")
        else:
            size = f"{args.overcommit:g}x -m {mem}"
            moved = (f"spilled {st_ac.get('spilled_items', '?')} fetched {st_ac.get('fetched_items', '?')}"
                     + (f" read-through {st_ac['read_through_items']}" if st_ac.get("read_through_items") else ""))
        spill_max = max((s.spill for s in all_samples), default=0)
        lost = st_ac.get("lost_items", "?")
        nref = sum(refused.values()) + sum(verify_bad.values()) + sum(
            v for k, v in st_ac.items() if k.startswith("refused_") and isinstance(v, int))
        res.ok = not problems and verified
        res.line = (f"soak {a.name}: {t_load / 60:.1f} min, {size} (written {human(written)}, {rounds:.1f} rounds, "
                    f"{sum(ops.values())} cmds, {sum(w.trimmed for w in workers)} trims), {moved}, "
                    f"spill dir max {human(spill_max)}, rss max {mib(rss_max)} MiB ("
                    + (res.growth_note or f"steady state from {steady:.0f} s: first half {mib(rss_first)}, "
                       f"last 10 % {mib(rss_last)}")
                    + f") / limit {mib(limit)} MiB + {mib(sampler.rss_file0)} MiB binary and libraries, cgroup peak {mib(peak)} MiB, "
                    f"fds {fds_warm}->{fds_end}, lost {lost} refused {nref}, verify "
                    + (f"OK ({sum(len(w.model) + len(w.counters) for w in workers)} live, "
                       f"{sum(len(w.dead) for w in workers)} deleted keys, {verify_s:.0f} s)"
                       if verified and not verify_bad else "FAILED" if verified or verify_bad else "not run")
                    + f" -> {'PASS' if res.ok else 'FAIL'}")
        if problems:
            res.line += " (" + "; ".join(problems) + ")"
            if srv is not None:
                tail = srv.stderr()[-1500:].strip()
                if tail:
                    log(f"[{a.name}] server stderr (tail):\n{tail}")
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as e:                                             # noqa: BLE001
        problems.append(f"{type(e).__name__}: {e}")
        res.line = f"soak {a.name}: -> FAIL ({'; '.join(problems)})"
        res.ok = False
    finally:
        errors = clean.run()
        if errors:
            res.problems.extend(errors)
            res.ok = False
            res.line = (res.line or f"soak {a.name}: -> FAIL") + " [" + "; ".join(errors) + "]"
    return res


def _end_clients(stop: threading.Event, ths: list[threading.Thread], wait_s: float = 10) -> None:
    """Each client ends after its current command; one blocked on a hung server ends when
    the next clean-up step stops the server (they are daemon threads)."""
    stop.set()
    deadline = time.monotonic() + wait_s
    for th in ths:
        th.join(max(0.0, deadline - time.monotonic()))


def _remove_group(group: MemoryGroup) -> None:
    rep = group.remove()
    if not rep["removed"]:
        raise AcgError(f"cgroup {group.path} not removed: {rep.get('error')}")


# ---------------------------------------------------------------- command line

def _positive(kind, lo, what):
    def conv(text: str):
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {'number' if kind is float else 'whole number'}")
        if not (v >= lo) or (isinstance(v, float) and not math.isfinite(v)):
            raise argparse.ArgumentTypeError(f"{text!r}: {what}")
        return v
    return conv


def _approach(text: str) -> str:
    if text in LEFT_OUT:
        raise argparse.ArgumentTypeError(f"{text!r} is left out of the soak: {LEFT_OUT[text]}")
    if text not in APPROACHES:
        raise argparse.ArgumentTypeError(f"unknown approach {text!r}; accepted: {', '.join(APPROACHES)}")
    return text


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="soak.py", description="Soak test of memcached-ac: per approach, minutes of the mixed-size "
        "many-client load at N x overcommit in a memory cgroup, with an exact model (see the docstring).")
    ap.add_argument("--minutes", type=_positive(float, 0.05, "must be at least 0.05"), default=30.0,
                    help="load phase per approach (default 30)")
    ap.add_argument("--approach", type=_approach, nargs="+", action="extend", metavar="NAME",
                    help=f"approaches to run (default all: {', '.join(APPROACHES)})")
    ap.add_argument("--overcommit", type=_positive(float, 2.0, "must be at least 2"), default=8.0,
                    help="live data and bytes written per round, as a multiple of the item memory (default 8)")
    ap.add_argument("--mem-mib", type=_positive(int, 8, "must be at least 8 (MiB)"), default=32,
                    help="item memory: -m of the user-space approaches, the limit's item part (default 32)")
    ap.add_argument("--allowance-mib", type=_positive(int, 16, "must be at least 16 (MiB)"), default=64,
                    help="cgroup limit = --mem-mib + this (default 64)")
    ap.add_argument("--threads", type=_positive(int, 1, "must be at least 1"), default=8,
                    help="client threads (default 8)")
    ap.add_argument("--seed", type=_positive(int, 0, "must be >= 0"), default=7, help="seed (default 7)")
    ap.add_argument("--out", type=Path, metavar="FILE", help="also write the summary lines to FILE")
    ap.add_argument("--jobs", type=_positive(int, 1, "must be at least 1"), default=1,
                    help="approaches run at once, each in a soak.py process of its own (default 1)")
    # set by a --jobs parent for its children: it holds vm.page-cluster=0 for all of them
    ap.add_argument("--page-cluster-held", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.threads > 64:
        ap.error("argument --threads: at most 64")
    if args.out is not None and not args.out.parent.is_dir():
        ap.error(f"argument --out: directory {args.out.parent} does not exist")
    if args.approach is None:
        args.approach = list(APPROACHES)
    args.approach = list(dict.fromkeys(args.approach))
    return args


def child_argv(args, name: str, out: Path) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--approach", name, "--minutes", str(args.minutes),
            "--overcommit", str(args.overcommit), "--mem-mib", str(args.mem_mib),
            "--allowance-mib", str(args.allowance_mib), "--threads", str(args.threads),
            "--seed", str(args.seed), "--out", str(out), "--page-cluster-held"]


def run_jobs(args, emit) -> int:
    """--jobs N: each approach in a child soak.py, N at a time (the results do not depend on
    it: every approach has its own server, group and clients; only the run takes less wall
    time). vm.page-cluster is set to 0 here once for all of them and restored at the end; a
    signal is passed on to the children, which clean up their own."""
    paged = any(APPROACHES[n].paged for n in args.approach)
    old_pc = None
    tmp = Path(tempfile.mkdtemp(prefix="soak-jobs-", dir=WORK_PARENT))
    pending, running, lines, failed = list(args.approach), {}, [], []
    t0 = time.monotonic()
    try:
        if paged:
            old_pc = hold_page_cluster_zero()
        while pending or running:
            while pending and len(running) < args.jobs:
                name = pending.pop(0)
                out = tmp / f"{name}.out"
                running[name] = (subprocess.Popen(child_argv(args, name, out), stdin=subprocess.DEVNULL), out)
            time.sleep(1)
            for name, (proc, out) in list(running.items()):
                if proc.poll() is None:
                    continue
                del running[name]
                got = [ln for ln in out.read_text().splitlines() if ln.startswith(f"soak {name}:")] \
                    if out.exists() else []
                line = got[0] if got else f"soak {name}: no summary (soak.py exited {proc.returncode}) -> FAIL"
                lines.append(line)
                emit(line, echo=not got)      # the child printed its own summary line
                if proc.returncode != 0 or not line.endswith("PASS"):
                    failed.append(name)
    except KeyboardInterrupt as e:
        for proc, _ in running.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc, _ in running.values():
            try:
                proc.wait(120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        emit(f"soak: interrupted ({e or 'SIGINT'}) with {len(lines)} of {len(args.approach)} approaches done; "
             "cleaned up")
        return 130
    finally:
        if old_pc is not None:
            release_page_cluster(old_pc)
        shutil.rmtree(tmp, ignore_errors=True)
    emit(f"soak: {len(lines)} approaches, {len(lines) - len(failed)} passed, {len(failed)} failed"
         + (f" ({', '.join(failed)})" if failed else "")
         + f"; {args.minutes:g} min each, {args.overcommit:g}x {args.mem_mib} MiB, {args.threads} clients, "
           f"seed {args.seed}, {args.jobs} at once, {(time.monotonic() - t0) / 60:.1f} min in all"
         + f" -> {'FAIL' if failed else 'PASS'}")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if os.geteuid() != 0:
        print("soak.py: needs root (memory cgroups, swap files, vm.page-cluster)", file=sys.stderr)
        return 2
    if not BIN.exists():
        print(f"soak.py: {BIN} is missing: run `make all` first", file=sys.stderr)
        return 2
    out = open(args.out, "w") if args.out else None

    def say(text: str) -> None:
        # one write of the line and its newline: children running at once share the parent's
        # stdout, and a newline written apart once let another child's line run on after "PASS"
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    def log(text: str) -> None:
        say(text)

    def emit(text: str, echo: bool = True) -> None:
        if echo:
            say(text)
        if out:
            out.write(text + "\n")
            out.flush()

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):   # also if started with SIGINT ignored (&)
        signal.signal(sig, on_signal)
    if not args.page_cluster_held:
        for name, why in LEFT_OUT.items():
            emit(f"soak {name}: left out: {why}")
    if args.jobs > 1 and len(args.approach) > 1:
        rc = run_jobs(args, emit)
        if out:
            out.close()
        return rc
    results: list[Result] = []
    try:
        for name in args.approach:
            r = run_approach(APPROACHES[name], args, log)
            results.append(r)
            emit(r.line)
    except KeyboardInterrupt as e:
        emit(f"soak: interrupted ({e or 'SIGINT'}) after {len(results)} of {len(args.approach)} approaches; "
             "cleaned up")
        if out:
            out.close()
        return 130
    failed = [r.name for r in results if not r.ok]
    if args.page_cluster_held:            # a --jobs child: the parent prints the final line
        return 1 if failed else 0
    emit(f"soak: {len(results)} approaches, {len(results) - len(failed)} passed, {len(failed)} failed"
         + (f" ({', '.join(failed)})" if failed else "")
         + (f", {len(LEFT_OUT)} left out ({', '.join(LEFT_OUT)})" if LEFT_OUT else "")
         + f"; {args.minutes:g} min each, {args.overcommit:g}x {args.mem_mib} MiB, {args.threads} clients, "
           f"seed {args.seed}, soak.py max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB"
           f" -> {'FAIL' if failed else 'PASS'}")
    if out:
        out.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
