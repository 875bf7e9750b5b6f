"""The NVM region of a cell whose approach runs tier nvm (policies/tier/nvm.c): a file on tmpfs
(/dev/shm) that stands for the NVM device, allocated in full by the harness, outside the cell's
cgroup, before the server starts. Its pages are charged to the harness's cgroup, never to the
cell's (a memory cgroup charges a page cache page to whoever first allocated it), as an NVM DIMM's
bytes would not count against the DRAM limit; the server maps it and refuses a file that is not
allocated in full. The file is removed when the cell ends, also on failure (and recorded with
acbench's leftovers until then)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from acbench import leftovers, paths

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


# --- the NVM block device: the RAM device (ramdev.py) limited to NVM's bandwidth --------------------
# Arulraj et al.'s disk-oriented design reads NVM through a file system a block at a time; on an
# emulator that stalls on every cache line, a block of B bytes read at queue depth 1 takes
# B / 64 line latencies. The RAM device under the spill directory is limited for the cell's
# processes to that rate, 64 bytes per line latency (read and write: acg's IoLimit bytes/s), the
# line latency N times DRAM's as ac-dramlat measures it on the machine (tier nvm's own chase) or
# given in ns. The kernel enforces the limit per time slice: at queue depth 1 (a page fault at a
# time) a cell gets the rate on average, its reads dispatched in bursts. This is tier nvm's
# ac_nvm_charge=line (every line pays); its default charges a run of lines once, which for a 4 KiB
# page would add one latency (0.15-1.1 us at 2x-8x here), below the fault path's own cost.
LINE_BYTES = 64
_LATENCY = re.compile(r"^(?:(\d+(?:\.\d+)?)x|(\d+)ns)$")


def parse_device_latency(text: str) -> tuple[float, int]:
    """"Nx" (N times DRAM's latency per line, 1 to 100) -> (N, 0); "Nns" (1 to 100000) -> (0, N)."""
    m = _LATENCY.match(str(text).strip())
    factor = float(m.group(1)) if m and m.group(1) else 0.0
    ns = int(m.group(2)) if m and m.group(2) else 0
    if m is None or (m.group(1) and not 1 <= factor <= 100) or (m.group(2) and not 1 <= ns <= 100000):
        raise NvmError(f"device_latency {text!r}; accepted: Nx (N times DRAM's latency per cache line, N from 1 to "
                       "100, e.g. 2x, 8x) or Nns (a latency per line from 1 to 100000 ns, e.g. 300ns)")
    return factor, ns


def dram_ns() -> float:
    """DRAM's latency per cache line on this machine (build/bin/ac-dramlat: the median of five chases)."""
    tool = paths.binary("ac-dramlat")
    try:
        cp = subprocess.run([str(tool)], capture_output=True, text=True, timeout=60)
    except OSError as e:
        raise NvmError(f"cannot run {tool} ({e.strerror}): build it with `make -C policies all`") from None
    try:
        ns = float(cp.stdout)
    except ValueError:
        ns = 0.0
    if cp.returncode != 0 or not ns > 0:
        raise NvmError(f"{tool} measured no DRAM latency (exit {cp.returncode}): {cp.stderr.strip() or cp.stdout.strip()}")
    return ns


def device_rate(latency: str, dram: float) -> int:
    """Bytes per second of a device that delivers a cache line per line latency."""
    factor, ns = parse_device_latency(latency)
    line_ns = factor * dram if factor else float(ns)
    return int(round(LINE_BYTES * 1e9 / line_ns))
