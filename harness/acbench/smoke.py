"""`make paper-smoke`: run a spec (experiments/paper-smoke.toml) while watching every cell's cgroup,
then print one line per cell: status, peak non-reclaimable and total usage against the limit, wall time.

    python3 -m acbench.smoke SPEC [--results DIR] [--run-id ID]

The watcher thread samples each cell's group (named as cell.py names it: acbench-<sha1(cell id)[:10]>.<our
pid>) every 50 ms: non-reclaimable = memory.stat rss + shmem + memory.kmem.usage_in_bytes (what an OOM
kill is about), total = memory.max_usage_in_bytes (page cache included, the kernel's own maximum).
The run directory is emptied first; the summary also goes to <run dir>/smoke.txt, the watcher's peaks to
smoke-peaks.json. Exit status 0 only if every cell finished (no OOM kill, no error).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from acbench import paths
from acbench.approaches import get_approach
from acbench.calibrate import group_now, group_peaks
from acbench.cgroup import acg
from acbench.memory import MIB
from acbench.results import RunDir
from acbench.spec import load_spec

WATCH_S = 0.05


def group_name(cell_id: str) -> str:
    """The cgroup name cell.run_cell gives a cell (acg appends .<owner pid>)."""
    return "acbench-" + hashlib.sha1(cell_id.encode()).hexdigest()[:10]


class Watcher(threading.Thread):
    """Samples the groups of the given cells while they exist; keeps per-cell peaks."""

    def __init__(self, cell_ids: list[str], owner_pid: int | None = None) -> None:
        super().__init__(daemon=True)
        backend = acg().detect()
        self.version = backend.version
        pid = owner_pid or os.getpid()
        self.paths = {cid: backend.group_path(f"{group_name(cid)}.{pid}") for cid in cell_ids}
        self.peaks: dict[str, dict[str, Any]] = {}
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            for cid, g in self.paths.items():
                if g.exists():
                    self._sample(cid, g)
            self._halt.wait(WATCH_S)

    def _sample(self, cid: str, g: Path) -> None:
        try:
            now = group_now(g, self.version)
            peaks = group_peaks(g, self.version)
        except (OSError, KeyError, ValueError):
            return           # the group went away between exists() and the reads
        nonrecl = now["rss"] + now["shmem"] + now["kmem"]
        pk = self.peaks.setdefault(cid, {"nonreclaimable": 0, "usage_max": 0, "kmem_max": 0, "swap_max": 0,
                                         "oom_kills": 0, "samples": 0, "at_peak": {}})
        pk["samples"] += 1
        pk["usage_max"] = max(pk["usage_max"], peaks["usage_max"] or now["rss"] + now["cache"] + now["kmem"])
        pk["kmem_max"] = max(pk["kmem_max"], peaks["kmem_max"] or now["kmem"])
        pk["swap_max"] = max(pk["swap_max"], now["swap"])
        pk["oom_kills"] = max(pk["oom_kills"], peaks["oom_kills"] or 0)
        if nonrecl > pk["nonreclaimable"]:
            pk["nonreclaimable"] = nonrecl
            pk["at_peak"] = dict(now)

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=5)


def _mib(v: Any) -> str:
    try:
        return f"{float(v) / MIB:.1f}"
    except (TypeError, ValueError):
        return "-"


def summary(spec_name: str, cell_ids: list[str], approaches: dict[str, str], rd: RunDir,
            peaks: dict[str, dict[str, Any]]) -> tuple[list[str], bool]:
    df = rd.read()
    rows = {r["cell_id"]: r for r in df.to_dict("records")} if "cell_id" in df.columns else {}
    head = (f"{'approach':16s} {'status':10s} {'peak non-recl':>13s} {'peak total':>10s} {'limit':>8s}"
            f" {'allowance':>9s} {'overhead':>8s} {'headroom':>8s} {'swap':>7s} {'wall s':>7s} {'hit rate':>8s}"
            "  allowance source")
    lines = [f"{spec_name}: peaks and limits in MiB (non-reclaimable = rss + shmem + kernel memory, sampled every"
             f" {WATCH_S * 1000:.0f} ms; total = the group's max_usage_in_bytes, page cache included; headroom ="
             " limit − peak non-reclaimable; with swap (ospaging, effpaging) the anonymous pages fill the"
             " limit and are swapped, so their headroom is ~0 by design; overhead = peak non-reclaimable − item"
             " budget, for ospaging-file the whole of it: its items are page cache)", head]
    ok = True
    for cid in cell_ids:
        r = rows.get(cid, {})
        pk = peaks.get(cid, {})
        status = r.get("status") or ("ok" if r else None)
        err = rd.cell_dir(cid) / "error.txt"
        if err.exists() and status == "ok":
            status, r = None, {}      # failed in this run (e.g. in its clean-up): no row of its own
        if not r or status != "ok":
            ok = False
            if status is None:
                text = err.read_text().strip().splitlines() if err.exists() else ["not run"]
                status = "oom_killed" if any("oom_kill" in t.lower() for t in text) else "failed"
        limit = r.get("cgroup_limit_bytes")
        nonrecl = pk.get("nonreclaimable")
        headroom = (float(limit) - nonrecl) / MIB if limit and nonrecl else None
        hit = r.get("hit_rate")
        wall = r.get("cell_wall_s")
        a = get_approach(approaches[cid])
        over = None
        if nonrecl and not a.swap:
            over = nonrecl - (0 if a.pages else float(r.get("item_budget_bytes") or 0))
        lines.append(f"{approaches[cid]:16s} {status:10s} {_mib(nonrecl):>13s} {_mib(pk.get('usage_max')):>10s}"
                     f" {_mib(limit):>8s} {_mib(r.get('allowance_bytes')):>9s} {_mib(over):>8s}"
                     f" {'-' if headroom is None else f'{headroom:.1f}':>8s} {_mib(pk.get('swap_max')):>7s}"
                     f" {'-' if wall is None else f'{float(wall):.0f}':>7s}"
                     f" {'-' if hit is None or hit != hit else f'{float(hit):.4f}':>8s}  {r.get('allowance_source', '')}")
    return lines, ok


def main(argv: list[str] | None = None) -> int:
    from acbench.runner import run_spec
    ap = argparse.ArgumentParser(prog="python3 -m acbench.smoke", description=__doc__.splitlines()[0])
    ap.add_argument("spec", type=Path)
    ap.add_argument("--results", type=Path, default=None)
    ap.add_argument("--run-id", default="smoke")
    a = ap.parse_args(argv)
    spec = load_spec(a.spec)
    cells = spec.cells()
    ids = [c.cell_id for c in cells]
    results = a.results or paths.default_results()
    rd = RunDir(results / spec.name / a.run_id)
    if rd.path.exists():
        shutil.rmtree(rd.path)     # a fresh run: no row of an earlier one may stand in for a failed cell
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 200)
    watcher = Watcher(ids)
    watcher.start()
    t0 = time.monotonic()
    try:
        run_spec(a.spec, results, a.run_id, True, False, None, console)
    finally:
        watcher.stop()
    lines, ok = summary(spec.name, ids, {c.cell_id: c.approach for c in cells}, rd, watcher.peaks)
    lines.append(f"total {time.monotonic() - t0:.0f} s; {'every cell finished' if ok else 'NOT every cell finished'}")
    text = "\n".join(lines)
    print(text)
    rd.path.mkdir(parents=True, exist_ok=True)
    (rd.path / "smoke.txt").write_text(text + "\n")
    (rd.path / "smoke-peaks.json").write_text(json.dumps(watcher.peaks, indent=1, sort_keys=True) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
