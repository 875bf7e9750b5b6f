"""What else ran on the machine during a cell (collect.load_beside; rows: machine_busy_cpu_s,
other_cpu_s, other_cpu_share, loadavg_start/end): the arithmetic on made-up counters, and a real
cell with a process spinning beside it, whose row says a core's worth of other work."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from acbench import collect

# runs real cells: one such module at a time under pytest-xdist (conftest.machine_state_lock)
pytestmark = pytest.mark.machine

WORKLOADS = Path(__file__).resolve().parents[2] / "experiments" / "workloads"


def test_machine_busy_counts_all_but_idle_and_iowait() -> None:
    text = "cpu  100 20 30 1000 50 5 5 10 7 0\ncpu0 50 10 15 500 25 2 3 5 0 0\n"
    # user nice system irq softirq steal = 100 + 20 + 30 + 5 + 5 + 10 ticks; guest (7) is inside user
    assert collect.machine_busy_s(text) == pytest.approx(170 / collect.CLK_TCK)


def test_other_work_is_the_machine_minus_the_cell() -> None:
    r = collect.load_beside(busy0=100.0, own0=10.0, busy1=112.0, own1=14.0, wall_s=8.0, cores=2)
    assert r == {"machine_busy_cpu_s": 12.0, "other_cpu_s": 8.0, "other_cpu_share": 0.5}
    # the cell alone (its own CPU may run a tick ahead of the machine's): never below 0
    assert collect.load_beside(100.0, 10.0, 104.0, 14.5, 8.0, 2)["other_cpu_s"] == 0.0
    assert collect.load_beside(100.0, 10.0, 104.0, 14.0, 0.0, 2)["other_cpu_share"] is None


SPEC = """
name = "beside"
[fixed]
recordcount = 20000
operationcount = 600000
warmupoperations = 20000
requestdistribution = "truezipf"
[grid]
approach = ["memcached"]
workload = ["readonly"]
zipf_theta = [0.99]
mem_ratio = ["5/4"]
[run]
perf = false
"""


def test_a_cell_beside_a_spinning_process_says_so(tmp_path: Path) -> None:
    (tmp_path / "readonly").write_text((WORKLOADS / "readonly").read_text())
    spec = tmp_path / "beside.toml"
    spec.write_text(SPEC)
    spin = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        cp = subprocess.run([sys.executable, "-m", "acbench", "run", str(spec), "--run-id", "b", "--results",
                             str(tmp_path / "res")], capture_output=True, text=True, timeout=600)
    finally:
        spin.kill()
        spin.wait()
    assert cp.returncode == 0, cp.stderr + cp.stdout
    r = pd.read_parquet(tmp_path / "res" / "beside" / "b" / "cells.parquet").iloc[0]
    cores = os.cpu_count() or 1
    # the spinner had a core for the whole cell: about 1 / cores of the machine, some of it lost to
    # the cell's own threads on a small machine
    assert r["other_cpu_s"] >= 0.6 * r["cell_wall_s"], r[["other_cpu_s", "cell_wall_s", "machine_busy_cpu_s"]]
    assert 0.6 / cores <= r["other_cpu_share"] <= 1.0
    assert r["machine_busy_cpu_s"] >= r["other_cpu_s"] and r["loadavg_end"] >= 0
