"""A tiny real run of tier remote (root, cgroups, memcached-ac lru whose spilled records live in two
other servers' memory): the harness starts the two servers outside the cell's cgroup and stops them
after the cell; every read is a hit in RAM or a record fetched from a remote server, each record is
stored on both, nothing is lost, and no remote server is left running."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

# runs real cells: one such module at a time under pytest-xdist (conftest.machine_state_lock)
pytestmark = pytest.mark.machine

WORKLOADS = Path(__file__).resolve().parents[2] / "experiments" / "workloads"
SPEC = """
name = "tinyremote"
[fixed]
recordcount = 20000
operationcount = 8000
warmupoperations = 2000
requestdistribution = "truezipf"
[grid]
approach = ["lru-remote", "lru"]
workload = ["readonly", "writeheavy"]
zipf_theta = [0.99]
mem_ratio = ["1/4"]
"""


def _remote_servers(under: Path) -> set[int]:
    """PIDs of memcached-ac processes started as tier remote's servers (-M -I 2m) whose output goes
    to a file under `under` (the harness writes each one's to its cell's directory): ours, not
    another run's."""
    out = set()
    for p in Path("/proc").glob("[0-9]*"):
        try:
            args = (p / "cmdline").read_bytes().split(b"\0")
            log = os.readlink(p / "fd" / "1")
        except OSError:
            continue
        if args and args[0].endswith(b"memcached-ac") and b"-M" in args and b"2m" in args and log.startswith(str(under)):
            out.add(int(p.name))
    return out


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory):
    d = tmp_path_factory.mktemp("remote")
    for w in ("readonly", "writeheavy"):
        (d / w).write_text((WORKLOADS / w).read_text())
    (d / "tinyremote.toml").write_text(SPEC)
    cp = subprocess.run([sys.executable, "-m", "acbench", "run", str(d / "tinyremote.toml"), "--run-id", "r1",
                         "--results", str(d / "results")], capture_output=True, text=True, timeout=600)
    return d / "results" / "tinyremote" / "r1", cp, _remote_servers(d)


def test_remote_rows(run) -> None:
    rd, cp, left = run
    assert cp.returncode == 0 and "4 cells run, 0 skipped, 0 failed" in cp.stdout, cp.stdout + cp.stderr
    df = pd.read_parquet(rd / "cells.parquet").set_index("cell_id")
    for w in ("readonly", "writeheavy"):
        r = df.loc[f"lru-remote_{w}_z0.99_m0.25_r0"]
        lru = df.loc[f"lru_{w}_z0.99_m0.25_r0"]
        assert r["cg_oom_kills"] == 0 and r["ac_lost_items"] == 0 and r["ac_refused_items"] == 0
        assert r["hits"] + r["disk_hits"] == r["reads_total"] and r["misses"] == 0 and r["disk_hits"] > 0
        assert r["ac_remote_servers"] == 2 and r["ac_remote_copies"] == 2
        assert r["ac_remote_sets"] == 2 * r["ac_spilled_items"]
        assert r["ac_remote_gets"] >= r["disk_hits"]
        assert r["ac_remote_failures"] == 0 and r["ac_remote_unreadable"] == 0
        assert r["remote_server_bytes"] > 0
        # the same policy over the same requests: the evicted table is the same book-keeping as
        # blocks', so the hit rates are within a fraction of a point
        assert abs(r["hits"] - lru["hits"]) <= 0.01 * r["reads_total"]
    assert not left, f"remote servers left running: {left}"
