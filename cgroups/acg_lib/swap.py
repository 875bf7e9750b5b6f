"""Swap files that acg creates, enables, lists, disables and removes (and no others)."""
from __future__ import annotations

import errno
import os
import subprocess
import time
from pathlib import Path

from .errors import AcgError
from .mounts import MOUNTINFO, mount_of, unescape
from .owner import is_alive, start_time
from .registry import Registry
from .units import MIB, format_size
from .zram import is_zram, zram_off

LABEL = b"acg-swap"  # mkswap -L; also identifies our files after a reboot cleared /run
MIN_SWAP = MIB
NO_SWAP_FS = {"tmpfs", "ramfs", "overlay", "aufs", "squashfs", "nfs", "nfs4", "cifs", "smb3",
              "9p", "virtiofs", "zfs", "devtmpfs", "proc", "sysfs", "iso9660", "erofs"}
SWAP_FS = ("ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs")
PROC_SWAPS = Path("/proc/swaps")


def active_swaps(proc_swaps: Path = PROC_SWAPS) -> dict[str, dict]:
    """Active swap areas from /proc/swaps: path -> size/used bytes and priority."""
    out: dict[str, dict] = {}
    for line in proc_swaps.read_text().splitlines()[1:]:
        f = line.split()
        if len(f) >= 5:
            out[unescape(f[0])] = {"type": f[1], "size_bytes": int(f[2]) * 1024,
                                   "used_bytes": int(f[3]) * 1024, "priority": int(f[4])}
    return out


def has_acg_label(path: Path) -> bool:
    """True if path holds a swap header (SWAPSPACE2) whose label is acg's."""
    page = os.sysconf("SC_PAGE_SIZE")
    try:
        with open(path, "rb") as f:
            head = f.read(page)
    except OSError:
        return False
    # swap_header_v1_2: 1024 boot bytes, version, last_page, nr_badpages (3 x u32),
    # uuid[16], volume_name[16]; the magic ends the first page (linux/swap.h).
    label = head[1024 + 12 + 16:1024 + 12 + 32].rstrip(b"\0")
    return head[page - 10:page] == b"SWAPSPACE2" and label == LABEL


def is_acg_file(path: Path, registry: Registry) -> bool:
    info = registry.swap_info(path)
    if info is not None:
        try:
            st = path.stat()
        except FileNotFoundError:
            return False
        if (st.st_dev, st.st_ino) == (info.get("dev"), info.get("ino")):
            return True
    return has_acg_label(path)


def _run(argv: list[str]) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, capture_output=True, text=True)
    except FileNotFoundError as exc:
        raise AcgError(f"{argv[0]} is not installed (Debian package util-linux)") from exc


def _fill(fd: int, size: int) -> str:
    """Allocate size bytes without holes: fallocate, or write zeros like dd if unsupported."""
    try:
        os.posix_fallocate(fd, 0, size)
        return "fallocate"
    except OSError as exc:
        if exc.errno not in (errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
            raise
    zeros = bytes(MIB)
    done = 0
    while done < size:
        done += os.write(fd, zeros[:min(MIB, size - done)])
    return "write-zeros"


def _absolute(path: Path | str) -> Path:
    """A swap file is named by its absolute path: a relative one would land wherever the caller
    happens to be (and /proc/swaps lists absolute paths only)."""
    if not os.path.isabs(path):
        raise AcgError(f"--path: {str(path)!r} is relative; accepted: an absolute path, e.g. "
                       f"{os.path.join('/var/tmp', os.path.basename(str(path)) or 'acg.swap')}")
    return Path(os.path.normpath(path))


def swap_on(path: Path | str, size: int, priority: int | None = None, *,
            run_dir: Path | str | None = None, mountinfo: Path = MOUNTINFO,
            owned: bool = False) -> dict:
    """Create (or re-enable) an acg swap file of `size` bytes at `path` and swapon it.

    owned=True ties the file to the calling process: its marker records the caller's PID and
    start time, and once that process is dead (not just exited: also SIGKILLed) without
    swap_off, `cleanup_swaps()` / `acg cleanup` swapoff and delete it. Without it (the CLI's
    `swap on`) the file stays until `swap off`.
    """
    path = _absolute(path)
    reg = Registry(run_dir)
    owner = _owner() if owned else {}
    if size < MIN_SWAP:
        raise AcgError(f"--size: {size} bytes is too small for a swap file; it must be at "
                       "least 1M")
    if priority is not None and not 0 <= priority <= 32767:
        raise AcgError(f"--priority: {priority} is out of range; accepted: 0 to 32767")
    if not path.parent.is_dir():
        raise AcgError(f"--path: directory {path.parent} does not exist")
    if str(path) in active_swaps():
        raise AcgError(f"--path: {path} is already an active swap area")
    if path.exists() or path.is_symlink():
        if not is_acg_file(path, reg):
            raise AcgError(f"--path: {path} exists and is not an acg swap file; acg only "
                           "enables and removes swap files it created itself")
        created, method = False, "existing"
    else:
        created, method = True, ""
    mnt = mount_of(path.parent, mountinfo)
    if mnt.fstype in NO_SWAP_FS or mnt.fstype.startswith("fuse"):
        raise AcgError(f"--path: {path.parent} is on a {mnt.fstype} filesystem (mounted at "
                       f"{mnt.mount_point}), which cannot hold a swap file; use a directory "
                       f"on {', '.join(SWAP_FS)} (e.g. /var/tmp on a disk)")
    if created:
        method = _create(path, size, mnt.fstype, reg, owner)
    try:
        if created:
            out = _run(["mkswap", "-L", LABEL.decode(), str(path)])
            if out.returncode != 0:
                raise AcgError(f"mkswap {path} failed: {out.stderr.strip()}")
        argv = ["swapon"] + (["-p", str(priority)] if priority is not None else []) + [str(path)]
        out = _run(argv)
        if out.returncode != 0:
            raise AcgError(f"swapon {path} failed: {out.stderr.strip()} (the {mnt.fstype} "
                           f"filesystem at {mnt.mount_point} may not support swap files)")
    except BaseException:
        if created:
            _remove_file(path, reg)
        raise
    st = path.stat()
    info = {"size_bytes": st.st_size, "priority": priority, "fstype": mnt.fstype,
            "method": method, "dev": st.st_dev, "ino": st.st_ino, "created": time.time(),
            **owner}
    reg.record_swap(path, info)
    return {"path": str(path), **info}


def _owner() -> dict:
    pid = os.getpid()
    return {"owner_pid": pid, "owner_start": start_time(pid)}


def _create(path: Path, size: int, fstype: str, reg: Registry, owner: dict) -> str:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, 0o600)
        st = os.fstat(fd)
        reg.record_swap(path, {"dev": st.st_dev, "ino": st.st_ino, "state": "creating", **owner})
        if fstype == "btrfs":  # copy-on-write must be off before any data is written
            _run(["chattr", "+C", str(path)])
        method = _fill(fd, size)
        os.fsync(fd)
    except OSError as exc:
        os.close(fd)
        _remove_file(path, reg)
        raise AcgError(f"cannot create swap file {path} ({format_size(size)}): "
                       f"{exc.strerror}") from exc
    os.close(fd)
    return method


def _remove_file(path: Path, reg: Registry) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    reg.forget_swap(path)


def swap_off(path: Path | str, *, run_dir: Path | str | None = None) -> dict:
    """swapoff and delete a swap file acg created (or remove a zram device of its own: zram.py);
    refuses any other file."""
    path = _absolute(path)
    reg = Registry(run_dir)
    info = reg.swap_info(path)
    if is_zram(info):               # a zram device of acg's (zram.py): swapoff, reset, hot_remove
        return zram_off(path, info, str(path) in active_swaps(), run_dir=run_dir)
    if not path.exists():
        if info is not None:
            reg.forget_swap(path)
            return {"path": str(path), "was_active": False, "removed": False,
                    "note": "file was already gone; registry entry dropped"}
        raise AcgError(f"--path: {path} does not exist")
    if not is_acg_file(path, reg):
        raise AcgError(f"--path: {path} is not an acg swap file; acg only disables and "
                       "removes swap files it created itself")
    was_active = str(path) in active_swaps()
    if was_active:
        out = _run(["swapoff", str(path)])
        if out.returncode != 0:
            raise AcgError(f"swapoff {path} failed: {out.stderr.strip()}; the file is kept")
    _remove_file(path, reg)
    return {"path": str(path), "was_active": was_active, "removed": True}


def swap_list(*, run_dir: Path | str | None = None) -> list[dict]:
    """acg's registered swap files with their current state."""
    active = active_swaps()
    out = []
    for m in Registry(run_dir).swap_markers():
        p = m.get("path")
        a = active.get(p or "")
        out.append({"path": p, "size_bytes": m.get("size_bytes"), "exists": bool(p) and
                    Path(p).exists(), "active": a is not None,
                    "used_bytes": a["used_bytes"] if a else None,
                    "priority": a["priority"] if a else m.get("priority"),
                    "owner_pid": m.get("owner_pid"), "kind": m.get("kind", "file")})
    return out


def dead_owner_swaps(*, run_dir: Path | str | None = None) -> list[dict]:
    """Markers of swap files made with swap_on(owned=True) whose owner is dead: its PID is gone,
    a zombie, or now another process (start time differs)."""
    out = []
    for m in Registry(run_dir).swap_markers():
        pid = m.get("owner_pid")
        if m.get("path") and isinstance(pid, int) and not is_alive(pid, m.get("owner_start")):
            out.append(m)
    return out


def cleanup_swaps(*, run_dir: Path | str | None = None, tries: int = 10,
                  retry_s: float = 1.0) -> list[dict]:
    """swapoff and delete the swap files of dead owners (dead_owner_swaps). A failing swapoff
    (ENOMEM while the kernel still frees the dead process's pages) is retried `tries` times,
    `retry_s` apart. One report per file: path, owner_pid, removed, was_active[, note | error]."""
    reports = []
    for m in dead_owner_swaps(run_dir=run_dir):
        rep: dict = {"path": m["path"], "owner_pid": m["owner_pid"], "removed": False}
        for attempt in range(tries):
            try:
                rep.update(swap_off(m["path"], run_dir=run_dir))
                rep.pop("error", None)
                break
            except AcgError as exc:
                rep["error"] = str(exc)
                if attempt == tries - 1 or m["path"] not in active_swaps():
                    break  # only a failing swapoff is worth retrying
                time.sleep(retry_s)
        reports.append(rep)
    return reports
