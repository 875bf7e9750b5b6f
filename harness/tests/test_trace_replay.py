"""Replayed traces in the harness: `acbench make-trace`, the driver's trace formats as OPT reads
them (traceio.read_replay), a spec's [fixed] trace (its errors, and one cell end to end whose
hits are exact LRU's at the server's measured resident capacity)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from typer.testing import CliRunner

from acbench import cellopt, maketrace, opt, traceio
from acbench.cli import app
from acbench.spec import SpecError, load_spec


def test_make_trace_is_deterministic_with_a_one_hit_tail_and_fixed_sizes_per_object(tmp_path: Path) -> None:
    p = maketrace.TraceParams(requests=20000, objects=1000, theta=0.9, one_hit=0.25, size=100, size_max=5000, seed=4)
    a, b = tmp_path / "a.og", tmp_path / "b.og"
    s = maketrace.write(a, p)
    maketrace.write(b, p)
    assert a.read_bytes() == b.read_bytes()
    recs = traceio.read_oracle(a)
    assert len(recs) == 20000 and (recs["next"] == traceio.next_access(recs["key"])).all()
    wonders = recs["key"] >= 1000
    assert abs(wonders.mean() - 0.25) < 0.02                     # the one-hit share asked for
    assert len(np.unique(recs["key"][wonders])) == wonders.sum()   # each asked for once
    assert s["one_hit_objects"] >= wonders.sum()
    sizes: dict[int, int] = {}
    for k, z in zip(recs["key"].tolist(), recs["size"].tolist()):
        assert sizes.setdefault(k, z) == z                          # one size per object
    assert 100 <= recs["size"].min() < 200 and 4000 < recs["size"].max() <= 5000
    # the CSV form names the same requests
    c = tmp_path / "a.csv"
    maketrace.write(c, p)
    same = traceio.read_replay(c)
    assert (same["key"] == recs["key"]).all() and (same["size"] == recs["size"]).all()
    with pytest.raises(maketrace.TraceSpecError, match="one_hit 1.0: accepted a fraction in"):
        maketrace.write(tmp_path / "x.og", maketrace.TraceParams(10, 10, one_hit=1.0))
    bad = CliRunner().invoke(app, ["make-trace", str(tmp_path / "x.og"), "-n", "0", "-k", "1"])
    assert bad.exit_code == 2 and "requests 0 and objects 1: accepted whole numbers >= 1" in bad.output


def test_read_replay_follows_the_drivers_rules(tmp_path: Path) -> None:
    f = tmp_path / "t.csv"
    f.write_text("time,key,size,op\n0,17,10,get\n1,alpha,20,SET\n2,17,10\n")
    r = traceio.read_replay(f)
    assert r["key"].tolist() == [17, traceio.replay_key_id("alpha"), 17]
    assert r["op"].tolist() == [traceio.OPS["read"], traceio.OPS["update"], traceio.OPS["read"]]
    # FNV-1a 64 of "alpha" (the driver's ycsb_fnv1a64; the published test vector of "a" checks the constants)
    assert traceio.replay_key_id("a") == 0xAF63DC4C8601EC8C
    f.write_text("0,17,10,delete\n")
    with pytest.raises(ValueError, match=r"t.csv:1: op 'delete': OPT and the LRU reference accept .* \(no delete\)"):
        traceio.read_replay(f)
    f.write_text("0,17\n")
    with pytest.raises(ValueError, match=r"t.csv:1: not time,key,size\[,op\]"):
        traceio.read_replay(f)


def spec_file(d: Path, fixed: str, grid: str = 'approach = ["lru"]\nmem_ratio = ["1/2"]', run: str = "") -> Path:
    s = d / "s.toml"
    s.write_text(f'name = "t"\n[fixed]\n{fixed}\n[grid]\n{grid}\n[memory]\nallowance = "64M"\n{run}')
    return s


@pytest.mark.parametrize("fixed,grid,run,message", [
    ('trace = "none.og"', None, "", "[fixed] trace: 'none.og': /TMP/none.og is missing or unreadable"),
    ('trace = "t.txt"', None, "", "the format is told by the name; accepted: a name ending .csv"),
    ('trace = "t.og"\nrecordcount = 5', None, "", "[fixed] recordcount: set by [fixed] trace (the trace's distinct objects)"),
    ('trace = "t.og"', 'approach = ["lru"]\nmem_ratio = ["1/2"]\nzipf_theta = [0.9]', "",
     "[grid] zipf_theta: has no effect with [fixed] trace"),
    ('trace = "t.og"\nwarmupoperations = 5', None, "", "[fixed] warmupoperations: 5: the trace has 5 requests"),
    ('trace = "t.og"', None, '[run]\nmode = "network"', "accepted with [run] mode = \"in-process\" only"),
    ('trace = "t.og"', None, '[run]\ndriver_depth = 8', "[run] driver_depth: 8: a trace is replayed one request at a time"),
    ('trace = "d.csv"', None, "", "d.csv:1: op 'delete'"),
])
def test_spec_trace_errors(tmp_path: Path, fixed: str, grid: str | None, run: str, message: str) -> None:
    traceio.write_oracle(tmp_path / "t.og", traceio.oracle_records([1, 2, 1, 3, 1], 100))
    (tmp_path / "t.txt").write_text("")
    (tmp_path / "d.csv").write_text("0,1,10,delete\n")
    s = spec_file(tmp_path, fixed, grid if grid is not None else 'approach = ["lru"]\nmem_ratio = ["1/2"]', run)
    with pytest.raises(SpecError) as e:
        load_spec(s)
    assert message.replace("/TMP", str(tmp_path)) in str(e.value)


def test_spec_trace_sets_the_data_set_from_the_trace(tmp_path: Path) -> None:
    traceio.write_oracle(tmp_path / "t.og", traceio.oracle_records([1, 2, 1, 3, 1, 2], [100, 300, 100, 200, 100, 300]))
    spec = load_spec(spec_file(tmp_path, 'trace = "t.og"\nwarmupoperations = 2'))
    (c,) = spec.cells()
    assert c.trace == str(tmp_path / "t.og") and c.workload == "t" and c.zipf_theta == 0
    assert "zipfianconstant" not in c.properties
    assert {k: c.properties[k] for k in ("recordcount", "fieldcount", "fieldlength", "operationcount")} == \
        {"recordcount": 3, "fieldcount": 1, "fieldlength": 200, "operationcount": 4}
    assert c.params()["replay_trace"] == c.trace


def acbench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "acbench", *args], capture_output=True, text=True, timeout=300)


def test_spec_with_a_trace_runs_a_cell_whose_hits_are_exact_lru_at_its_residency(tmp_path: Path) -> None:
    """One lru cell replaying a generated trace (one driver thread: the file's order); 4 KiB blocks
    without lazy compaction keep the server's capacity within one block of its measured resident
    count, so its RAM hits lie within exact LRU's over that window (test_server_lru.py's tolerance)."""
    out = CliRunner().invoke(app, ["make-trace", str(tmp_path / "t.og"), "-n", "40000", "-k", "8000", "--theta",
                                   "0.9", "--one-hit", "0.2", "--size", "1000", "--seed", "2"])
    assert out.exit_code == 0 and '"requests": 40000' in out.output, out.output
    spec = spec_file(tmp_path, 'trace = "t.og"\nwarmupoperations = 10000\nthreads = 1',
                     'approach = ["lru{ac_block_size=4096,ac_compact_fill=0}"]\nmem_ratio = ["1/2"]', "[run]\nperf = false")
    cp = acbench("run", str(spec), "--run-id", "t1", "--results", str(tmp_path / "res"))
    assert cp.returncode == 0 and "1 cells run, 0 skipped, 0 failed" in cp.stdout, cp.stdout + cp.stderr
    (row,) = pd.read_parquet(next((tmp_path / "res").glob("*/t1/cells.parquet"))).to_dict("records")
    assert row["reads_total"] == 30000 and row["opt_requests"] == 30000 and row["errors"] == 0
    assert row["refills"] == row["misses"] > 0 and row["disk_hits"] > 0
    recs = traceio.read_oracle(tmp_path / "t.og")
    assert row["misses"] == len(np.unique(recs["key"])) - len(np.unique(recs["key"][:10000]))   # cold only
    per_block = 4096 // 1000 + 1
    res = int(row["ac_resident_items"])
    rep = opt.analyse(cellopt.replay_actrace(tmp_path / "t.og"), capacities=[res - per_block, res + per_block],
                      byte_capacities=[], score_from=10000)
    lo, hi = (o["lru"]["hits"] for o in rep["objects"])
    assert lo <= row["hits"] <= hi, (lo, row["hits"], hi)
    assert hi - lo < 0.002 * 30000
    assert row["opt_hit_rate"] > row["lru_ref_hit_rate"] > 0 and row["skew_requests"] == 30000
