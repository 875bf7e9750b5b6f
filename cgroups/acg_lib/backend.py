"""What a cgroup memory backend (v1 or v2) must provide; the shared statistics keys."""
from __future__ import annotations

import os
from abc import ABC, abstractmethod
from pathlib import Path

from . import cgfiles

PARENT = "acg"  # every acg group lives in <root>/acg/<name>.<owner pid>

# The statistics every backend reports (None where the kernel has no such counter).
STAT_KEYS = ("usage_bytes", "anon_bytes", "file_bytes", "swap_bytes", "pgfault",
             "pgmajfault", "pgpgin", "pgpgout", "limit_hits", "oom_kills", "peak_bytes")


class Backend(ABC):
    """One memory-controller hierarchy; `root` is its top directory."""

    version: int

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @property
    def parent(self) -> Path:
        return self.root / PARENT

    def group_path(self, dirname: str) -> Path:
        return self.parent / dirname

    def groups(self) -> list[Path]:
        """The group directories under the acg parent."""
        if not self.parent.is_dir():
            return []
        return sorted(p for p in self.parent.iterdir() if p.is_dir())

    def procs(self, path: Path) -> list[int]:
        return cgfiles.read_pids(path / "cgroup.procs")

    def add_pid(self, path: Path, pid: int) -> None:
        cgfiles.write(path / "cgroup.procs", str(pid))

    def mkdir(self, path: Path) -> None:
        self.ensure_parent()
        try:
            os.mkdir(path)
        except FileNotFoundError:   # another acg removed the empty parent meanwhile
            self.ensure_parent()
            os.mkdir(path)

    @abstractmethod
    def ensure_parent(self) -> None:
        """Create <root>/acg with the memory controller enabled for its children."""

    @abstractmethod
    def set_limits(self, path: Path, memory_bytes: int, swap_bytes: int | None) -> dict:
        """Write the limits (swap None = not limited); return them as the kernel took them."""

    @abstractmethod
    def read_stats(self, path: Path) -> dict:
        """The STAT_KEYS plus backend-specific extras and the raw memory.stat."""

    @abstractmethod
    def evict_target(self) -> Path:
        """The group that receives tasks left in a group being removed."""

    @abstractmethod
    def set_high(self, path: Path, high_bytes: int) -> str:
        """Squeeze the group to high_bytes without an OOM kill (reclaim, then throttle or fail);
        returns the file written."""

    @abstractmethod
    def pressure_file(self, path: Path) -> tuple[Path, str]:
        """The PSI memory file that speaks for the group and its scope ("cgroup" or "system")."""

    def before_rmdir(self, path: Path) -> None:
        """Hook for a backend that must do something before a retried rmdir."""

    def describe(self) -> str:
        return f"cgroup v{self.version} at {self.root}"
