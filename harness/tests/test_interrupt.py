"""SIGINT to `acbench run`: finished cells kept, no cgroup, no memcached-ac, no spill dir left."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from acbench.cgroup import acg

# runs real cells: one such module at a time under pytest-xdist (conftest.machine_state_lock)
pytestmark = pytest.mark.machine

WORKLOADS = Path(__file__).resolve().parents[2] / "experiments" / "workloads"
SPEC = """
name = "intr"
[fixed]
recordcount = 20000
operationcount = 300000
[grid]
approach = ["memcached", "lru"]
workload = ["readonly"]
zipf_theta = [0.99]
mem_ratio = ["1/4"]
"""


def _alive_memcached(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/exe").resolve().name == "memcached-ac"
    except OSError:
        return False


def test_sigint_cleans_up(tmp_path: Path) -> None:
    (tmp_path / "readonly").write_text((WORKLOADS / "readonly").read_text())
    spec = tmp_path / "intr.toml"
    spec.write_text(SPEC)
    res = tmp_path / "res"
    rd = res / "intr" / "i1"
    # SIGINT at its default in the child: a suite started in the background by a shell without job
    # control inherits it ignored, and Python then installs no handler (the run ran to its end)
    proc = subprocess.Popen([sys.executable, "-m", "acbench", "run", str(spec), "--run-id", "i1",
                             "--results", str(res)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        second = rd / "cells" / "lru_readonly_z0.99_m0.25_r0" / "pids.json"
        deadline = time.monotonic() + 120
        while not second.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert second.exists(), "the second cell never started"
        pids = json.loads(second.read_text())
        while pids.get("server") is None:
            time.sleep(0.05)
            pids = json.loads(second.read_text())
        time.sleep(0.5)
        assert _alive_memcached(pids["server"])
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "interrupted: 1 cells finished in this run, 1 kept in" in out
    assert not _alive_memcached(pids["server"])
    assert not Path(pids["group"]).exists()
    parent = acg().detect().parent
    left = [p.name for p in parent.iterdir() if p.is_dir()] if parent.exists() else []
    assert [n for n in left if n.endswith(f".{proc.pid}")] == []
    assert [p for p in Path("/var/tmp").glob(f"acbench-{proc.pid}-*")] == []
    df = pd.read_csv(rd / "cells.csv")
    assert list(df["cell_id"]) == ["memcached_readonly_z0.99_m0.25_r0"]
    assert not os.path.exists(rd / "cells" / "lru_readonly_z0.99_m0.25_r0" / "row.json")
