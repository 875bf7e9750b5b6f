"""YCSB 0.17's own workload files run unedited (tests/data/ycsb-0.17: workloada-f with the
properties YCSB ships, and its documented client and measurement properties): accepted, used
where they mean something here (threadcount = threads), otherwise ignored with one warning naming
them; workloade's scans are counted as not implemented, as YCSB's memcached binding answers them.
A failed run's JSON says so (status, error) and carries no throughput or latency."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import BIN, free_port, running_server

YCSB = Path(__file__).resolve().parent / "data" / "ycsb-0.17"
FILES = ["workloada", "workloadb", "workloadc", "workloadd", "workloade", "workloadf"]
IGNORED_WARNING = ("ycsb: warning: ignored YCSB properties that have no effect here: table, measurementtype, "
                   "histogram.buckets, timeseries.granularity, status.interval, core_workload_insertion_retry_limit, "
                   "core_workload_insertion_retry_interval\n")


def run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("name", FILES)
def test_trace_of_each_file_unedited(ycsb_trace: Path, tmp_path: Path, name: str) -> None:
    p = run([str(ycsb_trace), "-P", str(YCSB / name), "-o", str(tmp_path / "t.actrace")])
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    ops = s["ops"]
    assert p.stderr == ""
    if name == "workloade":
        # 1000 operations: ~950 scans, in the trace as the reads of 1..100 consecutive keys (50.5 on average)
        assert 900 < s["scans"] < 990 and ops["insert"] == 1000 - s["scans"]
        assert s["requests"] == ops["insert"] + s["scan_reads"] and 40 < s["scan_reads"] / s["scans"] < 61
        size = (tmp_path / "t.actrace").stat().st_size
        assert size == 128 + 16 * s["requests"]          # the header counts the records there are
    else:
        assert s["scans"] == s["scan_reads"] == 0 and s["requests"] == 1000
    expect = {"workloada": ("read", "update"), "workloadb": ("read", "update"), "workloadc": ("read",),
              "workloadd": ("read", "insert"), "workloade": ("insert",), "workloadf": ("read", "readmodifywrite")}[name]
    # (a scan's reads are not read operations: the trace's records say read)
    assert {k for k, v in ops.items() if v} == set(expect)


def test_standard_properties_used_or_ignored_once(ycsb_trace: Path, tmp_path: Path) -> None:
    p = run([str(ycsb_trace), "-P", str(YCSB / "standard_properties"), "-P", str(YCSB / "standard_properties"),
             "-p", "threadcount=3", "-p", "recordcount=2000", "-p", "operationcount=3000",
             "-o", str(tmp_path / "t.actrace")])
    assert p.returncode == 0, p.stderr
    assert p.stderr == IGNORED_WARNING            # each named once, although given twice
    s = json.loads(p.stdout)
    assert s["config"]["threads"] == 3 and s["config"]["recordcount"] == 2000 and s["requests"] == 3000
    p = run([str(ycsb_trace), "-P", str(YCSB / "workloadc"), "-p", "memcached.hosts=127.0.0.1",
             "-o", str(tmp_path / "t.actrace")])
    assert p.returncode == 0 and p.stderr == ("ycsb: warning: ignored YCSB properties that have no effect "
                                              "here: memcached.hosts\n")


def test_what_cannot_be_done_is_refused(ycsb_trace: Path, tmp_path: Path) -> None:
    p = run([str(ycsb_trace), "-P", str(YCSB / "workloadc"), "-p", "fieldlengthdistribution=zipfian",
             "-o", str(tmp_path / "t.actrace")])
    assert p.returncode == 1
    assert p.stderr == ("ycsb-trace: property 'fieldlengthdistribution': 'zipfian' is not accepted; accepted: "
                        "constant (every value is fieldcount x fieldlength bytes; uniform, zipfian and histogram "
                        "lengths are not implemented)\n")
    p = run([str(ycsb_trace), "-P", str(YCSB / "workloadc"), "-p", "tabel=usertable",
             "-o", str(tmp_path / "t.actrace")])
    assert p.returncode == 1 and p.stderr.startswith("ycsb-trace: unknown property 'tabel'; accepted: ")
    assert "threadcount" in p.stderr and "ignored with a warning" in p.stderr


@pytest.mark.parametrize("pipeline", [(), ("--conns", "2", "--depth", "4")], ids=["sync", "batched"])
def test_ycsb_mc_runs_each_file_unedited(ycsb_mc: Path, tmp_path: Path, pipeline: tuple[str, ...]) -> None:
    with running_server(32, f"ac_policy=lru,ac_spill_dir={tmp_path / 'spill'}") as port:
        for name in FILES:
            p = run([str(ycsb_mc), "-P", str(YCSB / name), "--server", f"127.0.0.1:{port}", *pipeline])
            assert p.returncode == 0, (name, p.stderr)
            res = json.loads(p.stdout)
            assert res["status"] == "ok" and "error" not in res, name
            r = res["run"]
            assert r["operations"] == 1000 and r["errors"]["total"] == 0, name
            assert p.stderr == "" and r["reads"]["miss"] == 0 and r["throughput_ops_per_s"] > 0, name
            if name == "workloade":    # each scan is the gets of its keys, every one a hit
                assert r["ops"]["scan"] > 900 and r["latency_us"]["scan"]["count"] == r["ops"]["scan"]
                assert r["reads"]["total"] == r["reads"]["hit"] == r["reads"]["scan_keys"] > 40 * r["ops"]["scan"]
            else:
                assert r["ops"]["scan"] == 0 and r["reads"]["scan_keys"] == 0


def test_in_process_workloade(tmp_path: Path) -> None:
    """The in-process driver too: each scan the gets of its keys, all hits, the inserts stored."""
    for depth in ("1", "8"):
        out = tmp_path / f"r{depth}.json"
        p = run([str(BIN / "memcached-ac"), "-u", "root", "-m", "16", "-o",
                 f"ac_policy=lru,ac_spill_dir={tmp_path / 'spill'},ac_driver={YCSB / 'workloade'},"
                 f"ac_driver_out={out},ac_driver_depth={depth}"])
        assert p.returncode == 0, p.stderr
        assert "scanproportion" not in p.stderr
        r = json.loads(out.read_text())["run"]
        assert r["ops"]["scan"] > 900 and r["ops"]["insert"] == 1000 - r["ops"]["scan"]
        assert r["errors"]["total"] == 0 and r["reads"]["miss"] == 0
        assert r["reads"]["total"] == r["reads"]["hit"] == r["reads"]["scan_keys"] > 40 * r["ops"]["scan"]


def test_failed_run_is_not_a_result(ycsb_mc: Path, tmp_path: Path) -> None:
    port = free_port()   # nothing listens there
    out = tmp_path / "r.json"
    p = run([str(ycsb_mc), "-P", str(YCSB / "workloadc"), "--server", f"127.0.0.1:{port}", "-o", str(out)])
    assert p.returncode == 1
    res = json.loads(out.read_text())
    assert res["status"] == "failed"
    assert res["error"] == f"backend thread_init failed: cannot connect to 127.0.0.1:{port}: Connection refused"
    for phase in ("load", "warmup", "run"):
        assert "throughput_ops_per_s" not in res.get(phase, {}) and "latency_us" not in res.get(phase, {})
        assert "duration_s" not in res.get(phase, {})
