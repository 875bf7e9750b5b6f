"""Measured inputs of the memory arithmetic: item footprint and the empty server's RSS.

footprint: a server with room to spare loads a sample of the records (same field count,
field length, key format) over the network; footprint = Σ used_chunks × chunk_size /
curr_items from `stats slabs` (the slab chunk an item really takes, header and key included).
base RSS: memcached-ac (`lru`) with no listener and an empty cache (its evicted table is empty:
it grows with the spilled items, inside -m), VmRSS once it is stable; it only sizes the
calibration runs' limit (calibrate.py), the allowance itself is measured there.
Both are cached under build/acbench/ by their inputs.
"""
from __future__ import annotations

import hashlib
import json
import math
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from acbench import leftovers, paths, server, sysinfo

FOOTPRINT_KEYS = ("fieldcount", "fieldlength", "zeropadding", "insertorder", "valuekind")
SAMPLE_RECORDS = 2000


class MeasureError(RuntimeError):
    pass


def _cached(name: str, key: dict[str, Any], compute: Any) -> Any:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    f = paths.cache_dir() / f"{name}-{digest}.json"
    if f.exists():
        return json.loads(f.read_text())["value"]
    value = compute()
    f.write_text(json.dumps({"key": key, "value": value}, indent=1))
    return value


def _binary_id() -> str:
    """The memcached-ac a measurement holds for: its content (SHA-256, sysinfo.binary_sha256), so that
    a cached calibration holds for the same binary built in another checkout or session
    (reproducible.mk; the rerun restores its calibrations on a fresh checkout) and for no other."""
    return sysinfo.binary_sha256()


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def item_footprint(workload_file: str, props: dict[str, Any]) -> int:
    sample = {k: props[k] for k in FOOTPRINT_KEYS if k in props}
    key = {"workload": Path(workload_file).read_text(), "props": sample, "bin": _binary_id()}
    return int(_cached("footprint", key, lambda: _measure_footprint(workload_file, sample)))


def _measure_footprint(workload_file: str, sample: dict[str, Any]) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="acbench-fp-"))
    leftovers.track_dir(tmp, "scratch directory")
    proc = None
    try:
        port = server.free_port()
        cmd = server.server_cmd(512, 1, server.options("none", tmp / "spill", {}), port)
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        leftovers.track_process(proc.pid, Path(cmd[0]).name)
        server.wait_port(port, proc)
        props = {**sample, "recordcount": SAMPLE_RECORDS, "operationcount": 1}
        out = tmp / "load.json"
        r = subprocess.run(server.ycsb_mc_cmd(workload_file, props, port, "load", out),
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise MeasureError(f"measuring the item footprint: ycsb-mc failed: {r.stderr.strip()}")
        slabs = server.stats(port, "slabs")
        items = int(server.stats(port)["curr_items"])
        used = 0
        for k, v in slabs.items():
            if k.endswith(":used_chunks"):
                used += int(v) * int(slabs[k.replace("used_chunks", "chunk_size")])
        if items == 0:
            raise MeasureError("measuring the item footprint: no items were stored")
        return math.ceil(used / items)
    finally:
        _done(proc, tmp)


def base_rss(threads: int) -> int:
    return int(_cached("base-rss", {"threads": threads, "bin": _binary_id()}, lambda: _measure_rss(threads)))


def read_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise MeasureError(f"no VmRSS for process {pid}")


def _measure_rss(threads: int) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="acbench-rss-"))
    leftovers.track_dir(tmp, "scratch directory")
    proc = None
    try:
        cmd = server.server_cmd(64, threads, server.options("lru", tmp / "spill", {}), None)
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        leftovers.track_process(proc.pid, Path(cmd[0]).name)
        last, stable = -1, 0
        deadline = time.monotonic() + 10
        while stable < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
            if proc.poll() is not None:
                raise MeasureError(f"memcached-ac exited with status {proc.returncode} while measuring its RSS")
            rss = read_rss(proc.pid)
            stable = stable + 1 if rss == last else 0
            last = rss
        return last
    finally:
        _done(proc, tmp)


def _done(proc: subprocess.Popen | None, tmp: Path) -> None:
    """Stop the measuring server, delete its directory, drop both from the leftover marker."""
    if proc is not None:
        _stop(proc)
        leftovers.prune_processes()
    shutil.rmtree(tmp, ignore_errors=True)
    if not tmp.exists():
        leftovers.untrack_dir(tmp)
