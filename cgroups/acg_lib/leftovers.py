"""acg's groups as found on disk: who owns them, which are left over from a dead owner."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .backend import Backend
from .iolimit import v1_leftovers
from .owner import is_alive
from .registry import Registry
from .remove import remove_group


@dataclass
class GroupInfo:
    path: Path
    owner_pid: int | None
    alive: bool
    has_marker: bool
    exists: bool
    tasks: list[int] = field(default_factory=list)
    started: list[tuple[int, int | None]] = field(default_factory=list)

    @property
    def state(self) -> str:
        if not self.exists:
            return "stale-marker"
        if self.owner_pid is None:
            return "unknown-owner"
        return "alive" if self.alive else "dead"

    def as_dict(self) -> dict:
        return {"path": str(self.path), "owner_pid": self.owner_pid, "state": self.state,
                "marker": self.has_marker, "tasks": self.tasks,
                "started_pids": [p for p, _ in self.started]}


def _pid_suffix(dirname: str) -> int | None:
    _, _, tail = dirname.rpartition(".")
    return int(tail) if tail.isdigit() else None


def list_groups(backend: Backend, registry: Registry) -> list[GroupInfo]:
    """Every group directory under the acg parent plus markers whose group is gone."""
    markers = {Path(m["path"]): m for m in registry.group_markers()
               if m.get("path") and m.get("root") == str(backend.root)}
    found: list[GroupInfo] = []
    for path in backend.groups():
        m = markers.pop(path, None)
        if m is not None:
            pid, start = m.get("owner_pid"), m.get("owner_start")
        else:
            pid, start = _pid_suffix(path.name), None
        alive = pid is not None and is_alive(pid, start)
        started = [(int(s[0]), s[1]) for s in (m or {}).get("started", [])]
        found.append(GroupInfo(path, pid, alive, m is not None, True, backend.procs(path),
                               started))
    for path, m in sorted(markers.items()):
        found.append(GroupInfo(path, m.get("owner_pid"), False, True, False))
    return found


def cleanup(backend: Backend, registry: Registry, kill: bool = False,
            timeout: float = 10.0) -> list[dict]:
    """Remove groups whose owner is dead (and markers whose group is gone).

    Tasks still inside are moved to the parent; with kill=True the processes the dead
    owner started (recorded PID and start time) are killed instead.
    """
    reports = []
    if backend.version == 1:      # blkio companions (iolimit.py) of dead owners
        reports += [dict(r, io_group=True) for r in v1_leftovers(lambda pid: not is_alive(pid))]
    for info in list_groups(backend, registry):
        if info.state == "stale-marker":
            registry.forget_group(info.path)
            reports.append({"path": str(info.path), "removed": True, "stale_marker": True})
        elif info.state == "dead":
            rep = remove_group(backend, info.path, info.started if kill else [], timeout)
            if rep["removed"]:
                registry.forget_group(info.path)
            rep["owner_pid"] = info.owner_pid
            reports.append(rep)
    return reports
