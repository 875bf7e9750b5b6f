"""A network cell whose server the cgroup kills (root, cgroups): reported as status oom_killed with the
group's peak and limit, as in-process, not as its client's lost connection. Stock memcached under a
256 KiB allowance: its own RSS outgrows the limit while the load fills -m."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

# runs real cells: one such module at a time under pytest-xdist (conftest.machine_state_lock)
pytestmark = pytest.mark.machine

WORKLOADS = Path(__file__).resolve().parents[2] / "experiments" / "workloads"
SPEC = """
name = "oomnet"
[fixed]
recordcount = 20000
operationcount = 5000
requestdistribution = "truezipf"
[grid]
approach = ["memcached"]
workload = ["readonly"]
zipf_theta = [0.99]
mem_ratio = ["1/2"]
[memory]
provisioning = "own"
allowance = "256K"
allowance_margin = "0"
[run]
mode = "network"
"""


def test_network_cell_killed_by_its_cgroup(tmp_path: Path) -> None:
    (tmp_path / "readonly").write_text((WORKLOADS / "readonly").read_text())
    (tmp_path / "oomnet.toml").write_text(SPEC)
    cp = subprocess.run([sys.executable, "-m", "acbench", "run", str(tmp_path / "oomnet.toml"), "--run-id", "o1",
                         "--results", str(tmp_path / "results")], capture_output=True, text=True, timeout=300)
    assert "0 cells run, 0 skipped, 1 failed" in cp.stdout, cp.stdout + cp.stderr
    assert "oom_killed: the cgroup killed memcached-ac (oom kills 1)" in cp.stdout + cp.stderr
    r = pd.read_parquet(tmp_path / "results" / "oomnet" / "o1" / "cells.parquet").iloc[0]
    assert r["status"] == "oom_killed" and r["cg_oom_kills"] >= 1
    assert 0 < r["cg_peak_bytes"] <= r["cgroup_limit_bytes"]
