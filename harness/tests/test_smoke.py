"""`make paper-smoke`'s summary (acbench/smoke.py) on synthetic results: no server, no cgroup."""
from __future__ import annotations

import hashlib
import inspect

from acbench import cell, smoke
from acbench.memory import MIB
from acbench.results import RunDir


def test_group_name_is_the_cells() -> None:
    assert smoke.group_name("lru_readonly_z0.99_m0.5_r0") == \
        "acbench-" + hashlib.sha1(b"lru_readonly_z0.99_m0.5_r0").hexdigest()[:10]
    # the watcher finds a cell's group only if cell.py names it the same way
    assert 'gname = "acbench-" + hashlib.sha1(cell.cell_id.encode()).hexdigest()[:10]' in inspect.getsource(cell)


def test_summary_lines(tmp_path) -> None:
    rd = RunDir(tmp_path / "run")
    rd.append({"cell_id": "lru_x", "status": "ok", "approach": "lru", "cgroup_limit_bytes": 600 * MIB,
               "item_budget_bytes": 565 * MIB, "allowance_bytes": 35 * MIB, "cell_wall_s": 26.6, "hit_rate": 0.8933,
               "allowance_source": "calibrated:n=25k"})
    rd.cell_dir("logging_x").mkdir(parents=True)
    (rd.cell_dir("logging_x") / "error.txt").write_text("oom_killed: the cgroup killed memcached-ac\n")
    peaks = {"lru_x": {"nonreclaimable": 580 * MIB, "usage_max": 600 * MIB, "swap_max": 0}}
    lines, ok = smoke.summary("s", ["lru_x", "logging_x"], {"lru_x": "lru", "logging_x": "logging"}, rd, peaks)
    assert not ok
    lru = lines[2].split()
    # approach status non-recl total limit allowance overhead headroom swap wall hit source
    assert lru[:11] == ["lru", "ok", "580.0", "600.0", "600.0", "35.0", "15.0", "20.0", "0.0", "27", "0.8933"]
    assert lines[3].split()[:2] == ["logging", "oom_killed"]
    # a row that stands although the cell failed in this run (an error after the run) is not "ok"
    (rd.cell_dir("lru_x")).mkdir(parents=True)
    (rd.cell_dir("lru_x") / "error.txt").write_text("swapoff failed\n")
    lines, ok = smoke.summary("s", ["lru_x"], {"lru_x": "lru"}, rd, peaks)
    assert not ok and lines[2].split()[:3] == ["lru", "failed", "580.0"]
