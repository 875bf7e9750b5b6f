"""Is a process still the one we recorded? (PID plus its start time, so reuse is noticed.)"""
from __future__ import annotations

from pathlib import Path

PROC = Path("/proc")


def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # The command name (field 2) is in parentheses and may hold spaces or ')'.
    return text[text.rindex(")") + 2:].split()


def start_time(pid: int) -> int | None:
    """Field 22 of /proc/PID/stat (clock ticks after boot), None if there is no such PID."""
    fields = _stat_fields(pid)
    return int(fields[19]) if fields else None


def is_alive(pid: int, start: int | None = None) -> bool:
    """True if PID exists, is not a zombie and (when given) started at `start`."""
    fields = _stat_fields(pid)
    if fields is None or fields[0] in ("Z", "X"):
        return False
    return start is None or int(fields[19]) == start
