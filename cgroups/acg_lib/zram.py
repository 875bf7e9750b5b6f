"""zram swap devices that acg creates, enables and removes (and no others): compressed swap in RAM.

A device is made with zram's hot_add (a new /dev/zramN; the ones the kernel made at boot, or
anyone else made, are never touched), given a compression algorithm and a size, mkswap'd with
acg's label and swapon'd. It is registered in acg's registry among the swap areas (kind "zram"),
so swap_off(), swap_list() and the cleanup of dead owners (swap.py) handle it as they handle
acg's swap files: swapoff, reset (frees its memory), hot_remove.

Its memory is the kernel's, outside any memory cgroup (zram allocates with zsmalloc, not charged to
the faulting task's group): what it holds is reported by zram_stats() (mm_stat), so a caller can
count it beside the group's own usage.
"""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from .errors import AcgError
from .owner import start_time
from .registry import Registry

SYS = Path("/sys")
DEV = Path("/dev")
LABEL = "acg-swap"           # swap.py's label: the device reads as an acg swap area
KIND = "zram"
DEVICE_WAIT_S = 5.0
# Documentation/admin-guide/blockdev/zram.rst, "mm_stat": the fields, in bytes but the last three
MM_STAT = ("orig_data_size", "compr_data_size", "mem_used_total", "mem_limit", "mem_used_max",
           "same_pages", "pages_compacted", "huge_pages")


def _control(sys_root: Path) -> Path:
    c = sys_root / "class" / "zram-control"
    if not (c / "hot_add").exists():
        raise AcgError(f"zram is not available: {c}/hot_add does not exist (the kernel needs "
                       "CONFIG_ZRAM; `modprobe zram` loads it when it is a module)")
    return c


def algorithms(sys_dir: Path) -> list[str]:
    """The compression algorithms the device offers (comp_algorithm: "[lzo-rle] lzo lz4")."""
    return [a.strip("[]") for a in (sys_dir / "comp_algorithm").read_text().split()]


def _run(argv: list[str]) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, capture_output=True, text=True)
    except FileNotFoundError as exc:
        raise AcgError(f"{argv[0]} is not installed (Debian package util-linux)") from exc


def zram_on(size: int, algorithm: str = "lz4", priority: int | None = None, *, owned: bool = False,
            run_dir: Path | str | None = None, sys_root: Path = SYS, dev_root: Path = DEV) -> dict:
    """A new zram device of `size` bytes (uncompressed capacity) compressing with `algorithm`,
    enabled as swap with `priority`. owned=True ties it to the calling process as
    swap_on(owned=True) does for a file. Returns its registry record."""
    if size < 1 << 20:
        raise AcgError(f"--size: {size} bytes is too small for a zram swap device; it must be at least 1M")
    if priority is not None and not 0 <= priority <= 32767:
        raise AcgError(f"--priority: {priority} is out of range; accepted: 0 to 32767")
    control = _control(sys_root)
    index = int((control / "hot_add").read_text().strip())
    name = f"zram{index}"
    sys_dir, dev = sys_root / "block" / name, dev_root / name
    reg = Registry(run_dir)
    base = {"kind": KIND, "index": index, "size_bytes": size, "algorithm": algorithm,
            "priority": priority,
            **({"owner_pid": os.getpid(), "owner_start": start_time(os.getpid())} if owned else {})}
    reg.record_swap(dev, {**base, "state": "creating"})
    try:
        offered = algorithms(sys_dir)
        if algorithm not in offered:
            raise AcgError(f"--algorithm: {algorithm!r} is not offered by this kernel's zram; "
                           f"accepted: {', '.join(offered)}")
        (sys_dir / "comp_algorithm").write_text(algorithm)
        (sys_dir / "disksize").write_text(str(size))
        deadline = time.monotonic() + DEVICE_WAIT_S
        while not dev.exists():             # udev (or devtmpfs) makes the node
            if time.monotonic() > deadline:
                raise AcgError(f"{dev} did not appear within {DEVICE_WAIT_S:.0f} s of zram's hot_add")
            time.sleep(0.05)
        out = _run(["mkswap", "-L", LABEL, str(dev)])
        if out.returncode != 0:
            raise AcgError(f"mkswap {dev} failed: {out.stderr.strip()}")
        out = _run(["swapon"] + (["-p", str(priority)] if priority is not None else []) + [str(dev)])
        if out.returncode != 0:
            raise AcgError(f"swapon {dev} failed: {out.stderr.strip()}")
    except BaseException:
        _remove(index, sys_root)
        reg.forget_swap(dev)
        raise
    info = {**base, "created": time.time()}
    reg.record_swap(dev, info)
    return {"path": str(dev), **info}


def is_zram(info: dict | None) -> bool:
    return bool(info) and info.get("kind") == KIND


def zram_off(dev: Path, info: dict, active: bool, *, run_dir: Path | str | None = None,
             sys_root: Path = SYS) -> dict:
    """swapoff (when `active`), reset and hot_remove a device zram_on() made (its registry
    record `info`), then drop the record."""
    if active:
        out = _run(["swapoff", str(dev)])
        if out.returncode != 0:
            raise AcgError(f"swapoff {dev} failed: {out.stderr.strip()}; the device is kept")
    _remove(int(info["index"]), sys_root)
    Registry(run_dir).forget_swap(dev)
    return {"path": str(dev), "was_active": active, "removed": True}


def _remove(index: int, sys_root: Path) -> None:
    """Frees the device's memory (reset) and the device itself (hot_remove); a device already
    gone is fine."""
    sys_dir = sys_root / "block" / f"zram{index}"
    if not sys_dir.exists():
        return
    try:
        (sys_dir / "reset").write_text("1")
        (sys_root / "class" / "zram-control" / "hot_remove").write_text(str(index))
    except OSError as exc:
        raise AcgError(f"cannot remove zram{index}: {exc.strerror} (busy: is it still a swap area "
                       "or open?)") from exc


def zram_stats(dev: Path | str, sys_root: Path = SYS) -> dict:
    """The device's mm_stat as a dict (bytes; same_pages, pages_compacted, huge_pages in pages)."""
    name = os.path.basename(str(dev))
    fields = (sys_root / "block" / name / "mm_stat").read_text().split()
    return {k: int(v) for k, v in zip(MM_STAT, fields)}
