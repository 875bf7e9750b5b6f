"""memcached's own extstore (-o ext_path, ac_policy=none) in the names every approach reports
(policies/core/ac_extstore.c): values read back byte-exact or missing, never wrong; the client's hits
are stats anticache's mem_hits + disk_hits and its misses are misses; reads that went to the file are
disk hits; every item extstore dropped is counted in lost_items, as its three ways of dropping apart;
and the in-process driver refuses extstore with a message that says why."""
from __future__ import annotations

import subprocess
from pathlib import Path

from mc_helpers import BIN, MiB

VSIZE = 1000
WORKLOADS = Path(__file__).resolve().parents[2] / "experiments" / "workloads"


def value(i: int) -> bytes:
    return (b"%07d:" % i) * (VSIZE // 8) + b"#" * (VSIZE % 8)


def test_extstore_counts_hits_disk_hits_and_drops(server, tmp_path):
    # 64k values of 1 KB (64 MB) set as fast as one client can into 16 MiB of RAM and a 64 MiB file:
    # the flusher falls behind (RAM evictions), the file fills (compaction, page reclaims)
    srv = server(mem=16, threads=2, ac={"ac_policy": "none", "ext_page_size": "4",
                                        "ext_path": f"{tmp_path / 'ext'}:64m"})
    cli = srv.client()
    n = 4 * 16 * MiB // 1024
    for s in range(0, n, 256):
        assert not cli.set_many({f"x{i}": value(i) for i in range(s, min(n, s + 256))}, noreply=False)
    hits = misses = 0
    for s in range(0, n, 100):
        keys = [f"x{i}" for i in range(s, min(n, s + 100))]
        got = cli.get_many(keys)
        for k in keys:
            if k in got:
                assert got[k] == (value(int(k[1:])), 0), k     # byte-exact, or missing: never wrong
                hits += 1
            else:
                misses += 1
    st = srv.ac()
    stats = srv.stats(None)
    assert st["policy"] == "none" and st["tier"] == "none"
    assert st["mem_hits"] + st["disk_hits"] == hits and st["misses"] == misses
    assert st["disk_hits"] > 0 and st["mem_hits"] > 0       # the file served reads, RAM served others
    ext_reads = int(stats["get_extstore"])
    gone = int(stats["miss_from_extstore"]) + int(stats["get_aborted_extstore"])
    assert st["disk_hits"] == ext_reads - gone and st["ext_reads"] == ext_reads
    assert st["ext_read_misses"] == int(stats["miss_from_extstore"])
    assert st["mem_hits"] == int(stats["get_hits"]) - ext_reads
    assert st["misses"] == int(stats["get_misses"]) + gone + int(stats["get_oom_extstore"])
    # every drop counted: RAM evictions, objects in reclaimed pages, compaction's losses
    assert st["ext_lost_ram"] == int(stats["evictions"])
    assert st["ext_lost_disk"] == int(stats["extstore_objects_evicted"])
    assert st["ext_lost_compact"] == int(stats["extstore_compact_lost"])
    assert st["lost_items"] == st["ext_lost_ram"] + st["ext_lost_disk"] + st["ext_lost_compact"]
    # each key was set once and read once: every miss is an item lost, and none goes uncounted
    assert 0 < misses <= st["lost_items"]
    assert st["ext_objects_written"] > 0 and st["ext_pages"] == 16


def test_extstore_keeps_what_fits(server, tmp_path):
    # 8k values into 16 MiB of RAM and a 64 MiB file, written in small rounds: nothing dropped
    srv = server(mem=16, threads=2, ac={"ac_policy": "none", "ext_page_size": "4",
                                        "ext_path": f"{tmp_path / 'ext'}:64m"})
    cli = srv.client()
    n = 8000
    for s in range(0, n, 100):
        assert not cli.set_many({f"k{i}": value(i) for i in range(s, min(n, s + 100))}, noreply=False)
    got = {}
    for s in range(0, n, 100):
        got.update(cli.get_many([f"k{i}" for i in range(s, min(n, s + 100))]))
    assert got == {f"k{i}": (value(i), 0) for i in range(n)}
    st = srv.ac()
    assert st["mem_hits"] + st["disk_hits"] == n and st["misses"] == 0 and st["lost_items"] == 0


def test_in_process_driver_refuses_extstore(tmp_path):
    cp = subprocess.run([str(BIN), "-u", "root", "-m", "16", "-o",
                         f"ac_policy=none,ext_path={tmp_path / 'ext'}:64m,ac_driver={WORKLOADS / 'readonly'},"
                         f"ac_driver_out={tmp_path / 'out.json'}"],
                        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert cp.returncode != 0
    assert "ac_driver cannot be combined with extstore (-o ext_path)" in cp.stderr, cp.stderr
    assert not (tmp_path / "out.json").exists()

