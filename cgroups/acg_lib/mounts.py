"""Parsing of /proc/self/mountinfo (cgroup mounts, the filesystem holding a path)."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

MOUNTINFO = Path("/proc/self/mountinfo")
_OCTAL = re.compile(r"\\([0-7]{3})")


def unescape(field: str) -> str:
    """Undo the kernel's octal escapes (\\040 for a space and so on)."""
    return _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), field)


@dataclass(frozen=True)
class Mount:
    mount_point: Path
    fstype: str
    source: str
    super_options: tuple[str, ...]


def read_mounts(mountinfo: Path = MOUNTINFO) -> list[Mount]:
    """Return every mount listed in a mountinfo file, in file order."""
    mounts: list[Mount] = []
    for line in mountinfo.read_text().splitlines():
        fields = line.split()
        if "-" not in fields:
            continue
        sep = fields.index("-")
        if sep < 6 or len(fields) < sep + 3:
            continue
        mounts.append(Mount(Path(unescape(fields[4])), fields[sep + 1],
                            unescape(fields[sep + 2]), tuple(fields[sep + 3].split(","))))
    return mounts


def mount_of(path: Path, mountinfo: Path = MOUNTINFO) -> Mount:
    """The mount that holds `path` (the longest mount point that is a prefix of it)."""
    target = Path(os.path.realpath(path))
    best: Mount | None = None
    for m in read_mounts(mountinfo):
        if target == m.mount_point or m.mount_point in target.parents:
            if best is None or len(m.mount_point.parts) >= len(best.mount_point.parts):
                best = m
    if best is None:
        raise FileNotFoundError(f"no mount in {mountinfo} holds {target}")
    return best
