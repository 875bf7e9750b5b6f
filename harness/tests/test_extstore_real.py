"""A tiny real run of approach extstore (root, cgroups, network mode): memcached's own extstore beside
stock memcached under the same cgroup limit. Its allowance is calibrated with the server alone in the
probe's group and ycsb-mc outside it; every read is a hit in RAM, a hit in its file or a miss the
client refills; the items it dropped are in lost_items (its three ways apart); its file is twice the
data, in the cell's spill directory, and gone after the cell. In-process mode refuses it before any
cell starts, saying why."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from acbench import extstore, server
from types import SimpleNamespace

# runs real cells: one such module at a time under pytest-xdist (conftest.machine_state_lock)
pytestmark = pytest.mark.machine

WORKLOADS = Path(__file__).resolve().parents[2] / "experiments" / "workloads"
# 60k records of 1 KB at M/D 1/2: extstore's own buffers (~11 MiB beside its items) leave it room
SPEC = """
name = "tinyext"
[fixed]
recordcount = 60000
operationcount = 20000
warmupoperations = 10000
requestdistribution = "truezipf"
[grid]
approach = ["extstore", "memcached"]
workload = ["readonly"]
zipf_theta = [0.99]
mem_ratio = ["1/2"]
[run]
mode = "network"
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory):
    d = tmp_path_factory.mktemp("ext")
    (d / "readonly").write_text((WORKLOADS / "readonly").read_text())
    (d / "tinyext.toml").write_text(SPEC)
    cp = subprocess.run([sys.executable, "-m", "acbench", "run", str(d / "tinyext.toml"), "--run-id", "e1",
                         "--results", str(d / "results")], capture_output=True, text=True, timeout=900)
    return d, cp


def test_extstore_rows(run) -> None:
    d, cp = run
    assert "2 cells run, 0 skipped, 0 failed" in cp.stdout, cp.stdout + cp.stderr
    df = pd.read_parquet(d / "results" / "tinyext" / "e1" / "cells.parquet").set_index("cell_id")
    e, m = df.loc["extstore_readonly_z0.99_m0.5_r0"], df.loc["memcached_readonly_z0.99_m0.5_r0"]
    assert e["mode"] == "network" and e["cg_oom_kills"] == 0
    assert e["cgroup_limit_bytes"] == m["cgroup_limit_bytes"]                # provisioning equal
    assert e["item_memory_bytes"] < m["item_memory_bytes"]                  # its buffers beside the items
    assert e["hits"] + e["disk_hits"] + e["misses"] == e["reads_total"] == 20000
    assert e["disk_hits"] > 0 and e["ac_ext_reads"] >= e["disk_hits"]
    assert e["misses"] == e["refills"] and e["refill_errors"] == 0         # look-aside: a miss is stored again
    assert e["ac_lost_items"] == e["ac_ext_lost_ram"] + e["ac_ext_lost_disk"] + e["ac_ext_lost_compact"] > 0
    assert e["ext_file_bytes"] == extstore.sizes(int(e["data_bytes"]))[0] << 20
    assert e["ext_file_bytes"] >= 2 * e["data_bytes"] and e["ac_ext_pages"] >= extstore.MIN_PAGES
    assert pd.isna(m["ac_ext_reads"]) and pd.isna(m["ext_file_bytes"])      # stock memcached: no extstore
    assert m["disk_hits"] == 0 and m["ac_lost_items"] > 0
    assert not list(Path("/var/tmp").glob("acbench-*/extstore"))            # its file went with the cell


def test_in_process_refused(run) -> None:
    d, _ = run
    cp = subprocess.run([sys.executable, "-m", "acbench", "run", str(d / "tinyext.toml"), "--run-id", "e2",
                         "--results", str(d / "results"), "--mode", "in-process"],
                        capture_output=True, text=True, timeout=120)
    assert cp.returncode != 0
    assert "approach(es) extstore run only in network mode" in cp.stdout + cp.stderr, cp.stdout + cp.stderr
    assert not (d / "results" / "tinyext" / "e2" / "cells.parquet").exists()


def test_sizes() -> None:
    mib = 1 << 20
    assert extstore.sizes(110 * mib) == (228, 12)          # 100k records: 19 pages of 12 MiB
    assert extstore.sizes(1100 * mib) == (2240, 64)        # 1M records: 35 pages of extstore's 64 MiB
    assert extstore.sizes(mib) == (64, 4)                  # never fewer than 16 pages, nor below 4 MiB
    for d in (mib, 37 * mib, 110 * mib, 333 * mib, 1100 * mib, 7000 * mib):
        file_mb, page_mb = extstore.sizes(d)
        # what extstore accepts: whole pages that its 4 MiB write buffer divides; twice the data
        assert page_mb % extstore.WBUF_MB == 0 and file_mb % page_mb == 0 and file_mb // page_mb >= 16
        assert file_mb * mib >= 2 * d


@pytest.mark.parametrize("data_mb", [37, 110, 1100])
def test_server_takes_the_settings(tmp_path: Path, data_mb: int) -> None:
    """memcached-ac starts with the settings extstore.options gives (it refuses a page size its write
    buffer does not divide: the 13 MiB pages of an earlier rule failed every 100k-record cell)."""
    opts = extstore.options(SimpleNamespace(extstore=True), tmp_path, data_mb << 20)
    port = server.free_port()
    cmd = server.server_cmd(64, 1, server.options("none", tmp_path / "spill", opts), port)
    with open(tmp_path / "err", "w") as err:
        p = subprocess.Popen(cmd, stdout=err, stderr=err, stdin=subprocess.DEVNULL)
    try:
        server.wait_port(port, p)
        st = server.stats(port, "anticache")
        assert int(st["ext_pages"]) == extstore.sizes(data_mb << 20)[0] // extstore.sizes(data_mb << 20)[1]
    except server.ServerError:
        raise AssertionError((tmp_path / "err").read_text()) from None
    finally:
        p.terminate()
        p.wait(20)
