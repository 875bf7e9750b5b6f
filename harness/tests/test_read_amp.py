"""read_amplification (acbench/cell.py): device bytes read in the run window per byte the core
asked the tier for in it; the run window's spill-read latency quantiles; and the runner's refusal of an in-process-only approach in network
mode, before any cell starts."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from acbench.cell import read_amplification

# runs real cells: one such module at a time under pytest-xdist (conftest.machine_state_lock)
pytestmark = pytest.mark.machine

WORKLOADS = Path(__file__).resolve().parents[2] / "experiments" / "workloads"


def test_read_amplification() -> None:
    end = {"record_read_bytes": 5000, "block_read_bytes": 3000}
    start = {"record_read_bytes": 1000, "block_read_bytes": 0}
    assert read_amplification(14000, end, start) == 2.0          # 14000 / (4000 + 3000)
    assert read_amplification(14000, end, {}) == 14000 / 8000    # no start snapshot: from 0
    assert read_amplification(None, end, start) is None          # device not measured
    assert read_amplification(100, {"record_read_bytes": 1000}, start) is None   # stat missing
    assert read_amplification(100, start, start) is None         # nothing asked in the window


def test_network_mode_refuses_vma(tmp_path: Path) -> None:
    (tmp_path / "readonly").write_text((WORKLOADS / "readonly").read_text())
    spec = tmp_path / "v.toml"
    spec.write_text('name = "v"\n[fixed]\nrecordcount = 1000\noperationcount = 1000\n'
                    '[grid]\napproach = ["lru", "vma"]\nworkload = ["readonly"]\nzipf_theta = [0.9]\n'
                    'mem_ratio = ["1/2"]\n')
    cp = subprocess.run([sys.executable, "-m", "acbench", "run", str(spec), "--mode", "network",
                         "--results", str(tmp_path / "res")], capture_output=True, text=True, timeout=120)
    assert cp.returncode != 0
    assert ("approach(es) vma run only in-process (policy vma protects the slab memory and a socket "
            "touching a protected page gets EFAULT)") in cp.stderr
    assert not list((tmp_path / "res").glob("v/*/cells/*")), "a cell started"


def test_spill_read_latency_of_the_run_window() -> None:
    """The run's reads are the histogram at its end less at its start; quantiles by nearest rank
    (ceil(q n), as the driver's lat_* columns) over the buckets' lower bounds."""
    from acbench.cell import spill_read_latency
    start = {"io_read_ns_hist_61440": 500, "io_read_ns_hist_999999": 0, "io_reads": 500}
    # the run: 97 reads in the 57344 bucket, 2 in 61440's, 1 of 8 ms (the warm-up's 500 at 61440 subtracted)
    end = {"io_read_ns_hist_57344": 97, "io_read_ns_hist_61440": 502, "io_read_ns_hist_8388608": 1,
           "io_read_ns_p50": 61440, "io_reads": 600}
    got = spill_read_latency(end, start)
    assert got == {"spill_reads": 100, "spill_read_us_p50": 57.344, "spill_read_us_p99": 61.44}
    end["io_read_ns_hist_8388608"] = 3                      # 102 reads: the 99th of them is now 8 ms
    assert spill_read_latency(end, start)["spill_read_us_p99"] == 8388.608
    # ten reads, one slow: the 99th percentile by nearest rank is the 10th, the slow one
    ten = {"io_read_ns_hist_57344": 9, "io_read_ns_hist_8388608": 1}
    assert spill_read_latency(ten, {}) == {"spill_reads": 10, "spill_read_us_p50": 57.344,
                                           "spill_read_us_p99": 8388.608}
    assert spill_read_latency(start, start) == {"spill_reads": 0, "spill_read_us_p50": None,
                                                "spill_read_us_p99": None}
    assert spill_read_latency(end, None) == {"spill_reads": None, "spill_read_us_p50": None,
                                             "spill_read_us_p99": None}
