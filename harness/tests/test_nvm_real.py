"""A tiny real run of tier nvm (root, cgroups, memcached-ac lru over the NVM region): the region,
allocated by the harness on /dev/shm outside the cell's cgroup, holds four times the cell's limit in
records and the server maps several times its limit, without an OOM kill and without a page of it
charged to the cell; every read is a hit in RAM or in NVM, the emulated latency is exactly the lines
touched times the extra per line, and the region is removed after every cell, also a failed one."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

WORKLOADS = Path(__file__).resolve().parents[2] / "experiments" / "workloads"
SHM = Path("/dev/shm")
# 48k records of 1 KB at M/D 1/8: about 46 MB of records leave RAM for a cell limit near 11 MB
SPEC = """
name = "tinynvm"
[fixed]
recordcount = 48000
operationcount = 8000
warmupoperations = 2000
requestdistribution = "truezipf"
[grid]
approach = ["lru-nvm", "lru-nvm{ac_nvm_slots=3000}"]
workload = ["readonly", "writeheavy"]
zipf_theta = [0.99]
mem_ratio = ["1/8"]
"""


def _regions() -> set[str]:
    return {p.name for p in SHM.glob("acbench-*")}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory):
    d = tmp_path_factory.mktemp("nvm")
    for w in ("readonly", "writeheavy"):
        (d / w).write_text((WORKLOADS / w).read_text())
    (d / "tinynvm.toml").write_text(SPEC)
    before = _regions()
    cp = subprocess.run([sys.executable, "-m", "acbench", "run", str(d / "tinynvm.toml"), "--run-id", "n1",
                         "--results", str(d / "results")], capture_output=True, text=True, timeout=600)
    return d / "results" / "tinynvm" / "n1", cp, before, _regions()


def test_nvm_rows(run) -> None:
    rd, cp, _, _ = run
    assert "2 cells run, 0 skipped, 2 failed" in cp.stdout, cp.stdout + cp.stderr
    df = pd.read_parquet(rd / "cells.parquet").set_index("cell_id")
    for w in ("readonly", "writeheavy"):
        r = df.loc[f"lru-nvm_{w}_z0.99_m0.125_r0"]
        assert r["cg_oom_kills"] == 0
        # four times the cell's limit in records in the region, and the whole region (several times
        # the limit, touched at start by the latency calibration's chase) mapped by the server
        assert r["ac_nvm_live_bytes"] >= 4 * r["cgroup_limit_bytes"]
        assert r["nvm_file_bytes"] == r["ac_nvm_region_bytes"] > 10 * r["cgroup_limit_bytes"]
        assert r["peak_rss_bytes"] > r["cgroup_limit_bytes"]      # resident, yet not charged to the cell
        assert r["hits"] + r["disk_hits"] == r["reads_total"] and r["misses"] == 0
        assert r["ac_lost_items"] == 0 and r["ac_refused_items"] == 0 and r["ac_nvm_full"] == 0
        assert r["ac_stub_items"] == r["ac_nvm_records"] > 0
        assert r["ac_nvm_dram_ns_source"] == "measured"
        # 2x: one more DRAM latency, rounded to whole ns by the server from the unrounded measurement
        # (the stat prints it to 0.1 ns, so 156.5 may have been 156.46 or 156.54)
        assert abs(r["ac_nvm_extra_ns"] - r["ac_nvm_dram_ns"]) <= 0.55
        assert r["ac_nvm_charge"] == "access"
        assert r["ac_nvm_delay_ns"] == r["ac_nvm_extra_ns"] * r["ac_nvm_accesses"]
        assert r["ac_nvm_accesses"] < r["ac_nvm_lines_read"] + r["ac_nvm_lines_written"]
        assert r["ac_nvm_gets"] >= r["disk_hits"] > 0
    # writes bring items back and drop their records: the region's chunks are reused
    assert df.loc["lru-nvm_writeheavy_z0.99_m0.125_r0", "ac_nvm_drops"] > 0


def test_bad_setting_refused_and_regions_removed(run) -> None:
    _, cp, before, after = run
    assert "ac_nvm_slots" in cp.stdout + cp.stderr and "power of two" in cp.stdout + cp.stderr
    assert after == before, f"NVM regions left on /dev/shm: {after - before}"
