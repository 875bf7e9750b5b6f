"""Per-process and per-device counters: /proc/PID/stat, /proc/PID/io, /proc/diskstats, perf."""
from __future__ import annotations

import os
from pathlib import Path

CLK_TCK = os.sysconf("SC_CLK_TCK")
PERF_EVENTS = ("task-clock", "page-faults", "major-faults", "context-switches")


def proc_stat(pid: int) -> dict[str, float] | None:
    """utime/stime (s), minflt/majflt and threads of a live process (None once it is gone)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    f = text[text.rindex(")") + 2:].split()   # fields from 3 (state) on
    return {"utime_s": int(f[11]) / CLK_TCK, "stime_s": int(f[12]) / CLK_TCK,
            "minflt": int(f[7]), "majflt": int(f[9]), "threads": int(f[17])}


def proc_io(pid: int) -> dict[str, int] | None:
    try:
        text = Path(f"/proc/{pid}/io").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    out = {}
    for line in text.splitlines():
        k, _, v = line.partition(":")
        out[k.strip()] = int(v)
    return out


def proc_hwm(pid: int) -> int | None:
    """Peak resident set (VmHWM) of a live process, bytes."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None


def device_of(path: Path) -> str | None:
    """The /proc/diskstats name of the block device holding path (the whole disk or partition)."""
    st = os.stat(path)
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    link = Path(f"/sys/dev/block/{major}:{minor}")
    if not link.exists():
        return None
    return link.resolve().name


def machine_busy_s(text: str | None = None) -> float:
    """CPU time every core of the machine has spent busy since boot (s): /proc/stat's first line,
    all but idle and iowait (guest time is already in user and nice)."""
    text = text if text is not None else Path("/proc/stat").read_text()
    f = [int(x) for x in text.splitlines()[0].split()[1:]]
    busy = sum(f[:8]) - f[3] - f[4]           # user nice system idle iowait irq softirq steal
    return busy / CLK_TCK


def own_cpu_s() -> float:
    """CPU time of this process and of the children it has waited for (s)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def load_beside(busy0: float, own0: float, busy1: float, own1: float, wall_s: float,
                cores: int) -> dict[str, float]:
    """What else ran on the machine during a cell: the machine's busy CPU over it minus the cell's
    own (the harness and every process of the cell it waited for: the server, perf, ycsb-mc), and
    that as a share of the machine's capacity over the wall time."""
    other = max(0.0, (busy1 - busy0) - (own1 - own0))
    return {"machine_busy_cpu_s": busy1 - busy0, "other_cpu_s": other,
            "other_cpu_share": other / (wall_s * cores) if wall_s > 0 and cores > 0 else None}


def diskstats(device: str | None, text: str | None = None) -> dict[str, int] | None:
    """Read and write counters of one device (see Documentation/admin-guide/iostats.rst)."""
    if device is None:
        return None
    text = text if text is not None else Path("/proc/diskstats").read_text()
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 14 and f[2] == device:
            return {"reads": int(f[3]), "read_sectors": int(f[5]), "read_ticks_ms": int(f[6]),
                    "writes": int(f[7]), "write_sectors": int(f[9]), "write_ticks_ms": int(f[10])}
    return None


def disk_delta(before: dict[str, int] | None, after: dict[str, int] | None) -> dict[str, float | None]:
    if before is None or after is None:
        return {"disk_read_ios": None, "disk_read_bytes": None, "disk_read_latency_mean_us": None,
                "disk_write_ios": None, "disk_write_bytes": None}
    d = {k: after[k] - before[k] for k in before}
    return {"disk_read_ios": d["reads"], "disk_read_bytes": d["read_sectors"] * 512,
            "disk_read_latency_mean_us": 1000.0 * d["read_ticks_ms"] / d["reads"] if d["reads"] else None,
            "disk_write_ios": d["writes"], "disk_write_bytes": d["write_sectors"] * 512}


def perf_prefix(out: Path) -> list[str]:
    return ["perf", "stat", "-x", ",", "-o", str(out), "-e", ",".join(PERF_EVENTS), "--"]


def perf_column(event: str) -> str:
    """The row's column of a perf event: task-clock (perf prints msec) in seconds, counts as they are."""
    return "perf_task_clock_s" if event == "task-clock" else f"perf_{event.replace('-', '_')}"


def parse_perf(text: str) -> dict[str, float | None]:
    """perf stat -x, output: value,unit,event,... ("<not supported>" -> None)."""
    out: dict[str, float | None] = {perf_column(e): None for e in PERF_EVENTS}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        f = line.split(",")
        if len(f) < 3 or f[2] not in PERF_EVENTS:
            continue
        try:
            value: float | None = float(f[0]) * (0.001 if f[1] == "msec" else 1.0)
        except ValueError:
            value = None
        out[perf_column(f[2])] = value
    return out
