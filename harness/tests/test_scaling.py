"""Threads as a grid axis (acbench/scaling.py, [run] server_threads = "threads"): the table's medians
and ratios on made-up rows, and a real grid of 1 and 2 driver threads whose rows carry the thread
counts, whose servers ran with as many workers, and whose scaling figure and table are written."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from acbench.scaling import plot_scaling, scaling_table

# runs real cells: one such module at a time under pytest-xdist (conftest.machine_state_lock)
pytestmark = pytest.mark.machine

WORKLOADS = Path(__file__).resolve().parents[2] / "experiments" / "workloads"


def rows(values: dict[tuple[str, int], list[float]]) -> pd.DataFrame:
    out = []
    for (approach, threads), tps in values.items():
        for r, tp in enumerate(tps):
            out.append({"approach": approach, "workload": "readonly", "mem_ratio": 0.5, "zipf_theta": 0.99,
                        "p_threads": threads, "repetition": r, "status": "ok", "throughput_ops_s": tp})
    return pd.DataFrame(out)


def test_table_medians_per_thread_and_ratio_to_memcached(tmp_path: Path) -> None:
    df = rows({("memcached", 1): [100.0, 120.0, 110.0], ("memcached", 2): [200.0, 180.0, 220.0],
               ("lru", 1): [99.0, 88.0, 77.0], ("lru", 2): [100.0, 90.0, 95.0]})
    df.loc[len(df)] = {**df.iloc[0].to_dict(), "status": "oom_killed", "throughput_ops_s": 1.0}
    t = scaling_table(df).set_index(["approach", "threads"])
    assert t.loc[("memcached", 2), "runs"] == 3 and t.loc[("memcached", 1), "runs"] == 3   # failed row left out
    assert t.loc[("memcached", 2), "throughput_ops_s"] == 200.0
    assert t.loc[("memcached", 2), "per_thread_ops_s"] == 100.0
    assert t.loc[("lru", 1), "ratio_to_reference"] == pytest.approx(88.0 / 110.0)
    assert t.loc[("lru", 2), "ratio_to_reference"] == pytest.approx(95.0 / 200.0)
    assert t.loc[("lru", 2), "per_thread_ops_s"] == 47.5
    paths = plot_scaling(df, tmp_path)
    assert [p.name for p in paths] == ["scaling-readonly.png", "scaling-readonly.pdf", "scaling-readonly.md"]
    md = (tmp_path / "scaling-readonly.md").read_text()
    assert "| 0.5 | lru | 2 | 3 | 95 | 48 | 0.47 |" in md and "/ memcached" in md


def test_one_thread_count_is_no_scaling_grid(tmp_path: Path) -> None:
    df = rows({("memcached", 1): [100.0], ("lru", 1): [90.0]})
    assert scaling_table(df).empty and plot_scaling(df, tmp_path) == []
    assert scaling_table(df.drop(columns=["p_threads"])).empty


def test_without_memcached_no_ratio(tmp_path: Path) -> None:
    t = scaling_table(rows({("lru", 1): [90.0], ("lru", 2): [150.0]}))
    assert t["ratio_to_reference"].isna().all() and list(t["threads"]) == [1, 2]


SPEC = """
name = "threads"
[fixed]
recordcount = 20000
operationcount = 40000
warmupoperations = 20000
requestdistribution = "truezipf"
[grid]
approach = ["memcached", "lru"]
workload = ["readonly"]
zipf_theta = [0.99]
mem_ratio = ["5/4"]
threads = [1, 2]
[run]
perf = false
"""


def test_a_grid_of_thread_counts_runs_and_plots(tmp_path: Path) -> None:
    (tmp_path / "readonly").write_text((WORKLOADS / "readonly").read_text())
    spec = tmp_path / "threads.toml"
    spec.write_text(SPEC)
    res = tmp_path / "results"
    cp = subprocess.run([sys.executable, "-m", "acbench", "run", str(spec), "--run-id", "t", "--results", str(res)],
                        capture_output=True, text=True, timeout=600)
    assert cp.returncode == 0, cp.stderr + cp.stdout
    rd = res / "threads" / "t"
    df = pd.read_parquet(rd / "cells.parquet")
    assert len(df) == 4 and (df["status"] == "ok").all()
    assert sorted(df["p_threads"]) == [1, 1, 2, 2]
    assert (df["server_threads"] == df["p_threads"]).all()     # memcached's workers follow the driver
    for r in df.itertuples():
        assert r.operations == 40000 and r.reads_total == 40000 and r.throughput_ops_s > 0
        assert r.hits == 40000                                   # in RAM: every read a hit
        cmd = (rd / "cells" / r.cell_id / "command.txt").read_text().split()
        assert cmd[cmd.index("-t") + 1] == str(r.p_threads), cmd
    cp = subprocess.run([sys.executable, "-m", "acbench", "plot", str(rd)], capture_output=True, text=True, timeout=300)
    assert cp.returncode == 0, cp.stderr
    md = (rd / "figures" / "scaling-readonly.md").read_text()
    assert "| 1.25 | memcached | 1 | 1 |" in md and "| 1.25 | lru | 2 | 1 |" in md
