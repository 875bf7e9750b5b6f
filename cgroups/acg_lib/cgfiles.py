"""Reading and writing cgroup control files (also works on a fake directory tree)."""
from __future__ import annotations

import os
from pathlib import Path

from .errors import AcgError


def write(path: Path, value: str) -> None:
    """Write one value the way `echo value > path` does; a refusal becomes an AcgError."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, value.encode())
        finally:
            os.close(fd)
    except OSError as exc:
        raise AcgError(f"cannot write {value!r} to {path}: {exc.strerror}") from exc


def read_text(path: Path) -> str | None:
    try:
        return path.read_text()
    except FileNotFoundError:
        return None


def read_int(path: Path) -> int | None:
    """The integer in a one-value file; None if the file is absent; 'max' is None too."""
    text = read_text(path)
    if text is None or text.strip() in ("", "max"):
        return None
    return int(text.split()[0])


def read_keyed(path: Path) -> dict[str, int]:
    """Parse 'key value' lines (memory.stat, memory.events, memory.oom_control)."""
    text = read_text(path)
    out: dict[str, int] = {}
    if text is None:
        return out
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            out[parts[0]] = int(parts[1])
    return out


def read_pids(path: Path) -> list[int]:
    text = read_text(path)
    return [int(x) for x in text.split()] if text else []
