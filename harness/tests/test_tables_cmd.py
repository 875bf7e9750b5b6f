"""`acbench tables RUN`: Tables II and III printed and written from a run's rows; a clear error for
a run without the columns or without cells."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd

NAN = float("nan")
BASE = {"workload": "readonly", "zipf_theta": 0.99, "mem_ratio": 0.5, "item_footprint": 1184,
        "p_recordcount": 2000, "status": "ok"}
ROWS = [
    {**BASE, "approach": "lru", "ac_policy": "lru", "ac_tier": "blocks", "ac_metadata_bytes": 16 * 1000 + 21000 + 65536,
     "ac_resident_items": 1000, "ac_stub_items": 1000, "ac_evicted_table_bytes": 21000, "ac_block_size": 65536,
     "ac_bloom_bytes": NAN, "ac_log_ring_bytes": NAN},
    {**BASE, "approach": "vma", "ac_policy": "vma", "ac_tier": "blocks", "ac_metadata_bytes": 4 * 800 + 20000 + 65536,
     "ac_resident_items": 800, "ac_stub_items": 1000, "ac_evicted_table_bytes": 20000, "ac_block_size": 65536,
     "ac_bloom_bytes": NAN, "ac_log_ring_bytes": NAN, "ac_vma_granule_bytes": 4096},
]


def acbench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "acbench", *args], capture_output=True, text=True, timeout=120)


def test_tables_printed_and_written(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    pd.DataFrame(ROWS).to_csv(run / "cells.csv", index=False)
    cp = acbench("tables", str(run), "--out", str(tmp_path / "t"))
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout.startswith("Table II: access tracking (bytes per resident item; Eq. (1) in %)\n")
    t2 = pd.read_csv(tmp_path / "t" / "table2.csv").set_index("approach")
    assert t2.loc["lru", "tracking_per_item"] == 16.0 and t2.loc["vma", "tracking_per_item"] == 4.0
    assert t2.loc["vma", "paper_tracking"] == "VMA Protection"
    assert abs(t2.loc["vma", "paper_tracking_pct"] - 100 * 176 / (176 + 4096)) < 1e-9
    t3 = pd.read_csv(tmp_path / "t" / "table3.csv").set_index("approach")
    assert t3.loc["lru", "bookkeeping_per_spilled"] == 21.0 and t3.loc["lru", "block_buffer_bytes"] == 65536
    assert len(pd.read_csv(tmp_path / "t" / "overhead-cells.csv")) == 2


def test_tables_errors(tmp_path: Path) -> None:
    cp = acbench("tables", str(tmp_path / "missing"))
    assert cp.returncode == 2 and "acbench tables: error: " in cp.stderr and "no such file or directory" in cp.stderr
    pd.DataFrame(ROWS).drop(columns=["ac_bloom_bytes"]).to_csv(tmp_path / "old.csv", index=False)
    cp = acbench("tables", str(tmp_path / "old.csv"))
    assert cp.returncode == 2
    assert "results lack column(s) ac_bloom_bytes needed for Tables II and III" in cp.stderr
