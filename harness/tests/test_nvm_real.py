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

# runs real cells: one such module at a time under pytest-xdist (conftest.machine_state_lock)
pytestmark = pytest.mark.machine

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


# the disk-oriented design on an NVM block device: the RAM device limited to 64 bytes per line latency
SPEC_DEVICE = """
name = "tinynvmdev"
[fixed]
recordcount = 20000
operationcount = 4000
warmupoperations = 1000
requestdistribution = "truezipf"
[grid]
approach = ["ospaging-nvmfile", "ospaging-nvmfile{device_latency=8x}", "lru{device_latency=300ns}"]
workload = ["readonly"]
zipf_theta = [0.99]
mem_ratio = ["1/2"]
[run]
spill_device = "ram"
"""


@pytest.fixture(scope="module")
def device_run(tmp_path_factory: pytest.TempPathFactory):
    d = tmp_path_factory.mktemp("nvmdev")
    (d / "readonly").write_text((WORKLOADS / "readonly").read_text())
    (d / "tinynvmdev.toml").write_text(SPEC_DEVICE)
    cp = subprocess.run([sys.executable, "-m", "acbench", "run", str(d / "tinynvmdev.toml"), "--run-id", "d1",
                         "--results", str(d / "results")], capture_output=True, text=True, timeout=600)
    return d / "results" / "tinynvmdev" / "d1", cp


def test_device_latency_limits_the_ram_device_for_the_cell(device_run) -> None:
    rd, cp = device_run
    assert cp.returncode == 0, cp.stdout + cp.stderr
    df = pd.read_parquet(rd / "cells.parquet").set_index("approach")
    plain, slow, lru = (df.loc[a] for a in ("ospaging-nvmfile", "ospaging-nvmfile{device_latency=8x}",
                                            "lru{device_latency=300ns}"))
    for r in (plain, slow, lru):
        assert r["spill_device"] == "ram" and r["status"] == "ok"
        assert r["hits"] + r["disk_hits"] == r["reads_total"] == 4000 and r["misses"] == 0
    # the limit the kernel holds (acg checks it against what it wrote): 64 bytes per 8 DRAM latencies
    assert slow["device_latency"] == "8x" and slow["device_dram_ns"] > 0
    assert slow["io_limit_bps"] == round(64e9 / (8 * slow["device_dram_ns"]))
    assert slow["io_limit_from"] == "load" and pd.isna(slow["io_limit_iops"])
    assert lru["io_limit_bps"] == round(64e9 / 300) and lru["device_latency"] == "300ns"
    # the paging reads went through the limited device in the cell's group
    assert slow["disk_hits"] > 0 and slow["cg_io_read_ios"] >= slow["disk_hits"] * 0.5
    assert pd.isna(plain["io_limit_bps"]) and pd.isna(plain["device_latency"]) and pd.isna(plain["io_limit_device"])
    # the one RAM device of the run, a zram device (its major number as /proc/devices names it)
    zram_major = next(line.split()[0] for line in Path("/proc/devices").read_text().splitlines()
                      if line.split()[1:] == ["zram"])
    assert slow["io_limit_device"] == lru["io_limit_device"] and slow["io_limit_device"].split(":")[0] == zram_major
    assert str(slow["disk_device"]).startswith("zram")


def test_device_latency_refused_off_the_ram_device(tmp_path) -> None:
    (tmp_path / "readonly").write_text((WORKLOADS / "readonly").read_text())
    (tmp_path / "s.toml").write_text(SPEC_DEVICE.replace('spill_device = "ram"', 'spill_device = "disk"'))
    cp = subprocess.run([sys.executable, "-m", "acbench", "run", str(tmp_path / "s.toml"), "--dry-run"],
                        capture_output=True, text=True, timeout=120)
    assert cp.returncode != 0
    assert ("ospaging-nvmfile{device_latency=8x}: device_latency limits the RAM device, which stands for an NVM "
            "block device; accepted with [run] spill_device = \"ram\" only") in cp.stdout + cp.stderr
