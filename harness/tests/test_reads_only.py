"""The reads-only model of the OPT library (`--reads-only`, window_opt(reads_only=True)) and a
warm-started window with the load phase, against the write-allocating model."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from acbench import traceio
from acbench.opt import OptError, analyse, window_opt


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


def test_window_warm_start() -> None:
    # 3 loaded keys (inserts, unscored); warm-up: read 0 (unscored); scored run:
    # read 2, update 1, read 2, read 1, read 0
    recs = np.concatenate([traceio.preload_inserts(3, 10),
                           traceio.actrace_records([0, 2, 1, 2, 1, 0], 10, [0, 0, 1, 0, 0, 0])])
    assert recs["op"].tolist() == [2, 2, 2, 0, 0, 1, 0, 0, 0]
    w = window_opt(recs, 4, [1, 2, 3])
    assert (w["scored_reads"], w["scored_writes"], w["cold_misses"]) == (4, 1, 0)
    # bypass, capacity 2: keep 2 and 0 after the warm-up; the update of 1 forces 0 out:
    # 2, 2, 1 hit. Capacity 1: keep 2 (the warm-up read of 0 is left out): 2 hits, then the
    # update of 1 must evict 2: 2 misses, 1 hits, 0 misses
    assert w["opt_bypass_hits"] == [2, 3, 4]
    # demand, capacity 1: every miss comes in: 0 (warm-up) evicts 2, 2 evicts 0, the update
    # places 1, the second read of 2 evicts 1 again: no hit
    assert w["opt_demand_hits"] == [0, 3, 4]
    # the old reads-only model (writes dropped) on the same window: reads 2 2 1 0 after
    # the warm-up read of 0; the preload's inserts are dropped too, so 2 and 1 start cold:
    # at most the second 2 and the final 0 hit
    old = window_opt(recs, 4, [1, 2, 3], reads_only=True)
    assert (old["requests"], old["scored_reads"], old["scored_writes"]) == (5, 4, 0)
    assert old["opt_bypass_hits"] == [1, 2, 2]
    # LRU, every request an access: read 2 (0 since its insert: distance 1), read 2 (1
    # updated since: 1), read 1 (2: 1), read 0 (read at 3; 2 and 1 since: 2)
    assert w["lru_hist"].tolist() == [0, 3, 1]
