"""window_opt (the API the cell OPT calls) and `acbench opt --score-from / --preload-writes /
--reads-only`: what score_from does, the load-phase preload, round trips and error texts."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from acbench import core, traceio
from acbench.cli import app
from acbench.opt import OptError, window_opt
from conftest import lru_hits, zipf_keys


def cli(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(app, ["opt", *args])
    return res.exit_code, res.stdout, res.stderr


def random_records(seed: int, n: int, keys: int, write_share: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    k = zipf_keys(rng, n, keys, 0.9)
    ops = np.where(rng.random(n) < write_share, rng.choice([1, 2, 3], n), 0)
    return traceio.actrace_records(k, 100, ops)


def test_shape() -> None:
    w = window_opt(traceio.actrace_records([5, 6, 5, 5], 1, [0, 1, 3, 0]), 1, [1, 2, 10])
    assert set(w) == {"scored_reads", "scored_writes", "opt_bypass_hits", "opt_demand_hits", "lru_hist",
                      "cold_misses", "requests", "distinct_keys"}
    assert (w["scored_reads"], w["scored_writes"], w["requests"], w["distinct_keys"]) == (2, 1, 4, 2)
    # 6 is written at 1 (unscored: a write), 5 read-modify-written at 2 and read at 3;
    # capacity 1: the update of 6 pushes 5 out, the rmw misses and brings 5 back, the read hits
    assert w["opt_bypass_hits"] == [1, 2, 2] and w["opt_demand_hits"] == [1, 2, 2]
    assert w["lru_hist"].dtype == np.uint64 and w["lru_hist"].tolist() == [1, 1]
    assert all(isinstance(x, int) for x in w["opt_bypass_hits"] + w["opt_demand_hits"])
    assert window_opt(traceio.actrace_records([], 1, 0), 0, [3])["opt_bypass_hits"] == [0]


def test_score_from_drives_the_cache_but_scores_nothing_before() -> None:
    three = traceio.actrace_records([4, 4, 4], 1, 0)
    assert window_opt(three, 0, [1])["opt_bypass_hits"] == [2]
    assert window_opt(three, 2, [1])["opt_bypass_hits"] == [1]      # the hit at 1 is not counted
    assert window_opt(three, 3, [1])["scored_reads"] == 0
    # a write before score_from places its key: the first scored read hits
    w = window_opt(traceio.actrace_records([4, 4], 1, [1, 0]), 1, [1])
    assert (w["scored_reads"], w["scored_writes"], w["opt_bypass_hits"], w["cold_misses"]) == (1, 0, [1], 0)
    for seed in range(4):
        recs = random_records(seed, 1500, 120, 0.3)
        k = 600
        full, window, cold = (window_opt(recs, 0, [5, 40]), window_opt(recs, k, [5, 40]),
                              window_opt(recs[k:], 0, [5, 40]))
        head = window_opt(recs[:k], 0, [5, 40])
        assert window["scored_reads"] + head["scored_reads"] == full["scored_reads"]
        # LRU does not depend on what is scored: the window's hits = all hits - the head's
        for c in (1, 5, 40, 120):
            lru = [int(w["lru_hist"][:c].sum()) for w in (full, window, head)]
            assert lru[1] == lru[0] - lru[2]
            assert lru[1] == lru_hits(recs["key"].tolist(), c, recs["op"].tolist(), k)
        # OPT: scoring fewer reads cannot give more hits; the history is worth at least a cold start
        for i in range(2):
            assert window["opt_bypass_hits"][i] <= full["opt_bypass_hits"][i]
            assert window["opt_bypass_hits"][i] >= cold["opt_bypass_hits"][i]
            assert window["opt_demand_hits"][i] <= window["opt_bypass_hits"][i]


def test_preload_inserts() -> None:
    pre = traceio.preload_inserts(5, 1184)
    assert pre.dtype == traceio.ACTRACE_RECORD
    assert pre["key"].tolist() == [0, 1, 2, 3, 4] and set(pre["op"].tolist()) == {traceio.OPS["insert"]}
    assert set(pre["size"].tolist()) == {1184}
    big = traceio.preload_inserts(10**6)
    assert len(big) == 10**6 and int(big["key"][-1]) == 10**6 - 1
    # with the load in front, every run read of a loaded key can hit: no cold misses
    run = traceio.actrace_records([3, 1, 3, 0, 9], 1, 0)
    w = window_opt(np.concatenate([pre, run]), 5, [2, 5])
    assert (w["scored_reads"], w["cold_misses"]) == (5, 1)              # 9 was never loaded
    # capacity 2: the last insert (4) must be in the cache after it, so one other key
    # survives the load: 3 (read twice): 2 hits; 5 slots: all 4 reads of loaded keys hit
    assert w["opt_bypass_hits"] == [2, 4]


def test_reads_only_window() -> None:
    recs = traceio.actrace_records([1, 2, 1, 3, 1], 1, [0, 1, 3, 2, 0])
    w = window_opt(recs, 2, [1], reads_only=True)
    # kept: read 1, rmw 1 (as a read), read 1; score_from 2 -> 1 (one read before it)
    assert (w["requests"], w["scored_reads"], w["scored_writes"]) == (3, 2, 0)
    assert w["opt_bypass_hits"] == [2]
    # write-allocate: the update of 2 evicts 1 (rmw misses), the insert of 3 evicts 1 again
    assert window_opt(recs, 2, [1])["opt_bypass_hits"] == [0]


@pytest.mark.parametrize("records,score_from,caps,msg", [
    (np.zeros(3, dtype=np.uint64), 0, [1],
     "records must be a numpy array of ACTRACE records (acbench.traceio.ACTRACE_RECORD)"),
    (traceio.actrace_records([1, 2], 1, 0), 3, [1], "score_from 3 is outside the records: accepted 0 .. 2"),
    (traceio.actrace_records([1, 2], 1, 0), -1, [1], "score_from -1 is outside the records: accepted 0 .. 2"),
    (traceio.actrace_records([1, 2], 1, [0, 5]), 0, [1],
     "request 1 has op 5: ACTRACE ops are 0 read, 1 update, 2 insert, 3 read-modify-write"),
    (traceio.actrace_records([1, 2], 1, 0), 0, [0], "capacity must be at least 1 object, got 0"),
])
def test_window_errors(records: np.ndarray, score_from: int, caps: list[int], msg: str) -> None:
    with pytest.raises(OptError) as e:
        window_opt(records, score_from, caps)
    assert str(e.value) == msg


def test_cli_round_trip(tmp_path: Path) -> None:
    recs = random_records(7, 800, 60, 0.4)
    path = tmp_path / "run.actrace"
    traceio.write_actrace(path, recs, recordcount=60)
    code, out, err = cli(str(path), "-c", "4,30", "--preload-writes", "60", "--score-from", "200")
    assert code == 0, err
    r = json.loads(out)
    w = window_opt(np.concatenate([traceio.preload_inserts(60, 100), recs]), 260, [4, 30])
    assert (r["requests"], r["preload_writes"], r["score_from"]) == (860, 60, 200)
    assert (r["scored_reads"], r["scored_writes"], r["cold_misses"]) == (w["scored_reads"], w["scored_writes"],
                                                                         w["cold_misses"])
    assert [o["opt_bypass"]["hits"] for o in r["objects"]] == w["opt_bypass_hits"]
    assert [o["opt_demand"]["hits"] for o in r["objects"]] == w["opt_demand_hits"]
    assert [o["lru"]["hits"] for o in r["objects"]] == [int(w["lru_hist"][:c].sum()) for c in (4, 30)]
    o = r["objects"][1]["opt_bypass"]
    assert o["misses"] == r["scored_reads"] - o["hits"] and o["hit_rate"] == o["hits"] / r["scored_reads"]
    # without the preload: score_from alone runs on the mmapped file
    code, out, _ = cli(str(path), "-c", "4,30", "--score-from", "200")
    r = json.loads(out)
    w = window_opt(recs, 200, [4, 30])
    assert r["requests"] == 800 and "preload_writes" not in r
    assert [o["opt_bypass"]["hits"] for o in r["objects"]] == w["opt_bypass_hits"]
    # --reads-only
    code, out, _ = cli(str(path), "-c", "4,30", "--score-from", "200", "--reads-only")
    r = json.loads(out)
    w = window_opt(recs, 200, [4, 30], reads_only=True)
    assert r["reads_only"] is True and r["requests"] == w["requests"] and r["scored_writes"] == 0
    assert [o["opt_bypass"]["hits"] for o in r["objects"]] == w["opt_bypass_hits"]
    # an oracleGeneral file takes a preload too (all its requests are reads)
    og = tmp_path / "run.og"
    traceio.write_oracle(og, traceio.oracle_records(recs["key"], 100))
    code, out, _ = cli(str(og), "-c", "4", "--preload-writes", "60")
    r = json.loads(out)
    reads = traceio.actrace_records(recs["key"], 100, 0)
    w = window_opt(np.concatenate([traceio.preload_inserts(60, 100), reads]), 60, [4])
    assert (r["scored_reads"], r["scored_writes"]) == (800, 0)
    assert r["objects"][0]["opt_bypass"]["hits"] == w["opt_bypass_hits"][0]


@pytest.mark.parametrize("args,code,msg", [
    (["--score-from", "abc"], 2, "invalid --score-from 'abc': expected a whole number of requests (0 or more), "
                                 "e.g. 1000"),
    (["--score-from", "-1"], 2, "invalid --score-from '-1': expected a whole number of requests (0 or more), "
                                "e.g. 1000"),
    (["--score-from", "1.5"], 2, "invalid --score-from '1.5': expected a whole number of requests (0 or more), "
                                 "e.g. 1000"),
    (["--score-from", "8"], 2, "--score-from 8 is beyond the trace: it has 7 requests (accepted: 0 .. 7)"),
    (["--preload-writes", "x"], 2, "invalid --preload-writes 'x': expected a whole number of records (0 or more), "
                                   "e.g. 1000"),
    (["--preload-writes", "-5"], 2, "invalid --preload-writes '-5': expected a whole number of records "
                                    "(0 or more), e.g. 1000"),
    (["--preload-writes", "3", "--reads-only"], 2,
     "--preload-writes cannot be combined with --reads-only: the reads-only model drops every write, "
     "the preload's inserts included"),
    (["--preload-writes", "3", "--max-memory", "100"], 1,
     "loading the trace into memory (preload) needs 320 bytes (0.0 MiB) but the memory limit is 100 bytes "
     "(0.0 MiB) (limit from --max-memory)"),
])
def test_cli_errors(tmp_path: Path, args: list[str], code: int, msg: str) -> None:
    path = tmp_path / "t.actrace"
    traceio.write_actrace(path, traceio.actrace_records([1, 2, 1, 3, 1, 2, 1], 1, [0, 1, 0, 2, 3, 0, 0]))
    got, out, err = cli(str(path), "-c", "1", *args)
    assert (got, out) == (code, "")
    assert err.strip() == f"acbench opt: error: {msg}"


def test_cli_score_from_end_and_bad_op(tmp_path: Path) -> None:
    path = tmp_path / "t.actrace"
    traceio.write_actrace(path, traceio.actrace_records([1, 1, 1], 1, 0))
    code, out, _ = cli(str(path), "-c", "1", "--score-from", "3")
    r = json.loads(out)
    assert code == 0 and r["scored_reads"] == 0 and r["objects"][0]["opt_bypass"] == \
        {"hits": 0, "misses": 0, "hit_rate": 0.0}
    traceio.write_actrace(path, traceio.actrace_records([1, 1, 1], 1, [0, 4, 0]))
    code, out, err = cli(str(path), "-c", "1")
    assert (code, out) == (2, "")
    assert err.strip() == ("acbench opt: error: request 1 has op 4: ACTRACE ops are 0 read, 1 update, "
                           "2 insert, 3 read-modify-write")


def test_nextuse_score_from_errors() -> None:
    with core.Trace.from_records(traceio.actrace_records([1], 1, 0), "actrace") as t:
        with pytest.raises(core.CoreError, match=r"^score_from 2 is beyond the trace: it has 1 requests "
                                                 r"\(accepted: 0 \.\. 1\)$"):
            core.NextUse(t, score_from=2)
        with pytest.raises(core.CoreError, match="^score_from must be 0 or more, got -1$"):
            core.NextUse(t, score_from=-1)


def test_cell_opt_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """cellopt.opt_for caches by (trace, recordcount, skip, capacity): a second call returns exactly
    what the pass computed without running it; another capacity or skip runs its own pass."""
    from acbench import cellopt
    trace = tmp_path / "t.actrace"
    traceio.write_actrace(trace, random_records(3, 4000, 300, 0.2), recordcount=300)
    first, hist = cellopt.opt_for(trace, 300, 1000, 40)
    assert first["opt_requests"] > 0 and 0 < first["opt_hit_rate"] < 1
    passes: list[tuple[int, int]] = []
    real = cellopt._opt_pass

    def counted(t: Path, rc: int, skip: int, cap: int) -> tuple[dict, np.ndarray]:
        passes.append((skip, cap))
        return real(t, rc, skip, cap)
    monkeypatch.setattr(cellopt, "_opt_pass", counted)
    again, hist2 = cellopt.opt_for(trace, 300, 1000, 40)
    assert passes == [] and again == first and hist2.tolist() == hist.tolist()
    other, _ = cellopt.opt_for(trace, 300, 1000, 80)
    assert passes == [(1000, 80)] and other["opt_hits"] > first["opt_hits"]
    cellopt.opt_for(trace, 300, 2000, 40)
    assert passes == [(1000, 80), (2000, 40)]
