"""ac_policy=ospaging: no eviction, the kernel pages the slab memory.

The paging tests run memcached-ac in a real memory cgroup (cgroups/acg_lib) with a real
swap file under /var/tmp and vm.page-cluster=0; the group, the swap file and the sysctl
are undone in `finally`/fixture teardown, also when a test fails."""
from __future__ import annotations

import random
import subprocess
from pathlib import Path

from mc_helpers import BIN, MiB, value_for
from paging import MemoryGroup, inproc, serve_store_check


def test_anon_serves_every_key_byte_exact_while_swapping(var_tmp, swap, page_cluster0):
    rng = random.Random(7)
    keys = [f"k{i:06d}" for i in range(24000)]
    values = {k: value_for(rng, k, 1, 1000) for k in keys}   # ~28 MB of 1184-byte chunks
    with MemoryGroup("ospaging-net", 20 * MiB, 128 * MiB) as g:
        ac, st = serve_store_check(var_tmp, g, {"ac_policy": "ospaging"}, keys, values)
    assert st["swap_bytes_max"] > 0 and st["pgmajfault"] > 0, st
    assert (ac["policy"], ac["tier"], ac["os_backing"]) == ("none", "swap", "anon")
    assert ac["mem_hits"] + ac["disk_hits"] == len(keys)
    assert ac["disk_hits"] > 0 and ac["read_major_faults"] >= ac["disk_hits"]
    assert ac["lost_items"] == 0 and ac["resident_items"] == len(keys)
    assert ac["spilled_items"] == 0 and ac["metadata_bytes"] == 0
    assert ac["major_faults"] >= ac["read_major_faults"]


def test_inprocess_disk_hits_match_cgroup_major_faults(var_tmp, swap, page_cluster0):
    with MemoryGroup("ospaging-inproc", 28 * MiB, 128 * MiB) as g:
        d = inproc(var_tmp, g, "ac_policy=ospaging,ac_os_backing=anon", 200000)
        st = g.stats()
    reads, ac = d["run"]["reads"], d["server"]["anticache"]
    assert reads["total"] == 200000 and reads["miss"] == 0
    assert reads["hit"] == ac["mem_hits"] and reads["disk_hit"] == ac["disk_hits"]
    assert reads["hit"] + reads["disk_hit"] == 200000
    assert st["swap_bytes_max"] > 0
    faults = st["pgmajfault"]
    assert faults > 1000, st
    # every major fault of the group is one read's disk hit (load and start-up add a few)
    assert abs(reads["disk_hit"] - faults) <= 0.05 * faults, (reads, faults)
    assert abs(ac["read_major_faults"] - faults) <= 0.05 * faults, (ac["read_major_faults"], faults)
    assert ac["lost_items"] == 0


def test_file_backing_exists_during_run_removed_after(var_tmp, page_cluster0):
    rng = random.Random(11)
    keys = [f"f{i:06d}" for i in range(20000)]
    values = {k: value_for(rng, k, 1, 1000) for k in keys}   # ~23.7 MB of chunks
    spill = var_tmp / "spill"

    def backing_file_made() -> None:
        f = spill / "ospaging.mem"
        assert f.stat().st_size == 48 * MiB and (f.stat().st_mode & 0o777) == 0o600
        assert (spill.stat().st_mode & 0o777) == 0o700

    with MemoryGroup("ospaging-file", 24 * MiB, 0) as g:
        ac, st = serve_store_check(var_tmp, g, {"ac_policy": "ospaging", "ac_os_backing": "file",
                                                "ac_spill_dir": str(spill)}, keys, values, backing_file_made)
    assert not spill.exists(), sorted(p.name for p in spill.iterdir())
    assert ac["os_backing"] == "file" and ac["os_file"] == str(spill / "ospaging.mem")
    assert ac["os_mapping_bytes"] == 48 * MiB and ac["lost_items"] == 0
    assert ac["mem_hits"] + ac["disk_hits"] == len(keys)
    assert st["swap_bytes_max"] == 0 and st["file_bytes_max"] > 0


def test_full_memory_answers_an_error_never_evicts(server):
    srv = server(mem=4, threads=1, ac={"ac_policy": "ospaging"}, check_dir_modes=False)
    value = b"v" * 4000
    stored = 0
    with srv.raw() as r:
        for i in range(5000):
            reply = r.call(b"set full%05d 0 0 %d\r\n%s" % (i, len(value), value))
            if reply != b"STORED":
                assert reply == b"SERVER_ERROR out of memory storing object", reply
                break
            stored += 1
        assert 0 < stored < 5000
        for i in range(stored):
            r.send(b"get full%05d\r\n" % i)
            assert r.line() == b"VALUE full%05d 0 %d" % (i, len(value))
            assert r.read(len(value) + 2) == value + b"\r\n"
            assert r.line() == b"END"
    ac = srv.ac()
    assert ac["lost_items"] == 0 and ac["resident_items"] == stored
    assert ac["mem_hits"] + ac["disk_hits"] == stored


def _refused(tmp_path: Path, opts: str, *extra: str) -> str:
    argv = [str(BIN), "-u", "root", "-p", "0", "-U", "0", "-m", "16", *extra, "-o", opts]
    cp = subprocess.run(argv, capture_output=True, text=True, timeout=20, cwd=tmp_path)
    assert cp.returncode != 0
    return cp.stderr


def test_bad_backing_is_refused(tmp_path):
    err = _refused(tmp_path, "ac_policy=ospaging,ac_os_backing=swap")
    assert 'ac_os_backing must be "anon" (anonymous memory, paged to swap) or "file"' in err
    assert 'got "swap"' in err


def test_restartable_memory_is_refused(tmp_path):
    err = _refused(tmp_path, "ac_policy=ospaging", "-e", str(tmp_path / "mem"))
    assert "memcached-ac: ac_tier=swap cannot be combined with -e (restartable memory)" in err
