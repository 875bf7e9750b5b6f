"""Replaying a trace in-process: memcached-ac -o ac_driver_trace=FILE sends
each request as a get, refills a missed get with a set of the request's size
(look-aside), honours a CSV op column, and counts exactly what the server did."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from acbench import traceio
from conftest import SERVER

# five gets: 10 and 11 miss and are refilled, 10 hits, 12 misses, 11 hits
KEYS, SIZES = [10, 11, 10, 12, 11], [100, 200, 100, 300, 200]


def replay(trace: Path, *opts: str, mem: int = 16, sets: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    assert SERVER.exists(), f"{SERVER} missing: run make -C memcached all"
    o = ["ac_policy=lru", f"ac_spill_dir={trace.parent / 'spill'}", f"ac_driver_trace={trace}"]
    o += [f"ac_driver_set={s}" for s in sets] + list(opts)
    return subprocess.run([str(SERVER), "-u", "root", "-t", "1", "-m", str(mem), "-o", ",".join(o)],
                          capture_output=True, text=True, timeout=60)


def result(p: subprocess.CompletedProcess[str]) -> dict:
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def write_csv(path: Path, rows: list[str], header: bool = True) -> Path:
    path.write_text(("time,key,size,op\n" if header else "") + "".join(r + "\n" for r in rows))
    return path


def test_five_gets_give_exactly_the_expected_gets_sets_and_hits(tmp_path: Path) -> None:
    og = tmp_path / "five.og"
    traceio.write_oracle(og, traceio.oracle_records(KEYS, SIZES))
    r = result(replay(og))
    assert "load" not in r and r["warmup"]["operations"] == 0
    run = r["run"]
    assert run["ops"]["read"] == 5 and run["ops"]["update"] == 0
    assert run["reads"] == {"total": 5, "hit": 2, "disk_hit": 0, "miss": 3, "refills": 3, "refill_errors": 0, "scan_keys": 0}
    assert run["errors"]["total"] == 0
    t = r["trace"]
    assert (t["format"], t["requests"], t["gets"], t["objects"], t["clamped"]) == ("oracleGeneral", 5, 5, 3, 0)
    assert t["footprint_bytes"] == 600 and t["largest_size"] == 300
    st = r["server"]["anticache"]
    assert st["mem_hits"] == 2 and st["resident_items"] == 3


def test_csv_and_oracle_general_give_the_same_counts(tmp_path: Path) -> None:
    og = tmp_path / "t.og"
    traceio.write_oracle(og, traceio.oracle_records(KEYS, SIZES))
    csv = write_csv(tmp_path / "t.csv", [f"{i},{k},{s}" for i, (k, s) in enumerate(zip(KEYS, SIZES))])
    a, b = result(replay(og, sets=("warmupoperations=2",))), result(replay(csv, sets=("warmupoperations=2",)))
    for r in (a, b):
        assert r["warmup"]["reads"]["miss"] == 2 and r["warmup"]["reads"]["hit"] == 0
        assert r["run"]["reads"]["hit"] == 2 and r["run"]["reads"]["miss"] == 1
    for phase in ("warmup", "run"):
        assert a[phase]["reads"] == b[phase]["reads"] and a[phase]["ops"] == b[phase]["ops"]
    assert {k: v for k, v in a["trace"].items() if k not in ("path", "format")} == \
        {k: v for k, v in b["trace"].items() if k not in ("path", "format")}


def test_csv_ops_are_honoured(tmp_path: Path) -> None:
    # get 10 misses (refilled), set 11, get 10 hits, delete 11, get 11 misses (refilled)
    csv = write_csv(tmp_path / "ops.csv", ["1,10,100,get", "2,11,200,set", "3,10,100,get",
                                           "4,11,200,delete", "5,11,200,GET"])
    r = result(replay(csv))
    run = r["run"]
    assert run["ops"] == {"read": 3, "update": 1, "insert": 0, "readmodifywrite": 0, "scan": 0, "delete": 1}
    assert run["reads"]["hit"] == 1 and run["reads"]["miss"] == 2 and run["reads"]["refills"] == 2
    assert r["server"]["anticache"]["resident_items"] == 2
    assert (r["trace"]["gets"], r["trace"]["sets"], r["trace"]["deletes"]) == (3, 1, 1)


def test_string_keys_and_sizes_over_the_item_limit(tmp_path: Path) -> None:
    """A non-numeric key is hashed to an id; a size above -I's room is clamped and counted."""
    csv = write_csv(tmp_path / "s.csv", ["0,alpha,10", "1,beta,3000000", "2,alpha,10", "3,beta,3000000"],
                    header=False)
    r = result(replay(csv, mem=64))
    t = r["trace"]
    assert t["clamped"] == 2 and t["objects"] == 2 and t["largest_size"] == t["max_size"] < 1 << 20
    assert r["run"]["reads"]["hit"] == 2 and r["run"]["reads"]["refill_errors"] == 0


def test_two_threads_split_by_key_keep_each_keys_order(tmp_path: Path) -> None:
    """Each key: get (miss), get (hit), delete, get (miss), get (hit), the keys' requests
    interleaved; split by key over 2 threads every key keeps its order, so the counts are
    exactly those of one thread."""
    steps = ["get", "get", "delete", "get", "get"]
    rows = [f"{s * 200 + k},{k},100,{op}" for s, op in enumerate(steps) for k in range(200)]
    csv = write_csv(tmp_path / "t.csv", rows)
    one, two = (result(replay(csv, sets=(f"threads={n}",))) for n in (1, 2))
    for r in (one, two):
        assert r["run"]["reads"]["miss"] == 400 and r["run"]["reads"]["hit"] == 400
        assert r["run"]["ops"]["delete"] == 200
    assert two["trace"]["split_threads"] == 2 and two["threads"] == 2


@pytest.mark.parametrize("rows,message", [
    (["1,10"], "t.csv:2: 2 fields; accepted: time,key,size[,op]"),
    (["1,10,100", "x,10,100"], "t.csv:3: time 'x' is not an unsigned integer"),
    (["1,10,-5"], "t.csv:2: size '-5' is not an unsigned integer below 2^32"),
    (["1,10,100,incr"], "t.csv:2: op 'incr' is not known; accepted: "),
    (["1,,100"], "t.csv:2: empty key"),
    (["1,10,100,get,9"], "t.csv:2: more than 4 fields"),
])
def test_malformed_csv_names_file_line_and_what_is_accepted(tmp_path: Path, rows: list[str], message: str) -> None:
    p = replay(write_csv(tmp_path / "t.csv", rows))
    assert p.returncode == 1 and p.stdout == ""
    assert message in p.stderr, p.stderr
    assert "op get|gets|set|add|replace|cas|append|prepend|delete" in p.stderr


def test_bad_trace_files_are_refused(tmp_path: Path) -> None:
    og = tmp_path / "short.og"
    og.write_bytes(b"\0" * 30)
    p = replay(og)
    assert p.returncode == 1 and "30 bytes is not a multiple of the 24-byte record" in p.stderr
    p = replay(tmp_path / "t.trace")
    assert p.returncode == 1 and "cannot tell the trace's format from its name" in p.stderr
    p = replay(tmp_path / "missing.csv")
    assert p.returncode == 1 and "missing.csv: cannot open: No such file or directory" in p.stderr
    empty = write_csv(tmp_path / "empty.csv", [])
    p = replay(empty)
    assert p.returncode == 1 and "the trace has no requests" in p.stderr
    p = replay(write_csv(tmp_path / "w.csv", ["1,10,100"]), sets=("warmupoperations=5",))
    assert p.returncode == 1 and "warmupoperations 5 is more than the trace's 1 requests" in p.stderr
    # batches refill their misses after the batch (a key twice in one batch would miss twice)
    p = replay(write_csv(tmp_path / "d.csv", ["1,10,100"]), "ac_driver_depth=4")
    assert p.returncode == 1 and "ac_driver_depth=4: a trace is replayed one request at a time, in order; " \
        "accepted: ac_driver_depth=1" in p.stderr


def test_explicit_format_overrides_the_name(tmp_path: Path) -> None:
    t = tmp_path / "t.trace"
    traceio.write_oracle(t, traceio.oracle_records(KEYS, SIZES))
    r = result(replay(t, "ac_driver_format=oracleGeneral"))
    assert r["run"]["reads"]["hit"] == 2
    p = replay(t, "ac_driver_format=parquet")
    assert p.returncode != 0 and "ac_driver_format" in p.stderr
