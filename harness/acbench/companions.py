"""What a cell's tier needs outside the cell's cgroup, made before the server starts and removed
when the cell ends (also on failure): tier nvm's region file (nvm.py), tier remote's servers
(remote.py). Each has options() (the -o settings that name it), start() and stop()."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from acbench import nvm, remote


def for_cell(options: dict[str, Any], name: str, data_bytes: int, log_dir: Path) -> list[Any]:
    """The companions a cell of these -o settings needs; name: unique per cell (its spill
    directory's name); log_dir: where a companion process writes its output."""
    found = (nvm.for_cell(options, name, data_bytes), remote.for_cell(options, data_bytes, log_dir))
    return [c for c in found if c is not None]


def options(companions: list[Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for c in companions:
        out.update(c.options())
    return out


def start(companions: list[Any]) -> None:
    for c in companions:
        c.start()


def stop(companions: list[Any]) -> BaseException | None:
    """Stops every companion, each even if an earlier one failed; returns the first failure."""
    first: BaseException | None = None
    for c in companions:
        try:
            c.stop()
        except BaseException as e:  # noqa: BLE001 - keep cleaning up
            first = first or e
    return first
