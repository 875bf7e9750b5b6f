"""MemoryGroup: a memory-limited cgroup that records its owner and is removed on exit."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Sequence

from . import cgfiles
from .backend import STAT_KEYS, Backend
from .detect import detect
from .errors import AcgError
from .iolimit import IoLimit, V1Companion, enable_v2_io, set_v2, v1_serviced, v2_serviced
from .owner import start_time
from .registry import Registry
from .remove import remove_group
from .units import MIN_MEMORY, validate_name

SAMPLED = ("usage_bytes", "anon_bytes", "file_bytes", "swap_bytes")


class MemoryGroup:
    """A group <root>/acg/<name>.<owner pid> with memory (and swap) limits.

    swap_bytes: an int >= 0 limits swap to that much (0 = no swap); None leaves swap
    unlimited. io: an I/O-operations limit on one disk for the group's processes (iolimit.py:
    v2's io.max, or a blkio companion group on v1). Use as a context manager; the group is
    removed in __exit__.
    """

    def __init__(self, name: str, memory_bytes: int, swap_bytes: int | None = 0, *,
                 backend: Backend | None = None, run_dir: Path | str | None = None,
                 remove_timeout: float = 10.0, io: IoLimit | None = None) -> None:
        validate_name(name, "name")
        if not isinstance(memory_bytes, int) or memory_bytes < MIN_MEMORY:
            raise AcgError(f"memory: {memory_bytes!r} bytes; the memory limit must be at "
                           f"least 4M (4194304 bytes)")
        if swap_bytes is not None and (not isinstance(swap_bytes, int) or swap_bytes < 0):
            raise AcgError(f"swap: {swap_bytes!r}; accepted: bytes >= 0, or None (unlimited)")
        self.name = name
        self.memory_bytes = memory_bytes
        self.swap_bytes = swap_bytes
        self.backend = backend if backend is not None else detect()
        self.registry = Registry(run_dir)
        self.owner_pid = os.getpid()
        self.path = self.backend.group_path(f"{name}.{self.owner_pid}")
        self.remove_timeout = remove_timeout
        self.limits: dict = {}
        self.started: list[tuple[int, int | None]] = []
        self._children: list[subprocess.Popen] = []
        self.maxima: dict[str, int] = {}
        self.samples = 0
        self.created = False
        self.removal: dict | None = None
        self.io = io
        self.io_limits: dict = {}
        self._companion: V1Companion | None = None

    # --- life cycle ---
    def create(self) -> "MemoryGroup":
        if self.path.exists():
            raise AcgError(f"group {self.path} already exists (is another group named "
                           f"{self.name!r} open in process {self.owner_pid}?)")
        self._record()  # marker first: a crash right after mkdir still leaves a marker
        try:
            try:
                self.backend.mkdir(self.path)
            except OSError as exc:
                raise AcgError(f"cannot create group {self.path}: {exc.strerror} (acg needs "
                               "root, or write access to the acg parent group)") from exc
            self.created = True
            self.limits = self.backend.set_limits(self.path, self.memory_bytes,
                                                  self.swap_bytes)
            if self.io is not None:
                self._set_io(self.io)
        except BaseException:
            self.remove()
            raise
        return self

    def _set_io(self, io: IoLimit) -> None:
        if self.backend.version == 2:
            enable_v2_io(self.backend.root, self.backend.parent)
            self.io_limits = set_v2(self.path, io)
        else:
            self._companion = V1Companion(self.path)
            self._record()      # the companion's path in the marker before it exists
            self._companion.create(io)
            self.io_limits = self._companion.limits()
        if self.io_limits != io.limits():
            raise AcgError(f"the kernel took the I/O limit on {io.device} as {self.io_limits}, not {io.limits()}")

    def set_io(self, io: IoLimit) -> None:
        """Add an I/O limit to a created group: from now on its processes' I/O is limited (on v1
        they are moved into the blkio companion too)."""
        if not self.created:
            raise AcgError(f"group {self.path} is not created yet: give io= to MemoryGroup instead")
        if self.io is not None:
            raise AcgError(f"group {self.path} already has an I/O limit on {self.io.device}")
        self.io = io
        self._set_io(io)
        if self._companion is not None:
            for pid in self.backend.procs(self.path):
                try:
                    self.backend.add_pid(self._companion.path, pid)
                except AcgError:
                    pass      # exited meanwhile

    def procs_files(self) -> list[bytes]:
        """The cgroup.procs files a process joins: the group's, and its blkio companion's (v1 with
        an I/O limit)."""
        files = [os.fsencode(self.path / "cgroup.procs")]
        if self._companion is not None:
            files.append(os.fsencode(self._companion.path / "cgroup.procs"))
        return files

    def remove(self, kill_started: bool = True) -> dict:
        """Remove the group (killing processes started by popen() if still inside), and its
        blkio companion (v1 with an I/O limit)."""
        report = remove_group(self.backend, self.path,
                              self.started if kill_started else [], self.remove_timeout)
        for child in self._children:
            if child.returncode is None and child.pid in report["killed_pids"]:
                child.wait()
        if self._companion is not None:
            comp = self._companion.remove()
            report["io_group_removed"] = comp["removed"]
            if not comp["removed"]:
                report["removed"] = False
                report["error"] = comp.get("error", f"{self._companion.path} not removed")
            else:
                self._companion = None
        if report["removed"]:
            self.registry.forget_group(self.path)
        self.removal = report
        return report

    def __enter__(self) -> "MemoryGroup":
        return self.create()

    def __exit__(self, *exc: object) -> None:
        report = self.remove()
        if not report["removed"] and exc[0] is None:
            raise AcgError(report["error"])

    # --- processes ---
    @property
    def children(self) -> tuple[subprocess.Popen, ...]:
        """The processes started by popen() and those given to track()."""
        return tuple(self._children)

    def track(self, proc: subprocess.Popen) -> None:
        """A process started outside the group that lives and dies with it (e.g. a profiler
        wrapping the group's process): listed in children, waited for by remove() once killed."""
        self._children.append(proc)

    def add_pid(self, pid: int) -> None:
        """Move a running process in (its already-charged memory stays where it was)."""
        self.backend.add_pid(self.path, pid)
        if self._companion is not None:
            self.backend.add_pid(self._companion.path, pid)

    def popen(self, cmd: Sequence[str], sigmask: set | None = None,
              **kwargs: object) -> subprocess.Popen:
        """Start cmd so that it joins the group before exec; sigmask: mask for the child."""
        files = self.procs_files()

        def join() -> None:
            for procs in files:
                fd = os.open(procs, os.O_WRONLY)
                try:
                    os.write(fd, b"0")  # "0" means the writing process itself
                finally:
                    os.close(fd)
            if sigmask is not None:
                signal.pthread_sigmask(signal.SIG_SETMASK, sigmask)

        try:
            child = subprocess.Popen(list(cmd), preexec_fn=join, **kwargs)  # type: ignore
        except subprocess.SubprocessError as exc:
            raise AcgError(f"the child could not join {self.path} before exec "
                           f"(writing its pid to cgroup.procs failed): {exc}") from exc
        self._children.append(child)
        self.started.append((child.pid, start_time(child.pid)))
        self._record()
        return child

    # --- memory pressure (a TMO-style controller's two levers: harness acbench/pressure.py) ---
    def set_high(self, high_bytes: int) -> str:
        """Squeeze the created group to high_bytes (at most its memory limit): v2 memory.high, v1
        the limit itself (v1 has no high). Returns the file written."""
        if not self.created:
            raise AcgError(f"group {self.path} is not created yet")
        if not 0 < high_bytes <= self.memory_bytes:
            raise AcgError(f"high: {high_bytes} bytes; accepted: 1 to the group's memory limit "
                           f"{self.memory_bytes}")
        return self.backend.set_high(self.path, high_bytes)

    def memory_pressure(self) -> dict:
        """PSI memory "some" and "full" totals (microseconds stalled since boot or the group's
        creation) and their scope: "cgroup" (v2: the group's memory.pressure) or "system" (v1:
        /proc/pressure/memory, the machine's)."""
        path, scope = self.backend.pressure_file(self.path)
        out: dict = {"scope": scope, "file": str(path)}
        text = cgfiles.read_text(path)
        if text is None:
            raise AcgError(f"{path} does not exist: this kernel has no PSI (CONFIG_PSI, boot with psi=1)")
        for line in text.splitlines():
            kind, *fields = line.split()
            vals = dict(f.split("=", 1) for f in fields)
            out[f"{kind}_total_us"] = int(vals["total"])
        return out

    # --- statistics ---
    def sample(self) -> dict:
        """Read the current statistics and keep the maxima of the SAMPLED keys."""
        st = self.backend.read_stats(self.path)
        self.samples += 1
        for key in SAMPLED:
            if st.get(key) is not None:
                self.maxima[key] = max(self.maxima.get(key, 0), st[key])
        return st

    def stats(self) -> dict:
        """Current counters, sampled maxima (<key>_max), limits and identity, as one dict."""
        st = self.sample()
        out: dict = {"name": self.name, "group": str(self.path),
                     "cgroup_version": self.backend.version, "limits": self.limits,
                     "samples": self.samples}
        out.update({k: st.get(k) for k in STAT_KEYS})
        out.update({k: v for k, v in st.items() if k not in out})
        for key in SAMPLED:
            out[f"{key}_max"] = self.maxima.get(key)
        if self.io is not None:
            out["io_limits"] = dict(self.io_limits, device=self.io.device)
            where = self._companion.path if self._companion is not None else self.path
            out.update((v1_serviced if self._companion is not None else v2_serviced)(where, self.io.device))
        return out

    def _record(self) -> None:
        self.registry.record_group(self.path, {
            "name": self.name, "root": str(self.backend.root),
            "cgroup_version": self.backend.version, "owner_pid": self.owner_pid,
            "owner_start": start_time(self.owner_pid), "created": time.time(),
            "started": [list(s) for s in self.started],
            "io_group": str(self._companion.path) if self._companion is not None else None})
