"""The NVM region of a cell whose approach runs tier nvm (policies/tier/nvm.c): a file on tmpfs
(/dev/shm) that stands for the NVM device, allocated in full by the harness, outside the cell's
cgroup, before the server starts. Its pages are charged to the harness's cgroup, never to the
cell's (a memory cgroup charges a page cache page to whoever first allocated it), as an NVM DIMM's
bytes would not count against the DRAM limit; the server maps it and refuses a file that is not
allocated in full. The file is removed when the cell ends, also on failure (and recorded with
acbench's leftovers until then)."""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from acbench import leftovers

NVM_ROOT = Path(os.environ.get("ACBENCH_NVM_DIR", "/dev/shm"))
MIB = 1 << 20
# records are ~1.05x their items, rounded up to chunks 1.25x apart (at most +25 %), and the index
# takes region/512 slots of 24 bytes (up to 9.4 % with its power of two): twice the data plus 64 MiB
# holds every item with room to spare
SIZE_FACTOR = 2
SIZE_EXTRA = 64 * MIB


class NvmError(RuntimeError):
    pass


def uses_nvm(options: dict[str, Any]) -> bool:
    """The server runs tier nvm with these -o settings."""
    return options.get("ac_tier") == "nvm"


def region_bytes(data_bytes: int) -> int:
    """The region for a cell of data_bytes: every item fits even if all of them leave RAM."""
    n = SIZE_FACTOR * int(data_bytes) + SIZE_EXTRA
    return (n + MIB - 1) // MIB * MIB


class NvmRegion:
    """The region file of one cell: options() names it (nothing made yet), start() allocates it,
    stop() removes it (safe to call again, or without start)."""

    def __init__(self, name: str, size: int, root: Path = NVM_ROOT):
        prefix = "" if name.startswith(leftovers.DIR_PREFIX) else leftovers.DIR_PREFIX
        self.dir = Path(root) / f"{prefix}{name}-nvm"
        self.path = self.dir / "region"
        self.size = int(size)

    def options(self) -> dict[str, str]:
        return {"ac_nvm_file": str(self.path)}

    def start(self) -> None:
        leftovers.track_dir(self.dir, "NVM region")
        self.dir.mkdir(mode=0o700)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            os.posix_fallocate(fd, 0, self.size)
        except OSError as e:
            free = shutil.disk_usage(self.dir).free
            raise NvmError(f"NVM region of {self.size} bytes: cannot allocate it in {self.dir.parent} ({e.strerror};"
                           f" {free} bytes free there): give a smaller cell, or ACBENCH_NVM_DIR=another tmpfs") from e
        finally:
            os.close(fd)

    def stop(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
        if self.dir.exists():
            raise NvmError(f"NVM region {self.dir} not removed")
        leftovers.untrack_dir(self.dir)


def for_cell(options: dict[str, Any], name: str, data_bytes: int) -> NvmRegion | None:
    """The region a cell of these -o settings needs (None: not tier nvm); name: unique per cell
    (its spill directory's name)."""
    return NvmRegion(name, region_bytes(data_bytes)) if uses_nvm(options) else None
