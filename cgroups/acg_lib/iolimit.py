"""An I/O limit on one block device for a MemoryGroup's processes, in operations and/or bytes per
second: how a slow disk (the hard disk of a paper's machine: IOPS) or a slower memory device (NVM
streamed a cache line at a time: bytes per second) is emulated on a fast one.

    cgroup v2  io.max of the group itself ("MAJ:MIN riops=R wiops=W rbps=B wbps=C", the limits
               given), the io controller enabled for the acg parent's children
    cgroup v1  a companion group of the same name in the blkio hierarchy (<blkio>/acg/<name>),
               blkio.throttle.{read,write}_{iops,bps}_device; a process joins both groups

What the kernel throttles: reads and direct writes a process of the group submits (a spill file's
reads, a swap-in, O_DIRECT writes, writes submitted by reclaim in the process's context). Buffered
writes that the kernel's flusher threads write back later are not the group's on v1 (v2 charges
them through the page's memory cgroup). The limit is on whole disks: a partition's disk is found
through /sys/dev/block."""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from . import cgfiles
from .backend import PARENT
from .errors import AcgError
from .mounts import MOUNTINFO, read_mounts

SYS_DEV_BLOCK = Path("/sys/dev/block")


# IoLimit's limits: field -> (v1 blkio.throttle file, v2 io.max key, what the error calls it)
LIMITS = {"read_iops": ("blkio.throttle.read_iops_device", "riops", "read IOPS"),
          "write_iops": ("blkio.throttle.write_iops_device", "wiops", "write IOPS"),
          "read_bps": ("blkio.throttle.read_bps_device", "rbps", "read bytes/s"),
          "write_bps": ("blkio.throttle.write_bps_device", "wbps", "write bytes/s")}


@dataclass(frozen=True)
class IoLimit:
    """Limits of 0 are not set (the device's own speed); at least one is set."""
    device: str          # "MAJ:MIN" of a whole disk
    read_iops: int = 0
    write_iops: int = 0
    read_bps: int = 0
    write_bps: int = 0

    def __post_init__(self) -> None:
        parts = self.device.split(":")
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise AcgError(f"io device {self.device!r}: expected MAJ:MIN, e.g. 253:0")
        for name, (_, _, what) in LIMITS.items():
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise AcgError(f"io limit: {what} {v!r}; accepted: an integer ≥ 1 (0: not limited)")
        if not any(self.limits().values()):
            raise AcgError(f"io limit on {self.device}: no limit given; accepted: read/write IOPS or bytes/s, "
                           "at least one ≥ 1")

    def limits(self) -> dict:
        """The limits set (≥ 1), by field name."""
        return {name: getattr(self, name) for name in LIMITS if getattr(self, name)}


def disk_of(path: Path | str, sys_dev_block: Path = SYS_DEV_BLOCK) -> str:
    """MAJ:MIN of the whole disk that holds `path` (its partition's parent disk)."""
    st = os.stat(path)
    dev = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    node = sys_dev_block / dev
    if not node.exists():
        raise AcgError(f"{path} is on device {dev}, which is not a block device (/sys/dev/block/{dev} is "
                       "missing: tmpfs, overlay or a network filesystem?); an I/O limit needs a disk")
    real = node.resolve()
    if (real / "partition").exists():
        parent = cgfiles.read_text(real.parent / "dev")
        if parent is None:
            raise AcgError(f"cannot find the disk of partition {dev} ({real.parent}/dev unreadable)")
        return parent.strip()
    return dev


def blkio_root(mountinfo: Path = MOUNTINFO) -> Path:
    """The cgroup v1 hierarchy with the blkio controller."""
    for m in read_mounts(mountinfo):
        if m.fstype == "cgroup" and "blkio" in m.super_options:
            return m.mount_point
    raise AcgError(f"no cgroup v1 mount with the blkio controller in {mountinfo}: an I/O limit on cgroup v1 needs "
                   "it (mount -t cgroup -o blkio none /sys/fs/cgroup/blkio)")


class V1Companion:
    """The blkio group beside a v1 memory group: <blkio root>/acg/<memory group's dirname>."""

    def __init__(self, memory_group: Path, root: Path | None = None) -> None:
        self.root = root if root is not None else blkio_root()
        self.path = self.root / PARENT / memory_group.name

    def create(self, limit: IoLimit) -> None:
        os.makedirs(self.path.parent, exist_ok=True)
        try:
            os.mkdir(self.path)
        except FileExistsError:
            pass
        for name, value in limit.limits().items():
            cgfiles.write(self.path / LIMITS[name][0], f"{limit.device} {value}")

    def limits(self) -> dict:
        """The limits the kernel holds for the group (names as IoLimit's; the ones not set left out)."""
        out = {}
        for name, (file, _, _) in LIMITS.items():
            fields = (cgfiles.read_text(self.path / file) or "").split()
            if len(fields) >= 2 and fields[1].isdigit():
                out[name] = int(fields[1])
        return out

    def remove(self) -> dict:
        """Move whoever is left to the blkio root, rmdir, drop the empty acg parent."""
        report = {"path": str(self.path), "removed": False, "moved_pids": []}
        if not self.path.exists():
            report["removed"] = True
            return report
        for _ in range(50):
            for pid in cgfiles.read_pids(self.path / "cgroup.procs"):
                try:
                    cgfiles.write(self.root / "cgroup.procs", str(pid))
                    report["moved_pids"].append(pid)
                except AcgError:
                    pass      # exited meanwhile
            try:
                os.rmdir(self.path)
                report["removed"] = True
                break
            except FileNotFoundError:
                report["removed"] = True
                break
            except OSError as exc:
                report["error"] = f"cannot remove {self.path}: {exc.strerror}"
                time.sleep(0.02)
        if report["removed"]:
            report.pop("error", None)
            try:
                os.rmdir(self.path.parent)
            except OSError:
                pass          # other groups still there
        return report


def v1_leftovers(is_dead, root: Path | None = None) -> list[dict]:
    """Remove blkio companions whose owner (the dirname's pid suffix) `is_dead(pid)`."""
    try:
        base = (root if root is not None else blkio_root()) / PARENT
    except AcgError:
        return []
    if not base.is_dir():
        return []
    reports = []
    for p in sorted(base.iterdir()):
        tail = p.name.rpartition(".")[2]
        if p.is_dir() and tail.isdigit() and is_dead(int(tail)):
            comp = V1Companion(Path(p.name), base.parent)
            reports.append(comp.remove())
    return reports


def enable_v2_io(root: Path, parent: Path) -> None:
    """io controller on for the acg parent's children (v2)."""
    for p in (root, parent):
        ctl = p / "cgroup.subtree_control"
        text = cgfiles.read_text(ctl) or ""
        if "io" not in {t.lstrip("+") for t in text.split()}:
            cgfiles.write(ctl, "+io")


def set_v2(path: Path, limit: IoLimit) -> dict:
    """Writes the limits set to io.max; returns the ones the kernel holds (as V1Companion.limits)."""
    keys = " ".join(f"{LIMITS[name][1]}={v}" for name, v in limit.limits().items())
    cgfiles.write(path / "io.max", f"{limit.device} {keys}")
    by_key = {key: name for name, (_, key, _) in LIMITS.items()}
    out: dict = {}
    for line in (cgfiles.read_text(path / "io.max") or "").splitlines():
        fields = line.split()
        if fields and fields[0] == limit.device:
            for f in fields[1:]:
                k, _, v = f.partition("=")
                if k in by_key and v.isdigit():
                    out[by_key[k]] = int(v)
    return out


def v1_serviced(path: Path, device: str) -> dict:
    """Read and write operations the group submitted to `device` (blkio.throttle.io_serviced)."""
    out = {"io_read_ios": None, "io_write_ios": None}
    for line in (cgfiles.read_text(path / "blkio.throttle.io_serviced") or "").splitlines():
        f = line.split()
        if len(f) == 3 and f[0] == device and f[2].isdigit():
            if f[1] == "Read":
                out["io_read_ios"] = int(f[2])
            elif f[1] == "Write":
                out["io_write_ios"] = int(f[2])
    return out


def v2_serviced(path: Path, device: str) -> dict:
    """The same from v2's io.stat (rios, wios)."""
    out = {"io_read_ios": None, "io_write_ios": None}
    for line in (cgfiles.read_text(path / "io.stat") or "").splitlines():
        f = line.split()
        if f and f[0] == device:
            kv = dict(x.partition("=")[::2] for x in f[1:])
            out["io_read_ios"] = int(kv["rios"]) if kv.get("rios", "").isdigit() else None
            out["io_write_ios"] = int(kv["wios"]) if kv.get("wios", "").isdigit() else None
    return out
