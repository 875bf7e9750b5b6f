"""`acbench check-env`: can this machine run the experiments? One verdict line per check."""
from __future__ import annotations

import ctypes
import os
import platform
import shutil
import subprocess
from pathlib import Path
from typing import Callable

import typer
from rich.console import Console

from acbench import diskprobe
from acbench.cgroup import acg

OK, WARN, FAIL = "OK", "WARN", "FAIL"
NO_SWAP_FS = {"tmpfs", "ramfs", "overlay", "aufs", "squashfs", "nfs", "nfs4", "cifs", "9p",
              "virtiofs", "zfs", "fuse"}
USERFAULTFD_NR = {"x86_64": 323, "aarch64": 282}
PROBE_DIR = diskprobe.PROBE_DIR


def check_root() -> tuple[str, str]:
    return (OK, "running as root") if os.geteuid() == 0 else (FAIL, "not root: cgroups and swap need root")


def check_cgroup() -> tuple[str, str]:
    try:
        b = acg().detect()
    except Exception as e:  # noqa: BLE001 - report whatever acg says
        return FAIL, str(e)
    if b.version == 1:
        memsw = (b.root / "memory.memsw.limit_in_bytes").exists()
        return (OK if memsw else WARN), f"{b.describe()}; swap accounting (memsw) {'on' if memsw else 'off: boot with swapaccount=1'}"
    return OK, b.describe()


def _fs_type(path: Path) -> str:
    best, fstype = "", "?"
    for line in Path("/proc/mounts").read_text().splitlines():
        f = line.split()
        mp = f[1].replace("\\040", " ")
        if str(path).startswith(mp) and len(mp) > len(best):
            best, fstype = mp, f[2]
    return fstype


def check_swap() -> tuple[str, str]:
    if shutil.which("swapon") is None or shutil.which("mkswap") is None:
        return FAIL, "swapon/mkswap not installed (apt-get install util-linux)"
    fs = _fs_type(PROBE_DIR)
    if fs in NO_SWAP_FS or fs.startswith("fuse"):
        return FAIL, f"{PROBE_DIR} is on {fs}: no swap files there"
    active = len(Path("/proc/swaps").read_text().splitlines()) - 1
    return OK, f"swap files possible in {PROBE_DIR} ({fs}); {active} swap area(s) active"


def check_userfaultfd() -> tuple[str, str]:
    nr = USERFAULTFD_NR.get(platform.machine())
    if nr is None:
        return WARN, f"userfaultfd syscall number unknown on {platform.machine()}"
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.syscall(nr, os.O_CLOEXEC | os.O_NONBLOCK)
    if fd < 0:
        err = ctypes.get_errno()
        return FAIL, f"userfaultfd() failed: {os.strerror(err)}"
    os.close(fd)
    dev = " and /dev/userfaultfd" if Path("/dev/userfaultfd").exists() else ""
    return OK, f"userfaultfd() works{dev}"


def check_page_tracking() -> tuple[str, str]:
    """The kernel's own page-access tracking a user-space pager could read: idle page tracking and
    DAMON. Neither is needed: tier uvmm takes its access marks from the item path."""
    idle = Path("/sys/kernel/mm/page_idle/bitmap").exists()
    damon = Path("/sys/kernel/mm/damon/admin").exists()
    if idle:
        return OK, "idle page tracking present" + (" and DAMON" if damon else "")
    return WARN, ("no idle page tracking (/sys/kernel/mm/page_idle)" + (", DAMON present" if damon else ", no DAMON")
                  + ": uvmm's access tracking uses the item path's marks (policies/README.md, tier uvmm)")


def check_perf() -> tuple[str, str]:
    if shutil.which("perf"):
        sw = subprocess.run(["perf", "stat", "-x,", "-e", "task-clock,page-faults,major-faults,context-switches",
                             "true"], capture_output=True, text=True)
        hw = subprocess.run(["perf", "stat", "-x,", "-e", "cycles,instructions", "true"],
                            capture_output=True, text=True)
        sw_ok = sw.returncode == 0 and "<not supported>" not in sw.stderr
        hw_ok = hw.returncode == 0 and "<not supported>" not in hw.stderr and "cycles" in hw.stderr
        if sw_ok:
            return (OK, "perf: software events work; hardware counters "
                    + ("work" if hw_ok else "not available (cycles/instructions unsupported)"))
    if shutil.which("valgrind"):
        return WARN, "perf unusable; valgrind (cachegrind) is installed"
    return FAIL, "neither perf nor valgrind (cachegrind) is usable"


def check_iops(seconds: float = 1.0, size: int = 64 << 20) -> tuple[str, str]:
    """Random 4 KiB O_DIRECT reads from a fresh file in /var/tmp for about `seconds` (diskprobe.py)."""
    try:
        iops, lat_us = diskprobe.measure(seconds, size)
    except diskprobe.ProbeError as e:
        return WARN, str(e)
    verdict = OK if iops >= 1000 else WARN
    return verdict, (f"disk probe ({diskprobe.PROBE_DIR}, random 4 KiB O_DIRECT reads, 1 thread): {iops:,.0f} IOPS, "
                     f"{lat_us:.0f} µs mean")


CHECKS: list[tuple[str, Callable[[], tuple[str, str]]]] = [
    ("root", check_root), ("cgroup memory", check_cgroup), ("swap", check_swap),
    ("userfaultfd", check_userfaultfd), ("page tracking", check_page_tracking), ("perf/cachegrind", check_perf),
    ("disk IOPS", check_iops)]


def check_env() -> None:
    """One verdict line per requirement (OK / WARN / FAIL); exit status 1 if any FAIL."""
    console = Console(highlight=False, soft_wrap=True)
    failed = False
    for name, fn in CHECKS:
        try:
            verdict, detail = fn()
        except Exception as e:  # noqa: BLE001 - a check that breaks is a failed check
            verdict, detail = FAIL, f"check raised {type(e).__name__}: {e}"
        failed |= verdict == FAIL
        colour = {OK: "green", WARN: "yellow", FAIL: "red"}[verdict]
        console.print(f"[{colour}]{verdict:4}[/{colour}] {name}: {detail}")
    raise typer.Exit(1 if failed else 0)


def register(app: typer.Typer) -> None:
    app.command("check-env")(check_env)
