"""The host's disk as a machine fact: random 4 KiB O_DIRECT reads from a fresh file in /var/tmp,
one thread, for about a second (`acbench check-env` prints it; every row records it as
`disk_iops`). A host's value is measured once per boot and kept in /run/acbench (cleared at boot),
so rows of one host carry one value; the report compares throughput across hosts only when their
facts agree (acplot.runs.disk_rows)."""
from __future__ import annotations

import json
import mmap
import os
import random
import shutil
import tempfile
import time
from pathlib import Path

from acbench import leftovers

PROBE_DIR = Path("/var/tmp")
CACHE = Path("/run/acbench/disk-iops.json")


class ProbeError(RuntimeError):
    pass


def measure(seconds: float = 1.0, size: int = 64 << 20, where: Path = PROBE_DIR) -> tuple[float, float]:
    """(reads per second, mean latency in µs); ProbeError when O_DIRECT is not possible there."""
    d = tempfile.mkdtemp(prefix="acbench-iops-", dir=where)
    leftovers.track_dir(Path(d), "probe directory")
    path = Path(d) / "probe"
    try:
        with open(path, "wb") as f:
            block = os.urandom(1 << 20)
            for _ in range(size >> 20):
                f.write(block)
            f.flush()
            os.fsync(f.fileno())
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
        except OSError as e:
            raise ProbeError(f"O_DIRECT not possible in {where} ({e.strerror}); no IOPS probe") from None
        buf = mmap.mmap(-1, 4096)
        n, lat = 0, 0.0
        rng = random.Random(1)
        t_end = time.monotonic() + seconds
        try:
            while time.monotonic() < t_end:
                off = rng.randrange(size // 4096) * 4096
                t = time.perf_counter()
                os.preadv(fd, [buf], off)
                lat += time.perf_counter() - t
                n += 1
        finally:
            os.close(fd)
        return n / seconds, 1e6 * lat / n
    finally:
        shutil.rmtree(d, ignore_errors=True)
        if not os.path.exists(d):
            leftovers.untrack_dir(Path(d))


def host_iops(cache: Path = CACHE) -> float | None:
    """This boot's measured IOPS of PROBE_DIR (measured now if it never was); None when the probe
    cannot run here."""
    try:
        return float(json.loads(cache.read_text())["iops"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:
        iops, lat_us = measure()
    except (ProbeError, OSError):
        return None
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps({"iops": iops, "latency_us": lat_us, "dir": str(PROBE_DIR)}) + "\n")
        os.replace(tmp, cache)
    except OSError:
        pass                      # not root: measured again next time
    return iops
