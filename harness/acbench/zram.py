"""A zram device's lowest level: whether one can be added, what is mounted where, and removing one
(unmount, delete the mount directory, reset, hot_remove). No acbench state: the RAM device of
ramdev.py and the clean-up of a dead run's devices (leftovers.py) both use it."""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

ZRAM_CONTROL = Path("/sys/class/zram-control")
SYS_BLOCK = Path("/sys/block")
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


def run_cmd(cmd: list[str]) -> None:
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
            run_cmd(["umount", str(mount)])
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
