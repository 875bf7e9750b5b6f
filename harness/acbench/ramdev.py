"""A RAM-backed block device for the cells' spill directories and swap files: `[run] spill_device = "ram"`.

For runs that measure hit rates only (Fig 3): what an approach keeps in RAM, and so its hit
rate, is set by `-m`, the cgroup limit and the request sequence, not by how fast the device
answers; a RAM device makes every disk hit cost microseconds instead of a disk read. It is a zram
device (compressed RAM, the kernel's own driver) with an ext4 file system, mounted under
/var/tmp: a block device like the disk, so that the spill files' page cache, readahead, the swap
file and the cgroup's charging are what they are on the disk. zram's own memory is the driver's,
charged to no cell. Mounted with `discard`, so a deleted spill file frees its RAM.
experiments/README.md ("Fast device") has the measured equivalence with the disk.

The device is added with /sys/class/zram-control/hot_add (never an existing zram device), and
recorded in acbench's leftover marker (`devices`) before it is used, so that if acbench dies,
`acbench cleanup` unmounts and removes it (leftovers.py). stop() does it otherwise, each step even
if an earlier one failed.
"""
from __future__ import annotations

import signal
import tempfile
from pathlib import Path

from acbench import leftovers
from acbench.zram import SYS_BLOCK, ZRAM_CONTROL, RamDeviceError, available, mounted, remove, run_cmd  # noqa: F401  (acbench.ramdev.X as before)

MOUNT_PARENT = Path("/var/tmp")


class RamDevice:
    """start() -> the mount point (a directory acbench-ram-* under /var/tmp); stop() removes all."""

    def __init__(self, size_bytes: int) -> None:
        self.size_bytes = int(size_bytes)
        self.zram: int | None = None
        self.mount: Path | None = None

    def start(self) -> Path:
        why = available()
        if why is not None:
            raise RamDeviceError(f'[run] spill_device = "ram" needs a zram device: {why}')
        # the mount point first (resolved: /proc/mounts names real paths), then the device, recorded
        # at once with SIGINT/SIGTERM held back, so that no device exists unrecorded
        self.mount = Path(tempfile.mkdtemp(prefix="acbench-ram-", dir=MOUNT_PARENT)).resolve()
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            self.zram = int((ZRAM_CONTROL / "hot_add").read_text().strip())
            leftovers.track_device(self.zram, self.mount)
        except (OSError, ValueError) as e:
            self.mount.rmdir()
            self.mount = None
            raise RamDeviceError(f"cannot add a zram device via {ZRAM_CONTROL}/hot_add: {e}") from None
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        try:
            (SYS_BLOCK / f"zram{self.zram}" / "disksize").write_text(str(self.size_bytes))
            dev = f"/dev/zram{self.zram}"
            run_cmd(["mkfs.ext4", "-q", "-F", "-O", "^has_journal", "-E", "nodiscard", dev])
            run_cmd(["mount", "-o", "discard,noatime", dev, str(self.mount)])
        except BaseException:
            self.stop()
            raise
        return self.mount

    def stop(self) -> None:
        """Unmounts and removes the device (each step even if an earlier one failed); raises
        RamDeviceError naming what is left, which `acbench cleanup` removes once this process exits."""
        if self.zram is None:
            if self.mount is not None and self.mount.exists() and mounted(self.mount) is None:
                self.mount.rmdir()
            self.mount = None
            return
        try:
            remove(self.zram, self.mount)
        except RamDeviceError as e:
            raise RamDeviceError(f"zram{self.zram} at {self.mount} is left: {e}; `acbench cleanup` removes it "
                                 "once this acbench has exited") from None
        leftovers.untrack_device(self.zram)
        self.zram = self.mount = None

    def __enter__(self) -> Path:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
