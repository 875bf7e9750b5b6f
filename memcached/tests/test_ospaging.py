"""ac_policy=ospaging: no eviction, the kernel pages the slab memory.

The paging tests run memcached-ac in a real memory cgroup (cgroups/acg_lib) with a real
swap file under /var/tmp and vm.page-cluster=0; the group, the swap file and the sysctl
are undone in `finally`/fixture teardown, also when a test fails."""
from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from mc_helpers import BIN, HOST, ROOT, Raw, free_port, server_argv, value_for

sys.path.insert(0, str(ROOT / "cgroups"))
from acg_lib import MemoryGroup, swap_off, swap_on  # noqa: E402

MiB = 1 << 20
PAGE_CLUSTER = Path("/proc/sys/vm/page-cluster")
READONLY = ROOT / "experiments" / "workloads" / "readonly"
# items of 1024-byte chunks never straddle a 4 KiB page: one disk hit = one fault
ALIGNED = "slab_sizes=512-1024-2048"


@pytest.fixture
def page_cluster0():
    old = PAGE_CLUSTER.read_text().strip()
    PAGE_CLUSTER.write_text("0")
    try:
        yield
    finally:
        PAGE_CLUSTER.write_text(old)


@pytest.fixture
def var_tmp():
    d = Path(tempfile.mkdtemp(prefix="ospaging-test-", dir="/var/tmp"))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def swap(var_tmp):
    path = var_tmp / "swap"
    swap_on(path, 128 * MiB)
    try:
        yield path
    finally:
        swap_off(path)


def _wait_port(port: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"memcached-ac exited with {proc.returncode}"
        try:
            Raw(port, 5).close()
            return
        except OSError:
            time.sleep(0.02)
    raise AssertionError("memcached-ac did not accept connections")


def _stop(proc: subprocess.Popen) -> int:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
    return proc.returncode


def _ac(port: int) -> dict:
    with Raw(port) as r:
        return {k: int(v) if v.isdigit() else v for k, v in r.stats("anticache").items()}


def _store_all(port: int, keys: list[str], values: dict[str, bytes]) -> None:
    with Raw(port) as r:
        for i in range(0, len(keys), 500):
            batch = keys[i:i + 500]
            r.send(b"".join(b"set %s 0 0 %d\r\n%s\r\n" % (k.encode(), len(values[k]), values[k]) for k in batch))
            for k in batch:
                assert r.line() == b"STORED", k


def _check_all(port: int, keys: list[str], values: dict[str, bytes], group: MemoryGroup) -> None:
    with Raw(port) as r:
        for i in range(0, len(keys), 100):
            batch = keys[i:i + 100]
            r.send(b"get " + b" ".join(k.encode() for k in batch) + b"\r\n")
            for k in batch:
                head = r.line().split()
                assert head[:2] == [b"VALUE", k.encode()], (k, head)
                data = r.read(int(head[3]) + 2)[:-2]
                assert data == values[k], f"{k}: value differs"
            assert r.line() == b"END"
            group.sample()


def _network_run(var_tmp: Path, group: MemoryGroup, ac: dict, n: int, size: int):
    port = free_port()
    argv = server_argv(port, 48, 2, ac)
    err = open(var_tmp / "stderr.txt", "wb")
    proc = group.popen(argv, stdin=subprocess.DEVNULL, stdout=err, stderr=err)
    return port, proc, err


def test_anon_serves_every_key_byte_exact_while_swapping(var_tmp, swap, page_cluster0):
    rng = random.Random(7)
    keys = [f"k{i:06d}" for i in range(24000)]
    values = {k: value_for(rng, k, 1, 1000) for k in keys}   # ~28 MB of 1184-byte chunks
    with MemoryGroup("ospaging-net", 20 * MiB, 128 * MiB) as g:
        port, proc, err = _network_run(var_tmp, g, {"ac_policy": "ospaging"}, len(keys), 1000)
        try:
            _wait_port(port, proc)
            _store_all(port, keys, values)
            g.sample()
            _check_all(port, keys, values, g)
            ac = _ac(port)
            st = g.stats()
        finally:
            rc = _stop(proc)
            err.close()
    assert rc == 0, (var_tmp / "stderr.txt").read_text()
    assert st["swap_bytes_max"] > 0 and st["pgmajfault"] > 0, st
    assert ac["policy"] == "ospaging" and ac["os_backing"] == "anon"
    assert ac["mem_hits"] + ac["disk_hits"] == len(keys)
    assert ac["disk_hits"] > 0 and ac["read_major_faults"] >= ac["disk_hits"]
    assert ac["lost_items"] == 0 and ac["resident_items"] == len(keys)
    assert ac["spilled_items"] == 0 and ac["metadata_bytes"] == 0
    assert ac["major_faults"] >= ac["read_major_faults"]


def _inproc(var_tmp: Path, group: MemoryGroup, ac: str, ops: int) -> dict:
    out = var_tmp / "driver.json"
    argv = [str(BIN), "-u", "root", "-m", "48", "-t", "1", "-o",
            f"ac_policy=ospaging,{ac},{ALIGNED},ac_driver={READONLY},ac_driver_out={out},"
            f"ac_driver_set=recordcount=30000,ac_driver_set=operationcount={ops},"
            "ac_driver_set=fieldcount=1,ac_driver_set=fieldlength=900"]
    with open(var_tmp / "stderr.txt", "wb") as err:
        proc = group.popen(argv, stdin=subprocess.DEVNULL, stdout=err, stderr=err)
        try:
            while proc.poll() is None:
                group.sample()
                time.sleep(0.1)
        finally:
            _stop(proc)
    assert proc.returncode == 0, (var_tmp / "stderr.txt").read_text()
    return json.loads(out.read_text())


def test_inprocess_disk_hits_match_cgroup_major_faults(var_tmp, swap, page_cluster0):
    with MemoryGroup("ospaging-inproc", 28 * MiB, 128 * MiB) as g:
        d = _inproc(var_tmp, g, "ac_os_backing=anon", 200000)
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
    with MemoryGroup("ospaging-file", 24 * MiB, 0) as g:
        port, proc, err = _network_run(var_tmp, g, {"ac_policy": "ospaging", "ac_os_backing": "file",
                                                     "ac_spill_dir": str(spill)}, len(keys), 1000)
        try:
            _wait_port(port, proc)
            f = spill / "ospaging.mem"
            assert f.stat().st_size == 48 * MiB and (f.stat().st_mode & 0o777) == 0o600
            assert (spill.stat().st_mode & 0o777) == 0o700
            _store_all(port, keys, values)
            _check_all(port, keys, values, g)
            ac = _ac(port)
            st = g.stats()
        finally:
            rc = _stop(proc)
            err.close()
    assert rc == 0, (var_tmp / "stderr.txt").read_text()
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
    assert "ac_policy=ospaging cannot be combined with -e (restartable memory)" in err
