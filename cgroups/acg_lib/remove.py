"""Remove one group: kill the processes acg started, move other tasks out, rmdir with retries."""
from __future__ import annotations

import errno
import os
import signal
import time
from pathlib import Path

from .backend import Backend
from .errors import AcgError
from .owner import is_alive


def remove_group(backend: Backend, path: Path, kill: list[tuple[int, int | None]] = (),
                 timeout: float = 10.0) -> dict:
    """Remove `path`; `kill` lists (pid, start time) of processes acg itself started.

    Other tasks still inside are moved to backend.evict_target(). Returns a report with
    removed (bool), killed_pids, moved_pids, attempts and, on failure, error.
    """
    report: dict = {"path": str(path), "removed": False, "killed_pids": [], "moved_pids": [],
                    "attempts": 0}
    inside = set(backend.procs(path)) if path.exists() else set()
    for pid, start in kill:
        if pid in inside and is_alive(pid, start):
            try:
                os.kill(pid, signal.SIGKILL)
                report["killed_pids"].append(pid)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        report["attempts"] += 1
        if not path.exists():
            report["removed"] = True
            _drop_empty_parent(backend, path.parent)
            return report
        pids = backend.procs(path)
        for pid in pids:
            if pid in report["killed_pids"]:
                continue  # dying; it leaves the group when it exits
            try:
                backend.add_pid(backend.evict_target(), pid)
                if pid not in report["moved_pids"]:
                    report["moved_pids"].append(pid)
            except AcgError:
                pass  # exited meanwhile (ESRCH)
        try:
            os.rmdir(path)
            report["removed"] = True
            _drop_empty_parent(backend, path.parent)
            return report
        except FileNotFoundError:
            report["removed"] = True
            _drop_empty_parent(backend, path.parent)
            return report
        except OSError as exc:
            last = exc
            if exc.errno == errno.EBUSY and not pids:
                backend.before_rmdir(path)
        if time.monotonic() >= deadline:
            left = backend.procs(path)
            report["error"] = (f"could not remove {path} within {timeout:g} s: "
                               f"{last.strerror}; tasks still inside: {left}")
            return report
        time.sleep(delay)
        delay = min(delay * 2, 0.2)


def _drop_empty_parent(backend: Backend, parent: Path) -> None:
    """acg's parent group goes too once no group and no process is left in it, so an
    idle machine shows no trace of acg. Another acg creating a group at the same moment
    wins: rmdir then fails (EBUSY/ENOTEMPTY) and the parent stays."""
    if parent != backend.parent or not parent.is_dir() or backend.procs(parent):
        return
    if any(child.is_dir() for child in parent.iterdir()):
        return
    try:
        os.rmdir(parent)
    except OSError:
        pass
