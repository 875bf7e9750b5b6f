"""The read-only request filter of the OPT library and the warm-started cell OPT."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from acbench import cellopt, traceio
from acbench.opt import OptError, analyse


def test_reads_only_equals_filtered_trace(tmp_path: Path) -> None:
    keys = [1, 2, 1, 3, 2, 1, 4, 1, 2, 3]
    ops = [0, 1, 0, 2, 3, 1, 0, 0, 1, 0]
    full = tmp_path / "full.actrace"
    traceio.write_actrace(full, traceio.actrace_records(keys, 100, ops))
    kept = [k for k, o in zip(keys, ops) if o in (0, 3)]
    assert kept == [1, 1, 2, 4, 1, 3]
    ref = tmp_path / "reads.actrace"
    traceio.write_actrace(ref, traceio.actrace_records(kept, 100, 0))
    got = analyse(full, [1, 2], [], reads_only=True)
    want = analyse(ref, [1, 2], [])
    assert got["requests"] == 6 and got["reads_only"] is True
    assert got["objects"] == want["objects"]
    # capacity 1 over 1 1 2 4 1 3: bypass keeps 1 and lets 2 and 4 pass: 2 hits
    assert got["objects"][0]["opt_bypass"]["hits"] == 2
    assert analyse(full, [1], [])["requests"] == 10


def test_reads_only_rejects_oraclegeneral(tmp_path: Path) -> None:
    og = tmp_path / "t.og"
    traceio.write_oracle(og, traceio.oracle_records([1, 2, 1]))
    with pytest.raises(OptError, match="--reads-only needs an ACTRACE trace"):
        analyse(og, [1], [], reads_only=True)


def test_cell_opt_warm_start(tmp_path: Path) -> None:
    # 3 loaded keys; warm-up [0]; measured: read 2, update 1, read 2, read 1, read 0
    recs = traceio.actrace_records([0, 2, 1, 2, 1, 0], 10, [0, 0, 1, 0, 0, 0])
    t = tmp_path / "c.actrace"
    traceio.write_actrace(t, recs, recordcount=3)
    assert list(cellopt.measured_reads(t, 1)["key"]) == [2, 2, 1, 0]
    # capacity 2 with the best start {2, 1}: 2 hit, 2 hit, 1 hit, 0 miss
    r = cellopt.opt_for(t, 3, 1, 2)
    assert (r["opt_requests"], r["opt_hits"]) == (4, 3)
    assert r["opt_hit_rate"] == 0.75
    # capacity 1: keep 2 → 2 hits
    assert cellopt.opt_for(t, 3, 1, 1)["opt_hits"] == 2
    assert np.isclose(cellopt.opt_for(t, 3, 0, 3)["opt_hit_rate"], 1.0)
