"""In-process and network mode give the same hits and misses for the same seed.

memcached-ac with ac_policy=none and ample memory (nothing is evicted), one
driver thread in both modes.  Only part of the keys is loaded, as with YCSB's
load partitioning: the network run loads with `-p insertcount=LOADED` and then
runs with the default insertcount (= recordcount), so reads choose among all
recordcount keys and those never loaded miss; the in-process run does both in
one process with `loadcount=LOADED`.  Every read must come out the same."""
from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import BIN, SERVER, WORKLOADS, running_server

RECORDS, LOADED, OPS = 10000, 6000, 10000


@pytest.fixture
def server() -> Iterator[int]:
    with running_server(256, "ac_policy=none", threads=1) as port:
        yield port


def ycsb_mc(port: int, *args: str) -> dict:
    p = subprocess.run([str(BIN / "ycsb-mc"), "--server", f"127.0.0.1:{port}", "--threads", "1",
                        *args], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def in_process(workload: Path, seed: int) -> dict:
    sets = [f"recordcount={RECORDS}", f"loadcount={LOADED}", f"operationcount={OPS}",
            f"seed={seed}", "threads=1"]
    opts = ["ac_policy=none", f"ac_driver={workload}"] + [f"ac_driver_set={s}" for s in sets]
    p = subprocess.run([str(SERVER), "-u", "root", "-t", "1", "-m", "256", "-o", ",".join(opts)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


@pytest.mark.parametrize("workload", ["readonly", "workloadb"])
@pytest.mark.parametrize("seed", [3, 11])
def test_same_hits_in_process_and_network(server: int, workload: str, seed: int) -> None:
    wl = WORKLOADS / workload
    common = ["-P", str(wl), "-p", f"recordcount={RECORDS}", "-p", f"seed={seed}"]
    load = ycsb_mc(server, *common, "-p", f"insertcount={LOADED}", "--phase", "load",
                   "--conns", "1", "--depth", "32")
    assert load["load"]["ops"]["insert"] == LOADED and load["load"]["errors"]["total"] == 0
    net = ycsb_mc(server, *common, "-p", f"operationcount={OPS}", "--phase", "run")
    inp = in_process(wl, seed)
    assert inp["mode"] == "in-process" and inp["threads"] == 1
    assert inp["load"]["ops"]["insert"] == LOADED
    n, i = net["run"], inp["run"]
    assert n["ops"] == i["ops"]
    assert n["errors"]["total"] == 0 and i["errors"]["total"] == 0
    assert (n["reads"]["hit"], n["reads"]["miss"]) == (i["reads"]["hit"], i["reads"]["miss"])
    assert i["reads"]["disk_hit"] == 0
    reads = n["reads"]["total"]
    assert reads == i["reads"]["total"] and reads == n["ops"]["read"]
    # a real mix of hits and misses: keys 6000..9999 were never loaded
    assert 0 < n["reads"]["miss"] < reads and n["reads"]["hit"] > 0
    # the server agrees with the network driver
    assert net["server"]["stats"]["get_misses"] == n["reads"]["miss"]
    assert net["server"]["stats"]["get_hits"] == n["reads"]["hit"]
