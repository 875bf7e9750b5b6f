"""Classic reference strings with known answers (Silberschatz, Galvin, Gagne,
Operating System Concepts, ch. 9 / 10: page faults with demand paging)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from acbench import core, traceio
from acbench.cli import app
from conftest import lru_hits

CLASSIC = [7, 0, 1, 2, 0, 3, 0, 4, 2, 3, 0, 3, 2, 1, 2, 0, 1, 7, 0, 1]
ANOMALY = [1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5]


def fifo_faults(keys: list[int], cap: int) -> int:
    frames: list[int] = []
    faults = 0
    for k in keys:
        if k not in frames:
            faults += 1
            frames.append(k)
            if len(frames) > cap:
                frames.pop(0)
    return faults


def faults(keys: list[int], caps: list[int]) -> dict[str, list[int]]:
    with core.Trace.from_records(traceio.actrace_records(keys), "actrace") as t, core.NextUse(t) as nu:
        hist = nu.lru_hist()
        return {
            "demand": [len(keys) - h for h in nu.opt(caps, bypass=False)],
            "bypass": [len(keys) - h for h in nu.opt(caps, bypass=True)],
            "lru": [len(keys) - int(hist[:c].sum()) for c in caps],
        }


def test_classic_string_three_frames() -> None:
    f = faults(CLASSIC, [3])
    assert f["demand"] == [9]
    assert f["lru"] == [12]
    assert fifo_faults(CLASSIC, 3) == 15       # the textbook's third number, for reference
    # bypass: the two cold-only misses of 4 and 7 need no frame; brute force says 8
    assert f["bypass"] == [8]


def test_belady_anomaly_string() -> None:
    f = faults(ANOMALY, [3, 4])
    assert f["demand"] == [7, 6]
    assert f["lru"] == [10, 8]
    assert [fifo_faults(ANOMALY, c) for c in (3, 4)] == [9, 10]
    assert [len(ANOMALY) - lru_hits(ANOMALY, c) for c in (3, 4)] == [10, 8]


def test_classic_string_through_the_cli(tmp_path: Path) -> None:
    path = tmp_path / "classic.actrace"
    traceio.write_actrace(path, traceio.actrace_records(CLASSIC), seed=3, recordcount=8, workload="textbook")
    res = CliRunner().invoke(app, ["opt", str(path), "--capacity", "3,1,100"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["requests"] == 20 and out["distinct_keys"] == 6 and out["cold_misses"] == 6
    assert out["header"] == {"seed": 3, "recordcount": 8, "workload": "textbook"}
    three, one, big = out["objects"]
    assert three["capacity"] == 3
    assert three["opt_demand"] == {"hits": 11, "misses": 9, "hit_rate": 0.55}
    assert three["lru"] == {"hits": 8, "misses": 12, "hit_rate": 0.4}
    assert one["opt_demand"]["hits"] == one["lru"]["hits"] == 0      # no immediate repeats
    assert big["opt_bypass"]["hits"] == big["lru"]["hits"] == 14     # only cold misses


@pytest.mark.parametrize("keys", [CLASSIC, ANOMALY])
def test_fifo_reference_is_not_opt(keys: list[int]) -> None:
    # sanity of the comparison: OPT is never worse than FIFO or LRU
    f = faults(keys, [2, 3, 4])
    for i, c in enumerate([2, 3, 4]):
        assert f["bypass"][i] <= f["demand"][i] <= min(f["lru"][i], fifo_faults(keys, c))
