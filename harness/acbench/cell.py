"""One cell: cgroup -> memcached-ac (in-process driver, or server + ycsb-mc) -> one row.

Everything started here is stopped here: the processes in the cell's cgroup are killed by
PID and the group removed in `finally`, the spill directory deleted, also on Ctrl-C. The
processes, the spill directory (and, in paging.py, the swap file and vm.page-cluster) are
recorded in acbench's leftover marker first, so that after a SIGKILL of acbench the next
`acbench run` or `acbench cleanup` removes them (leftovers.py).
Logs in cells/<cell-id>/: driver JSON, stderr, cgroup.json, pids.json, perf.txt, row.json.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from acbench import cellopt, collect, companions, extstore, leftovers, nvm, server
from acbench.approaches import get_approach
from acbench.machine import Yielded
from acbench.cgroup import acg
from acbench.memory import MemoryPlan
from acbench.paging import PagingSetup
from acbench.pressure import PressureController
from acbench.spec import Cell, server_threads_of

SAMPLE_S = 0.2
# sh -c JOIN_AND_EXEC sh PROCS... -- CMD...: the shell writes its pid into each cgroup.procs (the
# memory group's, and on cgroup v1 the blkio companion's of an I/O limit), then execs CMD
JOIN_AND_EXEC = 'while [ "$1" != "--" ]; do echo $$ > "$1" || exit 97; shift; done; shift; exec "$@"'
SPILL_PARENT = Path("/var/tmp")
# a commodity 7200 rpm disk's random 4 KiB reads: ~8 ms seek + ~4 ms half a turn, 100-200 per second
# (the paper's "commodity hard disk", Zhang et al. ICDE 2015 §IV-A, did not say its rate)
HDD_IOPS = 150


class CellError(RuntimeError):
    pass


class OomKilled(CellError):
    """The cell's cgroup killed memcached-ac: reported as status oom_killed with peak and limit."""

    def __init__(self, peak: int | None, limit: int, kills: int | None) -> None:
        self.peak, self.limit, self.kills = peak, limit, kills
        peak_s = f"{peak / 1e6:.1f} MB" if peak is not None else "unknown"
        super().__init__(f"oom_killed: the cgroup killed memcached-ac (oom kills {kills}); "
                         f"group peak {peak_s} of limit {limit / 1e6:.1f} MB")


def _json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


class Sampler:
    """The last readable /proc/PID/stat and /proc/PID/io of the memcached-ac process."""

    def __init__(self) -> None:
        self.stat: dict[str, float] | None = None
        self.io: dict[str, int] | None = None
        self.hwm: int | None = None

    def sample(self, pid: int | None) -> None:
        if pid is None:
            return
        self.stat = collect.proc_stat(pid) or self.stat
        self.io = collect.proc_io(pid) or self.io
        self.hwm = collect.proc_hwm(pid) or self.hwm


def _server_pid(group: Any, wrapper_pid: int, perf: bool) -> int | None:
    if not perf:
        return wrapper_pid
    for pid in group.backend.procs(group.path):
        try:
            if Path(f"/proc/{pid}/exe").resolve().name == "memcached-ac":
                return pid
        except OSError:
            pass
    return None


def _kill_all(group: Any) -> list[int]:
    killed = []
    for p in group.children:          # perf (outside the group) by its PID
        if p.poll() is None and p.pid not in group.backend.procs(group.path):
            p.kill()
            killed.append(p.pid)
    if group.path.exists():
        for pid in group.backend.procs(group.path):
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except ProcessLookupError:
                pass
    return killed


def _wait(proc: subprocess.Popen, timeout: float | None = None) -> tuple[int, dict[str, float]]:
    """Reap proc with wait4 (its rusage includes the children it reaped)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        pid, status, ru = os.wait4(proc.pid, 0 if deadline is None else os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, {"cpu_user_s": ru.ru_utime, "cpu_sys_s": ru.ru_stime,
                                     "wait4_maxrss_bytes": ru.ru_maxrss * 1024,
                                     # the block I/O /proc/PID/io counts as read_bytes, write_bytes
                                     "block_read_bytes": ru.ru_inblock * 512, "block_write_bytes": ru.ru_oublock * 512,
                                     "major_faults": ru.ru_majflt, "minor_faults": ru.ru_minflt,
                                     "vol_ctx_switches": ru.ru_nvcsw, "invol_ctx_switches": ru.ru_nivcsw}
        if deadline is not None and time.monotonic() > deadline:
            raise TimeoutError
        time.sleep(0.05)


def run_cell(cell: Cell, plan: MemoryPlan, run: dict[str, Any], mode: str, cell_dir: Path,
             use_perf: bool, spill_root: Path = SPILL_PARENT, spill_device: str = "disk",
             interrupt: Callable[[], str | None] | None = None, windows: int = 1) -> dict[str, Any]:
    """spill_root: where the cell's spill directory and swap file go (the RAM device's mount
    with [run] spill_device = "ram", runner.py); spill_device: which one it is (disk or ram).
    interrupt: asked every SAMPLE_S while the server runs; an answer (who wants the machine) stops
    the cell, cleaned up as on any failure, with machine.Yielded. windows > 1 (in-process only): the
    run measured that many times in the one process (the driver's runwindows); the result is the
    first window's, with `windows` the run-window figures of the others (_in_process)."""
    approach = get_approach(cell.approach)
    cell_dir.mkdir(parents=True, exist_ok=True)
    gname = "acbench-" + hashlib.sha1(cell.cell_id.encode()).hexdigest()[:10]
    io = regime_limit(run, spill_root)
    late_io = io if io is not None and run.get("hdd_from", "run") == "run" else None   # set before the run
    nvm_dev = device_limit(approach, spill_root, spill_device)      # the whole cell, the load included
    io = io or (nvm_dev[0] if nvm_dev else None)
    group = acg().MemoryGroup(gname, plan.limit_bytes, plan.swap_bytes,       # checks the limit: before mkdtemp
                              io=None if late_io is not None else io)
    spill_parent = Path(tempfile.mkdtemp(prefix=f"acbench-{os.getpid()}-", dir=spill_root))
    leftovers.track_dir(spill_parent, "spill directory")
    spill = spill_parent / "spill"
    extra = dict(approach.options)
    extra["hashpower"] = str(plan.hashpower)
    # tiers nvm and remote: their region or servers outside the cell's cgroup (companions.py); they
    # do no file I/O
    extras = companions.for_cell(approach.options, spill_parent.name, plan.data_bytes, cell_dir)
    extra.update(companions.options(extras))
    extra.update(extstore.options(approach, spill_parent, plan.data_bytes))   # memcached's extstore: its file
    if approach.spills and not extras:
        extra["ac_io"] = run["io_engine"]      # always said: the server's default is not the record
    if approach.spills and not extras and run.get("io_direct"):
        extra["ac_io_direct"] = "on"
    if mode == "in-process" and run["driver_depth"] > 1:
        extra["ac_driver_depth"] = str(run["driver_depth"])
    opts = server.options(approach.policy, spill, extra, approach.flags)
    # paging approaches: swap file next to the spill directory, vm.page-cluster=0 for the cell
    paging = PagingSetup(spill_parent / "swap", plan.swap_bytes, swap_device=approach.swap_device) \
        if approach.pages else None
    device = collect.device_of(spill_parent)
    out: dict[str, Any] = {"mode": mode, "spill_device": spill_device,
                           "server_threads": server_threads_of(run, cell.properties),
                           "regime": run.get("regime", "native"), "ext_file_bytes": extstore.file_bytes(extra),
                           "io_limit_iops": io.read_iops or None if io is not None else None,
                           "io_limit_bps": io.read_bps or None if io is not None else None,
                           "io_limit_device": io.device if io is not None else None,
                           "io_limit_from": (None if io is None else "load" if nvm_dev else run.get("hdd_from", "run")),
                           "device_latency": approach.device_latency or None,
                           "device_dram_ns": nvm_dev[1] if nvm_dev else None}
    stderr = open(cell_dir / "stderr.txt", "w")
    t0 = time.monotonic()
    busy0, own0, load0 = collect.machine_busy_s(), collect.own_cpu_s(), os.getloadavg()[0]
    try:
        companions.start(extras)
        for c in extras:
            if isinstance(c, nvm.NvmRegion):
                out["nvm_file_bytes"] = c.size
            else:
                out["remote_server_bytes"] = c.mb << 20
        if paging is not None:
            paging.start()
            out["page_cluster"] = 0
            out["swap_file_bytes"] = plan.swap_bytes if paging.swap_on else 0
        group.create()
        pressure = PressureController(group, plan.limit_bytes) if approach.pressure else None
        pids: dict[str, Any] = {"group": str(group.path), "harness": os.getpid()}
        disk0 = collect.diskstats(device)
        props = {**cell.properties, **approach.driver}
        if windows > 1:
            if mode != "in-process":
                raise CellError(f"{windows} run windows in {mode} mode: the windows are the in-process driver's")
            props["runwindows"] = windows
        if device is not None:
            props["diskstats_device"] = device
        watch = Watch(run["timeout_s"] * windows, pressure, interrupt)     # timeout_s is per repetition
        if mode == "in-process":
            res = _in_process(cell, plan, props, run, cell_dir, opts, group, stderr, use_perf, pids, watch, late_io)
        else:
            res = _network(cell, plan, props, run, cell_dir, opts, group, stderr, use_perf, pids, watch, late_io)
        out.update({f"cell_{k}": v for k, v in collect.disk_delta(disk0, collect.diskstats(device)).items()})
        out["disk_device"] = device
        cg = group.stats()
        _json(cell_dir / "cgroup.json", cg)
        out.update(res)
        if paging is not None:
            out.update(paging.zram_columns())
        if pressure is not None:
            out.update(pressure.columns())
        out.update({"cg_peak_bytes": cg.get("peak_bytes"), "cg_limit_hits": cg.get("limit_hits"),
                    "cg_oom_kills": cg.get("oom_kills"), "cg_pgmajfault": cg.get("pgmajfault"),
                    "cg_pgfault": cg.get("pgfault"), "cg_usage_max_bytes": cg.get("usage_bytes_max"),
                    "cg_swap_max_bytes": cg.get("swap_bytes_max"), "cgroup_version": cg.get("cgroup_version"),
                    "cg_io_read_ios": cg.get("io_read_ios"), "cg_io_write_ios": cg.get("io_write_ios")})
    finally:
        _cleanup(group, spill_parent, stderr, paging, extras)
    out["cell_wall_s"] = time.monotonic() - t0
    # whatever else ran on the machine meanwhile (the rows say it; a throughput beside it is suspect)
    out.update(collect.load_beside(busy0, own0, collect.machine_busy_s(), collect.own_cpu_s(), out["cell_wall_s"],
                                   os.cpu_count() or 1))
    out["loadavg_start"], out["loadavg_end"] = load0, os.getloadavg()[0]
    return out


def regime_limit(run: dict[str, Any], spill_root: Path) -> Any:
    """[run] regime "hdd": the disk under the spill directory limited to hdd_iops reads and writes
    per second for the cell's processes (acg's IoLimit: v2 io.max, v1 blkio throttle), the paper's
    hard disk emulated; "native": None."""
    if run.get("regime", "native") != "hdd":
        return None
    lib = acg()
    iops = int(run.get("hdd_iops", HDD_IOPS))
    return lib.IoLimit(lib.disk_of(spill_root), iops, iops)


def device_limit(approach: Any, spill_root: Path, spill_device: str) -> tuple[Any, float] | None:
    """An approach with device_latency on the RAM device: (the limit of that device to the NVM block
    device's bandwidth for the cell's processes, DRAM's latency it was computed from: nvm.py); None
    otherwise. The spec refuses device_latency without the RAM device."""
    if not approach.device_latency:
        return None
    if spill_device != "ram":
        raise nvm.NvmError(f"{approach.name}: device_latency needs the cell on the RAM device, not the {spill_device}")
    lib, dram = acg(), nvm.dram_ns()
    rate = nvm.device_rate(approach.device_latency, dram)
    return lib.IoLimit(lib.disk_of(spill_root), read_bps=rate, write_bps=rate), dram


def stop(group: Any, paging: PagingSetup | None, log: Any = lambda text: None) -> BaseException | None:
    """Kill by PID what runs in the group and the processes tracked beside it (perf), wait for
    them, remove the group, swapoff and delete the swap file, restore vm.page-cluster; each step
    runs even if an earlier one failed. Returns the first failure. A cell and a calibration probe
    both stop this way; each then removes its own files."""
    first: BaseException | None = None
    try:
        killed = _kill_all(group) if group.created else []
        if killed:
            log(f"acbench: killed {killed}\n")
        for p in group.children:
            if p.returncode is None:
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    pass
    except BaseException as e:  # noqa: BLE001 - keep cleaning up
        first = e
    return release(group, paging, first, log)


def _cleanup(group: Any, spill_parent: Path, stderr: Any, paging: PagingSetup | None = None,
             extras: list[Any] = ()) -> None:
    """stop() the cell, then its companions (companions.py) and delete its spill directory; the
    first failure is raised at the end."""
    first = stop(group, paging, stderr.write)
    first = first or companions.stop(list(extras))
    shutil.rmtree(spill_parent, ignore_errors=True)
    if not spill_parent.exists():
        leftovers.untrack_dir(spill_parent)
    leftovers.prune_processes()
    stderr.close()
    if first is not None:
        raise first


def release(group: Any, paging: PagingSetup | None, first: BaseException | None,
            log: Any = lambda text: None) -> BaseException | None:
    """Remove the (emptied) group, then swapoff + restore vm.page-cluster; each step runs even if
    an earlier one failed. Returns the first failure (`first` if there was one already)."""
    try:
        if group.created:
            rep = group.remove()
            if not rep["removed"]:
                log(f"acbench: {rep.get('error')}\n")
                raise CellError(f"cgroup {group.path} not removed: {rep.get('error')}")
    except BaseException as e:  # noqa: BLE001 - keep cleaning up
        first = first or e
    if paging is not None:
        try:
            paging.stop()
        except BaseException as e:  # noqa: BLE001
            log(f"acbench: paging clean-up: {e}\n")
            first = first or e
    return first


def _start(group: Any, cmd: list[str], cell_dir: Path, stderr: Any, use_perf: bool,
           pids: dict[str, Any]) -> tuple[subprocess.Popen, int | None]:
    if use_perf:
        # perf stays outside the group (its memory must not count against the limit): a
        # shell moves itself into the group, then execs memcached-ac.
        procs = [os.fsdecode(f) for f in group.procs_files()]
        cmd = collect.perf_prefix(cell_dir / "perf.txt") + ["/bin/sh", "-c", JOIN_AND_EXEC, "sh", *procs, "--"] + cmd
        (cell_dir / "command.txt").write_text(" ".join(cmd) + "\n")
        proc = subprocess.Popen(cmd, stdout=stderr, stderr=stderr, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        group.track(proc)
        leftovers.track_process(proc.pid, Path(cmd[0]).name)
    else:
        (cell_dir / "command.txt").write_text(" ".join(cmd) + "\n")
        proc = group.popen(cmd, stdout=stderr, stderr=stderr, stdin=subprocess.DEVNULL,
                           start_new_session=True)
        leftovers.track_process(proc.pid, Path(cmd[0]).name)
    pids["wrapper" if use_perf else "server"] = proc.pid
    spid = _server_pid(group, proc.pid, use_perf)
    deadline = time.monotonic() + 5
    while spid is None and time.monotonic() < deadline and not _exited(proc.pid):   # no reaping
        time.sleep(0.01)
        spid = _server_pid(group, proc.pid, use_perf)
    pids["server"] = spid
    if use_perf and spid is not None:
        leftovers.track_process(spid, "memcached-ac")
    _json(cell_dir / "pids.json", pids)
    return proc, spid


def _finish_common(out: dict[str, Any], sampler: Sampler, rusage: dict[str, float], cell_dir: Path,
                   use_perf: bool) -> None:
    # the whole process, load and warm-up included (cell_*); the run window comes from the driver
    out.update({k if k == "wait4_maxrss_bytes" else f"cell_{k}": v for k, v in rusage.items()})
    st = sampler.stat or {}
    # VmHWM, CPU and I/O of memcached-ac (last sample). A cell over before the first sample (a
    # zombie has no VmHWM, a reaped process no /proc entry): what wait4 saw of it, with perf
    # perf's own share included; its system-call counts stay unknown.
    io = sampler.io or {}
    out["peak_rss_bytes"] = sampler.hwm if sampler.hwm is not None else rusage.get("wait4_maxrss_bytes")
    out["proc_utime_s"] = st.get("utime_s") if st else rusage.get("cpu_user_s")
    out["proc_stime_s"] = st.get("stime_s") if st else rusage.get("cpu_sys_s")
    out["proc_read_bytes"] = io.get("read_bytes") if io else rusage.get("block_read_bytes")
    out["proc_write_bytes"] = io.get("write_bytes") if io else rusage.get("block_write_bytes")
    out["proc_syscr"] = io.get("syscr")
    out["proc_syscw"] = io.get("syscw")
    perf_file = cell_dir / "perf.txt"
    out.update(collect.parse_perf(perf_file.read_text() if use_perf and perf_file.exists() else ""))


class Watch:
    """What a cell's wait loops check every SAMPLE_S: the memory-pressure controller, the timeout
    ([run] timeout_s from the wait's start) and whether other work wants the machine (interrupt)."""

    def __init__(self, timeout_s: float, pressure: PressureController | None,
                 interrupt: Callable[[], str | None] | None) -> None:
        self.timeout_s, self.pressure, self.interrupt = timeout_s, pressure, interrupt

    def deadline(self) -> float:
        return time.monotonic() + self.timeout_s

    def poll(self, deadline: float, what: str) -> None:
        if self.pressure is not None:
            self.pressure.poll()
        if time.monotonic() > deadline:
            raise CellError(f"{what} ran longer than [run] timeout_s = {self.timeout_s} s")
        who = self.interrupt() if self.interrupt is not None else None
        if who:
            raise Yielded(f"the machine is wanted by {who}; the cell runs again when it is free")


class PhaseGate:
    """The harness's side of the driver's ac_driver_gate handshake (ycsb-driver/inproc/inproc.c):
    the driver names each phase in PREFIX.phase and waits for PREFIX.go to name it back. Before the
    measured run the cell's I/O limit is set (regime hdd, hdd_from = "run": load and warm-up at the
    disk's own speed, the measured run at the emulated disk's)."""

    def __init__(self, prefix: Path, group: Any, io: Any) -> None:
        self.prefix, self.group, self.io = prefix, group, io
        self.answered: str | None = None

    def option(self) -> str:
        return f"ac_driver_gate={self.prefix}"

    def poll(self) -> None:
        try:
            phase = Path(f"{self.prefix}.phase").read_text().strip()
        except FileNotFoundError:
            return
        if phase == self.answered:
            return
        if phase == "run" and self.io is not None:
            self.group.set_io(self.io)
        tmp = Path(f"{self.prefix}.go.tmp")
        tmp.write_text(phase + "\n")
        os.replace(tmp, f"{self.prefix}.go")
        self.answered = phase


def _in_process(cell: Cell, plan: MemoryPlan, props: dict[str, Any], run: dict[str, Any], cell_dir: Path,
                opts: list[str], group: Any, stderr: Any, use_perf: bool, pids: dict[str, Any], watch: "Watch",
                late_io: Any = None) -> dict[str, Any]:
    result = cell_dir / "driver.json"
    gate = PhaseGate(cell_dir / "gate", group, late_io) if late_io is not None else None
    if gate is not None:
        opts = opts + [gate.option()]
    cmd = server.driver_cmd(plan.item_mb, server_threads_of(run, props), opts, cell.workload_file, result, props,
                            cell.trace)
    proc, spid = _start(group, cmd, cell_dir, stderr, use_perf, pids)
    sampler = Sampler()
    deadline = watch.deadline()
    while not _exited(proc.pid):   # poll() would reap it and lose its rusage
        if gate is not None:
            gate.poll()
        watch.poll(deadline, "the cell")
        sampler.sample(spid)
        group.sample()
        time.sleep(SAMPLE_S)
    status, rusage = _wait(proc)
    if status != 0:
        _raise_if_oom(group, plan)
        raise CellError(f"memcached-ac exited with status {status}: {_tail(cell_dir / 'stderr.txt')}")
    try:
        driver = json.loads(result.read_text())
    except (FileNotFoundError, json.JSONDecodeError) as e:
        _raise_if_oom(group, plan)
        raise CellError(f"memcached-ac wrote no readable results JSON ({e})") from None
    if driver.get("status", "ok") != "ok":
        raise CellError(f"the in-process driver failed: {driver.get('error')}")
    out = _driver_metrics(driver, "run")
    _finish_common(out, sampler, rusage, cell_dir, use_perf)
    out["opt_skip_requests"] = int(cell.properties.get("warmupoperations", 0))
    wanted = int(props.get("runwindows", 1))
    if int(driver.get("run_windows", 1)) != wanted:
        raise CellError(f"the in-process driver measured {driver.get('run_windows')} run windows of {wanted}")
    if wanted > 1:
        out["windows"] = [_driver_metrics(driver, f"run_{k}") for k in range(1, wanted)]
    return out


def _raise_if_oom(group: Any, plan: MemoryPlan) -> None:
    """An OOM kill by the cell's cgroup is reported as such, with the group's peak and limit."""
    try:
        cg = group.stats()
    except Exception:  # noqa: BLE001 - the group's files may be gone; then it is not known
        return
    kills = cg.get("oom_kills")
    if kills:
        raise OomKilled(cg.get("peak_bytes"), plan.limit_bytes, kills)


def _exited(pid: int) -> bool:
    """True once pid is a zombie or gone (without reaping it)."""
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None


def _tail(path: Path, n: int = 400) -> str:
    try:
        text = path.read_text().strip()
    except OSError:
        return ""
    return text[-n:] if text else "(no stderr)"


def _driver_metrics(driver: dict[str, Any], phase: str) -> dict[str, Any]:
    ph = driver.get(phase) or {}
    reads = ph.get("reads") or {}
    lat = (ph.get("latency_us") or {})
    ac = phase_end(driver, phase)
    out: dict[str, Any] = {
        "operations": ph.get("operations"), "run_duration_s": ph.get("duration_s"),
        "throughput_ops_s": ph.get("throughput_ops_per_s"),
        "reads_total": reads.get("total"), "hits": reads.get("hit"), "disk_hits": reads.get("disk_hit"),
        "misses": reads.get("miss"), "errors": (ph.get("errors") or {}).get("total"),
        "load_duration_s": (driver.get("load") or {}).get("duration_s"),
    }
    out["refills"] = reads.get("refills")
    out["refill_errors"] = reads.get("refill_errors")
    out.update(run_window(ph.get("resources")))
    for op in ("read", "update"):
        l = lat.get(op) or {}
        for q in ("mean", "p50", "p99"):
            out[f"lat_{op}_{q}_us"] = l.get(q)
    for k in ("mem_hits", "disk_hits", "misses", "spilled_items", "lost_items", "metadata_bytes",
              "item_memory_limit", "resident_items", "stub_items", "fetched_items", "bytes_written",
              "record_reads", "block_reads", "io_errors", "checksum_errors", "read_major_faults",
              "write_major_faults", "major_faults", "slab_resident_bytes", "refused_items", "refused_disk_full",
              "refused_io_error", "refused_table_full",
              "refused_timeout", "refused_nomem", "pages_borrowed", "spilled_bytes", "fetched_bytes",
              # threads that waited for another's spill round, and how long (what stays serial)
              "spill_lock_waits", "spill_lock_wait_ns",
              # reads served from a record without bringing it in (logging), migrations that needed
              # one read only, the block writer's waits
              "read_through_items", "migrate_reads_saved", "write_queue", "write_timeouts",
              # what the memory is spent on (analysis/acplot/overhead.py, Tables II and III): the policy
              # and tier, the evicted table, the block buffer, the Bloom filters, the log rings, vma's granule
              "policy", "tier", "merge", "evicted_table_bytes", "block_size", "bloom_bytes", "log_ring_bytes",
              "vma_granule_bytes",
              # compressed records (the report's lz4 claim) and the bytes the core asked the tier for
              "compression", "compress_in_bytes", "compress_out_bytes", "compress_skipped",
              "record_read_bytes", "block_read_bytes",
              # the I/O engine, the reads the in-process driver kept in flight, and a migration's
              "io_engine", "io_direct", "io_direct_files", "io_reads", "io_read_bytes", "driver_depth",
              "prefetch_reads", "prefetch_used", "prefetch_unused", "migrate_prefetch_reads", "migrate_prefetch_used",
              # lazy compaction's whole-block merges or copies, and whether the compactor thread did them (blocks)
              "merged_blocks", "merged_items", "compact", "copied_blocks", "copied_items", "copied_bytes",
              "compact_thread", "compact_queued",
              # memcached's background walkers: on or off, and what they did (whole life)
              "lru_crawler", "lru_maintainer", "lru_crawler_starts", "lru_crawler_items_checked",
              "lru_maintainer_juggles",
              # the classifier of logging, effpaging and emt's colours: its rounds and dropped log entries, the waits of a
              # lossless log and the offline round (ac_log_offline); effpaging's moves
              "log_rounds", "log_drops", "log_waits", "log_wait_ns", "log_offline_rounds", "log_offline_ns",
              "eff_memory", "eff_hot_bytes", "eff_promoted", "eff_demoted",
              "eff_hot_first_moves",
              # lru's batched moves (ac_lru_batch; 0: strict)
              "lru_batch", "lru_batches", "lru_batched", "lru_batch_skipped",
              # uvmm's pager: its cap, faults, evictions, page-file bytes (and compression), fetch latency
              "uvmm_evict", "uvmm_compress", "uvmm_cap_pages", "uvmm_resident_pages", "uvmm_book_bytes",
              "uvmm_fetches", "uvmm_fetches_unattributed", "uvmm_zero_fills", "uvmm_wp_faults",
              "uvmm_waits_for_room", "uvmm_evictions", "uvmm_evictions_clean", "uvmm_bytes_written",
              "uvmm_page_bytes_written", "uvmm_bytes_read", "uvmm_fetch_ns_p50", "uvmm_fetch_ns_p99",
              # tier emt's read-ahead (the same pager's counters)
              "uvmm_readahead_max", "uvmm_readahead_faults", "uvmm_readahead_pages", "uvmm_readahead_used",
              "uvmm_readahead_wasted",
              # tier emt's colours (ac_emt_colours=1): pages pinned now, passed over, written out all the same;
              # the classifier's hot set (its rounds and drops are the log_* columns above)
              "uvmm_pinned_pages", "uvmm_pin_skips", "uvmm_pin_overrides", "log_hot_keys",
              # tier nvm: its region, index, records, cache lines touched and the latency emulated
              "nvm_region_bytes", "nvm_index_slots", "nvm_records", "nvm_live_bytes", "nvm_chunk_bytes",
              "nvm_carved_bytes", "nvm_full", "nvm_gets", "nvm_puts", "nvm_drops", "nvm_lines_read",
              "nvm_lines_written", "nvm_accesses", "nvm_charge", "nvm_dram_ns", "nvm_dram_ns_source", "nvm_extra_ns",
              "nvm_delay_ns",
              # tier remote: its servers and copies, requests, bytes, and the failures it survived
              "remote_servers", "remote_copies", "remote_sets", "remote_gets", "remote_deletes",
              "remote_bytes_sent", "remote_bytes_received", "remote_failures", "remote_garbage", "remote_skipped",
              "remote_degraded_puts", "remote_read_fallbacks", "remote_bad_records", "remote_missing",
              "remote_unreadable",
              # memcached's extstore (policies/core/ac_extstore.c): its drops apart, reads and writes
              "ext_lost_ram", "ext_lost_disk", "ext_lost_compact", "ext_reads", "ext_read_misses",
              "ext_read_aborts", "ext_read_oom", "ext_recached", "ext_objects_written", "ext_bytes_written",
              "ext_bytes_read", "ext_bytes_used", "ext_bytes_fragmented", "ext_page_evictions", "ext_pages"):
        out[f"ac_{k}"] = ac.get(k)
    start = (ph.get("server_start") or {}).get("anticache")      # the server's figures as the run began
    out["read_amplification"] = read_amplification(out.get("disk_read_bytes"), ac, start or {})
    out.update(resident_avg(driver, phase))
    out.update(fault_attribution(out.get("major_faults"), ac, start or {}))
    out.update(spill_read_latency(ac, start))
    return out


IO_READ_HIST = "io_read_ns_hist_"


def phase_end(driver: dict[str, Any], phase: str) -> dict[str, Any]:
    """The server's anticache figures as the phase ended: a run window's own snapshot (runwindows > 1),
    else the driver's final one (taken right after its last phase)."""
    ph = driver.get(phase) or {}
    return ((ph.get("server_end") or driver.get("server") or {}).get("anticache")) or {}


def spill_read_latency(end: dict[str, Any], start: dict[str, Any] | None) -> dict[str, Any]:
    """The run window's spill-file reads: how many the I/O engine completed and the median and 99th
    percentile of their latency (µs, each the lower bound of its 1/8-octave bucket; the quantile by
    nearest rank, ceil(q n), as the driver's lat_* columns), from the server's read-latency histogram (stats io_read_ns_hist_<lower ns>) at the
    run's end less at its start. None without a start snapshot; the quantiles None when nothing was
    read (the kernel-paged approaches read through page faults, not the engine)."""
    out: dict[str, Any] = {"spill_reads": None, "spill_read_us_p50": None, "spill_read_us_p99": None}
    if start is None:
        return out
    window: list[tuple[int, int]] = []
    for k, v in end.items():
        if k.startswith(IO_READ_HIST):
            n = int(v) - int(start.get(k) or 0)
            if n > 0:
                window.append((int(k[len(IO_READ_HIST):]), n))
    window.sort()
    total = sum(n for _, n in window)
    out["spill_reads"] = total
    for q in (50, 99) if total > 0 else ():
        want, seen = -(-q * total // 100), 0          # ceil(q/100 · total), in integers
        for lower, n in window:
            seen += n
            if seen >= want:
                out[f"spill_read_us_p{q}"] = lower / 1000
                break
    return out


def fault_attribution(major_faults: Any, end: dict[str, Any], start: dict[str, Any]) -> dict[str, Any]:
    """The run window's major faults split: those taken inside a request (the server's
    read_major_faults + write_major_faults at the run's end less at its start; paging tiers count
    them, writes in the in-process driver only) and the rest, which no request asked for (memcached's
    background walkers, a classifier thread, reclaim). Under tier uvmm the total is its pager's
    fetches (uvmm_fetches), not the kernel's major faults. None where a figure is missing."""
    # write_major_faults is absent from a server older than the write windows: 0 writes counted
    counts = [(d.get("read_major_faults"), d.get("write_major_faults", 0)) for d in (end, start)]
    if not all(isinstance(x, int) for pair in counts for x in pair):
        return {"request_major_faults": None, "unattributed_major_faults": None}
    req = sum(counts[0]) - sum(counts[1])
    if isinstance(end.get("uvmm_fetches"), int) and isinstance(start.get("uvmm_fetches"), int):
        # our pager's faults are not the kernel's major faults: its fetches in the run are the total
        major_faults = end["uvmm_fetches"] - start["uvmm_fetches"]
    return {"request_major_faults": req,
            "unattributed_major_faults": None if major_faults is None else max(0, major_faults - req)}


def resident_avg(driver: dict[str, Any], phase: str) -> dict[str, Any]:
    """What the server held in RAM over the phase: the driver's time averages of its samples
    (`resident`: items, and a paging tier's resident bytes of the slab mapping), or without them
    the mean of the server's figures at the phase's start (`server_start`) and end."""
    ph = driver.get(phase) or {}
    sampled = ph.get("resident") or {}
    if sampled.get("samples"):
        return {"resident_items_avg": float(sampled["items_mean"]), "resident_samples": int(sampled["samples"]),
                "resident_bytes_avg": float(sampled["bytes_mean"]) if sampled.get("bytes_mean") else None}
    end = phase_end(driver, phase)
    start = (ph.get("server_start") or {}).get("anticache") or {}
    return {"resident_items_avg": _mean2(start.get("resident_items"), end.get("resident_items")),
            "resident_samples": None,
            "resident_bytes_avg": _mean2(start.get("slab_resident_bytes"), end.get("slab_resident_bytes"))}


def _mean2(start: Any, end: Any) -> float | None:
    """The mean of a figure at a phase's start and end; the end alone without a start; None without an end."""
    if end is None:
        return None
    return float(end) if start is None else (float(start) + float(end)) / 2


# the driver's per-phase resources (deltas over the phase) -> the row's run-window columns
WINDOW_KEYS = {"cpu_user_s": "cpu_user_s", "cpu_sys_s": "cpu_sys_s", "major_faults": "major_faults",
               "minor_faults": "minor_faults", "vol_ctx_switches": "vol_ctx_switches",
               "invol_ctx_switches": "invol_ctx_switches", "read_bytes": "io_read_bytes",
               "write_bytes": "io_write_bytes", "pswpin": "swap_ins", "pswpout": "swap_outs",
               "disk_reads": "disk_read_ios", "disk_writes": "disk_write_ios"}


def read_amplification(disk_read_bytes: Any, end: dict[str, Any], start: dict[str, Any]) -> float | None:
    """Bytes the cell's device read in the run window per byte of record or block the core asked
    the tier for in it (record_read_bytes + block_read_bytes at the run's end less at its start);
    None when either is unknown or nothing was asked for."""
    keys = ("record_read_bytes", "block_read_bytes")
    if disk_read_bytes is None or any(not isinstance(end.get(k), (int, float)) for k in keys):
        return None
    asked = sum(end[k] - (start.get(k) or 0) for k in keys)
    return disk_read_bytes / asked if asked > 0 else None


def run_window(res: dict[str, Any] | None) -> dict[str, Any]:
    """Run-phase-only figures (one window: every per-operation figure divides these by the run's
    operations); None where the driver could not measure one."""
    res = res or {}
    out: dict[str, Any] = {col: res.get(k) for k, col in WINDOW_KEYS.items()}
    sr, sw = res.get("disk_sectors_read"), res.get("disk_sectors_written")
    out["disk_read_bytes"] = None if sr is None else sr * 512
    out["disk_write_bytes"] = None if sw is None else sw * 512
    ms = res.get("disk_read_ms")
    out["disk_read_time_us"] = None if ms is None else ms * 1000
    return out


def _network(cell: Cell, plan: MemoryPlan, props: dict[str, Any], run: dict[str, Any], cell_dir: Path,
             opts: list[str], group: Any, stderr: Any, use_perf: bool, pids: dict[str, Any], watch: "Watch",
             late_io: Any = None) -> dict[str, Any]:
    port = server.free_port()
    cmd = server.server_cmd(plan.item_mb, server_threads_of(run, props), opts, port)
    proc, spid = _start(group, cmd, cell_dir, stderr, use_perf, pids)
    try:
        server.wait_port(port, proc)
    except server.ServerError as e:
        stderr.flush()
        raise CellError(f"{e}: {_tail(cell_dir / 'stderr.txt')}") from None
    sampler = Sampler()
    props = dict(props)
    threads = int(props.pop("threads", 1))

    def client(phase: str, out: Path) -> dict[str, Any]:
        c = server.ycsb_mc_cmd(cell.workload_file, props, port, phase, out, threads,
                               run["network_conns"], run["network_depth"])
        cp = subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=stderr)
        leftovers.track_process(cp.pid, Path(c[0]).name)
        pids.setdefault("clients", []).append(cp.pid)
        _json(cell_dir / "pids.json", pids)
        try:
            deadline = watch.deadline()
            while cp.poll() is None:
                watch.poll(deadline, "ycsb-mc")
                sampler.sample(spid)
                group.sample()
                time.sleep(SAMPLE_S)
        finally:
            if cp.poll() is None:
                cp.kill()
                cp.wait()
            leftovers.prune_processes()
        if cp.returncode != 0:
            _raise_if_oom(group, plan)        # the server killed by the cgroup: its client only lost the line
            raise CellError(f"ycsb-mc --phase {phase} exited with status {cp.returncode}: "
                            f"{_tail(cell_dir / 'stderr.txt')}")
        res = json.loads(out.read_text())
        if res.get("status", "ok") != "ok":
            raise CellError(f"ycsb-mc --phase {phase} failed: {res.get('error')}")
        return res

    client("load", cell_dir / "load.json")
    # warm-up and run as two calls, so every counter is a run-only delta; each phase draws from
    # its own RNG streams (ycsb-driver/README.md Determinism), so the run call with
    # warmupoperations=0 sends the same requests as the run after a warm-up (inserts excepted:
    # their keys come from a counter that restarts in the second call)
    warm = int(props.get("warmupoperations", 0))
    run_props = dict(props)
    if warm:
        props.update(operationcount=0)
        client("run", cell_dir / "warmup.json")
        props.update(run_props, warmupoperations=0)
    sampler.sample(spid)
    st0, io0 = sampler.stat or {}, sampler.io or {}
    disk0 = collect.diskstats(props.get("diskstats_device"))
    before = {k: int(v) for k, v in server.stats(port, "anticache").items() if v.lstrip("-").isdigit()}
    if late_io is not None:
        group.set_io(late_io)          # regime hdd from the run: the emulated disk for the measured phase
    driver = client("run", cell_dir / "driver.json")
    after = driver["server"]["anticache"]
    disk1 = collect.diskstats(props.get("diskstats_device"))
    sampler.sample(spid)
    st1, io1 = sampler.stat or {}, sampler.io or {}
    os.kill(spid if spid is not None else proc.pid, signal.SIGTERM)
    try:
        _, rusage = _wait(proc, timeout=20)
    except TimeoutError:
        proc.kill()
        _, rusage = _wait(proc)
    out = _driver_metrics(driver, "run")
    out["hits"] = after["mem_hits"] - before.get("mem_hits", 0)
    out["disk_hits"] = after["disk_hits"] - before.get("disk_hits", 0)
    out["misses"] = after["misses"] - before.get("misses", 0)
    # no samples through the run over the network: the mean of its start and end
    out["resident_items_avg"] = _mean2(before.get("resident_items"), after.get("resident_items"))
    out["resident_bytes_avg"] = _mean2(before.get("slab_resident_bytes"), after.get("slab_resident_bytes"))
    out["resident_samples"] = None
    # the run window on the server's side (the driver's resources are the client's)
    out.update(run_window(_server_window(st0, st1, io0, io1, disk0, disk1)))
    out.update(fault_attribution(out.get("major_faults"), after, before))
    _finish_common(out, sampler, rusage, cell_dir, use_perf)
    out["opt_skip_requests"] = warm
    return out


def _server_window(st0: dict[str, float], st1: dict[str, float], io0: dict[str, int], io1: dict[str, int],
                   disk0: dict[str, int] | None, disk1: dict[str, int] | None) -> dict[str, Any]:
    """The server process's deltas from /proc/PID/stat and io, and the disk's, in the driver's
    `resources` names (context switches and swap counts are not in /proc/PID/stat: None)."""
    def d(a: dict[str, Any], b: dict[str, Any], k: str) -> Any:
        return b[k] - a[k] if k in a and k in b else None
    res: dict[str, Any] = {"cpu_user_s": d(st0, st1, "utime_s"), "cpu_sys_s": d(st0, st1, "stime_s"),
                           "major_faults": d(st0, st1, "majflt"), "minor_faults": d(st0, st1, "minflt"),
                           "read_bytes": d(io0, io1, "read_bytes"), "write_bytes": d(io0, io1, "write_bytes")}
    if disk0 is not None and disk1 is not None:
        res.update(disk_reads=disk1["reads"] - disk0["reads"], disk_writes=disk1["writes"] - disk0["writes"],
                   disk_sectors_read=disk1["read_sectors"] - disk0["read_sectors"],
                   disk_sectors_written=disk1["write_sectors"] - disk0["write_sectors"])
    return res


def opt_columns(cell: Cell, plan: MemoryPlan, skip: int) -> tuple[dict[str, Any], Any]:
    """OPT / LRU / skew columns of the cell's trace, and its LRU stack-distance histogram."""
    if cell.trace:      # a replayed trace: no load phase, OPT reads the same requests
        trace = cellopt.replay_actrace(cell.trace)
        res, hist = cellopt.opt_for(trace, 0, skip, plan.opt_capacity)
        res.update(cellopt.size_bounds(trace, skip, plan.opt_capacity))
    else:
        trace = cellopt.trace_for(cell.workload_file, cell.properties)
        res, hist = cellopt.opt_for(trace, int(cell.properties["recordcount"]), skip, plan.opt_capacity)
    res["trace"] = str(trace)
    return res, hist
