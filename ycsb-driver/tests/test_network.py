"""ycsb-mc against a real memcached-ac: the server's get counters equal the
driver's reads, every read hits after the load, values have YCSB's size."""
from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from pymemcache.client.base import Client

from conftest import BIN, WORKLOADS, fnvhash64, free_port, running_server



@pytest.fixture
def server(tmp_path: Path) -> Iterator[int]:
    with running_server(16, f"ac_policy=lru,ac_spill_dir={tmp_path / 'spill'}") as port:
        yield port


def run_mc(exe: Path, port: int, *args: str) -> dict:
    proc = subprocess.run([str(exe), "--server", f"127.0.0.1:{port}", *args],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def check_reads(res: dict) -> None:
    stats = res["server"]["stats"]
    reads = res["run"]["reads"]["total"] + res.get("warmup", {}).get("reads", {}).get("total", 0)
    assert stats["get_hits"] + stats["get_misses"] == reads
    assert stats["get_misses"] == 0
    assert res["run"]["reads"]["miss"] == 0
    assert res["run"]["errors"]["total"] == 0
    assert res["server"]["anticache_supported"] is True
    assert res["server"]["anticache"]["lost_items"] == 0


def test_text_load_and_run(ycsb_mc: Path, server: int) -> None:
    # 20000 x 1000-byte records into -m 16: the store spills, nothing is lost
    res = run_mc(ycsb_mc, server, "-P", str(WORKLOADS / "workloadb"),
                 "-p", "recordcount=20000", "-p", "operationcount=20000",
                 "-p", "warmupoperations=2000", "--threads", "2")
    assert res["load"]["ops"]["insert"] == 20000
    assert res["run"]["operations"] == 20000
    assert res["run"]["ops"]["read"] + res["run"]["ops"]["update"] == 20000
    assert res["warmup"]["operations"] == 2000
    assert res["config"]["threads"] == 2 and res["threads"] == 2
    check_reads(res)
    assert res["server"]["stats"]["cmd_set"] == 20000 + res["run"]["ops"]["update"] + \
        res["warmup"]["ops"]["update"]
    assert res["server"]["anticache"]["spilled_items"] > 0
    lat = res["run"]["latency_us"]["read"]
    assert lat["count"] == res["run"]["ops"]["read"]
    assert lat["p50"] <= lat["p95"] <= lat["p99"] <= lat["p99.9"] <= lat["max"]
    client = Client(("127.0.0.1", server))
    try:
        for keynum in (0, 1, 19999):
            value = client.get(f"user{fnvhash64(keynum)}")
            assert value is not None and len(value) == 1000
            assert all(32 <= b <= 127 for b in value)
        assert client.get("user20000") is None
    finally:
        client.close()


def test_meta_pipelined_rmw(ycsb_mc: Path, server: int) -> None:
    load = run_mc(ycsb_mc, server, "-P", str(WORKLOADS / "workloadf"), "-p", "recordcount=3000",
                  "--phase", "load", "--protocol", "meta")
    assert load["load"]["ops"]["insert"] == 3000 and "run" not in load
    res = run_mc(ycsb_mc, server, "-P", str(WORKLOADS / "workloadf"), "-p", "recordcount=3000",
                 "-p", "operationcount=8000", "--phase", "run", "--protocol", "meta",
                 "--conns", "3", "--depth", "8", "--threads", "2")
    assert "load" not in res and res["batch"] == 24
    assert res["run"]["ops"]["read"] + res["run"]["ops"]["readmodifywrite"] == 8000
    assert res["run"]["reads"]["total"] == 8000    # an RMW reads too
    check_reads(res)
    assert res["server"]["stats"]["cmd_set"] == 3000 + res["run"]["ops"]["readmodifywrite"]


def test_errors(ycsb_mc: Path) -> None:
    def fails(*args: str) -> tuple[int, str]:
        p = subprocess.run([str(ycsb_mc), *args], capture_output=True, text=True)
        return p.returncode, p.stderr

    rc, err = fails("-p", "recordcount=10")
    assert rc == 2 and err.startswith("ycsb-mc: --server HOST:PORT is required\n")
    assert fails("--server", "localhost") == (
        1, "ycsb-mc: --server 'localhost': expected host:port with a port from 1 to 65535 "
           "(IPv6: [addr]:port)\n")
    assert fails("--server", "h:1", "--protocol", "binary") == (
        1, "ycsb-mc: --protocol 'binary': accepted: text, meta\n")
    assert fails("--server", "h:1", "--depth", "0") == (
        1, "ycsb-mc: --depth '0': accepted: an integer from 1 to 1024\n")
    assert fails("--server", "h:1", "--phase", "warm") == (
        1, "ycsb-mc: --phase 'warm': accepted: load, run, both\n")
    port = free_port()   # nothing listens there
    rc, err = fails("--server", f"127.0.0.1:{port}", "-p", "recordcount=10")
    assert rc == 1
    assert err == (f"ycsb-mc: backend thread_init failed: cannot connect to 127.0.0.1:{port}: "
                   "Connection refused\n")


@pytest.mark.parametrize("pipeline", [(), ("--conns", "2", "--depth", "8")])
def test_lookaside_over_the_network(ycsb_mc: Path, pipeline: tuple[str, ...]) -> None:
    # a stock cache (ac_policy=none) that drops items: every missed read, and
    # every missed read half of a read-modify-write, is refilled with a set;
    # the server saw exactly load + updates + refills sets
    with running_server(16, "ac_policy=none") as port:
        res = run_mc(ycsb_mc, port, "-P", str(WORKLOADS / "workloadf"),
                     "-p", "recordcount=40000", "-p", "operationcount=20000",
                     "-p", "requestdistribution=truezipf", "-p", "zipfianconstant=0.9",
                     "-p", "lookaside=true", *pipeline)
    run = res["run"]
    assert run["reads"]["miss"] > 0 and run["reads"]["refills"] == run["reads"]["miss"]
    assert run["reads"]["refill_errors"] == 0 and run["errors"]["total"] == 0
    stats = res["server"]["stats"]
    assert stats["get_misses"] == run["reads"]["miss"]
    assert stats["cmd_set"] == 40000 + run["ops"]["readmodifywrite"] + run["reads"]["refills"]
