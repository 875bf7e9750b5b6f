"""Where a result came from: git revision, the server binary, host, kernel, CPU model, the disk's IOPS
(diskprobe.py), date."""
from __future__ import annotations

import datetime
import functools
import hashlib
import platform
import socket
import subprocess
from pathlib import Path

from acbench import diskprobe, paths


# Published results are data, not code: `make paper` writes each finished grid to
# experiments/results/<grid>/ before it runs the next, and the next grid's rows must not read as
# measured by uncommitted code for that.
PUBLISHED = "experiments/results"


def git_revision() -> str:
    """git describe of the checkout, with -dirty when its tracked files (staged or not) differ from
    HEAD outside experiments/results/, or when that cannot be told (git's diff failed); "unknown"
    without git, outside a repository or before its first commit."""
    top = str(paths.top())
    try:
        r = subprocess.run(["git", "-C", top, "describe", "--always", "--abbrev=12"],
                           capture_output=True, text=True, timeout=10)
        rev = r.stdout.strip()
        if r.returncode != 0 or not rev:
            return "unknown"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    try:
        d = subprocess.run(["git", "-C", top, "diff", "--quiet", "HEAD", "--", ".", f":(exclude){PUBLISHED}"],
                           capture_output=True, text=True, timeout=30)
        clean = d.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        clean = False
    return rev if clean else f"{rev}-dirty"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


@functools.lru_cache(maxsize=32)
def _file_sha256(path: str, mtime_ns: int, size: int) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def file_sha256(path: Path) -> str:
    """First 16 hex digits of the file's SHA-256 ("unknown" when it cannot be read); computed once
    per version of the file."""
    try:
        st = path.stat()
        return _file_sha256(str(path), st.st_mtime_ns, st.st_size)
    except OSError:
        return "unknown"


def binary_sha256() -> str:
    """The first 16 hex digits of the SHA-256 of the memcached-ac that cells run ($ACBENCH_BIN or
    build/bin): a result's binary, also when it is not the checkout's own build."""
    return file_sha256(paths.binary("memcached-ac"))


def machine_facts() -> dict[str, str | int]:
    """What makes two machines' times incomparable (acplot.runs.HOST_FACTS), read without probing."""
    import os
    return {"kernel": platform.release(), "cpu_model": cpu_model(), "cpus": os.cpu_count() or 0}


def machine() -> dict[str, str | int | float | None]:
    return {"git_revision": git_revision(), "binary_sha256": binary_sha256(), **machine_facts(),
            "host": socket.gethostname(), "disk_iops": diskprobe.host_iops()}


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
