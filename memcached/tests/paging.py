"""Helpers of the kernel-paging tests (ospaging, effpaging): a real memory cgroup
(cgroups/acg_lib), a real swap file under /var/tmp and vm.page-cluster=0, each undone
in its fixture's teardown, also when a test fails; a server inside the group; bulk
stores and byte-exact checks over the text protocol; the pages of a region that are
resident or swapped (/proc/PID/pagemap)."""
from __future__ import annotations

import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from acbench.paging import page_cluster_zero

from mc_helpers import BIN, ROOT, MiB, Raw, free_port, server_argv

sys.path.insert(0, str(ROOT / "cgroups"))
from acg_lib import MemoryGroup, swap_off, swap_on  # noqa: E402

READONLY = ROOT / "experiments" / "workloads" / "readonly"
# items of 1024-byte chunks never straddle a 4 KiB page: one disk hit = one fault
ALIGNED = "slab_sizes=512-1024-2048"


@pytest.fixture
def page_cluster0():
    # shared with acbench runs and soak.py under one lock: each restores the machine's value
    with page_cluster_zero():
        yield


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


def wait_port(port: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"memcached-ac exited with {proc.returncode}"
        try:
            Raw(port, 5).close()
            return
        except OSError:
            time.sleep(0.02)
    raise AssertionError("memcached-ac did not accept connections")


def stop(proc: subprocess.Popen) -> int:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
    return proc.returncode


def ac_stats(port: int) -> dict:
    with Raw(port) as r:
        return {k: int(v) if v.isdigit() else v for k, v in r.stats("anticache").items()}


def store_all(port: int, keys: list[str], values: dict[str, bytes]) -> None:
    with Raw(port) as r:
        for i in range(0, len(keys), 500):
            batch = keys[i:i + 500]
            r.send(b"".join(b"set %s 0 0 %d\r\n%s\r\n" % (k.encode(), len(values[k]), values[k]) for k in batch))
            for k in batch:
                assert r.line() == b"STORED", k


def check_all(port: int, keys: list[str], values: dict[str, bytes], group: MemoryGroup) -> None:
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


def network_run(var_tmp: Path, group: MemoryGroup, ac: dict, mem: int = 48):
    """memcached-ac (-m mem, 2 threads) in the group; stderr into var_tmp/stderr.txt."""
    port = free_port()
    argv = server_argv(port, mem, 2, ac)
    err = open(var_tmp / "stderr.txt", "wb")
    proc = group.popen(argv, stdin=subprocess.DEVNULL, stdout=err, stderr=err)
    return port, proc, err


def serve_store_check(var_tmp: Path, group: MemoryGroup, ac: dict, keys: list[str], values: dict[str, bytes],
                      on_start=None) -> tuple[dict, dict]:
    """memcached-ac in the group: every key stored, then read back byte-exact; on_start(),
    if given, runs once it listens. Returns (stats anticache, the group's stats)."""
    port, proc, err = network_run(var_tmp, group, ac)
    try:
        wait_port(port, proc)
        if on_start is not None:
            on_start()
        store_all(port, keys, values)
        group.sample()
        check_all(port, keys, values, group)
        st_ac, st_group = ac_stats(port), group.stats()
    finally:
        rc = stop(proc)
        err.close()
    assert rc == 0, (var_tmp / "stderr.txt").read_text()
    return st_ac, st_group


def inproc(var_tmp: Path, group: MemoryGroup, ac: str, ops: int, records: int = 30000, mem: int = 48,
           sampler=None) -> dict:
    """The read-only workload in-process in the group (900-byte values in 1 KiB chunks);
    sampler(pid), if given, is called every 0.1 s while it runs."""
    out = var_tmp / "driver.json"
    argv = [str(BIN), "-u", "root", "-m", str(mem), "-t", "1", "-o",
            f"{ac},{ALIGNED},ac_driver={READONLY},ac_driver_out={out},"
            f"ac_driver_set=recordcount={records},ac_driver_set=operationcount={ops},"
            "ac_driver_set=fieldcount=1,ac_driver_set=fieldlength=900"]
    with open(var_tmp / "stderr.txt", "wb") as err:
        proc = group.popen(argv, stdin=subprocess.DEVNULL, stdout=err, stderr=err)
        try:
            while proc.poll() is None:
                group.sample()
                if sampler is not None:
                    try:
                        sampler(proc.pid)
                    except (FileNotFoundError, ProcessLookupError):
                        pass           # it exited between poll() and the read
                time.sleep(0.1)
        finally:
            stop(proc)
    if proc.returncode != 0:
        st = group.stats()
        raise AssertionError(f"memcached-ac exited with {proc.returncode} (negative: killed by that signal); "
                             f"group oom_kills={st.get('oom_kills')}, peak {st.get('peak_bytes')} bytes, "
                             f"limits {st.get('limits')}; stderr: {(var_tmp / 'stderr.txt').read_text()!r}")
    return json.loads(out.read_text())


def page_states(pid: int, start: int, length: int) -> tuple[int, int, int]:
    """(present, swapped, neither) pages of [start, start + length) in process pid
    (/proc/PID/pagemap: bit 63 present, bit 62 swapped)."""
    present = swapped = 0
    n = length // 4096
    with open(f"/proc/{pid}/pagemap", "rb") as f:
        f.seek(start // 4096 * 8)
        data = f.read(n * 8)
    for (e,) in struct.iter_unpack("<Q", data):
        present += (e >> 63) & 1
        swapped += (e >> 62) & 1
    return present, swapped, n - present - swapped


def mappings(pid: int) -> list[tuple[int, int, dict[str, int]]]:
    """(start, end, numeric smaps fields in kB: Rss, Swap, Locked...) of every mapping of pid."""
    out, cur = [], None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and len(head) >= 5 and not head[0].endswith(":"):
                lo, hi = (int(x, 16) for x in head[0].split("-"))
                cur = (lo, hi, {})
                out.append(cur)
            elif cur is not None and len(head) >= 2 and head[0].endswith(":") and head[1].isdigit():
                cur[2][head[0][:-1]] = int(head[1])
    return out
