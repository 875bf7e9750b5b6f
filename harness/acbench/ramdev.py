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

import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from acbench import leftovers

ZRAM_CONTROL = Path("/sys/class/zram-control")
SYS_BLOCK = Path("/sys/block")
MOUNT_PARENT = Path("/var/tmp")
UMOUNT_TRIES = 10


class RamDeviceError(RuntimeError):
    pass


def available() -> str | None:
    """None if a zram device can be added here, else why not."""
    if not (ZRAM_CONTROL / "hot_add").exists():
        return f"{ZRAM_CONTROL}/hot_add is missing (no zram driver: `modprobe zram`)"
    if os.geteuid() != 0:
        return "adding a zram device needs root"
    for tool in ("mkfs.ext4", "mount", "umount"):
        if not any((Path(d) / tool).exists() for d in os.environ.get("PATH", "/usr/sbin:/sbin").split(":")):
            return f"{tool} is not installed (e2fsprogs, mount)"
    return None


def _run(cmd: list[str]) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RamDeviceError(f"{' '.join(cmd)} failed: {(r.stderr or r.stdout).strip()}")


def mounted(mount: Path) -> str | None:
    """The device mounted at `mount` (/proc/mounts), or None."""
    for line in Path("/proc/mounts").read_text().splitlines():
        f = line.split()
        if len(f) >= 2 and f[1] == str(mount):
            return f[0]
    return None


def remove(zram: int, mount: Path) -> None:
    """Unmount `mount` if /dev/zram<zram> is mounted there, delete the mount directory, free the
    device's RAM and remove it. Raises RamDeviceError with every step that failed."""
    errors: list[str] = []
    dev = f"/dev/zram{zram}"
    for attempt in range(UMOUNT_TRIES):
        if mounted(mount) != dev:
            break
        try:
            _run(["umount", str(mount)])
        except RamDeviceError as e:
            if attempt == UMOUNT_TRIES - 1:
                errors.append(str(e))
            time.sleep(0.5)
    if mount.exists() and mounted(mount) is None:
        try:
            mount.rmdir()
        except OSError as e:
            errors.append(f"rmdir {mount}: {e.strerror}")
    if (SYS_BLOCK / f"zram{zram}").exists() and not errors:
        try:
            (SYS_BLOCK / f"zram{zram}" / "reset").write_text("1")
            (ZRAM_CONTROL / "hot_remove").write_text(str(zram))
        except OSError as e:
            errors.append(f"removing zram{zram}: {e.strerror}")
    if errors:
        raise RamDeviceError("; ".join(errors))


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
            _run(["mkfs.ext4", "-q", "-F", "-O", "^has_journal", "-E", "nodiscard", dev])
            _run(["mount", "-o", "discard,noatime", dev, str(self.mount)])
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
